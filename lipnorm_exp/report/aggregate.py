"""Seeds → one number: the selection rule shared by every table and figure.

Selection rule:

1. **One scale at a time.** Records of different ``scale`` values are never mixed: each
   scale present gets its own tables and figures (``<out>/<scale>/``); ``--scale`` picks one
   by name (:func:`report_scales`).
2. **By content.** A table cell or a point of a curve takes the records whose config matches
   it (dataset name, missing rate, model label, depth, ...), never folder names or tags.
3. **Failed runs** (an error, no result) are left out and only counted. **Diverged runs**
   (loss NaN/inf) are results: they count with the accuracies of their best epoch before
   diverging, and with 0 where they diverged before any evaluation (no model is no
   accuracy) (:func:`usable_runs`).
4. **Seeds form a group.** Records equal in everything but the seed (the ``setting``
   column) are the runs of one hyper-parameter setting. Where a cell holds several settings
   (lr, hidden, heads, dropout, concat, and the depth where the cell does not fix it), the
   one with the best mean validation accuracy (``best_val_acc``) is chosen; ties go to the
   shallower model. Its test accuracy at the best validation epoch
   (``test_acc_at_best_val``) is reported as mean ± sample std over its seeds, in %
   (:func:`select`).
"""

from dataclasses import dataclass

import pandas as pd

#: accuracy columns that a diverged run without a best epoch fills with 0
ACCURACIES = ("best_val_acc", "test_acc_at_best_val", "train_acc_at_best_val", "best_train_acc")
VALIDATION = "best_val_acc"
TEST = "test_acc_at_best_val"
#: the text of an empty cell
MISSING = "–"


def report_scales(frame: pd.DataFrame, scale: str | None = None) -> list[str]:
    """The scales the report shows: ``[scale]`` if given, else every scale with records.

    ``paper`` comes first, then the others by name.
    """
    if scale is not None:
        return [scale]
    present = set(frame["scale"].dropna()) if "scale" in frame else set()
    return sorted(present, key=lambda name: (name != "paper", name))


def usable_runs(frame: pd.DataFrame, scale: str | None) -> pd.DataFrame:
    """The completed and diverged runs of ``scale`` (rule 3 of the module docstring).

    Accuracies of diverged runs without a best epoch read 0.
    """
    runs = frame[(frame["scale"] == scale) & (frame["status"] != "failed")].copy()
    diverged = runs["status"] == "diverged"
    for column in ACCURACIES:
        runs.loc[diverged, column] = runs.loc[diverged, column].fillna(0.0)
    return runs


@dataclass(frozen=True)
class Selection:
    """The runs (one per seed) of the setting chosen for a cell, and what they report.

    Args:
        runs (pandas.DataFrame): the chosen setting's records.
        report (str): the column reported (a fraction in [0, 1]).
        cell_runs (int): runs in the cell, over all settings.
        cell_diverged (int): diverged runs in the cell, over all settings.
    """

    runs: pd.DataFrame
    report: str
    cell_runs: int
    cell_diverged: int

    @property
    def mean(self) -> float:
        """Mean of ``report`` over seeds, in %."""
        return 100.0 * self.runs[self.report].mean()

    @property
    def std(self) -> float:
        """Sample standard deviation of ``report`` over seeds, in % (``NaN`` for one seed)."""
        return 100.0 * self.runs[self.report].std(ddof=1)

    @property
    def n(self) -> int:
        """Number of seeds."""
        return len(self.runs)

    @property
    def n_diverged(self) -> int:
        """Diverged runs among the seeds."""
        return int((self.runs["status"] == "diverged").sum())

    @property
    def setting(self) -> pd.Series:
        """The chosen setting's config columns (those of its first seed)."""
        return self.runs.iloc[0]

    def text(self, show_depth: bool = False) -> str:
        """The cell as the paper prints it: ``83.1 ± 0.5 (5)``, and ``†k`` for k diverged."""
        depth = int(self.setting["depth"]) if show_depth else None
        return format_cell(self.mean, self.std, depth, self.n_diverged)


def format_cell(mean: float, std: float, depth: int | None = None, diverged: int = 0) -> str:
    """``mean ± std (depth) †diverged``, one decimal, as the paper prints a cell.

    No ``±`` where ``std`` is NaN (one seed), no ``(depth)`` for ``None``, no ``†`` for 0.
    """
    text = f"{mean:.1f}" if pd.isna(std) else f"{mean:.1f} ± {std:.1f}"
    if depth is not None:
        text += f" ({depth})"
    return f"{text} †{diverged}" if diverged else text


def select(runs: pd.DataFrame, report: str = TEST, select_by: str = VALIDATION) -> Selection | None:
    """Pick the setting of ``runs`` with the best mean ``select_by`` (module rule 4).

    Args:
        runs (pandas.DataFrame): the usable runs of one cell.
        report (str, optional): the column to report. (default: ``test_acc_at_best_val``)
        select_by (str, optional): the column whose mean over seeds picks the setting.
            (default: ``best_val_acc``)

    Returns:
        Selection or None: ``None`` when ``runs`` is empty.
    """
    if runs.empty:
        return None
    scores = runs.groupby("setting").agg(score=(select_by, "mean"), depth=("depth", "min"))
    scores = scores.reset_index().sort_values(
        ["score", "depth", "setting"], ascending=[False, True, True], na_position="last"
    )
    chosen = runs[runs["setting"] == scores["setting"].iloc[0]].sort_values("seed")
    diverged = int((runs["status"] == "diverged").sum())
    return Selection(chosen, report, cell_runs=len(runs), cell_diverged=diverged)


def curves(
    runs: pd.DataFrame, x: str, report: str = TEST, select_by: str = VALIDATION
) -> pd.DataFrame:
    """One :func:`select` per (model label, value of ``x``): the points of a figure's lines.

    Returns:
        pandas.DataFrame: columns ``label``, ``x``, ``mean``, ``std`` (in %), ``n`` and
        ``n_diverged``, sorted by label and ``x``.
    """
    points = []
    for (label, value), group in runs.groupby(["label", x], sort=True):
        chosen = select(group, report, select_by)
        points.append((label, value, chosen.mean, chosen.std, chosen.n, chosen.n_diverged))
    return pd.DataFrame(points, columns=["label", "x", "mean", "std", "n", "n_diverged"])


__all__ = [
    "MISSING",
    "Selection",
    "report_scales",
    "curves",
    "format_cell",
    "select",
    "usable_runs",
]
