"""The report's work once its command line holds: records loaded, checked, and written out.

`lipnorm_exp.report.command` parses the command line and imports this module (pandas,
matplotlib) once the arguments hold; here the records are loaded, checked against the
arguments, and the tables, figures and scorecard written.
"""

import argparse

import pandas as pd

from lipnorm_exp.records import FAILED, INTERRUPTED
from lipnorm_exp.report.aggregate import compose_tagged_grids, report_groups, usable_runs
from lipnorm_exp.report.coverage import coverage
from lipnorm_exp.report.figures import write_figures
from lipnorm_exp.report.folders import IGNORE_ALL, REPOSITORY_OUT, ReportError
from lipnorm_exp.report.frame import SET_ASIDE, load_records
from lipnorm_exp.report.paper_presets import owned_figures, owned_tables
from lipnorm_exp.report.run_row import PROTOCOL, SCALE, STATUS
from lipnorm_exp.report.scorecard import write_scorecard
from lipnorm_exp.report.tables import write_tables
from lipnorm_exp.util.atomic import remove_stale_temps, write_whole
from lipnorm_exp.util.errors import ConfigError
from lipnorm_exp.util.folders import writable_folder

__all__ = ["check_args", "write_checked", "write_report"]


def check_args(args: argparse.Namespace, frame: pd.DataFrame) -> None:
    """Refuse a ``--runs`` without records, a ``--scale`` without any, an ``--out`` not writable.

    ``--out`` is made where missing, once the records hold.

    Raises:
        ReportError: the first such argument.
    """
    if frame.empty:
        raise ReportError(f"--runs {args.runs} holds no run records (*.json, searched recursively)")
    scales = sorted(str(scale) for scale in frame[SCALE].dropna().unique())
    if args.scale is not None and args.scale not in scales:
        raise ReportError(f"--scale {args.scale} has no records; scales with records: {scales}")
    try:
        writable_folder(args.out, "--out")
    except ConfigError as error:
        raise ReportError(f"{error}; give a folder you can write to") from None


def write_checked(args: argparse.Namespace) -> None:
    """Load the records of ``args.runs``, check them against ``args`` and write the report.

    An ``--out`` folder made here, other than the repository's report, gets `IGNORE_ALL`.
    """
    frame = load_records(args.runs)
    created = not args.out.exists()
    check_args(args, frame)
    if created and args.out.resolve() != REPOSITORY_OUT.resolve():
        write_whole(args.out / ".gitignore", IGNORE_ALL)
    write_report(args, frame)


def write_report(args: argparse.Namespace, frame: pd.DataFrame) -> None:
    """Print what ``frame`` holds and write the tables, figures and scorecard ``args`` ask for.

    The first line printed says which presets, scales and protocols the records cover and which
    of the scorecard's presets they can score (`coverage`).
    """
    # the grids of the presets tagged (the scorecard's and the coverage line's: paper scale)
    compose_tagged_grids(frame, "paper" if args.only == "scorecard" else None)
    print(coverage(frame))
    failed = int((frame[STATUS] == FAILED).sum())
    interrupted = int((frame[STATUS] == INTERRUPTED).sum())
    set_aside = frame.attrs[SET_ASIDE]
    print(
        f"{len(frame)} records in {args.runs}; {failed} failed ignored"
        + (f", {interrupted} interrupted ignored" if interrupted else "")
        + (f", {set_aside} broken set aside (their runs are done again)" if set_aside else "")
    )
    remove_stale_temps(args.out, recursive=True)  # what a killed report left there
    groups = [] if args.only == "scorecard" else report_groups(frame, args.scale)
    for scale, protocol in groups:
        records = frame[(frame[SCALE] == scale) & (frame[PROTOCOL] == protocol)]
        runs = usable_runs(frame, scale, protocol)
        out = args.out / scale / protocol
        print(f"scale {scale}, protocol {protocol}: {len(runs)} runs")
        written = []
        if args.only in (None, "tables"):
            written += write_tables(records, runs, out / "tables", scale, protocol, owned_tables())
        if args.only in (None, "figures"):
            written += write_figures(runs, out / "figures", scale, protocol, owned_figures())
        if not written:
            print(f"scale {scale}, protocol {protocol}: no run of a preset, nothing written")
    if args.only in (None, "scorecard"):
        for path in write_scorecard(frame, args.out):
            print(f"wrote {path}")
