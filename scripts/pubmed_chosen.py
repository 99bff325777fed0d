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
"""

import argparse
import sys

from pubmed_plan import TABLE2_CELL, candidate, candidate_rows, selecting_seeds

from lipnorm_exp.util.commands import OneLineParser, existing_folder

#: the exit code of a cell whose candidates have not all finished their selecting seeds
NOT_YET = 3
#: a cell without rows of its own -> the cell whose choice it shares (Table 2's GAT-Lip line is
#: Table 1's GAT-Lip 100% cell)
SHARED_CELLS = {(TABLE2_CELL, "gat_lip"): ("1.0", "gat_lip")}


def parse_args(argv=None) -> argparse.Namespace:
    parser = OneLineParser(
        description=__doc__.split("\n\n")[0], error_prefix="pubmed_chosen.py: error: "
    )
    parser.add_argument(
        "cell",
        help="the cell: a Table 1 missing rate as the script's rows write it, table2 or table3",
    )
    parser.add_argument("method", help="the cell's method (+method=...)")
    parser.add_argument(
        "--runs", type=existing_folder, default="results/runs", help="the records' folder"
    )
    args = parser.parse_args(argv)
    cells = sorted({*(row[:2] for row in candidate_rows()), *SHARED_CELLS})
    if (args.cell, args.method) not in cells:
        allowed = ", ".join(f"{cell} {method}" for cell, method in cells)
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
        for seed in range(selecting_seeds(cell)):
            overrides = (*candidate(*row), f"seed={seed}")
            runs[run_id(compose_config(CONFIGS_DIR, overrides))] = (str(depth), *extra)
    return runs


def main(argv=None) -> int:
    args = parse_args(argv)
    from lipnorm_exp.records import FINISHED, BadRecordError, read_record
    from lipnorm_exp.report.aggregate import select
    from lipnorm_exp.report.frame import record_row, records_frame
    from lipnorm_exp.report.run_row import RUN_ID

    rows = candidate_runs(args.cell, args.method)
    finished = {}
    for rid in rows:  # where the sweep writes and finds a run's record
        try:
            record = read_record(args.runs, rid)
        except BadRecordError:  # its sweep sets it aside and trains the run again
            continue
        if record is not None and record["status"] in FINISHED:
            finished[rid] = record
    waiting = [rid for rid in rows if rid not in finished]
    if waiting:
        print(
            f"{args.cell} {args.method}: run {waiting[0]} ({' '.join(rows[waiting[0]])}) has no "
            f"finished record in {args.runs} yet ({len(waiting)} of {len(rows)} selecting runs)",
            file=sys.stderr,
        )
        return NOT_YET
    chosen = select(records_frame([record_row(record) for record in finished.values()]))
    assert chosen is not None, "the candidates' runs are there"
    print(" ".join(rows[chosen.runs[RUN_ID].iloc[0]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
