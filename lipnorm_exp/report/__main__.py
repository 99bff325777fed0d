"""``python -m lipnorm_exp.report``: run records → the paper's tables and figures.

Reads records only (never trains). ``--runs`` is searched recursively for ``*.json``
records; tables go to ``<out>/tables/``, figures to ``<out>/figures/``. One scale is shown
(``--scale``; by default ``paper`` where paper-scale records exist, else the scale with the
most records); the selection rule is in :mod:`lipnorm_exp.report.aggregate`.
"""

import argparse
from collections.abc import Sequence
from pathlib import Path

from lipnorm_exp.report.aggregate import choose_scale, usable_runs
from lipnorm_exp.report.figures import write_figures
from lipnorm_exp.report.records import load_records
from lipnorm_exp.report.tables import write_tables


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (see ``--help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m lipnorm_exp.report",
        description="Write the paper's tables and figures from run records (never trains).",
    )
    parser.add_argument(
        "--runs",
        type=Path,
        default=Path("results/runs"),
        help="folder of JSON run records, searched recursively (default: %(default)s)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("results"),
        help="output folder for tables/ and figures/ (default: %(default)s)",
    )
    parser.add_argument(
        "--only", choices=("tables", "figures"), help="write only the tables or only the figures"
    )
    parser.add_argument(
        "--scale",
        default=None,
        help="scale of the records shown (default: paper if present, else the "
        "most frequent); scales are never mixed",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the report; returns the exit status (0)."""
    args = parse_args(argv)
    frame = load_records(args.runs)
    scale = choose_scale(frame, args.scale)
    usable = usable_runs(frame, scale)
    counts = frame["status"].value_counts()
    print(
        f"{len(frame)} records in {args.runs}; showing scale {scale}: {len(usable)} runs "
        f"({int((usable['status'] == 'diverged').sum())} diverged); "
        f"{int(counts.get('failed', 0))} failed runs ignored"
    )
    if args.only != "figures":
        write_tables(frame, usable, args.out / "tables", scale)
    if args.only != "tables":
        write_figures(usable, args.out / "figures")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
