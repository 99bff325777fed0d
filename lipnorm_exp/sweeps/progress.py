"""Sweep progress: "job k of n" for each job and the words of a sweep's tally.

The project's sweeper (``hydra_plugins/lipnorm_exp_sweeper``) expands a sweep's grid once
(`grid_jobs`) and tells each job the number of jobs in ``hydra.sweeper.jobs``; with the
job's own ``hydra.job.num`` that is its position (`sweep_position`). Each job appends its
outcome to ``<sweep dir>/progress.jsonl`` (`note_outcome`; read for the jobs that fail
before writing any record). The tally of the runs' outcomes, printed at the end also when the
sweep is stopped (Ctrl-C, SIGTERM), is read from the records the sweep wrote
(`record_outcomes`), in the words of `tally_line`.
"""

import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.types import RunMode
from omegaconf import DictConfig

from lipnorm_exp.config.resolvers import swept_values
from lipnorm_exp.records import COMPLETED, DIVERGED, FAILED, INTERRUPTED
from lipnorm_exp.records.schema import STATUS, Record
from lipnorm_exp.util.errors import ConfigError

__all__ = [
    "check_grid_overrides",
    "grid_choices",
    "grid_jobs",
    "grid_runs",
    "grid_size",
    "jobs_runs",
    "note_outcome",
    "outcome_of",
    "runs_of_job",
    "sweep_axes",
    "sweep_position",
    "tally",
    "tally_line",
]

PROGRESS_FILE = "progress.jsonl"
SKIPPED = "skipped"
OUTCOMES = (COMPLETED, DIVERGED, SKIPPED, FAILED, INTERRUPTED)
#: a run the sweep planned to train that another launch (a concurrent sweep) finished first:
#: its job found the record there and trained nothing; named in the tally only where it happened
ELSEWHERE = "finished by another launch"


def _param_arguments(hydra_cfg: DictConfig) -> list[str]:
    """``hydra.sweeper.params`` as ``key=value`` strings, as Hydra's basic sweeper writes them."""
    params = hydra_cfg.sweeper.get("params") or {}
    return [f"{key}={value}" for key, value in params.items()]


def _choices(override: Override) -> list[str]:
    """The ``key=value`` strings one override stands for: one, or one per value it sweeps."""
    key = override.get_key_element()
    if not override.is_sweep_override():
        return [f"{key}={override.get_value_element_as_str()}"]
    if not override.is_discrete_sweep():
        raise ConfigError(f"{override.input_line}: the basic sweeper takes lists and ranges only")
    return [f"{key}={value}" for value in override.sweep_string_iterator()]


def grid_choices(hydra_cfg: DictConfig) -> dict[str, list[str]]:
    """Each key of a sweep and the ``key=value`` strings its jobs take, in the sweeper's order.

    As the basic sweeper reads them: ``hydra.sweeper.params`` as ``key=value`` strings, then
    the command line (``hydra.overrides.task``), a later override of a key replacing an earlier
    one in its place. A key the sweep does not vary has one string.
    """
    arguments = [*_param_arguments(hydra_cfg), *hydra_cfg.overrides.task]
    by_key: dict[str, list[str]] = {}
    for override in OverridesParser.create().parse_overrides(arguments):
        by_key[override.get_key_element()] = _choices(override)
    return by_key


def grid_jobs(hydra_cfg: DictConfig) -> list[list[str]]:
    """The override lists of the jobs Hydra's basic sweeper makes, in launch order.

    The cartesian product of `grid_choices` (the first key varies slowest). Hydra has no
    public API for this expansion (``BasicSweeper.split_arguments`` is in its private
    ``_internal`` package, which only `lipnorm_exp.cli.hydra_refusals` may use), so it is
    written here, and ``tests/config/test_presets.py`` checks it against Hydra's own.
    """
    return [list(job) for job in itertools.product(*grid_choices(hydra_cfg).values())]


def check_grid_overrides(hydra_cfg: DictConfig) -> None:
    """Refuse a command line that sweeps over a preset's grid key.

    A preset's sweep reads its axes from ``grid.<scale>.*``
    (``seed: ${lipnorm_seed_groups:${grid.${scale}.seeds},...}``). Unquoted,
    ``grid.paper.seeds=range(3)`` is itself a sweep: Hydra makes one job per value, and each
    job's axes still come from the preset's own grid (the ``trees`` preset at one depth and
    method: 30 runs instead of 3). Quoted, ``"grid.paper.seeds='range(3)'"`` sets the axis.

    Raises:
        ConfigError: naming the override and the quoted form that sets the axis.
    """
    for override in OverridesParser.create().parse_overrides(list(hydra_cfg.overrides.task)):
        key = override.get_key_element()
        if override.is_sweep_override() and override.key_or_group.startswith("grid."):
            assert override.input_line is not None, "a parsed override keeps its line"
            value = override.input_line.split("=", 1)[1]
            raise ConfigError(
                f"{override.input_line} sweeps over the grid key {key} instead of setting it; "
                f"quote the value to set the preset's axis: \"{key}='{value}'\""
            )


def sweep_axes(hydra_cfg: DictConfig) -> dict[str, list[Any]]:
    """The values each key of ``hydra.sweeper.params`` takes, in the sweeper's order.

    Keys are written as on the command line (``+method``, ``model.depth``); values are typed
    as Hydra parses them (``range(1,4)`` → ``[1, 2, 3]``, ``0.0,1.0`` → floats); a key set to
    one value takes that value alone.
    """
    overrides = OverridesParser.create().parse_overrides(_param_arguments(hydra_cfg))
    return {override.get_key_element(): swept_values(override) for override in overrides}


def grid_size(hydra_cfg: DictConfig) -> int:
    """Number of jobs the basic sweeper makes of ``hydra.sweeper.params`` + command line."""
    return len(grid_jobs(hydra_cfg))


def runs_of_job(job: list[str]) -> int:
    """Number of runs one job (its override list) trains: the seeds of its ``seed`` list, or 1."""
    for override in OverridesParser.create().parse_overrides(job):
        if override.get_key_element() == "seed":
            value = override.value()
            if isinstance(value, list):
                return len(value)
    return 1


def jobs_runs(jobs: list[list[str]]) -> int:
    """Number of runs the ``jobs`` (override lists) train, each counted by `runs_of_job`."""
    return sum(runs_of_job(job) for job in jobs)


def grid_runs(hydra_cfg: DictConfig) -> int:
    """Number of runs a sweep trains: `jobs_runs` of its `grid_jobs`."""
    return jobs_runs(grid_jobs(hydra_cfg))


def sweep_position() -> str:
    """``"[k/n]"`` inside a multirun job (``"[k]"`` when n is unknown), ``""`` otherwise.

    k is the job's ``hydra.job.num`` + 1, n the sweeper's ``hydra.sweeper.jobs`` (absent under
    a sweeper other than the project's).
    """
    if not HydraConfig.initialized():
        return ""
    hydra_cfg = HydraConfig.get()
    if hydra_cfg.mode != RunMode.MULTIRUN:
        return ""
    total = hydra_cfg.sweeper.get("jobs")
    index = hydra_cfg.job.num + 1
    return f"[{index}/{total}]" if total else f"[{index}]"


def outcome_of(record: Record, reused: bool) -> str:
    """The outcome of a run whose job gave ``record``: its status, or ``skipped`` where ``reused``.

    A reused record is a finished one the job found (`
    LaunchedRecord`): the job trained nothing.
    """
    return SKIPPED if reused else record[STATUS]


def note_outcome(
    outcome: str, error: str | None = None, runs: int = 1, run_id: str | None = None
) -> None:
    """Append the outcome (one of `OUTCOMES`) of ``runs`` runs of this job to the log.

    The log is the sweep's progress file; a job training several seeds together notes each
    run's outcome.

    A no-op outside a multirun.
    """
    if not sweep_position():
        return
    hydra_cfg = HydraConfig.get()
    noted = {"job": hydra_cfg.job.num, "outcome": outcome, "error": error, "runs": runs}
    line = json.dumps({**noted, "run_id": run_id})
    path = Path(hydra_cfg.sweep.dir) / PROGRESS_FILE
    with open(path, "a") as handle:  # one short append per job: atomic on local disks
        handle.write(line + "\n")


def noted_skips(sweep_dir: str | Path) -> set[str]:
    """The runs the jobs of one sweep found finished when they reached them (noted ``skipped``)."""
    path = Path(sweep_dir) / PROGRESS_FILE
    lines = path.read_text().splitlines() if path.exists() else []
    noted = (json.loads(line) for line in lines if line)
    return {note["run_id"] for note in noted if note["outcome"] == SKIPPED and note.get("run_id")}


def tally(sweep_dir: str | Path) -> Counter:
    """Outcomes (`OUTCOMES`) of the runs of one sweep that have one."""
    path = Path(sweep_dir) / PROGRESS_FILE
    counts: Counter = Counter()
    if path.exists():
        for line in path.read_text().splitlines():
            if line:
                noted = json.loads(line)
                counts[noted["outcome"]] += noted.get("runs", 1)
    return counts


def tally_line(counts: Counter, total: int) -> str:
    """``sweep finished: a completed, ..., e interrupted (of n)`` when every job ran.

    ``sweep stopped: ... (of n); k without an outcome`` when some job was interrupted or has
    not reported.
    """
    summary = ", ".join(f"{counts[outcome]} {outcome}" for outcome in OUTCOMES)
    if counts[ELSEWHERE]:
        summary += f", {counts[ELSEWHERE]} {ELSEWHERE}"
    missing = total - sum(counts[outcome] for outcome in (*OUTCOMES, ELSEWHERE))
    if not missing and not counts[INTERRUPTED]:
        return f"sweep finished: {summary} (of {total})"
    tail = f"; {missing} without an outcome" if missing > 0 else ""
    return f"sweep stopped: {summary} (of {total}){tail}"
