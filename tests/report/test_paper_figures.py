"""Figures and LaTeX fit for a paper: titles, panels, notes, every model, page-wide tables."""

import re
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from test_report import (  # noqa: F401 (report_dir, runs_dir: the report's fixtures)
    DRAW,
    gradient_records,
    make_record,
    of_preset,
    report_dir,
    runs_dir,
)

from lipnorm_exp.report.aggregate import usable_runs
from lipnorm_exp.report.figures import finish
from lipnorm_exp.report.frame import record_row, records_frame
from lipnorm_exp.report.table_files import PAGE_CHARS, Table, latex

GROWTH = {"none": 10.0, "lip": 1.01}


def runs_of(records, scale="paper", protocol="standard"):
    """The usable runs of ``records`` at ``scale`` and ``protocol``."""
    return usable_runs(records_frame([record_row(r) for r in records]), scale, protocol)


def heatmaps(figure):
    return [ax for ax in figure.axes if ax.get_label() != "<colorbar>"]


@pytest.mark.parametrize(
    ("scale", "depths", "says_paper"), [("quick", (20,), False), ("paper", (20, 30), True)]
)
def test_fig2_gives_the_papers_peak_only_at_the_papers_scale(scale, depths, says_paper):
    records = gradient_records({"none": depths, "lip": depths}, 0.1, GROWTH, scale=scale)
    runs = runs_of(records, scale)
    title = DRAW["fig2_gradients"](*of_preset(runs, "gradients", scale)).figure.get_suptitle()
    assert ("paper: ~$10^{8}$" in title) is says_paper
    assert title.startswith("Fig. 2: attention-gradient norms on Cora")


def test_fig2_and_fig3_draw_only_the_panels_with_records_and_name_the_others():
    # the preset's setting: both models at 20 and 30 layers; another: GAT-Lip only, at 20
    own = gradient_records({"none": (20, 30), "lip": (20, 30)}, 0.02, GROWTH, dropout=0.6)
    other = gradient_records({"lip": (20,)}, 0.1, GROWTH, dropout=0.0, lr=0.001)
    found = of_preset(runs_of(own + other), "gradients")
    fig2 = DRAW["fig2_gradients"](*found)
    assert len(heatmaps(fig2.figure)) == 4 + 1  # a panel per (setting, depth, label) run
    assert all(ax.images for ax in heatmaps(fig2.figure))
    own_row, other_row = fig2.figure.subfigs
    assert len(heatmaps(other_row)) == 1 and not any(ax.texts for ax in heatmaps(fig2.figure))
    # sized by the panels drawn: 3 rows of panels, 2 columns
    width, height = fig2.figure.get_size_inches()
    assert (width, height) == pytest.approx((2 * 5.0, 3 * 3.0 + 1.0))
    missing = "Not drawn (no records): GAT at dropout 0, lr 0.001 (20 layers)."
    assert fig2.notes == (missing,)
    fig3 = DRAW["fig3_train_acc"](*found)
    titles = [[ax.get_title() for ax in heatmaps(row)] for row in fig3.figure.subfigs]
    assert titles == [["GAT", "GAT-Lip"], ["GAT-Lip (30 layers: no records)"]]
    assert all(ax.get_lines() for ax in heatmaps(fig3.figure))
    assert fig3.notes == (missing,)


def tree_runs(points, scale="paper"):
    """``trees`` runs, two seeds per ``(model, norm, tree depth, epochs, train)``."""
    records = [
        make_record(
            tags=("trees",),
            scale=scale,
            dataset="trees",
            tree_depth=d,
            depth=d + 1,
            model=model,
            norm=norm,
            seed=seed,
            epochs=epochs,
            train=train,
        )  # fmt: skip
        for model, norm, d, epochs, train in points
        for seed in (0, 1)
    ]
    return of_preset(runs_of(records, scale), "trees", scale)


def boxes(figure, notes):
    canvas = FigureCanvasAgg(figure)  # the canvas the report's PNGs are drawn on
    figure.draw_without_rendering()
    renderer = canvas.get_renderer()
    return [note.get_window_extent(renderer) for note in notes]


def test_fig5_notes_beside_points_never_overlap():
    models = (("gat", "none"), ("gat", "lip"), ("gat", "pairnorm"), ("gcn", "none"))
    line = [(m, n, d, 10, 0.5) for m, n in models for d in (2, 3)]
    # at tree depth 3 each model's best run of another budget, all near 95%: four words
    apart = [(m, n, 3, 80 * 2**i, 0.95 - 0.003 * i) for i, (m, n) in enumerate(models)]
    drawn = DRAW["fig5_trees"](*tree_runs(line + apart))
    assert [note.get_text() for note in drawn.apart] == [f"{80 * 2**i} passes" for i in range(4)]
    before = boxes(drawn.figure, drawn.apart)
    assert any(a.overlaps(b) for a, b in combinations(before, 2))  # where they stand at first
    figure = finish(drawn, "footer")
    after = boxes(figure, drawn.apart)
    assert not any(a.overlaps(b) for a, b in combinations(after, 2))
    # each still beside its point: left edges at the same x, the highest point's words on top
    assert len({round(box.x0) for box in after}) == 1
    assert [box.y0 for box in after] == sorted((box.y0 for box in after), reverse=True)


@pytest.mark.parametrize("scale", ["quick", "paper"])
def test_fig5_keeps_every_model_visible_where_their_values_are_equal(scale):
    models = (("gcn", "none"), ("gat", "none"), ("gat", "pairnorm"), ("gat", "lip"))
    drawn = DRAW["fig5_trees"](*tree_runs([(m, n, 2, 10, 0.36) for m, n in models], scale))
    ax = drawn.figure.axes[0]
    finish(drawn, "footer")
    lines = {
        line.get_label(): line
        for line in ax.get_lines()
        if line.get_label() in ("GCN", "GAT", "GAT-PN", "GAT-Lip")
    }
    assert set(lines) == {"GCN", "GAT", "GAT-PN", "GAT-Lip"}
    centres = {
        label: ax.transData.transform((line.get_xdata()[0], line.get_ydata()[0]))
        for label, line in lines.items()
    }
    assert len({tuple(np.round(c, 6)) for c in centres.values()}) == 4
    pixels_per_point = drawn.figure.dpi / 72
    for (a, ca), (b, cb) in combinations(centres.items(), 2):
        apart = np.hypot(*(ca - cb)) / pixels_per_point
        smaller = min(lines[a].get_markersize(), lines[b].get_markersize())
        assert apart >= smaller / 2, (a, b)  # at most half of one marker covered by another
    # still at its tree depth: within a third of the gap to the next depth
    assert all(abs(line.get_xdata()[0] - 2) < 0.34 for line in lines.values())


def table1_like(groups=6):
    """A table shaped like the paper-scale Table 1: model, then 5 columns per group."""
    heads = [("", "model")] + [
        (f"D{g // 2} {(0, 100)[g % 2]}%", title)
        for g in range(groups)
        for title in ("test", "final", "val", "params", "paper")
    ]
    row = ["GAT-Lip"] + [
        "80.1 ± 1.1 (2)",
        "77.4 ± 1.5",
        "79.0 ± 0.9",
        "285k",
        "83.1 ± 0.5 (5)",
    ] * groups
    display = pd.DataFrame([row, row], columns=[f"c{i}" for i in range(len(heads))])
    return Table(
        "t", "Table 1: test accuracy (%)", display, display, "notes.", "", (), tuple(heads)
    )


def tabulars(tex):
    return re.findall(r"\\begin\{tabular\}\{([lr]+)\}(.*?)\\end\{tabular\}", tex, re.S)


#: LaTeX as it prints: the commands `latex` writes for symbols
PRINTED = {r"$\pm$": "±", r"$^\dagger$": "†", "--": "–", "\\": ""}


def visible_width(tabular):
    """Characters of each column's widest cell or title and 3 between columns (`COLUMN_GAP`)."""
    rows = [
        line.removesuffix(r" \\")
        for line in tabular.splitlines()
        if line.endswith(r"\\") and r"\multicolumn" not in line
    ]
    for command, printed in PRINTED.items():
        rows = [row.replace(command, printed) for row in rows]
    cells = [[cell.strip() for cell in row.split(" & ")] for row in rows]
    return sum(max(len(row[i]) for row in cells) + 3 for i in range(len(cells[0])))


def test_a_table_wider_than_a_page_is_split_between_its_groups_unscaled():
    tex = latex(table1_like())
    assert "resizebox" not in tex
    parts = tabulars(tex)
    assert [align for align, _ in parts] == ["lrrrrr"] * 6  # model + one group, 31 columns in all
    groups = [re.findall(r"\\multicolumn\{5\}\{c\}\{([^}]*)\}", body) for _, body in parts]
    assert groups == [[f"D{k} {rate}\\%"] for k in range(3) for rate in (0, 100)]
    assert all(visible_width(body) <= PAGE_CHARS for _, body in parts)
    assert tex.count(r"\begin{table}") == tex.count(r"\end{table}") == 6
    assert tex.count("notes.") == 1 and "(part 6 of 6)" in tex
    narrow = latex(table1_like(groups=1))  # a table that fits stays one
    assert len(tabulars(narrow)) == 1 and "part" not in narrow


@pytest.mark.slow
def test_every_tex_the_report_writes_fits_a_page_unscaled(report_dir):  # noqa: F811
    written = sorted(report_dir.rglob("*.tex"))
    assert any(path.name.startswith("table1") for path in written)
    for path in written:
        tex = path.read_text()
        assert "resizebox" not in tex, path
        assert all(visible_width(body) <= PAGE_CHARS for _, body in tabulars(tex)), path
