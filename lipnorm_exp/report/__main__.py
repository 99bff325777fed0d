"""``python -m lipnorm_exp.report``: run records → the paper's tables and figures.

Reads records only (never trains). ``--runs`` is searched recursively for ``*.json``
records. Scales and protocols are never mixed: the tables of each scale and protocol go to
``<out>/<scale>/<protocol>/tables/``, its figures to ``<out>/<scale>/<protocol>/figures/``
(every pair with records, or those of the one scale ``--scale`` names). Each table or figure
takes only its preset's runs; the selection rule is in :mod:`lipnorm_exp.report.aggregate`.
"""

import argparse
from collections.abc import Sequence
from pathlib import Path

from lipnorm_exp.records import FAILED, INTERRUPTED
from lipnorm_exp.report.aggregate import report_groups, usable_runs
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
        help="output folder; each scale and protocol gets <out>/<scale>/<protocol>/tables "
        "and figures (default: %(default)s)",
    )
    parser.add_argument(
        "--only", choices=("tables", "figures"), help="write only the tables or only the figures"
    )
    parser.add_argument(
        "--scale",
        default=None,
        help="only this scale (default: every scale with records, each on its own)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the report; returns the exit status (0)."""
    args = parse_args(argv)
    frame = load_records(args.runs)
    failed = int((frame["status"] == FAILED).sum())
    interrupted = int((frame["status"] == INTERRUPTED).sum())
    print(
        f"{len(frame)} records in {args.runs}; {failed} failed ignored"
        + (f", {interrupted} interrupted ignored" if interrupted else "")
    )
    for scale, protocol in report_groups(frame, args.scale):
        records = frame[(frame["scale"] == scale) & (frame["protocol"] == protocol)]
        runs = usable_runs(frame, scale, protocol)
        out = args.out / scale / protocol
        print(f"scale {scale}, protocol {protocol}: {len(runs)} runs -> {out}")
        if args.only != "figures":
            write_tables(records, runs, out / "tables", scale, protocol)
        if args.only != "tables":
            write_figures(runs, out / "figures", scale, protocol)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
