"""A table as files: ``<name>.md``, ``.tex``, ``.csv`` and, for tables of runs, ``.runs.csv``.

- ``.md``: a title line (the caption), the table, its notes and its provenance line.
- ``.tex``: the same table in ``table`` floats for ``booktabs``: a short caption, grouped
  column headers (``cmidrule`` under each group), numbers right-aligned, and the notes and the
  provenance line in a table note below the last. A table wider than a page (`PAGE_CHARS`) is
  split between its column groups (Table 1: a float per dataset and missing rate), each part
  repeating the row labels, so that every part fits the page unscaled.
- ``.csv``: the tidy cells (one row per cell): counts as integers (`INTEGER_COLUMNS`),
  numbers in % rounded to `CSV_DECIMALS` decimals.
- ``.runs.csv``: every run behind a number (`runs_table`).

Every file is a function of the table alone, so the same records give the same bytes, and is
written whole or not at all (`write_whole`): a kill leaves each file
the old one or the new one.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

import pandas as pd
from tabulate import tabulate

from lipnorm_exp.report.aggregate import CSV_DECIMALS
from lipnorm_exp.report.cell_columns import (
    CELL_DIVERGED,
    CELL_RUNS,
    MEAN,
    N_DIVERGED,
    PAPER_DEPTH,
    PARAMS,
    PASSES,
    STD,
    N,
)
from lipnorm_exp.report.grids import PresetGrid
from lipnorm_exp.report.run_row import (
    DEPTH,
    EPOCHS,
    FINAL_TRAIN_ACC,
    HEADS,
    HIDDEN,
    STD_DDOF,
    TREE_DEPTH,
)
from lipnorm_exp.report.used_runs import UsedCell, provenance_line, runs_table
from lipnorm_exp.util.atomic import write_whole

LATEX_SYMBOLS = {"±": r"$\pm$", "†": r"$^\dagger$", "–": "--"}
LATEX_ESCAPES = {"%": r"\%", "&": r"\&", "_": r"\_", "#": r"\#"}
#: a cell that reads as a number (right-aligned in ``.tex``): digits, ``–``, ``†k``, ``1.2M``
NUMERIC_CELL = re.compile(r"^(–|†\d+|-?[\d.]+(e[+-]?\d+)?[kM]?( ± [\d.]+)?( \(\d+\))?( †\d+)?)$")
#: the text width of a page in characters of a table's cells (6.5 in at 10 pt, a digit 5 pt)
PAGE_CHARS = 90
#: characters a column takes beside its widest cell (``\tabcolsep`` on both sides)
COLUMN_GAP = 3
#: CSV columns that hold counts (written as integers)
INTEGER_COLUMNS = (
    DEPTH,
    TREE_DEPTH,
    HIDDEN,
    HEADS,
    EPOCHS,
    N,
    N_DIVERGED,
    CELL_RUNS,
    CELL_DIVERGED,
    PAPER_DEPTH,
    PARAMS,
    STD_DDOF,
)
#: CSV columns in % that are not a ``mean``/``std`` pair, rounded as those are
PERCENT_COLUMNS = (FINAL_TRAIN_ACC, PASSES)


@dataclass(frozen=True)
class Table:
    """A table ready to be written.

    Args:
        name (str): file stem.
        caption (str): one line naming the table.
        display (pandas.DataFrame): the table as shown (``.md``, ``.tex``).
        cells (pandas.DataFrame): the tidy cells (``.csv``).
        notes (str, optional): how to read the cells, below the table. (default: ``""``)
        provenance (str, optional): where the numbers come from. (default: ``""``)
        used (tuple[UsedCell, ...], optional): the cells and their runs; a table of runs
            also gets ``.runs.csv``. (default: ``()``)
        header (tuple[tuple[str, str], ...], optional): per column of ``display``, its group
            and its own title in ``.tex`` (``("Cora 0%", "test")``; group ``""``: a column of
            its own); ``()``: every column its own. (default: ``()``)
    """

    name: str
    caption: str
    display: pd.DataFrame
    cells: pd.DataFrame
    notes: str = ""
    provenance: str = ""
    used: tuple[UsedCell, ...] = ()
    header: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of_runs(
        cls,
        name: str,
        caption: str,
        display: list[dict],
        cells: list[dict],
        notes: str,
        grid: PresetGrid,
        runs: pd.DataFrame,
        used: Sequence[UsedCell],
        header: Sequence[tuple[str, str]] = (),
    ) -> "Table":
        """A table of a preset's runs: rows as dicts, the provenance of ``runs`` and ``used``."""
        provenance = provenance_line(grid, runs, used)
        return cls(
            name,
            caption,
            pd.DataFrame(display),
            pd.DataFrame(cells),
            notes,
            provenance,
            tuple(used),
            tuple(header),
        )

    @property
    def column_heads(self) -> tuple[tuple[str, str], ...]:
        """`header`, or every column of `display` its own."""
        return self.header or tuple(("", str(column)) for column in self.display.columns)


def _latex_symbols(text: str) -> str:
    for symbol, command in LATEX_SYMBOLS.items():
        text = text.replace(symbol, command)
    return text


def _latex_text(value) -> str:
    """A cell or title as LaTeX: escaped, ``±``, ``†`` and ``–`` as commands."""
    return _latex_symbols("".join(LATEX_ESCAPES.get(char, char) for char in str(value)))


def _alignment(values: pd.Series) -> str:
    """``r`` for a column of numbers (`NUMERIC_CELL`), ``l`` otherwise."""
    numeric = values.map(lambda value: bool(NUMERIC_CELL.match(str(value)))).all()
    return "r" if numeric else "l"


def _group_rows(heads: tuple[tuple[str, str], ...]) -> list[str]:
    """The group header line and its ``cmidrule`` line (none where nothing is grouped)."""
    if not any(group for group, _ in heads):
        return []
    cells, rules, start = [], [], 1
    for group, members in groupby(heads, key=lambda head: head[0]):
        width = len(list(members))
        if group:
            cells.append(f"\\multicolumn{{{width}}}{{c}}{{{_latex_text(group)}}}")
            rules.append(f"\\cmidrule(lr){{{start}-{start + width - 1}}}")
        else:
            cells += [""] * width
        start += width
    return [" & ".join(cells) + r" \\", " ".join(rules)]


def column_chars(display: pd.DataFrame, heads: tuple[tuple[str, str], ...]) -> list[int]:
    """Each column's width in characters: its widest cell or title, and `COLUMN_GAP`."""
    return [
        max(len(title), *(len(str(value)) for value in display.iloc[:, i])) + COLUMN_GAP
        for i, (_, title) in enumerate(heads)
    ]


def page_parts(display: pd.DataFrame, heads: tuple[tuple[str, str], ...]) -> list[list[int]]:
    """The columns of each part of a table split to fit a page, as indices into ``heads``.

    The leading columns without a group (the row labels; the first column at least) begin
    every part; the rest are blocks, a group's columns or a column of its own, and each part
    takes as many whole blocks as fit `PAGE_CHARS` (`column_chars`), one at least.
    """
    lead = 1
    while lead < len(heads) and not heads[lead][0] and any(group for group, _ in heads):
        lead += 1
    blocks: list[list[int]] = []
    for i in range(lead, len(heads)):
        if blocks and heads[i][0] and heads[i][0] == heads[blocks[-1][-1]][0]:
            blocks[-1].append(i)
        else:
            blocks.append([i])
    chars = column_chars(display, heads)
    parts: list[list[int]] = []
    for block in blocks:
        width = sum(chars[i] for i in block)
        if parts and sum(chars[i] for i in parts[-1]) + width <= PAGE_CHARS:
            parts[-1] += block
        else:
            parts.append([*range(lead), *block])
    return parts or [list(range(lead))]


def _tabular(display: pd.DataFrame, heads: tuple[tuple[str, str], ...]) -> list[str]:
    """A ``booktabs`` tabular of ``display`` under ``heads``."""
    align = "".join(_alignment(display[column]) for column in display.columns)
    rows = [f"\\begin{{tabular}}{{{align}}}", r"\toprule", *_group_rows(heads)]
    rows.append(" & ".join(_latex_text(title) for _, title in heads) + r" \\")
    rows.append(r"\midrule")
    rows += [
        " & ".join(_latex_text(v) for v in line) + r" \\" for line in display.itertuples(False)
    ]
    return [*rows, r"\bottomrule", r"\end{tabular}"]


def latex(table: Table) -> str:
    """The ``.tex`` text of ``table``: ``booktabs`` tabulars, a short caption, a table note.

    Columns of a group (`Table.header`) share a title over a ``cmidrule``; a column of
    numbers is right-aligned. A table wider than a page is split into floats (`page_parts`),
    captioned ``(part k of n)``; the notes and the provenance line stand below the last.
    """
    heads = table.column_heads
    display = table.display.astype(str)
    parts = page_parts(display, heads)
    floats = []
    for k, columns in enumerate(parts, 1):
        caption = table.caption + (f" (part {k} of {len(parts)})" if len(parts) > 1 else "")
        lines = [r"\begin{table}", r"\centering", f"\\caption{{{_latex_text(caption)}}}"]
        lines += _tabular(display.iloc[:, columns], tuple(heads[i] for i in columns))
        floats.append(lines)
    note = " ".join(filter(None, (table.notes, table.provenance)))
    if note:
        floats[-1] += [
            r"\par\smallskip",
            f"\\parbox{{\\textwidth}}{{\\footnotesize {_latex_text(note)}}}",
        ]
    return "\n".join(line for lines in floats for line in (*lines, r"\end{table}")) + "\n"


def csv_text(cells: pd.DataFrame) -> str:
    """The ``.csv`` text of a table's cells: counts as integers, numbers in % rounded."""
    frame = cells.copy()
    for column in INTEGER_COLUMNS:
        if column in frame:
            frame[column] = pd.to_numeric(frame[column]).round().astype("Int64")
    for column in frame.columns:
        if column.endswith((MEAN, STD)) or column in PERCENT_COLUMNS:
            frame[column] = pd.to_numeric(frame[column]).round(CSV_DECIMALS)
    return frame.to_csv(index=False)


def markdown(table: Table) -> str:
    """The ``.md`` text of ``table``."""
    body = tabulate(table.display, headers="keys", tablefmt="github", showindex=False)
    parts = (f"# {table.caption}", body, table.notes, table.provenance)
    return "\n\n".join(part for part in parts if part) + "\n"


def write_table(table: Table, out_dir: Path) -> list[Path]:
    """Write the files of ``table`` under ``out_dir``, each whole; return their paths."""
    texts = {"md": markdown(table), "tex": latex(table), "csv": csv_text(table.cells)}
    if table.used:
        texts["runs.csv"] = runs_table(table.used).to_csv(index=False)
    return [write_whole(out_dir / f"{table.name}.{suffix}", text) for suffix, text in texts.items()]


__all__ = [
    "INTEGER_COLUMNS",
    "PAGE_CHARS",
    "Table",
    "column_chars",
    "csv_text",
    "latex",
    "markdown",
    "page_parts",
    "write_table",
]
