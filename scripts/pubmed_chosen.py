"""The setting a PubMed table cell's selecting seeds chose, as `reproduce_pubmed.sh` runs it.

A cell's candidates are the script's rows of its cell and method (`candidate_rows`: a Table 1
missing rate, ``table2`` or ``table3``), each over the selecting seeds 0-2 (Table 3: the
protocol's 0-4). Once every one of those runs has a finished record in ``--runs`` (each found
by the run id its config composes to, where the sweep writes it), the report's own rule
([`select`][lipnorm_exp.report.aggregate.select]: the best mean validation accuracy, then the
shallower) picks one, and this prints its row's depth and overrides, which the script runs over
the reporting seeds 100-104 (Dasoulas, Scaman & Virmaux, ICML 2021, Tables 1-3; selection apart
from reporting). Table 2's GAT-Lip cell has no rows: it is Table 1's GAT-Lip 100% cell, whose
choice it prints. Exit 3, with a line naming the first run not finished, where one is not:

    python scripts/pubmed_chosen.py 1.0 gcn --runs results/runs       # prints e.g. "11"
    python scripts/pubmed_chosen.py table2 gcnii --runs results/runs  # e.g. "16 train.lr=0.01 ..."
    python scripts/pubmed_chosen.py table3 gat --runs results/runs    # e.g. "15"

``--all`` prints every cell's candidates instead, in the script's order: how many of each one's
selecting runs have finished, their mean best validation accuracy (%), and the one chosen where
all have (`cell_candidates`); it exits 0. A cell of `SHARED_CELLS` is listed once, under the cell
whose rows it shares.

    python scripts/pubmed_chosen.py --all
"""

import argparse
import math
import sys
from pathlib import Path

import pandas as pd
from pubmed_plan import TABLE2_CELL, candidate, candidate_rows, selecting_seeds

from lipnorm_exp.records.schema import Record
from lipnorm_exp.util.commands import OneLineParser, existing_folder

#: the exit code of a cell whose candidates have not all finished their selecting seeds
NOT_YET = 3
#: a cell without rows of its own -> the cell whose choice it shares (Table 2's GAT-Lip line is
#: Table 1's GAT-Lip 100% cell)
SHARED_CELLS = {(TABLE2_CELL, "gat_lip"): ("1.0", "gat_lip")}


def table_cells() -> list[tuple[str, str]]:
    """(cell, method) of every table cell of the script, in the order of its rows."""
    return [*own_cells(), *SHARED_CELLS]


def own_cells() -> list[tuple[str, str]]:
    """(cell, method) of every cell with rows of its own (not in `SHARED_CELLS`), in order."""
    return list(dict.fromkeys(row[:2] for row in candidate_rows()))


def parse_args(argv=None) -> argparse.Namespace:
    parser = OneLineParser(
        description=__doc__.split("\n\n")[0], error_prefix="pubmed_chosen.py: error: "
    )
    parser.add_argument(
        "cell",
        nargs="?",
        help="the cell: a Table 1 missing rate as the script's rows write it, table2 or table3",
    )
    parser.add_argument("method", nargs="?", help="the cell's method (+method=...)")
    parser.add_argument(
        "--all", action="store_true", help="every cell's candidates, and the one chosen"
    )
    parser.add_argument(
        "--runs", type=existing_folder, default="results/runs", help="the records' folder"
    )
    args = parser.parse_args(argv)
    cells = table_cells()
    if (args.cell is not None) == args.all or (args.method is None) != args.all:
        parser.error(
            "argument cell method: give a cell and its method (e.g. 1.0 gcn), or --all alone"
        )
    if not args.all and (args.cell, args.method) not in cells:
        allowed = ", ".join(f"{cell} {method}" for cell, method in sorted(cells))
        parser.error(
            f"argument cell method: '{args.cell} {args.method}' is no table cell of "
            f"reproduce_pubmed.sh (one of: {allowed})"
        )
    return args


def candidate_runs(cell: str, method: str) -> dict[str, tuple[str, ...]]:
    """Run id -> the row's fields after the method (depth, overrides), of each selecting run."""
    from lipnorm_exp.records.identity import run_id
    from lipnorm_exp.report.grids import CONFIGS_DIR, compose_config

    cell, method = SHARED_CELLS.get((cell, method), (cell, method))
    runs = {}
    for row in candidate_rows():
        if row[:2] != (cell, method):
            continue
        *_, depth, extra = row
        config = compose_config(CONFIGS_DIR, candidate(*row))
        for seed in range(selecting_seeds(cell)):
            config.seed = seed  # a value, set last, as Hydra sets a job's `seed=<seed>`
            runs[run_id(config)] = (str(depth), *extra)
    return runs


def finished_records(run_ids, runs: Path) -> dict[str, Record]:
    """The finished records of ``run_ids`` in ``runs``, where the sweep writes and finds them."""
    from lipnorm_exp.records import FINISHED, BadRecordError, read_record

    finished = {}
    for rid in run_ids:
        try:
            record = read_record(runs, rid)
        except BadRecordError:  # its sweep sets it aside and trains the run again
            continue
        if record is not None and record["status"] in FINISHED:
            finished[rid] = record
    return finished


def runs_frame(records: list[Record]) -> pd.DataFrame:
    """The report's frame of ``records``."""
    from lipnorm_exp.report.frame import record_row, records_frame

    return records_frame([record_row(record) for record in records])


def chosen_row(records: dict[str, Record], rows: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The row of the candidate the report's rule picks among the finished ``records``."""
    from lipnorm_exp.report.aggregate import select
    from lipnorm_exp.report.run_row import RUN_ID

    chosen = select(runs_frame(list(records.values())))
    assert chosen is not None, "the candidates' runs are there"
    return rows[chosen.runs[RUN_ID].iloc[0]]


def validation_score(records: list[Record]) -> float:
    """The score the report's rule ranks one candidate by, over its finished ``records``, in %
    (`setting_scores`: mean best validation accuracy, diverged runs left out; NaN for none)."""
    from lipnorm_exp.report.aggregate import SCORE, setting_scores

    if not records:
        return math.nan
    return 100 * float(setting_scores(runs_frame(records))[SCORE].item())


def cell_candidates(cell: str, method: str, runs: Path) -> pd.DataFrame:
    """A row per candidate of a cell: its row's fields after the method, its finished
    selecting runs of all, their `validation_score`, and whether it is chosen (once every
    selecting run of the cell has finished)."""
    rows = candidate_runs(cell, method)
    finished = finished_records(rows, runs)
    chosen = chosen_row(finished, rows) if len(finished) == len(rows) else None
    table = []
    for row in dict.fromkeys(rows.values()):
        ids = [rid for rid, of in rows.items() if of == row]
        done = [finished[rid] for rid in ids if rid in finished]
        table.append({
            "cell": cell,
            "method": method,
            "candidate": " ".join(row),
            "selecting runs": f"{len(done)}/{len(ids)}",
            "validation": round(validation_score(done), 1),
            "chosen": "chosen" if row == chosen else "",
        })  # fmt: skip
    return pd.DataFrame(table)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.all:
        tables = [cell_candidates(cell, method, args.runs) for cell, method in own_cells()]
        every = pd.concat(tables, ignore_index=True)
        print(every.to_markdown(index=False, floatfmt=".1f", missingval="–"))
        return 0
    rows = candidate_runs(args.cell, args.method)
    finished = finished_records(rows, args.runs)
    waiting = [rid for rid in rows if rid not in finished]
    if waiting:
        print(
            f"{args.cell} {args.method}: run {waiting[0]} ({' '.join(rows[waiting[0]])}) has no "
            f"finished record in {args.runs} yet ({len(waiting)} of {len(rows)} selecting runs)",
            file=sys.stderr,
        )
        return NOT_YET
    print(" ".join(chosen_row(finished, rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
