"""``hydra/sweeper=lipnorm`` (the project's, selected in ``configs/hydra/default.yaml``).

A sweep's grid is expanded once, as Hydra's basic sweeper expands it (the same jobs, in the same
order, with the same overrides: `grid_jobs`), and that one
expansion serves the whole sweep:

1. the grid is expanded before anything is written, a sweep that cannot be expanded (an interval,
   a shuffled list) refused in one line (`grid_jobs`, whose
   refusal `HydraRefusals` prints; the config's keys,
   folders and launcher are checked before, by the ``Preflight`` callback, as Hydra resolves
   ``hydra.sweeper`` when it makes the sweeper);
2. its plan is said: how many runs, and how many have a finished record and will be skipped
   (`planned_runs`, `plan_line`);
3. its jobs go to the configured launcher (basic, joblib, or the project's SLURM launcher), in one
   batch, each told the number of jobs in ``hydra.sweeper.jobs`` (its position "job k of n" is
   ``hydra.job.num`` + 1 of that: `sweep_position`);
4. the tally of the runs' outcomes is said at the end, also when the sweep is stopped
   (`record_outcomes`), before the first failed job, if any, is
   raised as the basic sweeper raises it.

Hydra imports every module of ``hydra_plugins`` when any Hydra application starts: this module
imports the project (and with it torch) only when it sweeps.
"""

import copy
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.core.plugins import Plugins
from hydra.core.utils import JobReturn
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, read_write

__all__ = ["LipnormSweeper", "LipnormSweeperConf"]

log = logging.getLogger(__name__)


@dataclass
class LipnormSweeperConf:
    """``hydra.sweeper``: the swept keys, and the number of jobs the sweeper tells its jobs.

    Args:
        params: ``key: values`` swept as if given on the command line before its overrides
            (the presets' grids, ``configs/experiment/``).
        jobs: set by the sweeper in each job's config: the number of jobs of its sweep.
    """

    _target_: str = "hydra_plugins.lipnorm_exp_sweeper.sweeper.LipnormSweeper"
    params: dict[str, str] | None = None
    jobs: int | None = None


ConfigStore.instance().store(
    group="hydra/sweeper", name="lipnorm", node=LipnormSweeperConf, provider="lipnorm_exp"
)


class LipnormSweeper(Sweeper):
    """The project's sweeper: one expansion of the grid for the whole sweep (module docstring).

    Args:
        params: as `LipnormSweeperConf`; read from the sweep's config.
        jobs: as `LipnormSweeperConf`; set by the sweeper itself.
    """

    def __init__(self, params: dict[str, str] | None = None, jobs: int | None = None) -> None:
        super().__init__()
        self.hydra_context: HydraContext | None = None
        self.task_function: TaskFunction | None = None
        self.config: DictConfig | None = None
        self.launcher = None

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        """Keep what the launcher is made of once the sweep knows its number of jobs."""
        self.hydra_context = hydra_context
        self.task_function = task_function
        self.config = config

    def sweep(self, arguments: list[str]) -> Sequence[JobReturn]:
        """Expand, plan, launch and tally the sweep (module docstring).

        Args:
            arguments: the command line's overrides, as Hydra passes them: the sweep's
                ``hydra.overrides.task``, which the expansion reads with ``hydra.sweeper.params``.

        Returns:
            The jobs' returns, in launch order.
        """
        from lipnorm_exp.sweeps.progress import grid_jobs  # the project, when it sweeps only
        from lipnorm_exp.util.stopping import running_sweep

        assert self.config is not None and list(self.config.hydra.overrides.task) == arguments
        with running_sweep():
            jobs = grid_jobs(self.config.hydra)
            since = time.time()
            planned = self._plan(jobs)
            sweep_dir = Path(self.config.hydra.sweep.dir)
            sweep_dir.mkdir(parents=True, exist_ok=True)
            OmegaConf.save(self.config, sweep_dir / "multirun.yaml")
            try:
                self.validate_batch_is_legal(jobs)
                returns = self._launch(jobs)
            finally:
                if planned is not None:
                    self._tally(planned, since, sweep_dir)
        for job in returns:
            _ = job.return_value  # raises the first failed job's error, as the basic sweeper does
        return returns

    def _plan(self, jobs: list[list[str]]) -> list[Any] | None:
        """Say the sweep's runs and its finished ones; the planned runs (none: a job is refused)."""
        from hydra.errors import HydraException

        from lipnorm_exp.sweeps.plan import (
            finished_runs,
            newer_line,
            plan_line,
            planned_runs,
            stale_line,
        )
        from lipnorm_exp.sweeps.progress import jobs_runs

        assert self.config is not None
        total = jobs_runs(jobs)
        log.info("sweep of %d runs; records in %s", total, self.config.paths.results_dir)
        try:
            planned = planned_runs(self.config, jobs)
        except HydraException:  # a job Hydra cannot compose: validate_batch_is_legal refuses it
            return None
        for (results_dir, force), finished in finished_runs(planned).items():
            log.info("%s", plan_line(finished, total, results_dir, force))
        for line in (stale_line(planned), newer_line(planned)):
            if line is not None:
                log.info("%s", line)
        return planned

    def _launch(self, jobs: list[list[str]]) -> Sequence[JobReturn]:
        """Launch ``jobs`` in one batch, each job's config holding their number."""
        assert self.config is not None and self.hydra_context is not None
        assert self.task_function is not None
        config = copy.deepcopy(self.config)
        with read_write(config):
            # each job composes its config anew from the sweep's Hydra overrides
            config.hydra.overrides.hydra.append(f"hydra.sweeper.jobs={len(jobs)}")
            config.hydra.sweeper.jobs = len(jobs)
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=self.hydra_context, task_function=self.task_function, config=config
        )
        return self.launcher.launch(jobs, initial_job_idx=0)

    @staticmethod
    def _tally(planned: list[Any], since: float, sweep_dir: Path) -> None:
        """Say the tally of the runs' outcomes, from the records the sweep wrote."""
        from lipnorm_exp.records import FAILED
        from lipnorm_exp.sweeps.plan import record_outcomes
        from lipnorm_exp.sweeps.progress import noted_skips, tally, tally_line

        counts = record_outcomes(planned, since, tally(sweep_dir)[FAILED], noted_skips(sweep_dir))
        log.info("%s", tally_line(counts, len(planned)))
