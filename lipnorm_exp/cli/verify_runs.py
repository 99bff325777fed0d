"""The work of ``lipnorm-exp-verify``: the chosen records trained again, judged, written.

`lipnorm_exp.cli.verify` parses the command line and imports this module (pandas, and torch to
train) once the arguments hold; here each chosen record's run is trained again, judged against
its record and its finding written.
"""

import argparse
import math
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, cast

import pandas as pd
from omegaconf import OmegaConf

from lipnorm_exp.cli.file_arguments import read_table, writable_path
from lipnorm_exp.cli.verify_cells import (
    CELLS_COLUMNS,
    CellRuns,
    cell_finding,
    cell_name,
    refuse_unknown_cells,
    whole_cells,
    write_cell_findings,
)
from lipnorm_exp.cli.verify_cost import Pace, cost_lines, made_seconds
from lipnorm_exp.config import config_dir
from lipnorm_exp.records import (
    FINISHED,
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
from lipnorm_exp.report.verdicts import TOLERANCE_POINTS
from lipnorm_exp.util.atomic import remove_stale_temps, replacing
from lipnorm_exp.util.errors import UserError
from lipnorm_exp.util.lock import folder_lock

__all__ = [
    "Finding",
    "VerifyError",
    "retrain",
    "setting_spreads",
    "verify_record",
    "verify_runs",
    "write_findings",
]

#: the columns a findings file must hold to be added to (those of the first findings written)
FINDINGS_COLUMNS = ("run_id", "verdict", "verified_at")


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
        config.train.threads = threads
        config.logger = {"name": "none"}
        [ours] = run(config)
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
    """The lowest ``per_setting`` seeds of every cell of the tables' ``.runs.csv`` files.

    ``--only``: of the cells it names (`refuse_unknown_cells`).
    """
    by_id = {record[schema.RUN_ID]: record for record in finished}
    chosen, named = [], set()
    for table in args.cells:
        runs = read_table(table, "--cells", CELLS_COLUMNS, "a table's .runs.csv (the report's)")
        known = runs[runs["run_id"].isin(by_id)]
        if known.empty:
            raise VerifyError(
                f"--cells {table}: none of its {len(runs)} runs has a finished record in "
                f"{args.runs}; give the --runs folder its records are in"
            )
        by_cell = known.sort_values(["seed", "run_id"]).groupby(["row", "column"], sort=False)
        for (row, column), cell in by_cell:
            named.add(name := cell_name(row, column))
            if not args.only or name in args.only:
                chosen += [by_id[rid] for rid in cell["run_id"]][: args.per_setting]
    refuse_unknown_cells(args.only, named, args.cells)
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


def judge_whole_cells(
    cells: Sequence[CellRuns], findings: Mapping[str, Finding], args: argparse.Namespace
) -> None:
    """Write each cell's verdict on its seeds' findings to ``--cell-out``, and print it."""
    margin = TOLERANCE_POINTS if args.margin is None else args.margin
    judged = []
    for cell in cells:
        own = [findings[record[schema.RUN_ID]] for record in cell.records]
        tests = [(f.stored_test, f.ours_test) for f in own]
        pairs = [(a, b) for a, b in tests if a is not None and b is not None]
        if len(pairs) < max(len(tests), 2):
            print(f"{cell.name}: not judged (a seed without a test accuracy, or one seed)")
            continue
        found = cell_finding(cell, pairs, [f.verdict for f in own], margin, args.threads)
        judged.append(found)
        print(
            f"{cell.name}: {found.verdict} (recorded {found.recorded_mean:.2f} ± "
            f"{found.recorded_std:.2f}, here {found.rerun_mean:.2f} ± {found.rerun_std:.2f}; "
            f"difference {found.difference:+.2f}, 90% CI [{found.ci90_low:+.2f}, "
            f"{found.ci90_high:+.2f}] against ±{found.margin:g}; Welch p {found.p_equal:.3f})"
        )
    if judged:
        write_cell_findings(judged, args.cell_out)
        print(f"wrote {args.cell_out}: {len(judged)} cells")


def verify_runs(args: argparse.Namespace) -> int:
    """Verify the records ``args`` name (`lipnorm_exp.cli.verify.parse_args`); the exit status.

    0; 1 where a run is ``different``.
    """
    writable_path(args.out, "--out", folder=False)
    read_findings(args.out)
    if args.keep is not None:
        writable_path(args.keep, "--keep", folder=True)
    if not args.dry_run:
        from lipnorm_exp.util.device import pick_device  # torch, when it trains

        pick_device(args.device, "--device")
    if args.whole_cells:
        writable_path(args.cell_out, "--cell-out", folder=False)
    records = [record for _, record in iter_records(args.runs, set_aside_broken=False)]
    cells: list[CellRuns] = []
    if args.whole_cells:
        finished = [record for record in records if record[schema.STATUS] in FINISHED]
        cells = whole_cells(finished, args.cells, args.only, args.runs)
        chosen = list({r[schema.RUN_ID]: r for c in cells for r in c.records}.values())
    else:
        chosen = select(records, args)
    done = set() if args.again or args.whole_cells else verified_here(args.out)
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
    if args.whole_cells:
        judge_whole_cells(cells, {finding.run_id: finding for finding in findings}, args)
    return 1 if different else 0
