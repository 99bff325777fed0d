"""``lipnorm-exp-verify``: train committed records again with today's code and say what holds.

A record names the code that made it (its commit) and the machine (device, processor, threads).
This command takes records from a folder (by run id, or a preset's, a few per setting), trains
each run again from its own config with the code installed now, on this machine, and judges the
new history against the stored one epoch by epoch
([`lipnorm_exp.records.verify.judge`][lipnorm_exp.records.verify.judge]):

- ``identical``: every row of the history is equal, number for number, the epoch times aside;
- ``same up to rounding``: at the first epoch where they part, the losses (and every other column
  but the accuracies) agree to a relative difference of at most 1e-6, what float32 rounding in
  another order explains, and for 10 epochs from there the difference at most triples an epoch;
  where chaos takes over later, the run ends with the same status and a test accuracy (at the
  best validation epoch) within the spread of its setting: the sample standard deviation of that
  accuracy over the setting's stored seeds, at least 0.5 points (a setting of one seed has no
  spread, and its final numbers are not judged);
- ``departed by rounding``: the same as the last up to the final numbers, which chaos carries
  further apart than the setting's spread (as a re-run at another thread count does on a chaotic
  setting): no rule on one record tells this from a change of the config in its fifth digit, so
  it neither verifies the record nor calls it different; ``--cells ... --whole-cells`` asks the
  cell-level question instead (`lipnorm_exp.records.cell_check`);
- ``different``: they part beyond rounding, as another seed or other code does.

``scripts/calibrate_verify.py`` calibrated the tolerance (``results/verify_calibration.md``): the
same records trained again at another thread count or numerics version part by 1.9e-7 at most
where they part and pass (17 of 17, deep records at lr 0.005 and dropout 0.6 among them; a
one-seed 10-layer GAT ends 5.7 points apart after a rounding-sized start); no seed-0
record passes against another seed of its setting (0 of 756; the nearest parts by 2.7e-4); a
one-line change to the model parts by 3.2e-6 or more at its first epoch and does not pass (0 of
11). Gradient norms, like accuracies, jump where rounding tips a near-tie and are reported, not
held to the tolerance.

Where the processor or the thread count differ from the record's, a difference may be rounding
(floating-point sums in another order), not a change of code: each finding names both machines.
Findings go to a CSV file (``results/verification.csv`` by default), one row per run, replacing
an earlier finding of the same run, the file written whole after each run (a temporary file
renamed over it, under a lock that verifies writing the same file take turns at), so that a kill
at any moment leaves it as it was or with whole rows and no finding is lost; each
names the rule that judged it and the size of the first departure (the largest relative
difference at the first epoch that differs, and its column);
findings of the earlier rule are judged again where what they stored allows
([`lipnorm_exp.records.verify.rejudged`][lipnorm_exp.records.verify.rejudged]). The scorecard reads
the file. ``--keep FOLDER`` keeps the records trained again there, made by today's numerics:
``lipnorm-exp-merge FOLDER --into results/runs --prefer newer`` puts them in place of the stored
ones (those found ``different``, say).

Before it trains, the command says what the chosen records took when made, by machine and
numerics version (`--dry-run` stops there); while it trains, each finding's line gives the time
spent and the time to go, the hours left scaled by this machine's pace so far
(`lipnorm_exp.cli.verify_cost`).

    lipnorm-exp-verify --run-id 7a221658c0ffee00                # one run
    lipnorm-exp-verify --preset residual --per-setting 1 --dry-run   # what it would cost
    python -m lipnorm_exp.cli.verify --preset missing_vector --per-setting 1
    lipnorm-exp-verify --run-id 7a221658c0ffee00 --keep remade      # and keep the new record
"""

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import get_type_hints

from lipnorm_exp.cli.file_arguments import file_path
from lipnorm_exp.config.schema import Config as ConfigSchema
from lipnorm_exp.records import RUNS_FOLDER
from lipnorm_exp.util import constraints
from lipnorm_exp.util.commands import OneLineParser, folder_path, run_command
from lipnorm_exp.util.errors import UserError

__all__ = ["main", "parse_args"]

#: the command's name in its one-line refusals and stops
COMMAND = "lipnorm_exp.verify"
#: the start of the one line a refused command prints
ERROR_PREFIX = f"{COMMAND}: error: "
#: where findings go by default, beside the scorecard
FINDINGS = Path("results", "verification.csv")
#: where ``--whole-cells`` writes its cell findings by default, beside them
CELL_FINDINGS = Path("results", "cell_verification.csv")


def device_name(text: str) -> str:
    """A ``--device``: a value the run config's ``device`` takes (``auto``, ``cpu``, ``cuda:1``).

    Raises:
        argparse.ArgumentTypeError: any other.
    """
    allowed = get_type_hints(ConfigSchema, include_extras=True)["device"]
    if not constraints.fits(allowed, text):
        raise argparse.ArgumentTypeError(f"{text!r} is not {constraints.describe(allowed)}")
    return text


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line of ``lipnorm-exp-verify``."""
    parser = OneLineParser(
        prog="lipnorm-exp-verify",
        error_prefix=ERROR_PREFIX,
        description="Train committed records again with today's code and classify each.",
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--run-id", nargs="+", help="the runs to verify")
    which.add_argument("--preset", help="the runs of a preset (its tag)")
    which.add_argument(
        "--cells",
        type=Path,
        nargs="+",
        help="the runs behind a table's cells (the report's <table>.runs.csv)",
    )
    parser.add_argument(
        "--whole-cells",
        action="store_true",
        help="with --cells: train every seed each cell reports and judge the cell (an "
        "equivalence test of the means; --cell-out)",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="'ROW, COLUMN'",
        help="with --cells: only this cell, as its .runs.csv names it (repeatable)",
    )
    parser.add_argument(
        "--margin",
        type=float,
        help="--whole-cells: the equivalence margin, points of accuracy (default: the "
        "scorecard's band, lipnorm_exp.report.verdicts.TOLERANCE_POINTS)",
    )
    parser.add_argument(
        "--cell-out",
        type=file_path,
        default=CELL_FINDINGS,
        help="--whole-cells: the cell findings' CSV file (default: %(default)s)",
    )
    parser.add_argument(
        "--per-setting",
        type=int,
        default=1,
        help="the lowest seeds of each setting (--preset) or cell (--cells) to verify "
        "(default: %(default)s)",
    )
    parser.add_argument("--runs", type=folder_path, default=RUNS_FOLDER, help="folder of records")
    parser.add_argument("--out", type=file_path, default=FINDINGS, help="the findings' CSV file")
    parser.add_argument(
        "--keep",
        type=folder_path,
        help="a folder to keep the records trained again in (default: none)",
    )
    parser.add_argument(
        "--device", type=device_name, default="cpu", help="where to train (default: %(default)s)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    parser.add_argument(
        "--dry-run", action="store_true", help="list the runs and what they took; train nothing"
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="verify runs the findings file has verified at this commit already (skipped)",
    )
    args = parser.parse_args(argv)
    for option, value in (("--per-setting", args.per_setting), ("--threads", args.threads)):
        if value < 1:
            parser.error(f"argument {option}: {value} must be an integer >= 1")
    if (args.whole_cells or args.only) and not args.cells:
        parser.error("--whole-cells and --only take the cells of --cells <table>.runs.csv")
    if args.margin is not None and not (math.isfinite(args.margin) and args.margin > 0):
        parser.error(f"argument --margin: {args.margin} must be a positive number of points")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Verify what the arguments name; exit 0 (1 where a run is ``different``, 2 refused)."""
    args = parse_args(argv)

    def body() -> int:
        from lipnorm_exp.cli.verify_runs import verify_runs  # pandas, and torch to train

        return verify_runs(args)

    return run_command(
        body,
        UserError,
        COMMAND,
        "findings so far are written",
    )


def console() -> None:
    """The ``lipnorm-exp-verify`` entry point."""
    sys.exit(main())


if __name__ == "__main__":
    console()
