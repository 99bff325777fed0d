"""``lipnorm-exp-merge``: records made elsewhere into a folder of records, losing none.

``python -m lipnorm_exp.records.merge`` never loses a finished record and never replaces one
silently. A sweep on a cluster, on a GPU machine or in a second clone writes its records to its own
``paths.results_dir``. This brings them into another folder (``results/runs``, say), run by
run ([`plan_merge`][lipnorm_exp.records.merge.plan_merge]); what the folder holds for the run
decides:

- ``unfinished``: the source's record is not finished (`FINISHED`:
  ``interrupted`` or ``failed``, a run to do again): it is passed over;
- ``new``: no record of the run (or a broken one, which is set aside): the source's is copied;
- ``same``: the same result (status, summary and history; per-epoch times aside) and no tag
  the folder's record lacks: nothing to do;
- ``tags``: the same result, and the source's record serves presets the folder's does not
  name: the folder's record is kept and gains those tags;
- ``replace``: the folder's record is not finished: the source's replaces it, with the tags of
  both;
- ``conflict``: both are finished, with different results (the run ran on two machines, say).
  Nothing at all is written then, unless ``--prefer`` says which to keep: ``target`` (the
  folder's), ``source``, or ``newer`` (the record of the later numerics version, a record made
  before numerics were versioned counting as the oldest, then the later ``finished_at``); the
  kept one gets the tags of both (``keep``: the folder's record stays as it is).

Sources are merged in the order given: a later source meets what the earlier ones brought.
Every record is read and checked ([`record_problem`][lipnorm_exp.records.record_problem]) before
anything is written; a broken source file is passed over with a warning, and no source is ever
changed. Records are written one by one, each atomically, under the folder's tag lock
(`TAGS_LOCK`), each naming the tags the folder's record holds
by then, so a sweep adding tags meanwhile keeps them. Merge into a folder no sweep is training
the same runs in: a record a sweep finishes during the merge is not compared.
Checkpoints (``.checkpoints/``) are not merged: an interrupted run resumes where its
checkpoint is.
"""

import argparse
import sys
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from lipnorm_exp.records.schema import (
    CONFIG,
    DEVICE,
    EPOCH_TIME_KEY,
    FINISHED,
    FINISHED_AT,
    HISTORY,
    MACHINE,
    RUN_ID,
    STATUS,
    SUMMARY,
    TEST_ACC_AT_BEST_VAL,
    Record,
    numerics_version,
)
from lipnorm_exp.records.store import (
    RUNS_FOLDER,
    TAGS_LOCK,
    BadRecordError,
    iter_records,
    read_record,
    record_path,
    set_aside,
    write_record,
)
from lipnorm_exp.util.atomic import remove_stale_temps
from lipnorm_exp.util.commands import OneLineParser, folder_path, run_command
from lipnorm_exp.util.errors import ConfigError
from lipnorm_exp.util.folders import writable_folder
from lipnorm_exp.util.lock import folder_lock

NEW, REPLACE, TAGS, SAME, KEEP = "new", "replace", "tags", "same", "keep"
UNFINISHED, CONFLICT = "unfinished", "conflict"
#: every action of a merge step, in the order the summary line counts them
ACTIONS = (NEW, REPLACE, TAGS, SAME, KEEP, UNFINISHED, CONFLICT)
#: the actions that write the folder's record
WRITES = (NEW, REPLACE, TAGS)
#: which record a conflict keeps (``--prefer``)
PREFERENCES = ("target", "source", "newer")
#: the command's name in its one-line refusals and stops
COMMAND = "lipnorm_exp.records.merge"
#: the start of the one line a refused command prints
ERROR_PREFIX = f"{COMMAND}: error: "
#: exit status of a merge refused for its conflicts (nothing written)
EXIT_CONFLICTS = 1


@dataclass(frozen=True)
class Step:
    """What a merge does with one source record.

    Attributes:
        run_id (str): the run.
        action (str): one of `ACTIONS`.
        source (Path): the source's record file.
        record (Record or None): the record the folder holds for the run after this step.
        why (str): for a ``conflict`` or a step ``--prefer`` decided, the two records side by
            side; otherwise empty.
    """

    run_id: str
    action: str
    source: Path
    record: Record | None
    why: str = ""


def result(record: Record) -> tuple:
    """What a run computed: its status, summary and history, per-epoch times aside.

    Two records of one run id (one defining config) with the same result differ at most in
    where, when and how fast they ran and in the presets they serve.
    """
    history = [
        {key: value for key, value in row.items() if key != EPOCH_TIME_KEY}
        for row in record.get(HISTORY) or []
    ]
    return record[STATUS], record.get(SUMMARY), history


def with_tags(record: Record, *others: Record) -> Record:
    """``record`` with ``config.tags`` naming its presets, then those only ``others`` name."""
    tags = [tag for each in (record, *others) for tag in each[CONFIG].get("tags") or []]
    tagged: Record = {**record, CONFIG: {**record[CONFIG], "tags": list(dict.fromkeys(tags))}}
    return tagged


def describe(record: Record) -> str:
    """One record in a few words: status, test accuracy, device and when it finished."""
    summary = record.get(SUMMARY)
    test = summary.get(TEST_ACC_AT_BEST_VAL) if summary else None
    score = f", test {100 * test:.1f}%" if isinstance(test, float | int) else ""
    machine = record.get(MACHINE)
    device = (machine.get("device") if machine else None) or record.get(DEVICE) or "?"
    numerics = numerics_version(record)
    made = f"numerics {numerics}" if numerics is not None else "unversioned numerics"
    return f"{record[STATUS]}{score} on {device}, {made}, finished {record.get(FINISHED_AT) or '?'}"


def newness(record: Record) -> tuple[int, datetime]:
    """What ``--prefer newer`` compares: the numerics version, then `finished_time`.

    A record made before numerics were versioned counts as version ``0``.
    """
    return numerics_version(record) or 0, finished_time(record)


def finished_time(record: Record) -> datetime:
    """When ``record`` was written (UTC where no zone is named; the earliest time if unknown)."""
    try:
        when = datetime.fromisoformat(record[FINISHED_AT])
    except (KeyError, TypeError, ValueError):
        when = datetime.min
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def compare(
    run_id: str, held: Record | None, source: Record, path: Path, prefer: str | None
) -> Step:
    """The step that merges ``source`` (read from ``path``) into a folder holding ``held``."""
    if source[STATUS] not in FINISHED:
        return Step(run_id, UNFINISHED, path, held)
    if held is None:
        return Step(run_id, NEW, path, source)
    if result(held) == result(source):
        merged = with_tags(held, source)
        return Step(run_id, SAME if merged == held else TAGS, path, merged)
    if held[STATUS] not in FINISHED:
        return Step(run_id, REPLACE, path, with_tags(source, held))
    why = f"folder: {describe(held)}; source: {describe(source)}"
    if prefer is None:
        return Step(run_id, CONFLICT, path, held, why)
    take_source = prefer == "source" or (prefer == "newer" and newness(source) > newness(held))
    if take_source:
        return Step(run_id, REPLACE, path, with_tags(source, held), f"{why} (--prefer {prefer})")
    merged = with_tags(held, source)
    return Step(
        run_id, KEEP if merged == held else TAGS, path, merged, f"{why} (--prefer {prefer})"
    )


def source_records(sources: Iterable[Path]) -> Iterable[tuple[Path, Record]]:
    """Every record under each source folder, searched recursively, in order; sources unchanged."""
    for source in sources:
        yield from iter_records(source, set_aside_broken=False)


def plan_merge(sources: Sequence[Path], into: Path, prefer: str | None = None) -> list[Step]:
    """The steps that merge the records under ``sources`` into the folder ``into``.

    Nothing is written. Records set aside or re-runs beside a record (not ``*.json``) are not
    read; the folder's records are those directly in it, named by run id, as a sweep reads them.

    Args:
        sources: folders of records, searched recursively, merged in this order.
        into: the folder of records merged into.
        prefer: which record a conflict keeps (`PREFERENCES`); ``None``: none, the
            conflict stands.
    """
    held: dict[str, Record | None] = {}
    steps = []
    for path, record in source_records(sources):
        run_id = record[RUN_ID]
        if run_id not in held:
            try:
                held[run_id] = read_record(into, run_id)
            except BadRecordError:
                held[run_id] = None  # set aside when a record is written in its place
        step = compare(run_id, held[run_id], record, path, prefer)
        held[run_id] = step.record
        steps.append(step)
    return steps


def apply_merge(steps: Sequence[Step], into: Path) -> int:
    """Write the records ``steps`` bring into ``into`` (the last step of each run decides).

    Each record is read again under the folder's tag lock and the one written names the tags
    it holds by then too (a sweep's, added since
    [`plan_merge`][lipnorm_exp.records.merge.plan_merge]); a broken record there is set aside
    (``.broken-<time>``) before the new one is written. A record that the folder holds already by
    then (another merge wrote it since the plan) is not written again.

    Returns:
        the number of records written.
    """
    final = {step.run_id: step.record for step in steps if step.action in WRITES}
    remove_stale_temps(into)  # what a killed merge (or run) left there
    written = 0
    with folder_lock(into, TAGS_LOCK):
        for run_id, record in final.items():
            assert record is not None, "a step that writes holds the record it writes"
            try:
                stored = read_record(into, run_id)
            except BadRecordError:
                set_aside(record_path(into, run_id))
                stored = None
            merged = with_tags(record, stored) if stored else record
            if merged != stored:
                write_record(into, merged)
                written += 1
    return written


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (see ``--help``)."""
    parser = OneLineParser(
        prog="python -m lipnorm_exp.records.merge",
        error_prefix=ERROR_PREFIX,
        description="Merge folders of run records into one, never losing a finished record "
        "and never replacing one silently.",
    )
    parser.add_argument(
        "sources", nargs="+", type=folder_path, help="folders of records, searched recursively"
    )
    parser.add_argument(
        "--into",
        type=folder_path,
        default=RUNS_FOLDER,
        help="the folder of records to merge into (default: %(default)s)",
    )
    parser.add_argument(
        "--prefer",
        choices=PREFERENCES,
        help="which record a conflict keeps: the folder's, the source's, or the one that "
        "finished later (default: none; a conflict stops the merge before anything is written)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="say what would be done and write nothing"
    )
    return parser.parse_args(argv)


class MergeError(ValueError):
    """An argument the merge cannot work with; the message names it and the fix."""


def check_args(args: argparse.Namespace) -> None:
    """Refuse a source that is not a folder, a source that is ``--into``, a bad ``--into``.

    Raises:
        MergeError: the first such argument.
    """
    for source in args.sources:
        if not source.is_dir():
            raise MergeError(f"source {source} is not a folder; give folders of run records")
        if args.into.exists() and source.resolve() == args.into.resolve():
            raise MergeError(f"source {source} is the folder --into names; give another folder")
    if args.into.exists() and not args.into.is_dir():
        raise MergeError(f"--into {args.into} is a file, not a folder; give a folder")
    if not args.dry_run:
        try:
            writable_folder(args.into, "--into")
        except ConfigError as error:
            raise MergeError(f"{error}; give a folder you can write to") from None


def report(steps: Sequence[Step], args: argparse.Namespace) -> None:
    """One line per conflict and per step ``--prefer`` decided, then the counts."""
    for step in steps:
        if step.why:
            print(f"{step.action} {step.run_id} ({step.source}): {step.why}")
    counts = Counter(step.action for step in steps)
    done = "would merge" if args.dry_run else "merged"
    tally = ", ".join(f"{counts[action]} {action}" for action in ACTIONS if counts[action])
    print(f"{done} {len(steps)} records into {args.into}: {tally or 'none found'}")


def main(argv: Sequence[str] | None = None) -> int:
    """Merge; returns the exit status.

    0; `EXIT_CONFLICTS` when conflicts stand (each named, nothing written); 2 with one
    line for a refused argument; 130 with one line on Ctrl-C (each record written is whole).
    """
    args = parse_args(argv)
    return run_command(
        lambda: merge(args),
        MergeError,
        COMMAND,
        "every record written is whole; run the same command again to merge the rest",
    )


def merge(args: argparse.Namespace) -> int:
    """The merge ``args`` ask for; returns its exit status (0 or `EXIT_CONFLICTS`).

    Checks ``args``, plans, says what it finds, and writes unless a conflict stands or it is a
    dry run.

    Raises:
        MergeError: a refused argument (`check_args`).
    """
    check_args(args)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        steps = plan_merge(args.sources, args.into, args.prefer)
    report(steps, args)
    conflicts = sum(step.action == CONFLICT for step in steps)
    if conflicts:
        print(
            f"{ERROR_PREFIX}{conflicts} runs hold different finished records here and in a "
            "source; nothing was written; choose with --prefer target, source or newer",
            file=sys.stderr,
        )
        return EXIT_CONFLICTS
    if not args.dry_run:
        planned = len({step.run_id for step in steps if step.action in WRITES})
        written = apply_merge(steps, args.into)
        held = planned - written
        since = f"; {held} held already (written since the plan by another merge or run)"
        print(f"wrote {written} records into {args.into}" + (since if held else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
