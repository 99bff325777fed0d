"""``lipnorm-exp-report`` and ``python -m lipnorm_exp.report``: records → tables and figures.

Reads records only (never trains). ``--runs`` is searched recursively for ``*.json``
records. Scales and protocols are never mixed: the tables of each scale and protocol go to
``<out>/<scale>/<protocol>/tables/``, its figures to ``<out>/<scale>/<protocol>/figures/``
(every pair with records, or those of the one scale ``--scale`` names). Each table or figure
is its preset's (`PRESETS`) and takes only its runs;
the selection rule is in `lipnorm_exp.report.aggregate`.
The reproduction scorecard (`lipnorm_exp.report.scorecard`) goes to
``<out>/SCORECARD.md`` and ``<out>/scorecard.csv``.

Where ``--out`` is not given, the report of the committed records (``results/runs``) goes to
``results``, the repository's report, and that of any other folder of records to a folder beside
it, ``<runs>_report`` (`default_out`): only a report that names ``results`` writes there.

Every file is written whole under a temporary name and renamed, so a kill leaves each file the
old one or the new one. An ``--out`` folder that the report creates, other than ``results`` (the
repository's report), gets a ``.gitignore`` of ``*``, as pytest's and mypy's caches
do, so that a report of one's own runs is not committed by accident. A refused argument ends
the report in one line with exit status 2, Ctrl-C in one line with 130.

This module parses and checks the command line only; the work (`lipnorm_exp.report.writer`,
with pandas and matplotlib) is imported once the arguments hold, so that ``--help`` and a
refused argument answer at once.
"""

import argparse
from collections.abc import Sequence

from lipnorm_exp.records.store import RUNS_FOLDER
from lipnorm_exp.report.folders import REPOSITORY_OUT, ReportError, default_out
from lipnorm_exp.util.commands import OneLineParser, folder_path, run_command

__all__ = ["ReportError", "default_out", "main", "parse_args"]

#: the command's name in its one-line refusals and stops
COMMAND = "lipnorm_exp.report"
#: the start of the one line a refused command prints
ERROR_PREFIX = f"{COMMAND}: error: "


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (see ``--help``); ``--out`` defaults to `default_out` of ``--runs``."""
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
        help="output folder; each scale and protocol gets <out>/<scale>/<protocol>/tables "
        f"and figures; one the report creates, other than {REPOSITORY_OUT}, is git-ignored "
        f"(default: {REPOSITORY_OUT} for the records in {RUNS_FOLDER}, else <runs>_report)",
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
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = default_out(args.runs)
    return args


def check_folders(args: argparse.Namespace) -> None:
    """Refuse a ``--runs`` that is not a folder and an ``--out`` that is a file.

    What the records must hold, and whether ``--out`` can be written, is checked with them
    (`lipnorm_exp.report.writer.check_args`).

    Raises:
        ReportError: the first such argument.
    """
    if not args.runs.is_dir():
        raise ReportError(f"--runs {args.runs} is not a folder; give the folder of run records")
    if args.out.exists() and not args.out.is_dir():
        raise ReportError(f"--out {args.out} is a file, not a folder; give a folder")


def main(argv: Sequence[str] | None = None) -> int:
    """Write the report; returns the exit status.

    0; 2 with one line for a refused argument; 130 with one line on Ctrl-C.
    """
    args = parse_args(argv)

    def body() -> int:
        check_folders(args)
        from lipnorm_exp.report.writer import write_checked  # pandas, matplotlib

        write_checked(args)
        return 0

    return run_command(
        body,
        ReportError,
        COMMAND,
        "every file written is whole, the others are as they were",
    )
