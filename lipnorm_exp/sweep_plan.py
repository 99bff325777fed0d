"""What a sweep will do, said before its first job: which of its runs are finished already.

:class:`SweepPlan` is a Hydra callback (``configs/hydra/default.yaml``). At the start of a
multirun it composes the config of every run the sweep makes, as its jobs will, and looks up
each run's record: a run whose finished record is in ``paths.results_dir`` is skipped by its job
(:func:`lipnorm_exp.runs.finished_record`), so a preset whose records are there already trains
nothing. The callback says how many runs that is, in which folder, and the two ways to train
them anyway (``force=true``, or another ``paths.results_dir``).

Composing every job through Hydra takes a fifth of a second each, minutes for a paper-scale
grid. Jobs that select the same config-group options (``dataset=cora +method=gat``) differ only
in values (``model.depth=2``, ``seed=0``), which Hydra sets on the composed config as the last
step of composing it; so each such choice is composed once and the values of each of its jobs
are set on it as Hydra sets them (:func:`job_configs`).
"""

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict, read_write

from lipnorm_exp.batched import member_config
from lipnorm_exp.records import FINISHED, BadRecordError, read_record, run_id
from lipnorm_exp.sweep import grid_jobs, grid_runs

__all__ = ["SweepPlan", "finished_runs", "job_configs", "plan_line"]

log = logging.getLogger(__name__)


def _sets_a_value(override: Override, is_group: Callable[[str], bool]) -> bool:
    """Whether Hydra applies ``override`` to the composed config (``key=value``, ``+key=value``).

    As Hydra splits overrides: a key that names a config group selects an option (unless its
    value is a dict), any other key sets a value. Deletions (``~key``) are counted with the group
    choices, so a job holding one is composed whole.
    """
    if override.is_delete() or override.package is not None:
        return False
    return isinstance(override.value(), dict) or not is_group(override.key_or_group)


def job_configs(config: DictConfig) -> Iterator[DictConfig]:
    """The config of each job of the sweep ``config`` (Hydra's keys included).

    Each yielded config is the job's, without its ``hydra`` node. The jobs of one choice of
    config-group options come together (not in launch order) and share one config, their
    values set in turn: a config is only valid until the next one is yielded.
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

    by_choice: dict[tuple[str, ...], list[tuple[list[str], list[Override]]]] = {}
    for job in grid_jobs(config.hydra):
        overrides = [parse(line) for line in job]
        values = [override for override in overrides if _sets_a_value(override, is_group)]
        choice = tuple(override.input_line for override in overrides if override not in values)
        by_choice.setdefault(choice, []).append((job, values))
    for jobs in by_choice.values():
        composed = loader.load_sweep_config(config, jobs[0][0])
        with read_write(composed), open_dict(composed):
            del composed["hydra"]
        for _, values in jobs:
            for override in values:
                added = override.is_add() or override.is_force_add()
                OmegaConf.update(
                    composed, override.key_or_group, override.value(), merge=True, force_add=added
                )
            yield composed


def _runs(job: DictConfig) -> list[DictConfig]:
    """The runs of one job: one per seed of its seed list, or the job itself."""
    if isinstance(job.seed, ListConfig):
        return [member_config(job, seed) for seed in job.seed]
    return [job]


def _is_finished(results_dir: Path, rid: str) -> bool:
    try:
        record = read_record(results_dir, rid)
    except BadRecordError:  # its job sets it aside and runs again
        return False
    return record is not None and record["status"] in FINISHED


def finished_runs(config: DictConfig) -> dict[tuple[Path, bool], int]:
    """How many runs of the sweep ``config`` have a finished record, by folder and ``force``."""
    counts: dict[tuple[Path, bool], int] = {}
    holds_records: dict[Path, bool] = {}
    for job in job_configs(config):
        results_dir = Path(job.paths.results_dir)
        if results_dir not in holds_records:
            holds_records[results_dir] = any(results_dir.glob("*.json"))
        if not holds_records[results_dir]:
            continue  # a new folder: no run id to work out
        for run in _runs(job):
            if _is_finished(results_dir, run_id(run)):
                key = (results_dir, bool(run.force))
                counts[key] = counts.get(key, 0) + 1
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


class SweepPlan(Callback):
    """Hydra callback: before the first job, say which of the sweep's runs are finished already."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Log :func:`plan_line` for each folder (and ``force``) with finished runs."""
        total = grid_runs(config.hydra)
        for (results_dir, force), finished in finished_runs(config).items():
            log.info("%s", plan_line(finished, total, results_dir, force))
