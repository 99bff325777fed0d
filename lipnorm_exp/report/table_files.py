"""A table as files: ``<name>.md``, ``.tex``, ``.csv`` and, for tables of runs, ``.runs.csv``.

- ``.md``: a title line (the caption), the table, its notes and its provenance line.
- ``.tex``: the same table in a ``table`` float whose caption holds the caption and the
  provenance line.
- ``.csv``: the tidy cells (one row per cell, every number unrounded).
- ``.runs.csv``: every run behind a number (:func:`~lipnorm_exp.report.provenance.runs_table`).

Every file is a function of the table alone, so the same records give the same bytes, and is
written whole or not at all (:func:`~lipnorm_exp.util.atomic.write_whole`): a kill leaves each file
the old one or the new one.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from tabulate import tabulate

from lipnorm_exp.report.presets import PresetGrid
from lipnorm_exp.report.provenance import UsedCell, provenance_line, runs_table
from lipnorm_exp.util.atomic import write_whole

LATEX_SYMBOLS = {"±": r"$\pm$", "†": r"$^\dagger$", "–": "--"}
LATEX_ESCAPES = {"%": r"\%", "&": r"\&", "_": r"\_", "#": r"\#"}


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
    """

    name: str
    caption: str
    display: pd.DataFrame
    cells: pd.DataFrame
    notes: str = ""
    provenance: str = ""
    used: tuple[UsedCell, ...] = ()

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
        )


def _latex_symbols(text: str) -> str:
    for symbol, command in LATEX_SYMBOLS.items():
        text = text.replace(symbol, command)
    return text


def latex(table: Table) -> str:
    """The ``.tex`` text of ``table`` (tabulate escapes the body; the caption is escaped here)."""
    body = tabulate(table.display, headers="keys", tablefmt="latex_booktabs", showindex=False)
    body = _latex_symbols(body)
    caption = " ".join(filter(None, (table.caption, table.provenance)))
    caption = _latex_symbols("".join(LATEX_ESCAPES.get(char, char) for char in caption))
    return f"\\begin{{table}}\n\\centering\n\\caption{{{caption}}}\n{body}\n\\end{{table}}\n"


def markdown(table: Table) -> str:
    """The ``.md`` text of ``table``."""
    body = tabulate(table.display, headers="keys", tablefmt="github", showindex=False)
    parts = (f"# {table.caption}", body, table.notes, table.provenance)
    return "\n\n".join(part for part in parts if part) + "\n"


def write_table(table: Table, out_dir: Path) -> list[Path]:
    """Write the files of ``table`` under ``out_dir``, each whole; return their paths."""
    texts = {"md": markdown(table), "tex": latex(table), "csv": table.cells.to_csv(index=False)}
    if table.used:
        texts["runs.csv"] = runs_table(table.used).to_csv(index=False)
    return [write_whole(out_dir / f"{table.name}.{suffix}", text) for suffix, text in texts.items()]


__all__ = ["Table", "latex", "markdown", "write_table"]
