"""``lipnorm-exp-report`` and ``python -m lipnorm_exp.report``: records → tables and figures.

Reads records only (never trains). ``--runs`` is searched recursively for ``*.json``
records. Scales and protocols are never mixed: the tables of each scale and protocol go to
``<out>/<scale>/<protocol>/tables/``, its figures to ``<out>/<scale>/<protocol>/figures/``
(every pair with records, or those of the one scale ``--scale`` names). Each table or figure
is its preset's (`PRESETS`) and takes only its runs;
the selection rule is in `lipnorm_exp.report.aggregate`.
The reproduction scorecard (`lipnorm_exp.report.scorecard`) goes to
``<out>/SCORECARD.md`` and ``<out>/scorecard.csv``.

Every file is written whole under a temporary name and renamed, so a kill leaves each file the
old one or the new one. An ``--out`` folder that the report creates, other than ``results`` (the
repository's report, its default), gets a ``.gitignore`` of ``*``, as pytest's and mypy's caches
do, so that a report of one's own runs is not committed by accident. A refused argument ends
the report in one line with exit status 2, Ctrl-C in one line with 130.
"""

import argparse
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from lipnorm_exp.records import FAILED, INTERRUPTED, RUNS_FOLDER, schema
from lipnorm_exp.report.aggregate import compose_tagged_grids, report_groups, usable_runs
from lipnorm_exp.report.coverage import coverage
from lipnorm_exp.report.figures import write_figures
from lipnorm_exp.report.frame import load_records
from lipnorm_exp.report.paper_presets import owned_figures, owned_tables
from lipnorm_exp.report.scorecard import write_scorecard
from lipnorm_exp.report.tables import write_tables
from lipnorm_exp.util.atomic import remove_stale_temps, write_whole
from lipnorm_exp.util.commands import OneLineParser, folder_path, run_command
from lipnorm_exp.util.errors import ConfigError
from lipnorm_exp.util.folders import writable_folder

#: the command's name in its one-line refusals and stops
COMMAND = "lipnorm_exp.report"
#: the start of the one line a refused command prints
ERROR_PREFIX = f"{COMMAND}: error: "
#: the default ``--out``: the repository's report of its records (``make report``), committed
REPOSITORY_OUT = Path("results")
#: what a folder the report creates elsewhere holds, so that git ignores it and all it holds
IGNORE_ALL = "# made by lipnorm-exp-report: a report of one's own runs, never committed\n*\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (see ``--help``)."""
    parser = OneLineParser(
        prog="python -m lipnorm_exp.report",
        error_prefix=ERROR_PREFIX,
        description="Write the paper's tables and figures from run records (never trains).",
    )
    parser.add_argument(
        "--runs",
        type=folder_path,
        default=RUNS_FOLDER,
        help="folder of JSON run records, searched recursively (default: %(default)s)",
    )
    parser.add_argument(
        "--out",
        type=folder_path,
        default=REPOSITORY_OUT,
        help="output folder; each scale and protocol gets <out>/<scale>/<protocol>/tables "
        "and figures; one the report creates, other than %(default)s, is git-ignored "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--only",
        choices=("tables", "figures", "scorecard"),
        help="write only the tables, the figures or the scorecard",
    )
    parser.add_argument(
        "--scale",
        default=None,
        help="only this scale (default: every scale with records, each on its own)",
    )
    return parser.parse_args(argv)


class ReportError(ValueError):
    """An argument the report cannot work with; the message names it and the fix."""


def check_args(args: argparse.Namespace, frame: pd.DataFrame) -> None:
    """Refuse a ``--runs`` without records, a ``--scale`` without any, a bad ``--out``.

    ``--out`` must be a folder that can be written to; it is made where missing.

    Raises:
        ReportError: the first such argument.
    """
    if not args.runs.is_dir():
        raise ReportError(f"--runs {args.runs} is not a folder; give the folder of run records")
    if frame.empty:
        raise ReportError(f"--runs {args.runs} holds no run records (*.json, searched recursively)")
    scales = sorted(str(scale) for scale in frame["scale"].dropna().unique())
    if args.scale is not None and args.scale not in scales:
        raise ReportError(f"--scale {args.scale} has no records; scales with records: {scales}")
    if args.out.exists() and not args.out.is_dir():
        raise ReportError(f"--out {args.out} is a file, not a folder; give a folder")
    try:
        writable_folder(args.out, "--out")
    except ConfigError as error:
        raise ReportError(f"{error}; give a folder you can write to") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Write the report; returns the exit status.

    0; 2 with one line for a refused argument; 130 with one line on Ctrl-C.
    """
    args = parse_args(argv)

    def body() -> int:
        frame = load_records(args.runs)
        created = not args.out.exists()
        check_args(args, frame)
        if created and args.out.resolve() != REPOSITORY_OUT.resolve():
            write_whole(args.out / ".gitignore", IGNORE_ALL)
        write_report(args, frame)
        return 0

    return run_command(
        body,
        ReportError,
        COMMAND,
        "every file written is whole, the others are as they were",
    )


def write_report(args: argparse.Namespace, frame: pd.DataFrame) -> None:
    """Print what ``frame`` holds and write the tables, figures and scorecard ``args`` ask for.

    The first line printed says which presets, scales and protocols the records cover and which
    of the scorecard's presets they can score (`coverage`).
    """
    # the grids of the presets tagged (the scorecard's and the coverage line's: paper scale)
    compose_tagged_grids(frame, "paper" if args.only == "scorecard" else None)
    print(coverage(frame))
    failed = int((frame[schema.STATUS] == FAILED).sum())
    interrupted = int((frame[schema.STATUS] == INTERRUPTED).sum())
    set_aside = frame.attrs["set_aside"]
    print(
        f"{len(frame)} records in {args.runs}; {failed} failed ignored"
        + (f", {interrupted} interrupted ignored" if interrupted else "")
        + (f", {set_aside} broken set aside (their runs are done again)" if set_aside else "")
    )
    remove_stale_temps(args.out, recursive=True)  # what a killed report left there
    groups = [] if args.only == "scorecard" else report_groups(frame, args.scale)
    for scale, protocol in groups:
        records = frame[(frame["scale"] == scale) & (frame["protocol"] == protocol)]
        runs = usable_runs(frame, scale, protocol)
        out = args.out / scale / protocol
        print(f"scale {scale}, protocol {protocol}: {len(runs)} runs -> {out}")
        if args.only in (None, "tables"):
            write_tables(records, runs, out / "tables", scale, protocol, owned_tables())
        if args.only in (None, "figures"):
            write_figures(runs, out / "figures", scale, protocol, owned_figures())
    if args.only in (None, "scorecard"):
        for path in write_scorecard(frame, args.out):
            print(f"wrote {path}")
