"""Where a report is written: the committed report's folder, or a folder of one's own."""

from pathlib import Path

from lipnorm_exp.records.store import RUNS_FOLDER

__all__ = ["IGNORE_ALL", "REPOSITORY_OUT", "ReportError", "default_out"]

#: the report of the committed records (``make report``), committed
REPOSITORY_OUT = Path("results")
#: what a folder the report creates elsewhere holds, so that git ignores it and all it holds
IGNORE_ALL = "# made by lipnorm-exp-report: a report of one's own runs, never committed\n*\n"


def default_out(runs: Path) -> Path:
    """Where the report of the records in ``runs`` goes unless ``--out`` names a folder.

    ``results`` for the committed records (``results/runs``), else ``<runs>_report`` beside
    ``runs`` (``runs`` → ``runs_report``), never into the committed report.
    """
    if runs.resolve() == RUNS_FOLDER.resolve():
        return REPOSITORY_OUT
    return runs.parent / f"{runs.resolve().name}_report"


class ReportError(ValueError):
    """An argument the report cannot work with; the message names it and the fix."""
