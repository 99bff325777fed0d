"""``python -m lipnorm_exp.report``: run records → the paper's tables and figures.

Reads records only (never trains). ``--runs`` is searched recursively for ``*.json``
records. Scales are never mixed: the tables of each scale go to ``<out>/<scale>/tables/``, its
figures to ``<out>/<scale>/figures/`` (every scale with records, or the one ``--scale`` names);
the selection rule is in :mod:`lipnorm_exp.report.aggregate`.
"""

import argparse
from collections.abc import Sequence
from pathlib import Path

from lipnorm_exp.report.aggregate import report_scales, usable_runs
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
        help="output folder; each scale gets <out>/<scale>/tables and figures "
        "(default: %(default)s)",
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
    counts = frame["status"].value_counts()
    print(f"{len(frame)} records in {args.runs}; {int(counts.get('failed', 0))} failed ignored")
    for scale in report_scales(frame, args.scale) or [None]:
        of_scale = frame[frame["scale"] == scale]
        usable = usable_runs(of_scale, scale)
        out = args.out / (scale or "")
        print(
            f"scale {scale}: {len(usable)} runs "
            f"({int((usable['status'] == 'diverged').sum())} diverged) -> {out}"
        )
        if args.only != "figures":
            write_tables(of_scale, usable, out / "tables", scale)
        if args.only != "tables":
            write_figures(usable, out / "figures")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
