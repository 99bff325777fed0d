"""The paper's tables from run records, ours beside the published numbers.

Each table belongs to a preset (its entry in `PRESETS`
lists it) and is built from that preset's runs only
(`preset_runs`); its columns come from the preset's grid as
Hydra composes it (`grids`), its rows are the paper's model labels
then the grid's. It is written by `write_table` under
``<out>/<scale>/<protocol>/tables/``: ``.md`` (ours and the paper's values in neighbouring
columns, notes, provenance), ``.tex``, ``.csv`` (one row per cell: the numbers, the chosen
hyper-parameters, the paper's value) and ``.runs.csv`` (the runs behind every cell). Cells
follow the selection rule of `lipnorm_exp.report.aggregate`: test accuracy in %, mean ±
std over the seeds of the setting with the best mean validation accuracy (the seeds per cell in
the provenance line, not in the cells); where the table does not fix the depth, the chosen depth
is in parentheses; ``†k`` marks k diverged runs among those seeds; a cell without records reads
``–``. Each column has its own columns (`subcolumns`): ``test``, ``final`` (the same runs
at their last epoch, where every seed trained its full budget), ``val``, ``params``, ``paper``;
the caption states the epoch reported and the std convention (`epoch_rule`).

- ``table1_missing_vector`` (Table 1, preset ``missing_vector``): every dataset × missing rate
  of the grid; depth chosen on validation among the grid's depths.
- ``table2_gcnii`` (Table 2, preset ``gcnii``): GCNII against GAT-Lip, each dataset of the grid
  at its missing rate; depth chosen on validation.
- ``table3_residual`` (Table 3, preset ``residual``): GAT with and without LipschitzNorm and
  residual connections, one column per dataset × depth of the grid.
- ``ablation`` (preset ``ablation``): `ablation`.
- ``fig5_trees`` (preset ``trees``): Fig. 5's numbers, `trees`.
- ``summary``: the records of the presets, counted by status per preset, dataset and model.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from lipnorm_exp.config import preset_names
from lipnorm_exp.records import COMPLETED, DIVERGED, FAILED, STATUSES
from lipnorm_exp.records.labels import dataset_label, missing_label
from lipnorm_exp.report import published_numbers
from lipnorm_exp.report.aggregate import (
    MISSING,
    OTHER_TITLES,
    Selection,
    cell_numbers,
    compact,
    epoch_rule,
    preset_runs,
    select,
)
from lipnorm_exp.report.cell_columns import CELL_DIVERGED, CELL_RUNS, PAPER_DEPTH, PARAMS
from lipnorm_exp.report.grids import PresetGrid
from lipnorm_exp.report.params import count_text, selection_params
from lipnorm_exp.report.run_row import (
    CONCAT,
    DATASET,
    DEPTH,
    DROPOUT,
    EPOCHS,
    HEADS,
    HIDDEN,
    LABEL,
    LR,
    MISSING_RATE,
    STATUS,
    TAGS,
)
from lipnorm_exp.report.table_files import Table, write_table
from lipnorm_exp.report.used_runs import UsedCell

#: hyper-parameters of the chosen setting written to the CSV files
SETTING_COLUMNS = (DEPTH, LR, HIDDEN, HEADS, DROPOUT, CONCAT, EPOCHS)
DEPTH_KEY = "model.depth"


@dataclass(frozen=True)
class Column:
    """One column of a table: a dataset, a missing-vector rate and maybe a fixed depth.

    Args:
        dataset (str): ``dataset.name`` of its records.
        missing_rate (float, optional): ``dataset.missing_rate`` of its records. (default: 0)
        depth (int, optional): ``model.depth`` of its records; ``None``: chosen on validation
            and printed in parentheses. (default: `None`)
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

    def name_of(self, sub: str) -> str:
        """The display column of its own column ``sub``: ``Cora 100%`` (``test``), ``... val``."""
        return self.title if sub == "test" else f"{self.title} {sub}"

    @property
    def paper_key(self) -> tuple:
        """The key of this column in `published_numbers`'s tables."""
        return (self.dataset, self.missing_rate if self.depth is None else self.depth)

    def matches(self, runs: pd.DataFrame) -> pd.Series:
        """Which of ``runs`` belong to this column."""
        keep = (runs[DATASET] == self.dataset) & np.isclose(runs[MISSING_RATE], self.missing_rate)
        return keep & (runs[DEPTH] == self.depth) if self.depth is not None else keep


@dataclass(frozen=True)
class TableSpec:
    """What one of the paper's tables shows (its preset's runs, tag and grid, make it).

    Args:
        name (str): file stem.
        caption (str): one line naming the paper's table.
        paper (Mapping): published values, ``{label: {column.paper_key: PaperValue}}``.
        depth_columns (bool, optional): one column per depth of the grid; otherwise the depth
            is chosen on validation and printed in parentheses. (default: `False`)
    """

    name: str
    caption: str
    paper: Mapping[str, Mapping[tuple, published_numbers.PaperValue]]
    depth_columns: bool = False

    @property
    def item(self) -> str:
        """The paper's name of the table, the caption's start: ``Table 1``."""
        return self.caption.split(":")[0]

    def build(self, runs: pd.DataFrame, grid: PresetGrid) -> Table | None:
        """The table over ``runs``, its preset's (`build_table`)."""
        return build_table(runs, grid, self)

    def columns(self, grid: PresetGrid) -> tuple[Column, ...]:
        """The columns: every dataset × missing rate (× depth) of ``grid``, in its order."""
        depths = grid.values.get(DEPTH_KEY, ()) if self.depth_columns else (None,)
        return tuple(
            Column(dataset, rate, depth)
            for dataset in grid.datasets
            for rate in grid.missing_rates(dataset)
            for depth in depths
        )

    def labels(self, grid: PresetGrid) -> list[str]:
        """Row labels: the paper's rows, then the grid's other model labels."""
        return list(dict.fromkeys([*self.paper, *grid.labels]))

    def notes(self, runs: pd.DataFrame) -> str:
        """How to read the cells; where a cell chooses its depth, the depths ``runs`` ran."""
        depth = ""
        if not self.depth_columns:
            depths = compact(tuple(int(depth) for depth in runs[DEPTH].dropna().unique()))
            depth = f"(k): depth chosen on validation among the depths run, {depths}; "
        return (
            "test: ours, test accuracy at the epoch the caption names, mean ± std over the seeds "
            "(their number: seeds per cell, below) of the hyper-parameters with the best mean "
            f"validation accuracy; {FINAL_NOTE} val: validation accuracy at the epoch reported; "
            f"params: parameters of the chosen model; {depth}†k: k diverged runs among those "
            "seeds; –: no records; paper: the published values."
        )


#: what a table's number at the other epoch is (`subcolumns`)
FINAL_NOTE = (
    "final (best val): test accuracy at the last epoch (at the best validation epoch) of the same "
    "runs, where every seed trained its full budget (– where one stopped early);"
)


@dataclass(frozen=True)
class TableOfRuns:
    """A table with no published numbers of its own to score: its file stem and its builder.

    Args:
        name (str): file stem.
        build (Callable): ``build(runs, grid)`` → `Table`, or ``None`` without runs.
    """

    name: str
    build: Callable[[pd.DataFrame, PresetGrid], Table | None]


def _cell(label: str, column: Column, chosen: Selection | None, published) -> dict:
    cell: dict[str, Any] = {"model": label, "column": column.title, DATASET: column.dataset}
    cell[MISSING_RATE] = column.missing_rate
    cell.update(cell_numbers(chosen))
    if chosen is None:
        cell.update({CELL_RUNS: 0, CELL_DIVERGED: 0})
    else:
        cell.update({CELL_RUNS: chosen.cell_runs, CELL_DIVERGED: chosen.cell_diverged})
        cell.update({key: chosen.setting[key] for key in SETTING_COLUMNS})
    cell[PARAMS] = selection_params(chosen)
    cell["paper_mean"] = published.mean if published else np.nan
    cell["paper_std"] = published.std if published and published.std is not None else np.nan
    cell[PAPER_DEPTH] = published.depth if published else None
    return cell


def subcolumns(selections: Sequence[Selection]) -> tuple[str, ...]:
    """A table column's own columns: ours, at the other epoch where a cell has it, and so on.

    ``test`` (the number reported), ``final`` (the last epoch's, or ``best val`` where the
    number reported is the last epoch's: only where some cell's seeds all trained their full
    budget), ``val`` (validation accuracy at the epoch reported), ``params`` and ``paper``.
    """
    other = [chosen.other_title for chosen in selections if pd.notna(chosen.other.mean)]
    return ("test", *dict.fromkeys(other), "val", "params", "paper")


def _texts(chosen: Selection | None, published, show_depth: bool) -> dict[str, str]:
    """The texts of a cell's own columns (`subcolumns`)."""
    texts = dict.fromkeys(("test", *OTHER_TITLES.values(), "val", "params"), MISSING)
    texts["paper"] = str(published) if published else MISSING
    if chosen is not None:
        texts.update(
            test=chosen.text(show_depth, show_n=False),
            val=chosen.validation.text(),
            params=count_text(selection_params(chosen)),
        )
        texts[chosen.other_title] = chosen.other.text()
    return texts


def build_table(runs: pd.DataFrame, grid: PresetGrid, spec: TableSpec) -> Table | None:
    """The table ``spec`` over the runs of its preset (already held by ``grid``).

    Returns:
        Table or None: the display table (one row per model label, for each column its own
        columns, `subcolumns`), the tidy cells (one row per label × column) and the cells'
        runs; ``None`` when no run falls in the table.
    """
    columns = spec.columns(grid)
    runs = runs[np.logical_or.reduce([column.matches(runs) for column in columns])]
    if runs.empty:
        return None
    labels = spec.labels(grid)
    chosen = {
        (label, column): select(runs[(runs[LABEL] == label) & column.matches(runs)])
        for label in labels
        for column in columns
    }
    selections = [selection for selection in chosen.values() if selection]
    own = subcolumns(selections)
    header = [("", "model"), *((column.title, sub) for column in columns for sub in own)]
    display, cells, used = [], [], []
    for label in labels:
        line = {"model": label}
        for column in columns:
            picked = chosen[label, column]
            published = spec.paper.get(label, {}).get(column.paper_key)
            texts = _texts(picked, published, column.depth is None)
            line.update({column.name_of(sub): texts[sub] for sub in own})
            cells.append(_cell(label, column, picked, published))
            if picked:
                used.append(UsedCell(label, column.title, picked))
        display.append(line)
    caption = f"{spec.caption}; {epoch_rule(selections)}"
    notes = spec.notes(runs)
    return Table.of_runs(spec.name, caption, display, cells, notes, grid, runs, used, header)


#: statuses the summary always has a column for; ``interrupted`` has one where records have it
SUMMARY_STATUSES = (COMPLETED, DIVERGED, FAILED)
#: the summary's columns of a record's preset and of the records per row
PRESET: Final = "preset"
TOTAL: Final = "total"


def summary_table(records: pd.DataFrame, presets: tuple[str, ...]) -> pd.DataFrame:
    """The records of ``presets`` counted by status, per preset, dataset and model label.

    A record serving two presets counts in both; records of no preset are left out.
    """
    rows = records.explode(TAGS).rename(columns={TAGS: PRESET})
    rows = rows[rows[PRESET].isin(presets)]
    keys = [PRESET, DATASET, LABEL]
    if rows.empty:
        return pd.DataFrame(columns=[*keys, *SUMMARY_STATUSES, TOTAL])
    counts = rows.groupby([*keys, STATUS], dropna=False).size().unstack(fill_value=0)
    shown = [s for s in STATUSES if s in SUMMARY_STATUSES or s in counts.columns]
    counts = counts.reindex(columns=shown, fill_value=0)
    counts[TOTAL] = counts.sum(axis=1)
    return counts.reset_index()


def write_tables(
    records: pd.DataFrame,
    runs: pd.DataFrame,
    out_dir: Path,
    scale: str,
    protocol: str,
    tables: Sequence[tuple[str, TableSpec | TableOfRuns]],
) -> list[Path]:
    """Write every table of ``tables`` with runs, and the summary; print each file.

    Args:
        records (pandas.DataFrame): every record of the scale and protocol shown, failed ones
            too (`load_records`), for the summary.
        runs (pandas.DataFrame): their usable runs
            (`usable_runs`).
        out_dir (Path): the tables folder.
        scale (str): the scale shown.
        protocol (str): the protocol shown.
        tables (Sequence): ``(preset, table)`` pairs, each table built from its preset's runs
            (`owned_tables`).
    """
    built = []
    for preset, spec in tables:
        found = preset_runs(runs, preset, scale, protocol)
        table = spec.build(*found) if found else None
        if table is None:
            print(f"{spec.name}: no runs of preset {preset}, skipped")
        else:
            built.append(table)
    summary = summary_table(records, preset_names())
    if summary.empty:
        print("summary: no records of a preset, skipped")
    else:
        caption = f"Run records of the presets by status (scale {scale}, protocol {protocol})"
        built.append(Table("summary", caption, summary, summary))
    written = [path for table in built for path in write_table(table, out_dir)]
    for path in written:
        print(f"wrote {path}")
    return written


__all__ = [
    "Column",
    "TableOfRuns",
    "TableSpec",
    "build_table",
    "summary_table",
    "write_tables",
]
