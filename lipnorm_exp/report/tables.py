"""The paper's tables from run records, ours beside the published numbers.

Each table is written three ways under ``<out>/tables/``: ``<name>.md`` (ours and the
paper's values in neighbouring columns, then notes), ``<name>.tex`` (the same table) and
``<name>.csv`` (one row per cell: the numbers, the chosen hyper-parameters, the paper's
value). Cells follow the selection rule of :mod:`lipnorm_exp.report.aggregate`: test
accuracy in %, mean ± std over the seeds of the setting with the best mean validation
accuracy; where the table does not fix the depth, the chosen depth is in parentheses;
``†k`` marks k diverged runs among those seeds; a cell without records reads ``–``.

- ``table1_missing_vector`` (Table 1): Cora, CiteSeer, PubMed at 0% and 100% missing
  vectors; every model with records; depth chosen on validation among 1..20 (the paper's grid).
- ``table2_gcnii`` (Table 2): GCNII against GAT-Lip on ogbn-arxiv (0%) and Cora, PubMed (100%);
  depth chosen among 1..20, as in Table 1 (whose GAT-Lip values the paper repeats here).
- ``table3_residual`` (Table 3): GAT with and without LipschitzNorm and residual connections
  at 15 and 30 layers on Cora and PubMed (standard setting, 0% missing).
- ``summary``: records of every scale counted by status per dataset and model.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tabulate import tabulate

from lipnorm_exp.report import paper
from lipnorm_exp.report.aggregate import MISSING, select
from lipnorm_exp.report.labels import dataset_label, missing_label

STATUSES = ("completed", "diverged", "failed")
#: hyper-parameters of the chosen setting written to the CSV files
SETTING_COLUMNS = ("depth", "lr", "hidden", "heads", "dropout", "concat", "epochs")
LATEX_SYMBOLS = {"±": r"$\pm$", "†": r"$^\dagger$", "–": "--"}
LATEX_ESCAPES = {"%": r"\%", "&": r"\&", "_": r"\_", "#": r"\#"}


@dataclass(frozen=True)
class Column:
    """One column of a table: a dataset, a missing-vector rate and maybe a fixed depth.

    Args:
        dataset (str): ``dataset.name`` of its records.
        missing_rate (float, optional): ``dataset.missing_rate`` of its records. (default: 0)
        depth (int, optional): ``model.depth`` of its records; ``None``: chosen on validation
            and printed in parentheses. (default: :obj:`None`)
    """

    dataset: str
    missing_rate: float = 0.0
    depth: int | None = None

    @property
    def title(self) -> str:
        """Header text: ``Cora 100%`` or ``Cora 15 layers``."""
        if self.depth is None:
            return f"{dataset_label(self.dataset)} {missing_label(self.missing_rate)}"
        return f"{dataset_label(self.dataset)} {self.depth} layers"

    @property
    def paper_key(self) -> tuple:
        """The key of this column in :mod:`~lipnorm_exp.report.paper`'s tables."""
        return (self.dataset, self.missing_rate if self.depth is None else self.depth)

    def matches(self, runs: pd.DataFrame) -> pd.Series:
        """Which of ``runs`` belong to this column."""
        keep = (runs["dataset"] == self.dataset) & np.isclose(
            runs["missing_rate"], self.missing_rate
        )
        return keep & (runs["depth"] == self.depth) if self.depth is not None else keep


@dataclass(frozen=True)
class TableSpec:
    """What one table shows.

    Args:
        name (str): file stem.
        caption (str): one line naming the paper's table.
        columns (tuple[Column, ...]): the columns.
        paper (Mapping): published values, ``{label: {column.paper_key: PaperValue}}``.
        rows (tuple[str, ...], optional): model labels allowed as rows, in order; ``None``:
            any label (the paper's first, then ours). (default: :obj:`None`)
        max_depth (int, optional): deepest model considered. (default: :obj:`None`)
    """

    name: str
    caption: str
    columns: tuple[Column, ...]
    paper: Mapping[str, Mapping[tuple, paper.PaperValue]]
    rows: tuple[str, ...] | None = None
    max_depth: int | None = None

    def runs(self, usable: pd.DataFrame) -> pd.DataFrame:
        """The usable runs that fall in some column (and row) of the table."""
        keep = np.logical_or.reduce([column.matches(usable) for column in self.columns])
        if self.max_depth is not None:
            keep &= usable["depth"] <= self.max_depth
        if self.rows is not None:
            keep &= usable["label"].isin(self.rows)
        return usable[keep]

    def labels(self, runs: pd.DataFrame) -> list[str]:
        """Row labels: the paper's rows and the labels of ``runs``, in table order."""
        present = set(runs["label"]) | set(self.paper)
        if self.rows is not None:
            return [label for label in self.rows if label in present]
        return list(self.paper) + sorted(present - set(self.paper))


TABLES = (
    TableSpec(
        "table1_missing_vector",
        "Table 1: test accuracy (%) in the missing-vector setting (depth chosen on validation)",
        tuple(Column(d, rate) for d in ("cora", "citeseer", "pubmed") for rate in (0.0, 1.0)),
        paper.TABLE1,
        max_depth=20,
    ),
    TableSpec(
        "table2_gcnii",
        "Table 2: GAT-Lip against GCNII, test accuracy (%) (depth chosen on validation; "
        "* OGB leaderboard)",
        (Column("ogbn_arxiv", 0.0), Column("cora", 1.0), Column("pubmed", 1.0)),
        paper.TABLE2,
        rows=("GCNII", "GAT-Lip", "GAT-Lip(pub)"),
        max_depth=20,
    ),
    TableSpec(
        "table3_residual",
        "Table 3: test accuracy (%) of deep GAT with/without residual connections and "
        "LipschitzNorm",
        tuple(Column(d, 0.0, depth) for d in ("cora", "pubmed") for depth in (15, 30)),
        paper.TABLE3,
        rows=("GAT", "GAT-res", "GAT-Lip", "GAT-Lip-res", "GAT-Lip(pub)", "GAT-Lip(pub)-res"),
    ),
)


def build_table(usable: pd.DataFrame, spec: TableSpec) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The table ``spec`` over the usable runs of one scale.

    Returns:
        tuple or None: ``(display, cells)``: the display table (one row per model label, for
        each column ours then ``<column> paper``) and the tidy cells (one row per
        label × column); ``None`` when no run falls in the table.
    """
    runs = spec.runs(usable)
    if runs.empty:
        return None
    display, cells = {}, []
    for label in spec.labels(runs):
        line = display.setdefault(label, {})
        for column in spec.columns:
            chosen = select(runs[(runs["label"] == label) & column.matches(runs)])
            published = spec.paper.get(label, {}).get(column.paper_key)
            line[column.title] = chosen.text(column.depth is None) if chosen else MISSING
            line[f"{column.title} paper"] = str(published) if published else MISSING
            cells.append(_cell(label, column, chosen, published))
    return pd.DataFrame.from_dict(display, orient="index").rename_axis("model"), pd.DataFrame(cells)


def _cell(label: str, column: Column, chosen, published) -> dict:
    cell = {"model": label, "column": column.title, "dataset": column.dataset}
    cell["missing_rate"] = column.missing_rate
    if chosen is None:
        cell.update(mean=np.nan, std=np.nan, n=0, n_diverged=0, cell_runs=0, cell_diverged=0)
    else:
        cell.update(mean=chosen.mean, std=chosen.std, n=chosen.n, n_diverged=chosen.n_diverged)
        cell.update(cell_runs=chosen.cell_runs, cell_diverged=chosen.cell_diverged)
        cell.update({key: chosen.setting[key] for key in SETTING_COLUMNS})
    cell["paper_mean"] = published.mean if published else np.nan
    cell["paper_std"] = published.std if published and published.std is not None else np.nan
    cell["paper_depth"] = published.depth if published else None
    return cell


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Records of every scale counted by status, per scale, dataset and model label."""
    counts = (
        frame.groupby(["scale", "dataset", "label", "status"], dropna=False)
        .size()
        .unstack(fill_value=0)
    )
    counts = counts.reindex(columns=list(STATUSES), fill_value=0)
    counts["total"] = counts.sum(axis=1)
    return counts.reset_index()


def _latex(display: pd.DataFrame, caption: str) -> str:
    body = tabulate(display, headers="keys", tablefmt="latex_booktabs", showindex=False)
    for symbol, command in LATEX_SYMBOLS.items():
        body = body.replace(symbol, command)
    caption = "".join(LATEX_ESCAPES.get(char, char) for char in caption)
    return f"\\begin{{table}}\n\\centering\n\\caption{{{caption}}}\n{body}\n\\end{{table}}\n"


def write_table(
    display: pd.DataFrame, cells: pd.DataFrame, out_dir: Path, name: str, caption: str, notes: str
) -> list[Path]:
    """Write ``<name>.md``, ``.tex`` and ``.csv`` under ``out_dir``; return the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{name}.{suffix}" for suffix in ("md", "tex", "csv")]
    markdown = tabulate(display, headers="keys", tablefmt="github", showindex=False)
    paths[0].write_text(f"# {caption}\n\n{markdown}\n\n{notes}\n")
    paths[1].write_text(_latex(display, caption))
    cells.to_csv(paths[2], index=False)
    return paths


def write_tables(
    frame: pd.DataFrame, usable: pd.DataFrame, out_dir: Path, scale: str
) -> list[Path]:
    """Write every table of :data:`TABLES` and the summary; print one line per file.

    Args:
        frame (pandas.DataFrame): every record (:func:`~lipnorm_exp.report.records.load_records`).
        usable (pandas.DataFrame): the usable runs of the scale shown
            (:func:`~lipnorm_exp.report.aggregate.usable_runs`).
        out_dir (Path): the tables folder.
        scale (str): the scale shown, named in the notes.
    """
    notes = (
        f"Ours: scale `{scale}`, test accuracy at the best validation epoch, mean ± std over "
        "seeds of the hyper-parameters with the best mean validation accuracy; (k): depth "
        "chosen; †k: k diverged runs among those seeds; –: no records. "
        "Columns `... paper`: the published values."
    )
    written = []
    for spec in TABLES:
        built = build_table(usable, spec)
        if built is None:
            print(f"{spec.name}: no records, skipped")
            continue
        display, cells = built
        written += write_table(
            display.reset_index(), cells, out_dir, spec.name, spec.caption, notes
        )
    if frame.empty:
        print("summary: no records, skipped")
    else:
        summary = summary_table(frame)
        caption = "Run records by status, per scale, dataset and model"
        written += write_table(summary, summary, out_dir, "summary", caption, "All scales.")
    for path in written:
        print(f"wrote {path}")
    return written


__all__ = ["TABLES", "Column", "TableSpec", "build_table", "summary_table", "write_tables"]
