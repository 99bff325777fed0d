"""The paper's figures from run records (matplotlib, Agg canvas, PNG and PDF).

Each figure belongs to a preset (its entry in `PRESETS`
lists it) and is drawn from that preset's runs only (tag and grid:
`preset_runs`). A point of a curve follows the selection
rule of `lipnorm_exp.report.aggregate` at that x value (the setting with the best mean
validation accuracy, its mean over the seeds that did not diverge as the line and ± one std
as the band); a legend entry ``(†k)`` counts diverged runs among the plotted seeds, and a
point whose seeds all diverged has no value: ``†k`` stands at the foot of the panel there
and the line is broken. An x-axis spans only the values with records, with a tick at each
where there are few (depths then evenly spaced, in order), and a legend stands beside its
panels, never over the data. A model label of the grid without records is not drawn; one
without records at some x values has its line broken there, never interpolated; the footer
names both. Every figure has a footer (what its lines and bands are, what is not drawn, then
`provenance_line`) and ``<name>.runs.csv`` beside it.
PNG and PDF files carry no time stamp and no software version, so the same records give the
same bytes; every file is written whole or not at all (`lipnorm_exp.util.atomic`).

- ``fig2_gradients`` (Fig. 2, preset ``gradients``): layers × epochs heat maps of the
  attention-gradient norms (log colour scale, one per model label and setting; white where a
  norm is 0). Each setting of the search keys (``model.dropout``, ``train.lr``, ...) is a group
  of rows titled with its values, the preset's own first: one row per depth with records, one
  column per model label with records there; a panel without a run is not drawn (the footer
  names it). One run per panel: the lowest seed. The paper's peak (~10^8) stands in the title
  at scale paper only.
- ``fig3_train_acc`` (Fig. 3, ``gradients``): training accuracy per epoch of the same
  settings, a row per setting, one panel per model label, a colour per depth and one line per
  run: every seed.
- ``fig4_pubmed_depth`` (Fig. 4, ``pubmed_depth``): test accuracy against depth.
- ``fig5_trees`` (Fig. 5, ``trees``): TREES training accuracy (``best_train_acc``, which also
  picks the setting: the figure measures how well a model can fit) against tree depth, one line
  per model label at one training budget (runs of another budget apart and labelled), beside
  Alon & Yahav's values (dashed) and, on a panel of their own, the paper's depth-10 numbers
  (stars); the notes beside points are moved apart until none meets another (`keep_apart`).

In Figs. 4–6 each model label's points stand a little right or left of their x value
(`dodge`), so that a model whose values equal another's is never hidden under it.
- ``fig6_depth`` (Fig. 6, ``depth``): test accuracy (ROC-AUC on ogbn-proteins) against depth,
  one panel per dataset of the grid with records.
"""

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure, SubFigure
from matplotlib.lines import Line2D
from matplotlib.text import Annotation
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import Bbox

from lipnorm_exp.records import schema
from lipnorm_exp.records.heatmap import (
    BLANK_CELLS,
    draw_gradient_heatmap,
    gradient_matrix,
    log_norm,
)
from lipnorm_exp.records.labels import dataset_label, metric_label, missing_label
from lipnorm_exp.records.schema import EpochRow
from lipnorm_exp.report import published_numbers
from lipnorm_exp.report.aggregate import (
    SELECTION,
    TEST,
    VALIDATION,
    HyperSetting,
    Selection,
    X,
    curves,
    hyper_settings,
    number_text,
    preset_runs,
    select_group,
    std_name,
)
from lipnorm_exp.report.cell_columns import MEAN, N_DIVERGED, STD, N
from lipnorm_exp.report.grids import PresetGrid
from lipnorm_exp.report.run_row import DATASET, DEPTH, HISTORY, LABEL, METRIC, SEED, TREE_DEPTH
from lipnorm_exp.report.trees import TRAIN, budgets, departures
from lipnorm_exp.report.used_runs import UsedCell, provenance_line, runs_table
from lipnorm_exp.util.atomic import replacing, write_whole

#: the paper's markers (Fig. 5): circles for none, triangles for PairNorm, squares for Lip
NORM_MARKERS = {"none": "o", "pairnorm": "^", "lip": "s", "layernorm": "D"}
OTHER_MARKER = "P"
#: Fig. 5: Alon & Yahav's values (dashed lines), apart from ours (hollow: another budget)
ALON_YAHAV_MARKER = "."
#: where a point's seeds all diverged: ``†k`` at this height of the panel
MISSING_HEIGHT = 0.03
#: an axis of at most this many values run has a tick at each (evenly spaced, for depths)
CATEGORICAL_MAX = 8
#: Fig. 5: how far right of its tree depth a point of another training budget stands
APART_OFFSET = 0.25
#: a curve's points stand apart from the other labels' at the same x (a dodge), so that none
#: hides another: the labels spread over at most this fraction of the gap between x values,
#: each at most `DODGE_STEP` of it from the next
DODGE_SPAN, DODGE_STEP = 0.3, 0.05
#: Fig. 5: a budget's words are not repeated within this many points (%) of the same words
TEXT_CLEARANCE = 4.0
#: Fig. 5: points (1/72 inch) a note moves down to clear another (`keep_apart`)
TEXT_STEP = 2
#: Fig. 5: pixels of clearance around a note's box (`keep_apart`)
TEXT_PAD = 1.5
#: Fig. 5: at most so many layouts while notes are moved apart (`keep_apart`)
LAYOUT_ROUNDS = 4
DPI = 150
#: Fig. 2: inches of one heat-map panel with its colour bar
PANEL_WIDTH, PANEL_HEIGHT = 5.0, 3.0
#: ``savefig`` metadata per format that leaves out what changes from one run to the next
METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "ModDate": None}}
#: characters of footer text per inch of figure width
FOOTER_CHARS_PER_INCH = 16


@dataclass(frozen=True)
class Drawn:
    """A figure, the cells (points or panels) it shows with their runs, and its footer's notes.

    ``apart`` holds the notes beside points that `finish` keeps from meeting (`keep_apart`).
    """

    figure: Figure
    cells: tuple[UsedCell, ...]
    notes: tuple[str, ...] = ()
    apart: tuple[Annotation, ...] = ()


def _styles(grid: PresetGrid) -> dict[str, dict]:
    """A colour per model label of the grid (shared by every panel), a marker per norm."""
    norms = {job.label: job.norm for job in grid.jobs}
    palette = colormaps["tab10"]
    return {
        label: {"color": palette(i % 10), "marker": NORM_MARKERS.get(norm, OTHER_MARKER)}
        for i, (label, norm) in enumerate(norms.items())
    }


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


@dataclass(frozen=True)
class Curves:
    """What `_plot_curves` drew, and what it left out.

    Args:
        cells (list[UsedCell]): the points drawn.
        absent (list[str]): model labels without a record at any x value (not drawn).
        gaps (list[str]): ``GAT-Lip at 8, 16``: labels drawn, without records at those values.
        shifts (dict[str, float]): how far right of its x value each label's points stand
            (`dodge`).
    """

    cells: list[UsedCell]
    absent: list[str]
    gaps: list[str]
    shifts: dict[str, float]

    def notes(self, where: str = "") -> list[str]:
        """The footer's sentences on what is not drawn (on the panel ``where``, if named)."""
        on = f" on {where}" if where else ""
        notes = [f"Not drawn (no records{on}): {', '.join(self.absent)}."] if self.absent else []
        if self.gaps:
            notes.append(f"No records (line broken{on}): {'; '.join(self.gaps)}.")
        return notes


def _value_ticks(ax: Axes, values: list, positions: list) -> None:
    """A tick at each x value run, labelled with it, where there are few; whole numbers else."""
    if len(values) > CATEGORICAL_MAX:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        return
    ax.set_xticks(positions, [number_text(value) for value in values])
    if len(positions) == 1:
        ax.set_xlim(positions[0] - 1, positions[0] + 1)


def dodge(labels: Sequence[str], positions: Sequence[float]) -> dict[str, float]:
    """How far right of its x position each label's points stand, so that none hides another.

    The labels, in their order, spread evenly around 0 over at most `DODGE_SPAN` of the
    smallest gap between ``positions`` (1 for a single position), each at most `DODGE_STEP`
    of it from the next.
    """
    gap = float(np.diff(sorted(positions)).min()) if len(positions) > 1 else 1.0
    step = gap * min(DODGE_STEP, DODGE_SPAN / max(len(labels) - 1, 1))
    middle = (len(labels) - 1) / 2
    return {label: step * (i - middle) for i, label in enumerate(labels)}


def _plot_curves(
    ax: Axes,
    runs: pd.DataFrame,
    x: str,
    styles: dict[str, dict],
    where: str,
    report: str = TEST,
    select_by: str = VALIDATION,
    categorical: bool = False,
) -> Curves:
    """Mean line and ± std band per model label of ``styles`` over the x values with records.

    A label without records at any x value is not drawn; one without records at some is
    broken there (never interpolated); both are said in the returned `Curves`. Each label's
    points stand a little apart from the others' (`dodge`), so that equal values hide none.

    Args:
        ax: the panel.
        runs: its runs.
        x: the frame column on the x-axis.
        styles: the model labels to draw, with their styles.
        where: names the x-axis in the cells returned (``depth``, ``Cora depth``).
        report: the column drawn.
        select_by: the column whose mean picks a setting.
        categorical: the x values run evenly spaced, in order (a depth axis of few depths),
            where there are at most `CATEGORICAL_MAX`.

    Returns:
        The points drawn, as cells (row: the label; column: ``<where> <x value>``), and the
        labels and values left out.
    """
    points = curves(runs, x, report, select_by)
    xs = sorted(points[X].unique())
    spaced = categorical and len(xs) <= CATEGORICAL_MAX
    positions = list(range(len(xs))) if spaced else xs
    drawn = Curves([], [], [], dodge(list(styles), positions))
    for label, style in styles.items():
        at_x = [position + drawn.shifts[label] for position in positions]
        line = points[points[LABEL] == label].set_index(X).reindex(xs)
        missing = [value for value, n in zip(xs, line[N], strict=True) if pd.isna(n)]
        if len(missing) == len(xs):
            drawn.absent.append(label)
            continue
        diverged = int(line[N_DIVERGED].sum())
        mean, std = line[MEAN].to_numpy(float), line[STD].to_numpy(float)
        ax.plot(at_x, mean, label=f"{label} (†{diverged})" if diverged else label, **style)
        ax.fill_between(at_x, mean - std, mean + std, color=style["color"], alpha=0.2, lw=0)
        for at, n, k in zip(at_x, line[N], line[N_DIVERGED], strict=True):
            if n == 0:
                _mark_diverged(ax, at, int(k), style["color"])
        if missing:
            drawn.gaps.append(f"{label} at {', '.join(number_text(v) for v in missing)}")
        drawn.cells.extend(
            UsedCell(label, f"{where} {number_text(value)}", selection)
            for value, selection in line[SELECTION].dropna().items()
        )
    _value_ticks(ax, xs, positions)
    ax.grid(alpha=0.3)
    return drawn


def band_note(cells: Sequence[UsedCell]) -> str:
    """What a figure's lines and bands are: mean and ± 1 std over each point's seeds."""
    stds = sorted({std_name(cell.selection.ddof) for cell in cells})
    return f"Lines: mean over each point's seeds; bands: ± 1 {' or '.join(stds)} over them."


def _legend_beside(ax: Axes) -> None:
    """``ax``'s legend right of it, outside the data (the layout makes room for it)."""
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)


def _has_gradients(history: list[EpochRow]) -> bool:
    return any(schema.GRAD_ATTN in epoch for epoch in history)


def _gradient_runs(runs: pd.DataFrame, every_seed: bool) -> dict[int, dict[str, Selection]]:
    """``{depth: {label: runs}}`` of one setting: Figs. 2 and 3's runs (module docstring).

    The runs of the setting chosen for each depth and label: every seed (``every_seed``) or
    only the lowest.
    """
    rows = runs[runs[HISTORY].map(_has_gradients)]
    picked: dict[int, dict[str, Selection]] = {}
    for (depth, label), group in rows.groupby([DEPTH, LABEL]):
        chosen = select_group(group)
        shown = chosen.runs if every_seed else chosen.runs.iloc[:1]
        picked.setdefault(int(depth), {})[label] = Selection(
            shown, chosen.report, chosen.cell_runs, chosen.cell_diverged
        )
    return picked


def _gradient_settings(
    runs: pd.DataFrame, grid: PresetGrid, every_seed: bool = False
) -> list[tuple[HyperSetting, dict[int, dict[str, Selection]]]]:
    """Each setting with gradient records and its `_gradient_runs`."""
    settings = [
        (setting, _gradient_runs(setting.runs, every_seed))
        for setting in hyper_settings(runs, grid)
    ]
    return [(setting, picked) for setting, picked in settings if picked]


def _gradient_cells(
    settings: list[tuple[HyperSetting, dict[int, dict[str, Selection]]]],
) -> tuple[UsedCell, ...]:
    return tuple(
        UsedCell(label, f"{setting.text}, {depth} layers", selection)
        for setting, picked in settings
        for depth, by_label in sorted(picked.items())
        for label, selection in by_label.items()
    )


def _shown_labels(labels: Sequence[str], picked: dict[int, dict[str, Selection]]) -> list[str]:
    """The model labels of ``labels`` with a run at some depth of ``picked``, in their order."""
    return [label for label in labels if any(label in by_label for by_label in picked.values())]


def _unshown(
    labels: Sequence[str], settings: list[tuple[HyperSetting, dict[int, dict[str, Selection]]]]
) -> str:
    """Figs. 2 and 3's footer note on the panels not drawn: a label without runs in a setting.

    ``GAT at dropout 0, lr 0.001 (20, 30 layers)``; empty where every panel has runs.
    """
    missing = []
    for setting, picked in settings:
        for label in labels:
            depths = [
                str(depth) for depth, by_label in sorted(picked.items()) if label not in by_label
            ]
            if depths:
                missing.append(f"{label} at {setting.text} ({', '.join(depths)} layers)")
    return f"Not drawn (no records): {'; '.join(missing)}." if missing else ""


def _on(grid: PresetGrid) -> str:
    """The datasets and missing rates of ``grid``, for a title."""
    return ", ".join(
        f"{dataset_label(name)}" + (f" ({missing_label(rate)} missing)" if rate else "")
        for name in grid.datasets
        for rate in grid.missing_rates(name)
    )


def _heatmap_column(
    panel: SubFigure, axes: list[Axes], label: str, picked: dict[int, Selection]
) -> bool:
    """Fig. 2's panels of ``label``, one per depth of ``picked``, on one colour scale and bar.

    Returns:
        Whether a panel has blank cells (`BLANK_CELLS`).
    """
    histories = {depth: selection.runs.iloc[0] for depth, selection in picked.items()}
    values = [gradient_matrix(run[HISTORY])[1].ravel() for run in histories.values()]
    norm = log_norm(np.concatenate(values))
    blank = False
    for ax, (depth, run) in zip(axes, histories.items(), strict=True):
        image = draw_gradient_heatmap(ax, run[HISTORY], norm)
        drawn = image.get_array()
        assert drawn is not None, "a drawn heatmap holds its values"
        blank |= bool(np.ma.getmaskarray(drawn).any())
        ax.set_title(f"{label}, {depth} layers (seed {int(run[SEED])})")
    panel.colorbar(image, ax=axes, label=f"{label}: attention-gradient norm")
    return blank


def _paper_peak(grid: PresetGrid) -> str:
    """Fig. 2's reference, at the paper's scale only: the paper's GAT peak (its Fig. 2)."""
    if grid.scale != "paper":
        return ""
    power = np.log10(published_numbers.GAT_GRADIENT_PEAK)
    return f" (paper: ~$10^{{{power:.0f}}}$ within 100 epochs without normalisation)"


def fig2_gradients(runs: pd.DataFrame, grid: PresetGrid) -> Drawn | None:
    """Fig. 2: attention-gradient norms per layer and epoch, one panel per depth × label.

    Each setting of the search keys is drawn apart (a row of panels per depth under its
    title), the preset's own first; each label of a setting has its own colour scale, so that
    LipschitzNorm's bounded norms are not flattened by the plain GAT's blow-up. Only panels
    with a run are drawn (the footer names the others), and the title gives the paper's peak
    only at the paper's scale, whose runs it describes.
    """
    settings = _gradient_settings(runs, grid)
    if not settings:
        return None
    shown = [_shown_labels(grid.labels, picked) for _, picked in settings]
    columns = max(len(labels) for labels in shown)
    heights = [len(picked) for _, picked in settings]
    size = (PANEL_WIDTH * columns, PANEL_HEIGHT * sum(heights) + 1.0)
    fig = Figure(figsize=size, layout="constrained")
    panels = fig.subfigures(len(settings), 1, height_ratios=heights, squeeze=False)[:, 0]
    blank = False
    for panel, (setting, picked), labels in zip(panels, settings, shown, strict=True):
        depths = sorted(picked)
        axes = panel.subplots(len(depths), columns, squeeze=False)
        for col in range(columns):
            label = labels[col] if col < len(labels) else None
            present = {d: picked[d][label] for d in depths if label in picked[d]}
            for row, depth in enumerate(depths):
                if depth not in present:
                    axes[row, col].remove()
            if present:
                column = [axes[depths.index(depth), col] for depth in present]
                blank |= _heatmap_column(panel, column, str(label), present)
        panel.suptitle(setting.title, fontsize="medium")
    note = f"\na colour scale per model; {BLANK_CELLS}" if blank else "\na colour scale per model"
    fig.suptitle(f"Fig. 2: attention-gradient norms on {_on(grid)}{_paper_peak(grid)}{note}")
    unshown = _unshown(grid.labels, settings)
    return Drawn(fig, _gradient_cells(settings), (unshown,) if unshown else ())


def _accuracy_panel(
    ax: Axes, label: str, picked: dict[int, dict[str, Selection]], colours: dict[int, str]
) -> None:
    """Fig. 3's panel of ``label``: training accuracy per epoch, one line per depth.

    ``colours`` holds every depth of the figure; those without a run here are named in the
    title. ``label`` has a run at some depth of ``picked`` (`_shown_labels`).
    """
    drawn = [depth for depth in colours if label in picked.get(depth, {})]
    absent = [str(depth) for depth in colours if depth not in drawn]
    ax.set_title(label + (f" ({', '.join(absent)} layers: no records)" if absent else ""))
    for depth in drawn:
        for _, run in picked[depth][label].runs.iterrows():
            accuracy = [100.0 * epoch[schema.TRAIN_ACC] for epoch in run[HISTORY]]
            epochs = [epoch[schema.EPOCH] for epoch in run[HISTORY]]
            name = f"{depth} layers, seed {int(run[SEED])}"
            ax.plot(epochs, accuracy, color=colours[depth], linewidth=1, alpha=0.7, label=name)
    ax.set(xlabel="epoch", ylabel="training accuracy (%)", ylim=(0, 100))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)


def fig3_train_acc(runs: pd.DataFrame, grid: PresetGrid) -> Drawn | None:
    """Fig. 3: training accuracy per epoch of Fig. 2's runs, one panel per label.

    Each setting of the search keys is a row of panels under its title, the preset's own first
    (the paper's claim, GAT-Lip trains at every depth, is checked under each); a colour per
    depth, named in one legend outside the panels. Only panels with a run are drawn (the
    footer names the others).
    """
    settings = _gradient_settings(runs, grid, every_seed=True)
    if not settings:
        return None
    shown = [_shown_labels(grid.labels, picked) for _, picked in settings]
    columns = max(len(labels) for labels in shown)
    depths = sorted({depth for _, picked in settings for depth in picked})
    colours = {depth: f"C{i}" for i, depth in enumerate(depths)}
    fig = Figure(figsize=(4.5 * columns + 1.4, 3.8 * len(settings) + 1.0), layout="constrained")
    panels = fig.subfigures(len(settings), 1, squeeze=False)[:, 0]
    for panel, (setting, picked), labels in zip(panels, settings, shown, strict=True):
        axes = panel.subplots(1, columns, squeeze=False)[0]
        for ax, label in zip(axes, labels, strict=False):
            _accuracy_panel(ax, label, picked, colours)
        for ax in axes[len(labels) :]:
            ax.remove()
        panel.suptitle(setting.title, fontsize="medium")
    handles = [Line2D([], [], color=colours[depth], label=f"{depth} layers") for depth in depths]
    fig.legend(handles=handles, loc="outside right upper")
    fig.suptitle(f"Fig. 3: convergence of the training accuracy on {_on(grid)} (a line per seed)")
    unshown = _unshown(grid.labels, settings)
    return Drawn(fig, _gradient_cells(settings), (unshown,) if unshown else ())


def drawn_labels(grid: PresetGrid, absent: list[str]) -> list[str]:
    """The model labels of ``grid`` drawn: those not ``absent``."""
    return [label for label in grid.labels if label not in absent]


def fig4_pubmed_depth(runs: pd.DataFrame, grid: PresetGrid) -> Drawn:
    """Fig. 4: test accuracy against depth, one line per model label of the grid."""
    fig = Figure(figsize=(5.5, 4.6), layout="constrained")
    ax = fig.add_subplot()
    drawn = _plot_curves(ax, runs, DEPTH, _styles(grid), "depth", categorical=True)
    ax.set(xlabel="graph layers", ylabel="test accuracy (%)")
    ax.set_title(f"Fig. 4: {', '.join(drawn_labels(grid, drawn.absent))} on {_on(grid)}")
    _legend_beside(ax)
    return Drawn(fig, tuple(drawn.cells), (band_note(drawn.cells), *drawn.notes()))


#: Fig. 5: the column of a run's budget while `_line_budget` counts the cells of each
_BUDGET: Final = "budget"


def _line_budget(runs: pd.DataFrame) -> float:
    """Fig. 5's budget of the lines: the one most (model label, tree depth) cells have runs of.

    Budgets are `budgets`; a tie goes to the smaller.
    """
    cells = runs.assign(**{_BUDGET: budgets(runs)}).drop_duplicates([LABEL, TREE_DEPTH, _BUDGET])
    counts = cells[_BUDGET].value_counts()
    return float(counts[counts == counts.max()].index.min())


def _passes(budget: float) -> str:
    return f"{budget:.0f} passes"


def _mark_departures(ax: Axes, drawn: Curves, styles: dict[str, dict]) -> list[Annotation]:
    """Beside each point drawn, what its runs set otherwise (``batch 256, α = 4``)."""
    notes = []
    for cell in drawn.cells:
        marks = departures(cell.selection.runs)
        if marks and cell.selection.n:
            x = cell.selection.runs[TREE_DEPTH].iloc[0] + drawn.shifts[cell.row]
            notes.append(
                ax.annotate(
                    marks,
                    (x, cell.selection.mean),
                    xytext=(5, -3),
                    textcoords="offset points",
                    fontsize="xx-small",
                    color=styles[cell.row]["color"],
                )
            )
    return notes


def _other_budget_points(
    ax: Axes, runs: pd.DataFrame, styles: dict[str, dict]
) -> tuple[list[UsedCell], list[Annotation]]:
    """Fig. 5's runs of other budgets than the lines', each cell's best drawn apart.

    Per model label and tree depth, the setting with the best training accuracy: a hollow marker
    right of the depth with its budget beside it (`_label_apart`). Returns the cells and the
    words written.
    """
    cells, words = [], []
    for (label, depth), group in runs.groupby([LABEL, TREE_DEPTH]):
        chosen = select_group(group, TRAIN, TRAIN)
        budget = budgets(chosen.runs).iloc[0]
        x, style = depth + APART_OFFSET, styles[label]
        cells.append(UsedCell(label, f"{_passes(budget)}, tree depth {int(depth)}", chosen))
        if not chosen.n:
            _mark_diverged(ax, x, chosen.n_diverged, style["color"])
            continue
        ax.plot([x], [chosen.mean], linestyle="none", markerfacecolor="none", **style)
        text = ", ".join(filter(None, (_passes(budget), departures(chosen.runs))))
        words.append((x, chosen.mean, text))
    return cells, _label_apart(ax, words)


def _label_apart(ax: Axes, words: list[tuple[float, float, str]]) -> list[Annotation]:
    """The words ``(x, y, text)`` beside Fig. 5's points drawn apart, top to bottom.

    Words already standing within `TEXT_CLEARANCE` points at the same x are not repeated
    (`keep_apart` then moves those that meet).
    """
    placed: list[tuple[float, float, str]] = []
    notes = []
    for x, y, text in sorted(words, key=lambda word: (word[0], -word[1])):
        near = [said for x0, y0, said in placed if x0 == x and abs(y - y0) < TEXT_CLEARANCE]
        if text in near:
            continue
        placed.append((x, y, text))
        notes.append(
            ax.annotate(
                text,
                (x, y),
                xytext=(4, -3),
                textcoords="offset points",
                fontsize="xx-small",
                color="dimgray",
            )
        )
    return notes


def keep_apart(fig: Figure, notes: Sequence[Annotation]) -> None:
    """Move each of ``notes`` down a line at a time until its box meets none before it.

    Boxes are compared in display units, each padded by `TEXT_PAD` pixels, after the figure's
    layout; where moving a note changes the layout, it is laid out and checked again.
    """
    canvas = FigureCanvasAgg(fig)
    for _ in range(LAYOUT_ROUNDS):
        fig.draw_without_rendering()
        renderer = canvas.get_renderer()
        placed: list[Bbox] = []
        moved = False
        for note in notes:
            box = note.get_window_extent(renderer).padded(TEXT_PAD)
            while any(box.overlaps(other) for other in placed):
                x, y = note.xyann
                note.xyann = (x, y - TEXT_STEP)
                box = note.get_window_extent(renderer).padded(TEXT_PAD)
                moved = True
            placed.append(box)
        if not moved:
            return


def _alon_yahav_lines(ax: Axes, styles: dict[str, dict], depths: list[float]) -> None:
    """Alon & Yahav's training accuracies (their Fig. 3) over the span of ``depths``.

    Models without normalisation, dashed with hollow circles in the colour of the same model
    here.
    """
    for label, values in published_numbers.ALON_YAHAV_TRAIN_ACC.items():
        shown = {
            depth: value for depth, value in values.items() if min(depths) <= depth <= max(depths)
        }
        ax.plot(
            list(shown),
            list(shown.values()),
            color=styles.get(label, {}).get("color", "grey"),
            linestyle="--",
            marker=ALON_YAHAV_MARKER,
            linewidth=1,
            label=f"Alon & Yahav {label}",
        )


def _paper_depth_panel(ax: Axes, styles: dict[str, dict]) -> None:
    """The paper's Fig. 5 at tree depth 10, on a panel of its own.

    Its values (stars, named) and the level every other model stays below there (dotted).
    """
    depth = published_numbers.TREES_DEPTH
    for label, value in published_numbers.TREES_TRAIN_ACC.items():
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
        ax.annotate(label, (depth, value), xytext=(0, 8), textcoords="offset points", ha="center")
    ax.hlines(
        published_numbers.TREES_OTHERS_BELOW,
        depth - 0.4,
        depth + 0.4,
        colors="grey",
        linestyles=":",
    )
    ax.set(xlim=(depth - 0.6, depth + 0.6), xticks=[depth], xlabel="tree depth", title="paper")
    ax.grid(alpha=0.3)


def _fig5_keys(budget: float, apart: bool) -> list[Line2D]:
    """Fig. 5's legend entries for what the model labels' entries do not say."""
    hollow: dict[str, Any] = {
        "linestyle": "none",
        "marker": "o",
        "markerfacecolor": "none",
        "color": "grey",
    }
    keys = [
        Line2D(
            [],
            [],
            color="grey",
            linestyle="--",
            marker=ALON_YAHAV_MARKER,
            label="Alon & Yahav, no normalisation",
        ),
        Line2D(
            [],
            [],
            linestyle="none",
            marker="*",
            markersize=12,
            color="grey",
            markeredgecolor="black",
            label=f"paper, depth {published_numbers.TREES_DEPTH}",
        ),
        Line2D(
            [],
            [],
            color="grey",
            linestyle=":",
            label=f"paper: all others < {published_numbers.TREES_OTHERS_BELOW:.0f}",
        ),
    ]
    if apart:
        keys.insert(
            0, Line2D([], [], **hollow, label=f"best at another budget than {_passes(budget)}")
        )
    return keys


def fig5_trees(runs: pd.DataFrame, grid: PresetGrid) -> Drawn:
    """Fig. 5: TREES training accuracy against tree depth, beside the published values.

    A line joins the points of one training budget (the passes a run may make:
    `budgets`), the one most cells have; where a model has
    runs of other budgets at a depth, the best of them stands apart, right of the depth, hollow
    and labelled with its budget. Dashed lines are Alon & Yahav's training accuracies (their
    Fig. 3, models without normalisation, in the colour of the same model here) over the
    depths drawn; the paper's depth-10 values (stars) and the level every other model stays
    below there (dotted) have a panel of their own. A point whose runs trained on mini-batches
    of another size than their protocol's, or with another LipschitzNorm scale than the paper's,
    is labelled with it (``batch 256, α = 4``), as in the table. The legend stands outside the
    panels.
    """
    styles = _styles(grid)
    budget = _line_budget(runs)
    on_line = budgets(runs) == budget
    fig = Figure(figsize=(8.5, 5.2), layout="constrained")
    ax, paper_ax = fig.subplots(1, 2, sharey=True, width_ratios=[4, 1])
    drawn = _plot_curves(
        ax, runs[on_line], TREE_DEPTH, styles, f"{_passes(budget)}, tree depth", TRAIN, TRAIN
    )
    handles, _ = ax.get_legend_handles_labels()
    marks = _mark_departures(ax, drawn, styles)
    apart, words = _other_budget_points(ax, runs[~on_line], styles)
    cells = drawn.cells + apart
    _alon_yahav_lines(ax, styles, sorted(runs[TREE_DEPTH].unique()))
    _paper_depth_panel(paper_ax, styles)
    ax.set(xlabel="tree depth", ylabel="training accuracy (%)", ylim=(0, 105))
    ax.set_title(f"lines: runs of at most {_passes(budget)}", fontsize="medium")
    fig.legend(
        handles=handles + _fig5_keys(budget, apart=not on_line.all()),
        loc="outside right center",
        fontsize="x-small",
    )
    fig.suptitle("Fig. 5: TREES (Tree-NeighborsMatch) training accuracy")
    notes = (band_note(drawn.cells), *drawn.notes())
    return Drawn(fig, tuple(cells), notes, (*marks, *words))


def fig6_depth(runs: pd.DataFrame, grid: PresetGrid) -> Drawn:
    """Fig. 6: test accuracy against depth, one panel per dataset of the grid with records."""
    panels = {name: runs[runs[DATASET] == name] for name in grid.datasets}
    panels = {name: rows for name, rows in panels.items() if not rows.empty}
    styles = _styles(grid)
    fig = Figure(figsize=(max(4.5 * len(panels), 6), 5.2), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    cells, notes = [], []
    for ax, (name, rows) in zip(axes, panels.items(), strict=True):
        drawn = _plot_curves(
            ax, rows, DEPTH, styles, f"{dataset_label(name)} depth", categorical=True
        )
        cells += drawn.cells
        notes += drawn.notes(dataset_label(name) if len(panels) > 1 else "")
        metrics = rows[METRIC].dropna()
        metric = metric_label(metrics.iloc[0]) if len(metrics) else "accuracy"
        ax.set(title=dataset_label(name), xlabel="graph layers", ylabel=f"test {metric} (%)")
        _legend_beside(ax)
    fig.suptitle(
        "Fig. 6: accuracy against depth\n(-LN LayerNorm, -PN PairNorm, -Lip LipschitzNorm)"
    )
    return Drawn(fig, tuple(cells), (band_note(cells), *notes))


@dataclass(frozen=True)
class FigureSpec:
    """One figure: its file stem, how it is drawn and what a cell of it is.

    Args:
        name (str): file stem.
        draw (Callable): ``draw(runs, grid)`` → `Drawn`, or ``None`` without runs to draw.
        unit (str): what one cell is called in the footer (``point``, ``panel``).
        settings_apart (bool): whether it draws each setting of the search keys on its own
            (said in the footer).
    """

    name: str
    draw: Callable[[pd.DataFrame, PresetGrid], Drawn | None]
    unit: str = "point"
    settings_apart: bool = False


def add_footer(fig: Figure, text: str) -> None:
    """``text`` wrapped to the figure's width below everything else."""
    width = int(fig.get_figwidth() * FOOTER_CHARS_PER_INCH)
    fig.supxlabel(textwrap.fill(text, width), fontsize="small")


def finish(drawn: Drawn, footer: str) -> Figure:
    """``drawn``'s figure as written: its notes and ``footer`` below, its notes kept apart."""
    add_footer(drawn.figure, " ".join(filter(None, (*drawn.notes, footer))))
    keep_apart(drawn.figure, drawn.apart)
    return drawn.figure


def write_figures(
    runs: pd.DataFrame,
    out_dir: Path,
    scale: str,
    protocol: str,
    figures: Sequence[tuple[str, FigureSpec]],
) -> list[Path]:
    """Draw every figure of ``figures`` with runs as ``<name>.png``, ``.pdf``, ``.runs.csv``.

    Args:
        runs (pandas.DataFrame): the usable runs of ``scale`` and ``protocol``.
        out_dir (Path): the figures folder.
        scale (str): the scale shown.
        protocol (str): the protocol shown.
        figures (Sequence): ``(preset, figure)`` pairs, each figure drawn from its preset's
            runs (`owned_figures`).

    Prints one line per file written, and one per figure skipped for want of runs.
    """
    written = []
    for preset, spec in figures:
        found = preset_runs(runs, preset, scale, protocol)
        drawn = spec.draw(*found) if found else None
        if not found or drawn is None:
            print(f"{spec.name}: no runs of preset {preset}, skipped")
            continue
        drawn_from, grid = found
        footer = provenance_line(grid, drawn_from, drawn.cells, spec.unit, spec.settings_apart)
        figure = finish(drawn, footer)
        for suffix, metadata in METADATA.items():
            path = out_dir / f"{spec.name}.{suffix}"
            with replacing(path) as temporary:
                figure.savefig(temporary, format=suffix, dpi=DPI, metadata=metadata)
            # the layout the first format computed stands for the next: the same positions,
            # and a figure's layout (the costliest step of a save) done once
            figure.set_layout_engine("none")
            written.append(path)
        csv = runs_table(drawn.cells).to_csv(index=False)
        written.append(write_whole(out_dir / f"{spec.name}.runs.csv", csv))
        for path in written[-3:]:
            print(f"wrote {path}")
    return written


__all__ = ["Drawn", "FigureSpec", "add_footer", "dodge", "finish", "keep_apart", "write_figures"]
