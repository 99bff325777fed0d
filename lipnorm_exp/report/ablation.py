"""The ablation table: what each ablation of the ``ablation`` preset does to each model.

Runs of the preset carry ``ablation.name`` and ``ablation.factor`` (what the ablation
changes, as text). The table has one row per dataset × missing rate × depth × ablation (with
its factor) and, per model label of the preset's grid, four columns: the test accuracy (the
selection rule of `aggregate`: mean ± std over the seeds of the
setting with the best mean validation accuracy, ``†k``), the same runs' test accuracy at the
other epoch (the last one, where the protocol reports the best validation one), the final-epoch
training
accuracy (mean over those seeds, %) and the largest attention-gradient norm of those runs
over their history (where they tracked gradients, ``train.track_gradients=true``). No
ablation is named here: rows come from the records.
"""

import math
from typing import Any

import pandas as pd

from lipnorm_exp.records import schema
from lipnorm_exp.records.labels import dataset_label, missing_label
from lipnorm_exp.records.schema import EpochRow
from lipnorm_exp.report.aggregate import (
    MISSING,
    OTHER_TITLES,
    Selection,
    cell_numbers,
    epoch_rule,
    finite,
    select,
)
from lipnorm_exp.report.grids import PresetGrid
from lipnorm_exp.report.run_row import (
    ABLATION,
    ABLATION_FACTOR,
    DATASET,
    DEPTH,
    FINAL_TRAIN_ACC,
    HISTORY,
    LABEL,
    MISSING_RATE,
)
from lipnorm_exp.report.table_files import Table
from lipnorm_exp.report.used_runs import UsedCell

#: the table's file stem
NAME = "ablation"
#: the display columns that say what a row is
LINE_KEYS = ("dataset", "missing", "depth", "ablation", "factor")
#: the frame columns that make a row
ROW_KEYS = (DATASET, MISSING_RATE, DEPTH, ABLATION)
CAPTION = (
    "Ablations: test accuracy (%), final-epoch training accuracy (%) and largest "
    "attention-gradient norm per model"
)
NOTES = (
    "test: accuracy at the epoch the caption names, mean ± std over the seeds (their number: "
    "seeds per cell, below) of the hyper-parameters with the best mean validation accuracy "
    "(†k: k diverged). final (best val): test accuracy of the same runs at the last epoch (at "
    "the best validation epoch), where every seed trained its full budget. final train: "
    "training accuracy at the last epoch, mean over those seeds. Max attn grad: the largest "
    "attention-gradient norm of those runs over their epochs and layers (– where gradients "
    "were not tracked). –: no records."
)


def max_attention_gradient(history: list[EpochRow]) -> float:
    """The largest finite attention-gradient norm of a run's history (``NaN``: none tracked)."""
    norms = [value for epoch in history for value in epoch.get(schema.GRAD_ATTN) or []]
    finite = [value for value in norms if math.isfinite(value)]
    return max(finite) if finite else math.nan


def _largest_gradient(chosen: Selection) -> float:
    norms = [max_attention_gradient(history) for history in chosen.runs[HISTORY]]
    tracked = [value for value in norms if not math.isnan(value)]
    return max(tracked) if tracked else math.nan


def _text(value: float, spec: str) -> str:
    return MISSING if math.isnan(value) else format(value, spec)


def ablation_table(runs: pd.DataFrame, grid: PresetGrid) -> Table:
    """The ablation table over the runs of the ``ablation`` preset (held by ``grid``)."""
    display, cells, used = [], [], []
    own: dict[str, None] = {}
    for (dataset, rate, depth, name), group in runs.groupby(list(ROW_KEYS), dropna=False):
        factor = "; ".join(sorted(group[ABLATION_FACTOR].astype(str).unique()))
        where = f"{dataset_label(dataset)} {missing_label(rate)}, {int(depth)} layers"
        line_values = (dataset_label(dataset), missing_label(rate), int(depth), name, factor)
        line: dict[str, Any] = dict(zip(LINE_KEYS, line_values, strict=True))
        for label in grid.labels:
            chosen = select(group[group[LABEL] == label])
            train = 100.0 * finite(chosen.runs)[FINAL_TRAIN_ACC].mean() if chosen else math.nan
            gradient = _largest_gradient(chosen) if chosen else math.nan
            line[f"{label} test"] = chosen.text(show_n=False) if chosen else MISSING
            if chosen:
                own[chosen.other_title] = None
            for title in OTHER_TITLES.values():
                line[f"{label} {title}"] = MISSING
            if chosen:
                line[f"{label} {chosen.other_title}"] = chosen.other.text()
            line[f"{label} final train"] = _text(train, ".1f")
            line[f"{label} max attn grad"] = _text(gradient, ".3g")
            cells.append(
                {
                    DATASET: dataset,
                    MISSING_RATE: rate,
                    DEPTH: int(depth),
                    ABLATION: name,
                    "factor": factor,
                    "model": label,
                    **cell_numbers(chosen),
                    FINAL_TRAIN_ACC: train,
                    "max_grad_attn": gradient,
                }
            )
            if chosen:
                used.append(UsedCell(f"{where}, {name}", label, chosen))
        display.append(line)
    subs = ("test", *own, "final train", "max attn grad")
    keys = [f"{label} {sub}" for label in grid.labels for sub in subs]
    shown = [{key: line[key] for key in (*LINE_KEYS, *keys)} for line in display]
    header = [("", key) for key in LINE_KEYS]
    header += [(label, sub) for label in grid.labels for sub in subs]
    caption = f"{CAPTION}; {epoch_rule([cell.selection for cell in used])}"
    return Table.of_runs(NAME, caption, shown, cells, NOTES, grid, runs, used, header)


__all__ = ["NAME", "ablation_table", "max_attention_gradient"]
