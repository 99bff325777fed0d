"""The TREES table: Fig. 5's numbers, ours beside Alon & Yahav's and the paper's.

One row per model label of the ``trees`` preset's grid, one column per tree depth with
records: the best training accuracy over the run (``best_train_acc``, %; the TREES task is
fitting, paper §7.2) as mean ± std over the seeds (``†k``: k diverged), then the mean
number of passes over the training trees those runs made (``epochs_run`` × the record's
``dataset.passes_per_epoch``: a run stopped by its plateau makes fewer than its budget), with
their mini-batch size where it is not their protocol's for that depth and LipschitzNorm's scale
where it is not the paper's. Beside
each depth, Alon & Yahav's training accuracy for the same model without normalisation (their
Fig. 3) where they report one; last, the paper's value at depth 10 (Fig. 5).
"""

import pandas as pd

from lipnorm_exp.report import published_numbers
from lipnorm_exp.report.aggregate import MISSING, cell_numbers, select
from lipnorm_exp.report.cell_columns import PASSES
from lipnorm_exp.report.grids import PresetGrid
from lipnorm_exp.report.run_row import (
    BEST_TRAIN_ACC,
    CONFIG,
    EPOCHS,
    EPOCHS_RUN,
    LABEL,
    PASSES_PER_EPOCH,
    TREE_DEPTH,
)
from lipnorm_exp.report.table_files import Table
from lipnorm_exp.report.used_runs import UsedCell

#: the table's file stem
NAME = "fig5_trees"
#: the metric of every cell, and the one its seeds are pooled by
TRAIN = BEST_TRAIN_ACC
CAPTION = "Fig. 5 as a table: TREES training accuracy (%) by tree depth"


def batch_sizes_text(table: dict) -> str:
    """A protocol's ``batch_size_per_depth`` (keys ``d<depth>`` and ``default``) in words.

    ``{d2: 64, d3: 64, d4: 1024, d5: 1024, d6: 1024, default: 2048}`` → ``64 at d ≤ 3, 1024 at
    d = 4–6, 2048 at d ≥ 7``.
    """
    depths = sorted(int(key[1:]) for key in table if key != "default")
    spans: list[list] = []  # [size, first depth, last depth]
    for depth in depths:
        if spans and spans[-1][0] == table[f"d{depth}"] and spans[-1][2] == depth - 1:
            spans[-1][2] = depth
        else:
            spans.append([table[f"d{depth}"], depth, depth])
    words = [
        f"{size} at d ≤ {last}" if k == 0 else f"{size} at d = {first}–{last}"
        if first < last else f"{size} at d = {first}"
        for k, (size, first, last) in enumerate(spans)
    ]  # fmt: skip
    if "default" in table:
        words.append(f"{table['default']} at d ≥ {depths[-1] + 1 if depths else 1}")
    return ", ".join(words)


def notes(runs: pd.DataFrame) -> str:
    """The table's notes; the batch sizes are those of the runs' protocol (its config)."""
    tables = [c["protocol"].get("batch_size_per_depth") for c in runs[CONFIG]]
    table = next((t for t in tables if t), None)
    protocol = f" ({batch_sizes_text(table)})" if table else ""
    return (
        "train: ours, best training accuracy over the run, mean ± std over the seeds (their "
        "number: seeds per cell, below; †k: k diverged); "
        "passes: mean passes over the training trees those runs made; (batch b): trees per "
        f"mini-batch where the runs' differ from their protocol's{protocol}; (α = a): "
        "LipschitzNorm's scale where it is not the paper's "
        f"({published_numbers.LIP_ALPHA:g}). `A&Y`: Alon & "
        "Yahav's training accuracy (their Fig. 3, no normalisation). `paper d = 10`: the paper's "
        "Fig. 5 (every model not listed there "
        f"< {published_numbers.TREES_OTHERS_BELOW:.0f}). –: no value."
    )


def passes_made(runs: pd.DataFrame) -> float:
    """Mean passes over the training trees of ``runs``: epochs run × passes per epoch."""
    return float((runs[EPOCHS_RUN] * runs[PASSES_PER_EPOCH]).mean())


def budgets(runs: pd.DataFrame) -> pd.Series:
    """The passes over the training trees each of ``runs`` was allowed: epochs × passes per epoch.

    A run stopped by its plateau makes fewer (`passes_made`); Fig. 5 draws one budget per
    line.
    """
    return runs[EPOCHS] * runs[PASSES_PER_EPOCH]


def departures(runs: pd.DataFrame) -> str:
    """What ``runs`` set otherwise than their protocol and the paper: ``batch 256, α = 4``.

    A protocol with a per-depth table (``protocol.batch_size_per_depth``, keys ``d<depth>`` and
    ``default``) sets ``dataset.batch_size``; a run given another size on the command line is
    marked (``batch b``). A LipschitzNorm whose ``norm.alpha`` is not the paper's
    (`LIP_ALPHA`, §4) is marked ``α = a``. A cell or
    a point of Fig. 5 shows the result, so that it says when it was trained otherwise. Empty when
    every run kept both.
    """
    sizes, alphas = set(), set()
    for config in runs[CONFIG]:
        dataset = config["dataset"]
        table = config["protocol"].get("batch_size_per_depth") or {}
        expected = table.get(f"d{dataset['depth']}", table.get("default"))
        if expected is not None and dataset.get("batch_size", expected) != expected:
            sizes.add(dataset["batch_size"])
        norm = config.get("norm", {})
        if (
            norm.get("name") == "lip"
            and norm.get("alpha", published_numbers.LIP_ALPHA) != published_numbers.LIP_ALPHA
        ):
            alphas.add(norm["alpha"])
    marks = [f"batch {', '.join(str(size) for size in sorted(sizes))}"] if sizes else []
    marks += [f"α = {alpha:g}" for alpha in sorted(alphas)]
    return ", ".join(marks)


def _passes_text(runs: pd.DataFrame) -> str:
    """A cell's mean passes, with what its runs set otherwise (`departures`)."""
    marks = departures(runs)
    passes = f"{passes_made(runs):.0f}"
    return f"{passes} ({marks})" if marks else passes


def _published(values: dict, key) -> str:
    return f"{values[key]:g}" if key in values else MISSING


def trees_table(runs: pd.DataFrame, grid: PresetGrid) -> Table:
    """The TREES table over the runs of the ``trees`` preset (held by ``grid``)."""
    depths = sorted(int(depth) for depth in runs[TREE_DEPTH].dropna().unique())
    display, cells, used = [], [], []
    header = [("", "model")]
    header += [(f"d = {depth}", sub) for depth in depths for sub in ("train", "passes", "A&Y")]
    header.append(("", f"paper d = {published_numbers.TREES_DEPTH}"))
    for label in grid.labels:
        line = {"model": label}
        alon_yahav = published_numbers.ALON_YAHAV_TRAIN_ACC.get(label, {})
        for depth in depths:
            cell = runs[(runs[LABEL] == label) & (runs[TREE_DEPTH] == depth)]
            chosen = select(cell, TRAIN, TRAIN)
            passes = passes_made(chosen.runs) if chosen else float("nan")
            line[f"d = {depth}"] = chosen.text(show_n=False) if chosen else MISSING
            line[f"d = {depth} passes"] = _passes_text(chosen.runs) if chosen else MISSING
            line[f"d = {depth} A&Y"] = _published(alon_yahav, depth)
            cells.append(
                {
                    "model": label,
                    TREE_DEPTH: depth,
                    **cell_numbers(chosen),
                    PASSES: passes,
                    "alon_yahav": alon_yahav.get(depth, float("nan")),
                }
            )
            if chosen:
                used.append(UsedCell(label, f"tree depth {depth}", chosen))
        line[f"paper d = {published_numbers.TREES_DEPTH}"] = _published(
            published_numbers.TREES_TRAIN_ACC, label
        )
        display.append(line)
    return Table.of_runs(NAME, CAPTION, display, cells, notes(runs), grid, runs, used, header)


__all__ = ["NAME", "budgets", "departures", "passes_made", "trees_table"]
