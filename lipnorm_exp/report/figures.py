"""The paper's figures from run records (matplotlib, Agg canvas, PNG and PDF).

Each figure belongs to a preset and is drawn from that preset's runs only (tag and grid:
:func:`~lipnorm_exp.report.aggregate.preset_runs`). A point of a curve follows the selection
rule of :mod:`lipnorm_exp.report.aggregate` at that x value (the setting with the best mean
validation accuracy, its mean over the seeds that did not diverge as the line and ± one std
as the band); a legend entry ``(†k)`` counts diverged runs among the plotted seeds, and a
point whose seeds all diverged has no value: ``†k`` stands at the foot of the panel there
and the line is broken. An x-axis spans only the values
with records. A model label of the grid without records at one of them is marked ``x`` at the
foot of the panel there and its line is broken, never interpolated. Every figure has a footer
(:func:`~lipnorm_exp.report.provenance.provenance_line`) and ``<name>.runs.csv`` beside it.
PNG and PDF files carry no time stamp and no software version, so the same records give the
same bytes; every file is written whole or not at all (:mod:`lipnorm_exp.atomic`).

- ``fig2_gradients`` (Fig. 2, preset ``gradients``): layers × epochs heat maps of the
  attention-gradient norms (log colour scale), one row per depth with records, one column per
  model label of the grid. One run per panel: the chosen setting's lowest seed.
- ``fig3_train_acc`` (Fig. 3, ``gradients``): training accuracy per epoch of the same runs,
  one panel per model label, one line per depth.
- ``fig4_pubmed_depth`` (Fig. 4, ``pubmed_depth``): test accuracy against depth.
- ``fig5_trees`` (Fig. 5, ``trees``): TREES training accuracy (``best_train_acc``, which also
  picks the setting: the figure measures how well a model can fit) against tree depth, beside
  Alon & Yahav's values (dashed) and the paper's depth-10 numbers (stars).
- ``fig6_depth`` (Fig. 6, ``depth``): test accuracy (ROC-AUC on ogbn-proteins) against depth,
  one panel per dataset of the grid with records.
"""

import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from lipnorm_exp.atomic import replacing, write_whole
from lipnorm_exp.heatmap import draw_gradient_heatmap, gradient_matrix, log_norm
from lipnorm_exp.labels import dataset_label, metric_label, missing_label
from lipnorm_exp.report import paper
from lipnorm_exp.report.aggregate import TEST, VALIDATION, Selection, curves, preset_runs, select
from lipnorm_exp.report.presets import PresetGrid
from lipnorm_exp.report.provenance import UsedCell, provenance_line, runs_table
from lipnorm_exp.report.trees import departures

#: the paper's markers (Fig. 5): circles for none, triangles for PairNorm, squares for Lip
NORM_MARKERS = {"none": "o", "pairnorm": "^", "lip": "s", "layernorm": "D"}
OTHER_MARKER = "P"
#: where a model has no records at an x value: this marker, at this height of the panel
MISSING_MARKER = "x"
MISSING_HEIGHT = 0.03
DPI = 150
#: ``savefig`` metadata per format that leaves out what changes from one run to the next
METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "ModDate": None}}
#: characters of footer text per inch of figure width
FOOTER_CHARS_PER_INCH = 16


@dataclass(frozen=True)
class Drawn:
    """A figure and the cells (points or panels) it shows, with their runs."""

    figure: Figure
    cells: tuple[UsedCell, ...]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _styles(grid: PresetGrid) -> dict[str, dict]:
    """A colour per model label of the grid (shared by every panel), a marker per norm."""
    norms = {job.label: job.norm for job in grid.jobs}
    palette = colormaps["tab10"]
    return {
        label: {"color": palette(i % 10), "marker": NORM_MARKERS.get(norm, OTHER_MARKER)}
        for i, (label, norm) in enumerate(norms.items())
    }


def _mark_missing(ax: Axes, xs: list, color, label: str | None = None) -> None:
    """``x`` markers at the foot of ``ax`` at the x values ``xs`` (a model without records)."""
    ax.plot(
        xs,
        [MISSING_HEIGHT] * len(xs),
        transform=ax.get_xaxis_transform(),
        linestyle="none",
        marker=MISSING_MARKER,
        color=color,
        label=label or "_nolegend_",
    )


def _mark_diverged(ax: Axes, x: float, diverged: int, color) -> None:
    """``†k`` at the foot of ``ax`` at ``x``: a point whose k seeds all diverged."""
    ax.annotate(
        f"†{diverged}",
        (x, MISSING_HEIGHT),
        xycoords=ax.get_xaxis_transform(),
        ha="center",
        va="bottom",
        color=color,
        fontsize="small",
    )


def _plot_curves(
    ax: Axes,
    runs: pd.DataFrame,
    x: str,
    styles: dict[str, dict],
    where: str,
    report: str = TEST,
    select_by: str = VALIDATION,
) -> list[UsedCell]:
    """Mean line and ± std band per model label of ``styles`` over the x values with records.

    Args:
        ax: the panel.
        runs: its runs.
        x: the frame column on the x-axis.
        styles: the model labels to draw, with their styles.
        where: names the x-axis in the cells returned (``depth``, ``Cora depth``).
        report: the column drawn.
        select_by: the column whose mean picks a setting.

    Returns:
        The points drawn, as cells (row: the label; column: ``<where> <x value>``).
    """
    points = curves(runs, x, report, select_by)
    xs = sorted(points["x"].unique())
    cells, partly_missing = [], False
    for label, style in styles.items():
        line = points[points["label"] == label].set_index("x").reindex(xs)
        absent = [value for value, n in zip(xs, line["n"], strict=True) if pd.isna(n)]
        if len(absent) == len(xs):
            _mark_missing(ax, xs, style["color"], f"{label} (no records)")
            continue
        diverged = int(line["n_diverged"].sum())
        mean, std = line["mean"].to_numpy(float), line["std"].to_numpy(float)
        ax.plot(xs, mean, label=f"{label} (†{diverged})" if diverged else label, **style)
        ax.fill_between(xs, mean - std, mean + std, color=style["color"], alpha=0.2, lw=0)
        for value, n, k in zip(xs, line["n"], line["n_diverged"], strict=True):
            if n == 0:
                _mark_diverged(ax, value, int(k), style["color"])
        if absent:
            _mark_missing(ax, absent, style["color"])
            partly_missing = True
        cells += [
            UsedCell(label, f"{where} {_number(value)}", selection)
            for value, selection in line["selection"].dropna().items()
        ]
    if partly_missing:
        _mark_missing(ax, [], "grey", "x: no records at that x")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    return cells


def _has_gradients(history: list) -> bool:
    return any("grad_attn" in epoch for epoch in history)


def _gradient_runs(runs: pd.DataFrame) -> dict[int, dict[str, Selection]]:
    """``{depth: {label: one run}}``: Figs. 2 and 3's runs (module docstring)."""
    rows = runs[runs["history"].map(_has_gradients)]
    picked: dict[int, dict[str, Selection]] = {}
    for (depth, label), group in rows.groupby(["depth", "label"]):
        chosen = select(group)
        lowest_seed = chosen.runs.iloc[:1]
        picked.setdefault(int(depth), {})[label] = Selection(
            lowest_seed, chosen.report, chosen.cell_runs, chosen.cell_diverged
        )
    return picked


def _gradient_cells(picked: dict[int, dict[str, Selection]]) -> tuple[UsedCell, ...]:
    return tuple(
        UsedCell(label, f"{depth} layers", selection)
        for depth, by_label in sorted(picked.items())
        for label, selection in by_label.items()
    )


def _no_records(ax: Axes) -> None:
    ax.set_axis_off()
    ax.text(0.5, 0.5, "no records", ha="center", va="center", transform=ax.transAxes)


def _on(grid: PresetGrid) -> str:
    """The datasets and missing rates of ``grid``, for a title."""
    return ", ".join(
        f"{dataset_label(name)}" + (f" ({missing_label(rate)} missing)" if rate else "")
        for name in grid.datasets
        for rate in grid.missing_rates(name)
    )


def fig2_gradients(runs: pd.DataFrame, grid: PresetGrid) -> Drawn | None:
    """Fig. 2: attention-gradient norms per layer and epoch, one panel per depth × label."""
    picked = _gradient_runs(runs)
    if not picked:
        return None
    values = [
        gradient_matrix(chosen.runs.iloc[0]["history"])[1].ravel()
        for by_label in picked.values()
        for chosen in by_label.values()
    ]
    norm = log_norm(np.concatenate(values))
    labels = grid.labels
    fig = Figure(figsize=(4.5 * len(labels), 3.5 * len(picked) + 0.6), layout="constrained")
    axes = fig.subplots(len(picked), len(labels), squeeze=False)
    for row, (depth, by_label) in enumerate(sorted(picked.items())):
        for col, label in enumerate(labels):
            ax = axes[row, col]
            if label not in by_label:
                ax.set_title(f"{label}, {depth} layers")
                _no_records(ax)
                continue
            run = by_label[label].runs.iloc[0]
            image = draw_gradient_heatmap(ax, run["history"], norm)
            ax.set_title(f"{label}, {depth} layers (seed {int(run['seed'])})")
    fig.colorbar(image, ax=axes, label="attention-gradient norm (log scale)")
    fig.suptitle(
        f"Fig. 2: attention-gradient norms on {_on(grid)} "
        f"(paper: ~$10^{{{np.log10(paper.GAT_GRADIENT_PEAK):.0f}}}$ within 100 epochs without "
        "normalisation)"
    )
    return Drawn(fig, _gradient_cells(picked))


def fig3_train_acc(runs: pd.DataFrame, grid: PresetGrid) -> Drawn | None:
    """Fig. 3: training accuracy per epoch of Fig. 2's runs, one panel per label."""
    picked = _gradient_runs(runs)
    if not picked:
        return None
    labels = grid.labels
    fig = Figure(figsize=(4.5 * len(labels), 4.1), layout="constrained")
    axes = fig.subplots(1, len(labels), squeeze=False, sharey=True)[0]
    for ax, label in zip(axes, labels, strict=True):
        ax.set_title(label)
        if not any(label in by_label for by_label in picked.values()):
            _no_records(ax)
            continue
        for depth, by_label in sorted(picked.items()):
            if label not in by_label:
                ax.plot([], [], linestyle="none", label=f"{depth} layers: no records")
                continue
            history = by_label[label].runs.iloc[0]["history"]
            accuracy = [100.0 * epoch["train_acc"] for epoch in history]
            ax.plot([epoch["epoch"] for epoch in history], accuracy, label=f"{depth} layers")
        ax.set(xlabel="epoch", ylabel="training accuracy (%)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(f"Fig. 3: convergence of the training accuracy on {_on(grid)}")
    return Drawn(fig, _gradient_cells(picked))


def fig4_pubmed_depth(runs: pd.DataFrame, grid: PresetGrid) -> Drawn:
    """Fig. 4: test accuracy against depth, one line per model label of the grid."""
    fig = Figure(figsize=(5.5, 4.6), layout="constrained")
    ax = fig.add_subplot()
    cells = _plot_curves(ax, runs, "depth", _styles(grid), "depth")
    ax.set(xlabel="graph layers", ylabel="test accuracy (%)")
    ax.set_title(f"Fig. 4: {', '.join(grid.labels)} on {_on(grid)}")
    ax.legend()
    return Drawn(fig, tuple(cells))


def fig5_trees(runs: pd.DataFrame, grid: PresetGrid) -> Drawn:
    """Fig. 5: TREES training accuracy against tree depth, beside the published values.

    Dashed lines are Alon & Yahav's training accuracies (their Fig. 3, models without
    normalisation, in the colour of the same model here); stars are the paper's values at
    depth 10 and the dotted bar the level every other model stays below there. A point whose
    runs trained on mini-batches of another size than their protocol's, or with another
    LipschitzNorm scale than the paper's, is labelled with it (``batch 256, α = 4``), as in the
    table.
    """
    styles = _styles(grid)
    fig = Figure(figsize=(6.5, 5.2), layout="constrained")
    ax = fig.add_subplot()
    train = "best_train_acc"
    cells = _plot_curves(ax, runs, "tree_depth", styles, "tree depth", train, train)
    for cell in cells:
        marks = departures(cell.selection.runs)
        if marks and cell.selection.n:
            ax.annotate(
                marks,
                (cell.selection.runs["tree_depth"].iloc[0], cell.selection.mean),
                xytext=(5, -3),
                textcoords="offset points",
                fontsize="xx-small",
                color=styles[cell.row]["color"],
            )
    for label, values in paper.ALON_YAHAV_TRAIN_ACC.items():
        ax.plot(
            list(values),
            list(values.values()),
            color=styles.get(label, {}).get("color", "grey"),
            linestyle="--",
            marker="o",
            markerfacecolor="none",
            linewidth=1,
            label=f"Alon & Yahav {label}",
        )
    depth = paper.TREES_DEPTH
    for label, value in paper.TREES_TRAIN_ACC.items():
        ax.scatter(
            depth,
            value,
            marker="*",
            s=160,
            color=styles.get(label, {}).get("color", "black"),
            edgecolor="black",
            zorder=3,
            label=f"paper {label} (depth {depth})",
        )
    ax.hlines(
        paper.TREES_OTHERS_BELOW,
        depth - 0.4,
        depth + 0.4,
        colors="grey",
        linestyles=":",
        label=f"paper: all others < {paper.TREES_OTHERS_BELOW:.0f}",
    )
    ax.set(xlabel="tree depth", ylabel="training accuracy (%)", ylim=(0, 105))
    ax.set_title("Fig. 5: TREES (Tree-NeighborsMatch) training accuracy", fontsize="medium")
    ax.legend(fontsize="x-small", ncols=2)
    return Drawn(fig, tuple(cells))


def fig6_depth(runs: pd.DataFrame, grid: PresetGrid) -> Drawn:
    """Fig. 6: test accuracy against depth, one panel per dataset of the grid with records."""
    panels = {name: runs[runs["dataset"] == name] for name in grid.datasets}
    panels = {name: rows for name, rows in panels.items() if not rows.empty}
    styles = _styles(grid)
    fig = Figure(figsize=(max(4.5 * len(panels), 6), 5.2), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    cells = []
    for ax, (name, rows) in zip(axes, panels.items(), strict=True):
        cells += _plot_curves(ax, rows, "depth", styles, f"{dataset_label(name)} depth")
        metrics = rows["metric"].dropna()
        metric = metric_label(metrics.iloc[0]) if len(metrics) else "accuracy"
        ax.set(title=dataset_label(name), xlabel="graph layers", ylabel=f"test {metric} (%)")
        ax.legend(fontsize="x-small")
    fig.suptitle(
        "Fig. 6: accuracy against depth\n(-LN LayerNorm, -PN PairNorm, -Lip LipschitzNorm)"
    )
    return Drawn(fig, tuple(cells))


@dataclass(frozen=True)
class FigureSpec:
    """One figure: its file stem, its preset, how it is drawn and what a cell of it is.

    Args:
        name (str): file stem.
        preset (str): the preset whose runs (tag and grid) make the figure.
        draw (Callable): ``draw(runs, grid)`` → :class:`Drawn`, or ``None`` without runs to draw.
        unit (str): what one cell is called in the footer (``point``, ``panel``).
    """

    name: str
    preset: str
    draw: Callable[[pd.DataFrame, PresetGrid], Drawn | None]
    unit: str = "point"


FIGURES = (
    FigureSpec("fig2_gradients", "gradients", fig2_gradients, "panel"),
    FigureSpec("fig3_train_acc", "gradients", fig3_train_acc, "panel"),
    FigureSpec("fig4_pubmed_depth", "pubmed_depth", fig4_pubmed_depth),
    FigureSpec("fig5_trees", "trees", fig5_trees),
    FigureSpec("fig6_depth", "depth", fig6_depth),
)


def add_footer(fig: Figure, text: str) -> None:
    """``text`` wrapped to the figure's width below everything else."""
    width = int(fig.get_figwidth() * FOOTER_CHARS_PER_INCH)
    fig.supxlabel(textwrap.fill(text, width), fontsize="small")


def write_figures(runs: pd.DataFrame, out_dir: Path, scale: str, protocol: str) -> list[Path]:
    """Draw every figure of :data:`FIGURES` with runs as ``<name>.png``, ``.pdf``, ``.runs.csv``.

    Args:
        runs (pandas.DataFrame): the usable runs of ``scale`` and ``protocol``.
        out_dir (Path): the figures folder.
        scale (str): the scale shown.
        protocol (str): the protocol shown.

    Prints one line per file written, and one per figure skipped for want of runs.
    """
    written = []
    for spec in FIGURES:
        found = preset_runs(runs, spec.preset, scale, protocol)
        drawn = spec.draw(*found) if found else None
        if drawn is None:
            print(f"{spec.name}: no runs of preset {spec.preset}, skipped")
            continue
        drawn_from, grid = found
        add_footer(drawn.figure, provenance_line(grid, drawn_from, drawn.cells, spec.unit))
        for suffix, metadata in METADATA.items():
            path = out_dir / f"{spec.name}.{suffix}"
            with replacing(path) as temporary:
                drawn.figure.savefig(temporary, format=suffix, dpi=DPI, metadata=metadata)
            written.append(path)
        csv = runs_table(drawn.cells).to_csv(index=False)
        written.append(write_whole(out_dir / f"{spec.name}.runs.csv", csv))
        for path in written[-3:]:
            print(f"wrote {path}")
    return written


__all__ = ["FIGURES", "Drawn", "FigureSpec", "add_footer", "write_figures"]
