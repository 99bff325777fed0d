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
import shutil
import sys
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, cast, get_type_hints

import pandas as pd
from omegaconf import OmegaConf

from lipnorm_exp.cli.file_arguments import file_path, read_table, writable_path
from lipnorm_exp.cli.verify_cost import Pace, cost_lines, made_seconds
from lipnorm_exp.config import config_dir
from lipnorm_exp.config.schema import Config as ConfigSchema
from lipnorm_exp.records import (
    FINISHED,
    RUNS_FOLDER,
    SEED_KEY,
    git_commit,
    iter_records,
    record_path,
    schema,
    setting_key,
)
from lipnorm_exp.records.added_keys import with_added_keys
from lipnorm_exp.records.identity import run_id
from lipnorm_exp.records.provenance import processor_model
from lipnorm_exp.records.schema import Record
from lipnorm_exp.records.verify import (
    DIFFERENT,
    IDENTICAL,
    judge,
    points_at_best_val,
    rejudged,
    spread,
)
from lipnorm_exp.report.grids import compose_config
from lipnorm_exp.util import constraints
from lipnorm_exp.util.atomic import remove_stale_temps, replacing
from lipnorm_exp.util.commands import OneLineParser, folder_path, run_command
from lipnorm_exp.util.errors import UserError
from lipnorm_exp.util.lock import folder_lock

__all__ = ["Finding", "main", "retrain", "verify_record", "write_findings"]

#: the command's name in its one-line refusals and stops
COMMAND = "lipnorm_exp.verify"
#: the start of the one line a refused command prints
ERROR_PREFIX = f"{COMMAND}: error: "
#: where findings go by default, beside the scorecard
FINDINGS = Path("results", "verification.csv")
#: the columns a findings file must hold to be added to (those of the first findings written)
FINDINGS_COLUMNS = ("run_id", "verdict", "verified_at")
#: the columns of a table's ``.runs.csv`` that ``--cells`` reads
CELLS_COLUMNS = ("row", "column", "seed", "run_id")


class VerifyError(UserError):
    """An argument the command cannot work with; the message names it and the fix."""


@dataclass
class Finding:
    """What training one record's run again gave, and the rule that judged it.

    ``departure`` is the largest relative difference at ``first_different_epoch``, in
    ``departure_column``; ``rounding_window`` the largest of the measured columns over the epochs
    the rule holds to its envelope, and ``rounding_excess`` their largest ratio to it (at most 1
    within rounding;
    [`lipnorm_exp.records.verify.Judgement`][lipnorm_exp.records.verify.Judgement]).
    """

    run_id: str
    verdict: str
    rule: str
    first_different_epoch: int | None
    departure: float | None
    departure_column: str | None
    rounding_window: float | None
    rounding_excess: float | None
    stored_test: float | None
    ours_test: float | None
    spread: float | None
    stored_commit: str | None
    verified_at: str | None
    stored_processor: str | None
    ours_processor: str
    threads: int
    epochs: int
    seconds: float


def retrain(
    record: Record,
    device: str,
    threads: int,
    overrides: Mapping[str, Any] | None = None,
    keep: Path | None = None,
) -> Record:
    """The record of ``record``'s run trained again from its config, here and now.

    ``overrides``: config keys (dotted) set to other values first, keys that leave the run id
    as it is (``model.message_path``, say); ``keep``: a folder the new record is copied into.
    """
    import torch

    from lipnorm_exp.training.launch import run

    here = compose_config(config_dir(), ())
    config = with_added_keys(OmegaConf.create(record[schema.CONFIG]))
    for key, value in (overrides or {}).items():
        OmegaConf.update(config, key, value, merge=False)
    if run_id(config) != record[schema.RUN_ID]:
        raise VerifyError(f"{record['run_id']}: its config no longer names its run; not verified")
    with tempfile.TemporaryDirectory(prefix="lipnorm-verify-") as folder:
        paths = cast(dict[str, Any], OmegaConf.to_container(here.paths, resolve=True))
        config.paths = {**paths, "results_dir": folder}
        config.force, config.device, config.train.progress = True, device, False
        config.logger = {"name": "none"}
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            [ours] = run(config)
        finally:
            torch.set_num_threads(before)
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(record_path(folder, ours[schema.RUN_ID]), keep)
    return ours


def verify_record(
    record: Record, allowed: float | None, device: str, threads: int, keep: Path | None = None
) -> Finding:
    """Train ``record``'s run again from its config, here and now, and judge the result.

    ``allowed``: the spread of its setting (``None`` where none is known); ``keep``: a folder the
    new record is copied into.
    """
    ours = retrain(record, device, threads, keep=keep)
    judged = judge(record, ours, allowed)
    machine = record.get(schema.MACHINE) or {}
    return Finding(
        run_id=record[schema.RUN_ID],
        verdict=judged.verdict,
        rule=judged.rule,
        first_different_epoch=judged.first_different_epoch,
        departure=judged.departure,
        departure_column=judged.departure_column,
        rounding_window=judged.rounding_window,
        rounding_excess=judged.rounding_excess,
        stored_test=points_at_best_val(record),
        ours_test=points_at_best_val(ours),
        spread=None if allowed is None else round(allowed, 2),
        stored_commit=record.get(schema.GIT_COMMIT),
        verified_at=git_commit(),
        stored_processor=machine.get("processor_model"),
        ours_processor=processor_model(),
        threads=threads,
        epochs=len(ours.get(schema.HISTORY) or []),
        seconds=round(timing["total_s"] if (timing := ours.get(schema.TIMING)) else math.nan, 1),
    )


def describe(finding: Finding) -> str:
    """One line: the run, its verdict, where and by how much it parts, its test accuracies."""
    where = ""
    if finding.verdict != IDENTICAL:
        where = (
            f" (from epoch {finding.first_different_epoch}: {finding.departure:.1e} in "
            f"{finding.departure_column}; {finding.rounding_excess:.2g} x what rounding explains)"
        )
    stored, ours = (
        "none" if points is None else f"{points:.2f}"
        for points in (finding.stored_test, finding.ours_test)
    )
    return f"{finding.run_id}: {finding.verdict}{where}; test {stored} -> {ours}"


def select(records: list[Record], args: argparse.Namespace) -> list[Record]:
    """The finished records ``args`` name: run ids, or a preset's, ``per_setting`` per setting."""
    finished = [record for record in records if record[schema.STATUS] in FINISHED]
    if args.run_id:
        by_id = {record[schema.RUN_ID]: record for record in finished}
        missing = [rid for rid in args.run_id if rid not in by_id]
        if missing:
            raise VerifyError(f"--run-id {' '.join(missing)}: no finished record in {args.runs}")
        return [by_id[rid] for rid in args.run_id]
    if args.cells:
        return _cells(finished, args)
    chosen = [r for r in finished if args.preset in (r[schema.CONFIG].get("tags") or [])]
    if not chosen:
        raise VerifyError(f"--preset {args.preset}: no finished record of it in {args.runs}")
    settings: dict[str, list[Record]] = defaultdict(list)
    for record in sorted(chosen, key=lambda r: (r[schema.CONFIG][SEED_KEY], r[schema.RUN_ID])):
        settings[setting_key(record[schema.CONFIG])].append(record)
    return [record for runs in settings.values() for record in runs[: args.per_setting]]


def _cells(finished: list[Record], args: argparse.Namespace) -> list[Record]:
    """The lowest ``per_setting`` seeds of every cell of the tables' ``.runs.csv`` files."""
    by_id = {record[schema.RUN_ID]: record for record in finished}
    chosen = []
    for table in args.cells:
        runs = read_table(table, "--cells", CELLS_COLUMNS, "a table's .runs.csv (the report's)")
        known = runs[runs["run_id"].isin(by_id)]
        if known.empty:
            raise VerifyError(
                f"--cells {table}: none of its {len(runs)} runs has a finished record in "
                f"{args.runs}; give the --runs folder its records are in"
            )
        for _, cell in known.sort_values(["seed", "run_id"]).groupby(["row", "column"], sort=False):
            chosen += [by_id[rid] for rid in cell["run_id"]][: args.per_setting]
    return chosen


def setting_spreads(records: list[Record]) -> dict[str, float | None]:
    """The `spread` of each finished record's setting, by run id."""
    tests: dict[str, list[float | None]] = defaultdict(list)
    keys = {}
    for record in records:
        if record[schema.STATUS] in FINISHED:
            keys[record[schema.RUN_ID]] = key = setting_key(record[schema.CONFIG])
            tests[key].append(points_at_best_val(record))
    return {rid: spread(tests[key]) for rid, key in keys.items()}


_COLUMNS = [field.name for field in fields(Finding)]


def read_findings(path: Path) -> pd.DataFrame | None:
    """The findings at ``path`` (``--out``), ``None`` where there are none yet.

    Raises:
        UserError: ``path`` holds something other than findings (one line naming the fix).
    """
    if not path.exists():
        return None
    found = read_table(path, "--out", FINDINGS_COLUMNS, "a findings file or a new path")
    return found.astype({"verified_at": str})


def verified_here(path: Path) -> set[str]:
    """The runs the findings at ``path`` verified with the code running now (its commit)."""
    commit = git_commit()
    found = read_findings(path)
    if commit is None or found is None:
        return set()
    return set(found.loc[found["verified_at"] == commit, "run_id"])


def write_findings(findings: list[Finding], path: Path) -> pd.DataFrame:
    """Add ``findings`` to the CSV at ``path``, each replacing an earlier one of its run.

    The earlier findings of the file that an earlier rule judged are judged again where they can
    be ([`rejudged`][lipnorm_exp.records.verify.rejudged]); none is dropped. The file is read,
    added to and renamed over under a lock on its name, so that verifies writing one file at
    once take turns and lose none of each other's findings.
    """
    new = pd.DataFrame([asdict(finding) for finding in findings], columns=_COLUMNS)
    with folder_lock(path.parent, path.name):
        found = read_findings(path)
        if found is not None:
            old = rejudged(found).reindex(columns=_COLUMNS)
            new = pd.concat([old[~old["run_id"].isin(new["run_id"])], new], ignore_index=True)
        new = new.sort_values("run_id")[_COLUMNS]
        new["first_different_epoch"] = new["first_different_epoch"].astype("Int64")
        with replacing(path) as temporary:
            new.to_csv(temporary, index=False)
    remove_stale_temps(path.parent)
    return new


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
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Verify what the arguments name; exit 0 (1 where a run is ``different``, 2 refused)."""
    args = parse_args(argv)

    def body() -> int:
        writable_path(args.out, "--out", folder=False)
        read_findings(args.out)
        if args.keep is not None:
            writable_path(args.keep, "--keep", folder=True)
        if not args.dry_run:
            from lipnorm_exp.util.device import pick_device  # torch, when it trains

            pick_device(args.device, "--device")
        records = [record for _, record in iter_records(args.runs, set_aside_broken=False)]
        chosen = select(records, args)
        done = set() if args.again else verified_here(args.out)
        if done & {record[schema.RUN_ID] for record in chosen}:
            print(f"{len(done)} runs verified at this commit already in {args.out}: skipped")
            chosen = [record for record in chosen if record[schema.RUN_ID] not in done]
        hours = sum(made_seconds(record) for record in chosen) / 3600
        print(f"{len(chosen)} runs to verify; they took {hours:.1f} h of training when made:")
        print("\n".join(cost_lines(chosen)), flush=True)
        if args.dry_run:
            return 0
        spreads = setting_spreads(records)
        findings = []
        pace = Pace(chosen)
        for k, record in enumerate(chosen, 1):
            finding = verify_record(
                record, spreads[record[schema.RUN_ID]], args.device, args.threads, args.keep
            )
            findings.append(finding)
            print(f"[{k}/{len(chosen)}] {describe(finding)} ({pace.done(record)})", flush=True)
            write_findings([finding], args.out)
        different = sum(finding.verdict == DIFFERENT for finding in findings)
        print(f"wrote {args.out}: {len(findings)} runs, {different} different")
        return 1 if different else 0

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
