"""The last line of a run: where its record is, and what to compare it with.

``lipnorm_exp: record runs/<run id>.json (completed, test accuracy 81.9% at the best
validation epoch 57); the paper: Table 1 (+experiment=missing_vector) GAT-Lip Cora 0%:
83.1 ± 0.5 at depth 5``: the published number of the paper's cell the run belongs to
(`published_for`), or, for a run in no cell, the
command that compares a folder's preset runs with the paper: the report's scorecard of that
folder, into a folder of the user's own (`report_command`), never into the committed report.
"""

from collections.abc import Sequence
from pathlib import Path

from lipnorm_exp.records import record_path, schema
from lipnorm_exp.records.labels import metric_label
from lipnorm_exp.report.folders import REPOSITORY_OUT, default_out
from lipnorm_exp.sweeps.progress import outcome_of
from lipnorm_exp.training.finished import LaunchedRecord

__all__ = ["OWN_REPORT", "closing_line", "report_command"]

#: where the scorecard of records in the committed folder (a run's default) is sent
OWN_REPORT = Path("my_report")


def _shown(path: Path) -> str:
    """``path`` relative to the working folder where it is inside it, else as it is."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _outcome(launched: LaunchedRecord) -> str:
    """``completed, test accuracy 81.9% at the best validation epoch 57``.

    The outcome is ``skipped`` for a run whose finished record was found (reused); a run
    without a scored epoch shows its outcome only.
    """
    outcome = outcome_of(*launched)
    summary = launched.record.get(schema.SUMMARY)
    test = summary.get(schema.TEST_ACC_AT_BEST_VAL) if summary else None
    if summary is None or test is None:
        return outcome
    metric = metric_label(summary[schema.METRIC])
    epoch = summary[schema.BEST_EPOCH]
    return f"{outcome}, test {metric} {test:.1%} at the best validation epoch {epoch}"


def closing_line(launched: Sequence[LaunchedRecord], results_dir: str | Path) -> str:
    """The last line of a launch whose runs (one per seed) gave ``launched``, in ``results_dir``."""
    records = [record for record, _ in launched]
    paths = [_shown(record_path(results_dir, record[schema.RUN_ID])) for record in records]
    if len(records) == 1:
        saved = f"record {paths[0]} ({_outcome(launched[0])})"
    else:
        saved = f"records {', '.join(paths)}"
    from lipnorm_exp.report.paper_presets import published_for  # pandas: only once a run is over

    published = published_for(records[0][schema.CONFIG])
    if published:
        return f"lipnorm_exp: {saved}; the paper: {'; '.join(published)}"
    return (
        f"lipnorm_exp: {saved}; no cell of the paper's tables: {report_command(results_dir)} "
        "compares a folder's preset runs (+experiment=<name>) with the paper"
    )


def report_command(results_dir: str | Path) -> str:
    """The command that writes the scorecard of the records in ``results_dir``.

    Into the report's own folder for them (`default_out`), or `OWN_REPORT` where that is the
    committed report: the records of a run are in the committed folder by default.
    """
    runs = Path(results_dir)
    out = default_out(runs)
    if out.resolve() == REPOSITORY_OUT.resolve():
        out = OWN_REPORT
    return f"lipnorm-exp-report --runs {_shown(runs)} --out {_shown(out)} --only scorecard"
