"""``lipnorm-exp-verify --cells <table>.runs.csv --whole-cells``: a cell's seeds trained again.

Where ``--cells`` alone verifies the lowest seed of each cell record by record, ``--whole-cells``
trains every seed a cell reports (its ``.runs.csv`` rows) again here and judges the cell: are
the re-run test accuracies drawn like the recorded ones
([`judge_cell`][lipnorm_exp.records.cell_check.judge_cell]: an equivalence test with the
scorecard's band as its margin)? Each seed's record-level finding goes to the findings file as
usual; each cell's verdict, with the numbers it rests on, to a CSV of its own
(``results/cell_verification.csv`` by default), a row per cell, replacing an earlier row of the
same cell, written whole.
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import pandas as pd

from lipnorm_exp.cli.file_arguments import read_table
from lipnorm_exp.records import git_commit, schema
from lipnorm_exp.records.cell_check import judge_cell
from lipnorm_exp.records.provenance import processor_model
from lipnorm_exp.records.schema import Record
from lipnorm_exp.util.atomic import replacing
from lipnorm_exp.util.errors import UserError

__all__ = [
    "CELLS_COLUMNS",
    "CellFinding",
    "CellRuns",
    "cell_finding",
    "cell_name",
    "refuse_unknown_cells",
    "whole_cells",
    "write_cell_findings",
]

#: the columns of a table's ``.runs.csv`` that ``--cells`` reads
CELLS_COLUMNS = ("row", "column", "seed", "run_id")


def cell_name(row: object, column: object) -> str:
    """``row, column``: a cell as ``--only`` names it."""
    return f"{row}, {column}"


def refuse_unknown_cells(only: Sequence[str], named: set[str], tables: Sequence[Path]) -> None:
    """Refuse the ``--only`` names that are not among the cells ``named`` of ``tables``.

    Raises:
        UserError: one line naming the unknown cells and the tables.
    """
    unknown = [name for name in only if name not in named]
    if unknown:
        raise UserError(
            f"--only {'; '.join(unknown)}: no such cell in {', '.join(map(str, tables))} "
            "(give 'row, column' as the table's .runs.csv names them)"
        )


@dataclass(frozen=True)
class CellRuns:
    """The records a table's cell reports: ``table`` (its ``.runs.csv``), ``row``, ``column``."""

    table: str
    row: str
    column: str
    records: tuple[Record, ...]

    @property
    def name(self) -> str:
        """``row, column``, as ``--only`` names the cell."""
        return cell_name(self.row, self.column)


@dataclass
class CellFinding:
    """What training a cell's seeds again gave, and its verdict.

    Test accuracies in points at the best validation epoch; the numbers are
    [`CellJudgement`][lipnorm_exp.records.cell_check.CellJudgement]'s.
    """

    table: str
    row: str
    column: str
    seeds: str
    verdict: str
    recorded_mean: float
    recorded_std: float
    rerun_mean: float
    rerun_std: float
    difference: float
    ci90_low: float
    ci90_high: float
    p_equal: float
    margin: float
    record_verdicts: str
    verified_at: str | None
    processor: str
    threads: int


def whole_cells(
    finished: Sequence[Record], tables: Sequence[Path], only: Sequence[str], runs: Path
) -> list[CellRuns]:
    """Every cell of ``tables`` (``--only``: those named ``row, column``) with its records.

    Raises:
        UserError: a table none of whose runs is in ``runs``, a cell named by ``--only`` that no
            table holds, or a cell with a run missing from ``runs`` (one line naming the fix).
    """
    by_id = {record[schema.RUN_ID]: record for record in finished}
    cells = []
    for table in tables:
        rows = read_table(table, "--cells", CELLS_COLUMNS, "a table's .runs.csv (the report's)")
        for (row, column), cell in rows.sort_values(["seed", "run_id"]).groupby(
            ["row", "column"], sort=False
        ):
            if only and cell_name(row, column) not in only:
                continue
            missing = [rid for rid in cell["run_id"] if rid not in by_id]
            if missing:
                raise UserError(
                    f"--cells {table}: cell {row}, {column} reports runs with no finished record "
                    f"in {runs} ({', '.join(missing)}); give the --runs folder its records are in"
                )
            records = tuple(by_id[rid] for rid in cell["run_id"])
            cells.append(CellRuns(str(table), str(row), str(column), records))
    refuse_unknown_cells(only, {cell.name for cell in cells}, tables)
    return cells


def cell_finding(
    cell: CellRuns,
    tests: Sequence[tuple[float, float]],
    verdicts: Sequence[str],
    margin: float,
    threads: int,
) -> CellFinding:
    """The `CellFinding` of ``cell`` from its seeds' (recorded, re-run) test accuracies."""
    recorded, rerun = [pair[0] for pair in tests], [pair[1] for pair in tests]
    judged = judge_cell(recorded, rerun, margin)
    seeds = sorted(int(record[schema.CONFIG]["seed"]) for record in cell.records)
    tally = {verdict: verdicts.count(verdict) for verdict in dict.fromkeys(verdicts)}
    return CellFinding(
        table=Path(cell.table).name,
        row=cell.row,
        column=cell.column,
        seeds=" ".join(map(str, seeds)),
        verdict=judged.verdict,
        recorded_mean=round(judged.recorded_mean, 3),
        recorded_std=round(judged.recorded_std, 3),
        rerun_mean=round(judged.rerun_mean, 3),
        rerun_std=round(judged.rerun_std, 3),
        difference=round(judged.difference, 3),
        ci90_low=round(judged.low, 3),
        ci90_high=round(judged.high, 3),
        p_equal=round(judged.p_equal, 4),
        margin=margin,
        record_verdicts="; ".join(f"{count} {verdict}" for verdict, count in tally.items()),
        verified_at=git_commit(),
        processor=processor_model(),
        threads=threads,
    )


_COLUMNS = [field.name for field in fields(CellFinding)]
_KEY = ["table", "row", "column"]


def write_cell_findings(findings: Sequence[CellFinding], path: Path) -> pd.DataFrame:
    """Add ``findings`` to the CSV at ``path``, each replacing an earlier row of its cell."""
    new = pd.DataFrame([asdict(finding) for finding in findings], columns=_COLUMNS)
    if path.exists():
        old = read_table(path, "--cell-out", _KEY, "a cell findings file or a new path")
        old = old.reindex(columns=_COLUMNS)
        kept = ~old.set_index(_KEY).index.isin(new.set_index(_KEY).index)
        new = pd.concat([old[kept], new], ignore_index=True)
    new = new.sort_values(_KEY)[_COLUMNS]
    with replacing(path) as temporary:
        new.to_csv(temporary, index=False)
    return new
