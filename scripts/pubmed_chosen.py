"""The setting a Table 1 or 2 PubMed cell's selecting seeds chose, as `reproduce_pubmed.sh` runs it.

A cell's candidates are the script's rows of its cell and method (`candidate_rows`: a Table 1
missing rate, or ``table2``), each over the selecting seeds 0-2. Once every one of those runs
has a finished record in ``--runs`` (each found by the run id its config composes to), the
report's own rule ([`select`][lipnorm_exp.report.aggregate.select]: the best mean validation
accuracy, then the shallower) picks one, and this prints its row's depth and overrides, which
the script runs over the reporting seeds 100-104 (Dasoulas, Scaman & Virmaux, ICML 2021,
Tables 1 and 2; selection apart from reporting). Table 2's GAT-Lip cell has no rows: it is
Table 1's GAT-Lip 100% cell, whose choice it prints. Exit 3, with a line naming the first run
not finished, where one is not:

    python scripts/pubmed_chosen.py 1.0 gcn --runs results/runs       # prints e.g. "11"
    python scripts/pubmed_chosen.py table2 gcnii --runs results/runs  # e.g. "16 train.lr=0.01 ..."
"""

import argparse
import sys

from pubmed_plan import SELECTING, TABLE2_CELL, candidate, candidate_rows

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
        "cell", help="the cell: a Table 1 missing rate as the script's rows write it, or table2"
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
            f"argument cell method: '{args.cell} {args.method}' is no Table 1 or 2 cell of "
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
        for seed in range(SELECTING):
            overrides = (*candidate(*row), f"seed={seed}")
            runs[run_id(compose_config(CONFIGS_DIR, overrides))] = (str(depth), *extra)
    return runs


def main(argv=None) -> int:
    args = parse_args(argv)
    from lipnorm_exp.records import schema
    from lipnorm_exp.records.store import iter_records
    from lipnorm_exp.report.aggregate import select
    from lipnorm_exp.report.frame import record_row, records_frame
    from lipnorm_exp.report.run_row import RUN_ID

    rows = candidate_runs(args.cell, args.method)
    finished = {
        record[schema.RUN_ID]: record
        for _, record in iter_records(args.runs, set_aside_broken=False)
        if record[schema.RUN_ID] in rows and record[schema.STATUS] in schema.FINISHED
    }
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
