"""The last line of a run: where its record is, and what to compare it with.

``lipnorm_exp: record runs/<run id>.json (completed, test accuracy 81.9% at the best
validation epoch 57); the paper: Table 1 (+experiment=missing_vector) GAT-Lip Cora 0%:
83.1 ± 0.5 at depth 5``: the published number of the paper's cell the run belongs to
(`published_for`), or, for a run in no cell, the
command that compares a folder's preset runs with the paper (``make scorecard``).
"""

import os
from collections.abc import Sequence
from pathlib import Path

from lipnorm_exp.records import record_path, schema
from lipnorm_exp.records.labels import metric_label
from lipnorm_exp.sweeps.progress import outcome_of
from lipnorm_exp.training.finished import LaunchedRecord

__all__ = ["closing_line"]


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
    runs = _shown(Path(results_dir))
    default = runs == os.path.join("results", "runs")  # the Makefile's RUNS
    scorecard = "make scorecard" + ("" if default else f" RUNS={runs}")
    return (
        f"lipnorm_exp: {saved}; no cell of the paper's tables: {scorecard} compares a folder's "
        "preset runs (+experiment=<name>) with the paper"
    )
