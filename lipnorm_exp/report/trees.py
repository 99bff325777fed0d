"""The TREES table: Fig. 5's numbers, ours beside Alon & Yahav's and the paper's.

One row per model label of the ``trees`` preset's grid, one column per tree depth with
records: the best training accuracy over the run (``best_train_acc``, %; the TREES task is
fitting, paper §7.2) as mean ± std over the seeds ``n=k`` (``†k``: k diverged), then the mean
number of passes over the training trees those runs made (``epochs_run`` × the record's
``dataset.passes_per_epoch``: a run stopped by its plateau makes fewer than its budget), with
their mini-batch size where it is not their protocol's for that depth and LipschitzNorm's scale
where it is not the paper's. Beside
each depth, Alon & Yahav's training accuracy for the same model without normalisation (their
Fig. 3) where they report one; last, the paper's value at depth 10 (Fig. 5).
"""

import pandas as pd

from lipnorm_exp.report import paper
from lipnorm_exp.report.aggregate import MISSING, cell_numbers, select
from lipnorm_exp.report.presets import PresetGrid
from lipnorm_exp.report.provenance import UsedCell
from lipnorm_exp.report.table_files import Table

TREES_PRESET = "trees"
#: the metric of every cell, and the one its seeds are pooled by
TRAIN = "best_train_acc"
CAPTION = "Fig. 5 as a table: TREES training accuracy (%) by tree depth"
NOTES = (
    "Ours: best training accuracy over the run, mean ± std over n seeds (†k: k diverged); "
    "passes: mean passes over the training trees those runs made; (batch b): trees per "
    "mini-batch where the runs' differ from their protocol's (Alon & Yahav's: 64 at d ≤ 3, 1024 "
    f"at d ≥ 4); (α = a): LipschitzNorm's scale where it is not the paper's ({paper.LIP_ALPHA:g}). "
    "`A&Y`: Alon & Yahav's "
    "training accuracy (their Fig. 3, no normalisation). `paper d = 10`: the paper's Fig. 5 "
    f"(every model not listed there < {paper.TREES_OTHERS_BELOW:.0f}). –: no value."
)


def passes_made(runs: pd.DataFrame) -> float:
    """Mean passes over the training trees of ``runs``: epochs run × passes per epoch."""
    return float((runs["epochs_run"] * runs["passes_per_epoch"]).mean())


def budgets(runs: pd.DataFrame) -> pd.Series:
    """The passes over the training trees each of ``runs`` was allowed: epochs × passes per epoch.

    A run stopped by its plateau makes fewer (:func:`passes_made`); Fig. 5 draws one budget per
    line.
    """
    return runs["epochs"] * runs["passes_per_epoch"]


def departures(runs: pd.DataFrame) -> str:
    """What ``runs`` set otherwise than their protocol and the paper: ``batch 256, α = 4``.

    A protocol with a per-depth table (``protocol.batch_size_per_depth``, keys ``d<depth>`` and
    ``default``) sets ``dataset.batch_size``; a run given another size on the command line is
    marked (``batch b``). A LipschitzNorm whose ``norm.alpha`` is not the paper's
    (:data:`~lipnorm_exp.report.paper.LIP_ALPHA`, §4) is marked ``α = a``. A cell or a point of
    Fig. 5 shows the result, so that it says when it was trained otherwise. Empty when every run
    kept both.
    """
    sizes, alphas = set(), set()
    for config in runs["config"]:
        dataset = config["dataset"]
        table = config["protocol"].get("batch_size_per_depth") or {}
        expected = table.get(f"d{dataset['depth']}", table.get("default"))
        if expected is not None and dataset.get("batch_size", expected) != expected:
            sizes.add(dataset["batch_size"])
        norm = config.get("norm", {})
        if norm.get("name") == "lip" and norm.get("alpha", paper.LIP_ALPHA) != paper.LIP_ALPHA:
            alphas.add(norm["alpha"])
    marks = [f"batch {', '.join(str(size) for size in sorted(sizes))}"] if sizes else []
    marks += [f"α = {alpha:g}" for alpha in sorted(alphas)]
    return ", ".join(marks)


def _passes_text(runs: pd.DataFrame) -> str:
    """A cell's mean passes, with what its runs set otherwise (:func:`departures`)."""
    marks = departures(runs)
    passes = f"{passes_made(runs):.0f}"
    return f"{passes} ({marks})" if marks else passes


def _published(values: dict, key) -> str:
    return f"{values[key]:g}" if key in values else MISSING


def trees_table(runs: pd.DataFrame, grid: PresetGrid) -> Table:
    """The TREES table over the runs of the ``trees`` preset (held by ``grid``)."""
    depths = sorted(int(depth) for depth in runs["tree_depth"].dropna().unique())
    display, cells, used = [], [], []
    for label in grid.labels:
        line = {"model": label}
        alon_yahav = paper.ALON_YAHAV_TRAIN_ACC.get(label, {})
        for depth in depths:
            chosen = select(
                runs[(runs["label"] == label) & (runs["tree_depth"] == depth)], TRAIN, TRAIN
            )
            passes = passes_made(chosen.runs) if chosen else float("nan")
            line[f"d = {depth}"] = chosen.text() if chosen else MISSING
            line[f"d = {depth} passes"] = _passes_text(chosen.runs) if chosen else MISSING
            line[f"d = {depth} A&Y"] = _published(alon_yahav, depth)
            cells.append(
                {
                    "model": label,
                    "tree_depth": depth,
                    **cell_numbers(chosen),
                    "passes": passes,
                    "alon_yahav": alon_yahav.get(depth, float("nan")),
                }
            )
            if chosen:
                used.append(UsedCell(label, f"tree depth {depth}", chosen))
        line[f"paper d = {paper.TREES_DEPTH}"] = _published(paper.TREES_TRAIN_ACC, label)
        display.append(line)
    return Table.of_runs("fig5_trees", CAPTION, display, cells, NOTES, grid, runs, used)


__all__ = ["TREES_PRESET", "budgets", "departures", "passes_made", "trees_table"]
