"""What a table or figure is made of: the runs behind each cell, and one line saying how.

Every table and figure states, in its caption or footer, `provenance_line`: the preset,
scale and protocol of its runs, the epochs they were set to train for (and the early stop, where
their preset states one), the seeds per cell,
whether the runs it chose among all have the preset's own hyper-parameters (no search) or not,
and the machines they ran on. Beside it, ``<name>.runs.csv`` (`runs_table`) lists every
run used, one row per run: the cell (``row``, ``column``), ``run_id`` (the record
``results/runs/<run_id>.json``), ``seed`` and ``status``.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from lipnorm_exp.report.aggregate import Selection
from lipnorm_exp.report.grids import PresetGrid
from lipnorm_exp.report.run_row import CONFIG, EPOCHS, MACHINE, RUN_ID, SEED, STATUS

#: the columns of ``<name>.runs.csv``
RUNS_COLUMNS = ("row", "column", RUN_ID, SEED, STATUS)


@dataclass(frozen=True)
class UsedCell:
    """A cell of a table (a point or panel of a figure) and the runs it shows.

    Args:
        row (str): the row (a model label, for instance).
        column (str): the column (``Cora 100%``, ``depth 5``, ...).
        selection (Selection): the runs of the setting chosen for the cell.
    """

    row: str
    column: str
    selection: Selection


def runs_table(cells: Sequence[UsedCell]) -> pd.DataFrame:
    """One row per run used, in the order of ``cells`` and by seed within a cell."""
    rows = [
        (cell.row, cell.column, run[RUN_ID], int(run[SEED]), run[STATUS])
        for cell in cells
        for _, run in cell.selection.runs.iterrows()
    ]
    return pd.DataFrame(rows, columns=list(RUNS_COLUMNS))


def _span(values: Sequence[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}–{high}"


def early_stop(runs: pd.DataFrame) -> str:
    """The early-stopping rule of ``runs`` (``train.patience``, ``train.patience_metric``).

    ``early stop after 200 epochs without a better val_acc``; empty where no run stops early.
    """
    rules = sorted(
        {
            (int(config["train"]["patience"]), config["train"]["patience_metric"])
            for config in runs[CONFIG]
            if config["train"].get("patience")
        }
    )
    if not rules:
        return ""
    said = ", ".join(f"{patience} epochs without a better {metric}" for patience, metric in rules)
    return f"early stop after {said}"


def provenance_line(
    grid: PresetGrid,
    candidates: pd.DataFrame,
    cells: Sequence[UsedCell],
    unit: str = "cell",
    settings_apart: bool = False,
) -> str:
    """The sentence that says where the numbers of ``cells`` come from (module docstring).

    Args:
        grid: the preset's grid (preset, scale, protocol and the preset's hyper-parameters).
        candidates: the runs the cells were chosen among (for the hyper-parameter search).
        cells: the cells shown, at least one.
        unit: what a cell is called (``cell``, ``point``, ``panel``).
        settings_apart: whether each setting of the search keys is shown on its own (Figs. 2
            and 3) rather than chosen on validation.
    """
    runs = pd.concat([cell.selection.runs for cell in cells])
    epochs = ", ".join(str(int(value)) for value in sorted(runs[EPOCHS].dropna().unique()))
    seeds = _span([cell.selection.n for cell in cells])
    off = grid.off_defaults(candidates)
    if off:
        kept = (
            "each setting is drawn apart"
            if settings_apart
            else f"each {unit} keeps the setting with the best mean validation accuracy"
        )
        search = (
            f"hyper-parameters off the preset's values: {', '.join(off)} (a search or values "
            f"set by hand; {kept})"
        )
    else:
        search = f"no hyper-parameter search ({', '.join(grid.search_keys)} as the preset sets)"
    machines = "; ".join(sorted(runs[MACHINE].unique()))
    stop = early_stop(runs)
    return (
        f"Preset {grid.preset}, scale {grid.scale}, protocol {grid.protocol}; "
        f"{epochs} epochs{f' ({stop})' if stop else ''}; seeds per {unit}: {seeds}; {search}; "
        f"machine: {machines}."
    )


__all__ = ["RUNS_COLUMNS", "UsedCell", "early_stop", "provenance_line", "runs_table"]
