"""The paper's figures from run records (matplotlib, Agg canvas, PNG and PDF).

Each figure takes the usable runs of one scale (:func:`~lipnorm_exp.report.aggregate.usable_runs`)
and selects its records by config content. A point of a curve follows the selection rule of
:mod:`lipnorm_exp.report.aggregate` at that x value (the setting with the best mean
validation accuracy, its mean over seeds as the line and ± one std as the band); a legend
entry ``(†k)`` counts diverged runs among the plotted seeds.

- ``fig2_gradients`` (Fig. 2): 20- and 30-layer GAT on Cora (0% missing) with tracked
  gradients: layers × epochs heat maps of the attention-gradient norms (log colour scale),
  one column per normalisation (none, Lip). One run per panel: the chosen setting's
  lowest seed.
- ``fig3_train_acc`` (Fig. 3): training accuracy per epoch of the same runs, one panel per
  normalisation, one line per depth.
- ``fig4_pubmed_depth`` (Fig. 4): GAT and GAT-Lip on PubMed with 100% missing vectors,
  test accuracy against depth.
- ``fig5_trees`` (Fig. 5): TREES training accuracy (``best_train_acc``, which also picks the
  setting: the figure measures how well a model can fit) against tree depth, one line per
  model × normalisation, with the paper's depth-10 numbers as stars.
- ``fig6_depth`` (Fig. 6): GAT and GT × none/LN/PN/Lip, test accuracy (ROC-AUC on
  ogbn-proteins) against depth, one panel per dataset present (0% missing).
"""

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.ticker import MaxNLocator

from lipnorm_exp.report import paper
from lipnorm_exp.report.aggregate import TEST, VALIDATION, curves, select
from lipnorm_exp.report.labels import dataset_label, metric_label

#: the paper's markers (Fig. 5): circles for none, triangles for PairNorm, squares for Lip
NORM_MARKERS = {"none": "o", "pairnorm": "^", "lip": "s", "layernorm": "D"}
GRADIENT_DEPTHS = (20, 30)
FIG6_DATASETS = ("cora", "pubmed", "ogbn_arxiv", "ogbn_proteins")
FIG6_NORMS = ("none", "layernorm", "pairnorm", "lip")
DPI = 150


def _rows(runs: pd.DataFrame, dataset: str, models=("gat",), norms=("none", "lip"), **exact):
    """Runs of ``dataset``: listed models and norms, no residual, given column values.

    ``missing_rate`` is compared with a tolerance, other columns exactly.
    """
    keep = (runs["dataset"] == dataset) & runs["model"].isin(models) & runs["norm"].isin(norms)
    keep &= ~runs["residual"]
    for column, value in exact.items():
        keep &= (
            np.isclose(runs[column], value) if column == "missing_rate" else runs[column] == value
        )
    return runs[keep]


def _styles(runs: pd.DataFrame) -> dict[str, dict]:
    """A colour per label (shared by every panel of a figure) and a marker per normalisation."""
    norms = runs.groupby("label")["norm"].first()
    palette = colormaps["tab10"]
    return {
        label: {"color": palette(i % 10), "marker": NORM_MARKERS.get(norms[label], "x")}
        for i, label in enumerate(sorted(norms.index))
    }


def _plot_curves(
    ax: Axes,
    runs: pd.DataFrame,
    x: str,
    styles: dict,
    report: str = TEST,
    select_by: str = VALIDATION,
) -> None:
    """Mean line and ± std band per label of :func:`~lipnorm_exp.report.aggregate.curves`."""
    for label, line in curves(runs, x, report, select_by).groupby("label"):
        diverged = int(line["n_diverged"].sum())
        name = f"{label} (†{diverged})" if diverged else label
        ax.plot(line["x"], line["mean"], label=name, **styles[label])
        low, high = line["mean"] - line["std"], line["mean"] + line["std"]
        ax.fill_between(line["x"], low, high, color=styles[label]["color"], alpha=0.2, lw=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)


def _has_gradients(history: list) -> bool:
    return any("grad_attn" in epoch for epoch in history)


def _gradient_runs(runs: pd.DataFrame) -> dict[int, dict[str, pd.Series]]:
    """``{depth: {label: record}}``: Figs. 2 and 3's runs (module docstring)."""
    rows = _rows(runs, "cora", missing_rate=0.0)
    rows = rows[rows["depth"].isin(GRADIENT_DEPTHS) & rows["history"].map(_has_gradients)]
    picked: dict[int, dict[str, pd.Series]] = {}
    for (depth, label), group in rows.groupby(["depth", "label"]):
        picked.setdefault(int(depth), {})[label] = select(group).setting
    return picked


def _gradient_matrix(history: list) -> tuple[np.ndarray, np.ndarray]:
    """Epoch numbers and the ``[layers, epochs]`` attention-gradient norms of one run."""
    epochs = [epoch for epoch in history if "grad_attn" in epoch]
    values = np.array([epoch["grad_attn"] for epoch in epochs], dtype=float).T
    return np.array([epoch["epoch"] for epoch in epochs]), values


def _log_norm(values: np.ndarray) -> LogNorm:
    """Log colour scale over the positive finite ``values`` (a unit range when none)."""
    positive = values[np.isfinite(values) & (values > 0)]
    return LogNorm(*(positive.min(), positive.max()) if positive.size else (1e-12, 1.0))


def draw_gradient_heatmap(ax: Axes, history: list, norm: LogNorm | None = None) -> AxesImage:
    """One run's attention-gradient norms on ``ax``: layers × epochs, log colour scale.

    Args:
        ax: the axes to draw on (labelled ``epoch`` and ``layer``; the title is the caller's).
        history: the run's per-epoch rows; those with ``grad_attn`` are drawn.
        norm: a colour scale shared between panels; by default one over this run's values.

    Returns:
        The image, for a colour bar. Zero and non-finite norms are left blank.
    """
    epochs, grads = _gradient_matrix(history)
    shown = np.ma.masked_where(~np.isfinite(grads) | (grads <= 0), grads)
    extent = (epochs[0] - 0.5, epochs[-1] + 0.5, 0.5, grads.shape[0] + 0.5)
    if norm is None:
        norm = _log_norm(grads)
    image = ax.imshow(shown, aspect="auto", origin="lower", norm=norm, extent=extent)
    ax.set(xlabel="epoch", ylabel="layer")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return image


def fig2_gradients(runs: pd.DataFrame) -> Figure | None:
    """Fig. 2: attention-gradient norms per layer and epoch, none against Lip."""
    picked = _gradient_runs(runs)
    if not picked:
        return None
    labels = sorted({label for by_label in picked.values() for label in by_label})
    values = [
        _gradient_matrix(record["history"])[1].ravel()
        for by_label in picked.values()
        for record in by_label.values()
    ]
    norm = _log_norm(np.concatenate(values))
    fig = Figure(figsize=(4.5 * len(labels), 3.5 * len(picked)), layout="constrained")
    axes = fig.subplots(len(picked), len(labels), squeeze=False)
    for row, (depth, by_label) in enumerate(sorted(picked.items())):
        for col, label in enumerate(labels):
            ax = axes[row, col]
            if label not in by_label:
                ax.set_axis_off()
                continue
            image = draw_gradient_heatmap(ax, by_label[label]["history"], norm)
            seed = int(by_label[label]["seed"])
            ax.set_title(f"{label}, {depth} layers (seed {seed})")
    fig.colorbar(image, ax=axes, label="attention-gradient norm (log scale)")
    fig.suptitle(
        "Fig. 2: attention-gradient norms of GAT on Cora "
        f"(paper: ~$10^{{{np.log10(paper.GAT_GRADIENT_PEAK):.0f}}}$ within 100 epochs without "
        "normalisation)"
    )
    return fig


def fig3_train_acc(runs: pd.DataFrame) -> Figure | None:
    """Fig. 3: training accuracy per epoch of Fig. 2's runs, none against Lip."""
    picked = _gradient_runs(runs)
    if not picked:
        return None
    labels = sorted({label for by_label in picked.values() for label in by_label})
    fig = Figure(figsize=(4.5 * len(labels), 3.5), layout="constrained")
    axes = fig.subplots(1, len(labels), squeeze=False, sharey=True)[0]
    for ax, label in zip(axes, labels, strict=True):
        for depth, by_label in sorted(picked.items()):
            if label in by_label:
                history = by_label[label]["history"]
                accuracy = [100.0 * epoch["train_acc"] for epoch in history]
                ax.plot([epoch["epoch"] for epoch in history], accuracy, label=f"{depth} layers")
        ax.set(title=label, xlabel="epoch", ylabel="training accuracy (%)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle("Fig. 3: convergence of GAT's training accuracy on Cora")
    return fig


def fig4_pubmed_depth(runs: pd.DataFrame) -> Figure | None:
    """Fig. 4: GAT with and without LipschitzNorm on PubMed, 100% missing vectors."""
    rows = _rows(runs, "pubmed", missing_rate=1.0)
    if rows.empty:
        return None
    fig = Figure(figsize=(5.5, 4), layout="constrained")
    ax = fig.add_subplot()
    _plot_curves(ax, rows, "depth", _styles(rows))
    ax.set(xlabel="graph layers", ylabel="test accuracy (%)")
    ax.set_title("Fig. 4: GAT on PubMed, 100% missing vectors")
    ax.legend()
    return fig


def fig5_trees(runs: pd.DataFrame) -> Figure | None:
    """Fig. 5: TREES training accuracy against tree depth, with the paper's depth-10 values."""
    rows = runs[(runs["dataset"] == "trees") & runs["tree_depth"].notna()]
    if rows.empty:
        return None
    styles = _styles(rows)
    fig = Figure(figsize=(6.5, 4.5), layout="constrained")
    ax = fig.add_subplot()
    train = "best_train_acc"
    _plot_curves(ax, rows, "tree_depth", styles, report=train, select_by=train)
    for label, value in paper.TREES_TRAIN_ACC.items():
        color = styles.get(label, {}).get("color", "black")
        ax.scatter(
            paper.TREES_DEPTH,
            value,
            marker="*",
            s=160,
            color=color,
            edgecolor="black",
            zorder=3,
            label=f"paper {label} (depth {paper.TREES_DEPTH})",
        )
    depth = paper.TREES_DEPTH
    ax.hlines(
        paper.TREES_OTHERS_BELOW,
        depth - 0.4,
        depth + 0.4,
        colors="grey",
        linestyles=":",
        label=f"paper: all others < {paper.TREES_OTHERS_BELOW:.0f}",
    )
    ax.set(xlabel="tree depth", ylabel="training accuracy (%)")
    ax.set_title("Fig. 5: TREES (Tree-NeighborsMatch) training accuracy")
    ax.legend(fontsize="small", ncols=2)
    return fig


def fig6_depth(runs: pd.DataFrame) -> Figure | None:
    """Fig. 6: GAT and GT with each normalisation against depth, one panel per dataset."""
    panels = {
        name: _rows(runs, name, ("gat", "gt"), FIG6_NORMS, missing_rate=0.0)
        for name in FIG6_DATASETS
    }
    panels = {name: rows for name, rows in panels.items() if not rows.empty}
    if not panels:
        return None
    styles = _styles(pd.concat(panels.values()))
    fig = Figure(figsize=(max(4.5 * len(panels), 6), 4.5), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (name, rows) in zip(axes, panels.items(), strict=True):
        _plot_curves(ax, rows, "depth", styles)
        metrics = rows["metric"].dropna()
        metric = metric_label(metrics.iloc[0]) if len(metrics) else "accuracy"
        ax.set(title=dataset_label(name), xlabel="graph layers", ylabel=f"test {metric} (%)")
        ax.legend(fontsize="x-small")
    fig.suptitle(
        "Fig. 6: GAT and GT against depth\n(-LN LayerNorm, -PN PairNorm, -Lip LipschitzNorm)"
    )
    return fig


FIGURES: dict[str, Callable[[pd.DataFrame], Figure | None]] = {
    "fig2_gradients": fig2_gradients,
    "fig3_train_acc": fig3_train_acc,
    "fig4_pubmed_depth": fig4_pubmed_depth,
    "fig5_trees": fig5_trees,
    "fig6_depth": fig6_depth,
}


def write_figures(usable: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Draw every figure of :data:`FIGURES` with records as ``<name>.png`` and ``.pdf``.

    Prints one line per file written, and one per figure skipped for want of records.
    """
    written = []
    for name, draw in FIGURES.items():
        fig = draw(usable)
        if fig is None:
            print(f"{name}: no records, skipped")
            continue
        out_dir.mkdir(parents=True, exist_ok=True)
        for suffix in ("png", "pdf"):
            path = out_dir / f"{name}.{suffix}"
            fig.savefig(path, dpi=DPI)
            print(f"wrote {path}")
            written.append(path)
    return written


__all__ = ["FIGURES", "draw_gradient_heatmap", "write_figures"]
