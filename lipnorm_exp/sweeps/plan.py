"""What a sweep will do, said before its first job, and what it did, from the records it left.

Before a sweep's first job, the project's sweeper (``hydra_plugins/lipnorm_exp_sweeper``) composes
the config of every run the sweep makes, as its jobs will, and looks up each run's record
(`planned_runs`): a run whose finished record is in ``paths.results_dir`` is skipped by its
job (`lipnorm_exp.training.finished.finished_record`), so a preset whose records are there
already trains nothing. `plan_line` says how many runs that is, in which folder, and the two
ways to train them anyway (``force=true``, or another ``paths.results_dir``); with
``rerun_stale=true`` those made by other numerics than today's are trained again
(`stale_line`); a record made by newer code is neither, its job refuses it (`newer_line`). At
the end of the sweep, also when it is stopped, the tally of its runs' outcomes is read from the
records the sweep wrote (`record_outcomes`), so the tally agrees with the records after any stop.

Composing every job through Hydra takes a fifth of a second each, minutes for a paper-scale
grid. Jobs that select the same config-group options (``dataset=cora +method=gat``) differ only
in values (``model.depth=2``, ``seed=0``), which Hydra sets on the composed config as the last
step of composing it; so each such choice is composed once and the values of each of its jobs
are set on it as Hydra sets them (`job_configs`).
"""

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from lipnorm_exp.config import member_configs
from lipnorm_exp.config.rules import given_keys_are_read
from lipnorm_exp.records import (
    FAILED,
    FINISHED,
    RERUN_SUFFIX,
    BadRecordError,
    made_by_current_numerics,
    newer_version,
    read_record,
    record_path,
    run_id,
)
from lipnorm_exp.records.schema import STATUS, Record
from lipnorm_exp.sweeps.progress import ELSEWHERE, SKIPPED, grid_jobs

__all__ = [
    "PlannedRun",
    "check_given_keys",
    "finished_runs",
    "job_configs",
    "jobs_and_configs",
    "newer_line",
    "plan_line",
    "planned_runs",
    "record_outcomes",
    "stale_line",
]


def _sets_a_value(override: Override, is_group: Callable[[str], bool]) -> bool:
    """Whether Hydra applies ``override`` to the composed config (``key=value``, ``+key=value``).

    As Hydra splits overrides: a key that names a config group selects an option (unless its
    value is a dict), any other key sets a value. Deletions (``~key``) are counted with the group
    choices, so a job holding one is composed whole.
    """
    if override.is_delete() or override.package is not None:
        return False
    return isinstance(override.value(), dict) or not is_group(override.key_or_group)


def job_configs(config: DictConfig, jobs: list[list[str]] | None = None) -> Iterator[DictConfig]:
    """The config of each job of the sweep ``config``: `jobs_and_configs`' configs."""
    return (composed for _, composed in jobs_and_configs(config, jobs))


def jobs_and_configs(
    config: DictConfig, jobs: list[list[str]] | None = None, set_values: bool = True
) -> Iterator[tuple[list[str], DictConfig]]:
    """The overrides and the config of each job of the sweep ``config``.

    ``jobs`` are the override lists of its jobs, as the sweeper expanded them (default: its
    `grid_jobs`). Each yielded config is the job's, without
    its ``hydra`` node. The jobs of one choice of config-group options come together (not in
    launch order) and share one config, their values set in turn (``set_values=False``: not set,
    the choice's config as composed): a config is only valid until the next one is yielded.
    """
    loader = GlobalHydra.instance().config_loader()
    sources = loader.get_sources()
    groups: dict[str, bool] = {}

    def is_group(key: str) -> bool:
        if key not in groups:
            groups[key] = any(source.is_group(key) for source in sources)
        return groups[key]

    parser = OverridesParser.create()
    parsed: dict[str, Override] = {}  # jobs repeat the values of the grid's axes

    def parse(line: str) -> Override:
        if line not in parsed:
            (parsed[line],) = parser.parse_overrides([line])
        return parsed[line]

    by_choice: dict[tuple[str | None, ...], list[tuple[list[str], list[Override]]]] = {}
    for job in grid_jobs(config.hydra) if jobs is None else jobs:
        overrides = [parse(line) for line in job]
        values = [override for override in overrides if _sets_a_value(override, is_group)]
        choice = tuple(override.input_line for override in overrides if override not in values)
        by_choice.setdefault(choice, []).append((job, values))
    for same_choice in by_choice.values():
        composed = loader.load_sweep_config(config, same_choice[0][0])
        with read_write(composed), open_dict(composed):
            del composed["hydra"]
        for job, values in same_choice:
            for override in values if set_values else ():
                added = override.is_add() or override.is_force_add()
                OmegaConf.update(
                    composed, override.key_or_group, override.value(), merge=True, force_add=added
                )
            yield job, composed


def check_given_keys(config: DictConfig) -> None:
    """Refuse a sweep that gives a job a key its model does not read (its runs would repeat).

    `lipnorm_exp.config.rules.given_keys_are_read` of each job's overrides, the model read
    from the config of its choice of options (composed once per choice, its values not set).

    Raises:
        ConfigError: the first such override, with the model and those that read the key.
    """
    for overrides, job in jobs_and_configs(config, set_values=False):
        given_keys_are_read(job.model.name, overrides)


def _stored(results_dir: Path, rid: str, path: Path | None = None) -> Record | None:
    """The record of run ``rid`` (at ``path``, where given), or ``None`` if none is usable."""
    try:
        return read_record(results_dir, rid, path)
    except BadRecordError:  # its job sets it aside and runs again
        return None


@dataclass(frozen=True)
class PlannedRun:
    """A run of a sweep: where its record goes, its id, ``force``, and whether it was finished.

    Args:
        results_dir: the folder of its record.
        run_id: its [`run_id`][lipnorm_exp.records.run_id].
        force: it is trained even with a finished record.
        finished: a finished record of it was there when the sweep started.
        stale: that record was made by other, older numerics than today's.
        rerun_stale: ``rerun_stale=true``: a stale record is trained again.
        newer: the version of its record this code does not have
            (`lipnorm_exp.records.numerics.newer_version`): its job refuses the record, so the
            run is neither finished nor stale.
    """

    results_dir: Path
    run_id: str
    force: bool
    finished: bool
    stale: bool = False
    rerun_stale: bool = False
    newer: str | None = None

    @property
    def rerun(self) -> bool:
        """Whether its job trains it again though it was finished (``force``, or stale)."""
        return self.finished and (self.force or (self.stale and self.rerun_stale))

    @property
    def skipped(self) -> bool:
        """Whether its job skips it (a finished record it does not train again)."""
        return self.finished and not self.rerun


def planned_runs(config: DictConfig, jobs: list[list[str]] | None = None) -> list[PlannedRun]:
    """Every run of the sweep ``config``, its record looked up (`PlannedRun`).

    ``jobs``: as for `job_configs`.
    """
    planned = []
    for job in job_configs(config, jobs):
        results_dir = Path(job.paths.results_dir)
        for run in member_configs(job):
            rid = run_id(run)
            record = _stored(results_dir, rid)
            newer = None if record is None else newer_version(record)
            finished = record is not None and newer is None and record[STATUS] in FINISHED
            stale = record is not None and finished and not made_by_current_numerics(record, run)
            rerun_stale = bool(run.get("rerun_stale"))
            planned.append(
                PlannedRun(results_dir, rid, bool(run.force), finished, stale, rerun_stale, newer)
            )
    return planned


def finished_runs(planned: list[PlannedRun]) -> dict[tuple[Path, bool], int]:
    """How many ``planned`` runs have a finished record, by folder and ``force``.

    Those ``rerun_stale=true`` trains again are left out: `stale_line` says them.
    """
    kept = (run for run in planned if run.finished and (run.force or not run.rerun))
    return dict(Counter((run.results_dir, run.force) for run in kept))


def stale_line(planned: list[PlannedRun]) -> str | None:
    """The line that says which finished records other numerics made; ``None``: none did.

    They are kept and skipped, unless ``rerun_stale=true`` trains them again.
    """
    stale = [run for run in planned if run.stale and not run.force]
    if not stale:
        return None
    what = (
        f"{len(stale)} of the {len(planned)} runs have a finished record made by other "
        "numerics than their runs compute today"
    )
    if stale[0].rerun_stale:
        return f"{what}: rerun_stale=true trains them again"
    return f"{what}: kept; rerun_stale=true trains them again"


def newer_line(planned: list[PlannedRun]) -> str | None:
    """The line that says which records newer code made; ``None``: none did.

    Their jobs refuse them, as a run does (`lipnorm_exp.records.numerics.check_known_versions`):
    neither reused nor replaced, even with ``force=true`` or ``rerun_stale=true``.
    """
    newer = [run for run in planned if run.newer is not None]
    if not newer:
        return None
    return (
        f"{len(newer)} of the {len(planned)} runs have a record made by newer code "
        f"({newer[0].newer}): refused by their jobs, neither reused nor replaced; install the "
        "newer lipnorm_exp, or give another paths.results_dir"
    )


def _written_since(run: PlannedRun, since: float) -> Record | None:
    """The record of ``run`` written at or after ``since`` (its re-run's where newer), or none."""
    path = record_path(run.results_dir, run.run_id)
    written = []
    for candidate in (path, path.with_name(path.name + RERUN_SUFFIX)):
        try:
            modified = candidate.stat().st_mtime
        except OSError:
            continue
        if modified >= since:
            written.append((modified, candidate))
    newest_first = sorted(written, reverse=True)
    records = (_stored(run.results_dir, run.run_id, path) for _, path in newest_first)
    return next((record for record in records if record is not None), None)


def record_outcomes(
    planned: list[PlannedRun],
    since: float,
    noted_failures: int = 0,
    noted_skips: frozenset[str] | set[str] = frozenset(),
) -> Counter:
    """The outcome of each run of a sweep started at ``since`` (``time.time()``), from records.

    A run the plan skips is ``skipped``; one its job found finished though the plan did not
    (``noted_skips``: a concurrent launch trained it meanwhile) is `ELSEWHERE`; any other counts
    with the status of the record the sweep wrote for it (on or after ``since``), and has no outcome
    without one. A job that failed before writing any record (a value refused) is known only from
    the ``noted_failures`` its jobs reported: those beyond the ``failed`` records count as failed.
    """
    counts: Counter = Counter()
    for run in planned:
        if run.skipped:
            counts[SKIPPED] += 1
        elif run.run_id in noted_skips:
            counts[ELSEWHERE] += 1
        elif (record := _written_since(run, since)) is not None:
            counts[record[STATUS]] += 1
    counts[FAILED] += max(0, noted_failures - counts[FAILED])
    return counts


def plan_line(finished: int, total: int, results_dir: Path, force: bool) -> str:
    """The line that says what happens to the ``finished`` runs of ``total`` in ``results_dir``."""
    where = f"{finished} of the {total} runs have a finished record in {results_dir}"
    if force:
        return f"{where}: force=true trains them again"
    return (
        f"{where} and will be skipped; to train them anyway: force=true, or another folder "
        "(paths.results_dir=<folder>)"
    )
