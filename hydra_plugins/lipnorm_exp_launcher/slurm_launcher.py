"""``hydra/launcher=submitit_slurm``: submitit's SLURM launcher, submitting nothing when done.

The jobs of a sweep are one SLURM job array (``configs/hydra/launcher/submitit_slurm.yaml``
holds the project's defaults: time, CPUs, memory, GPUs, partition). A run whose finished record
is in ``paths.results_dir`` is skipped by its job
(`lipnorm_exp.training.finished.finished_record`); when that is every run of the sweep
(`planned_runs`), the launcher submits nothing, rather than an array
of jobs that each start, find their record and end. Each job's record names its SLURM job
(``machine.slurm_job``).

Hydra instantiates launchers only from the ``hydra_plugins`` package, and imports every module
there when any Hydra application starts: this module imports the project (and with it torch)
only when it launches.
"""

import logging
from collections.abc import Sequence

from hydra.core.utils import JobReturn
from hydra_plugins.hydra_submitit_launcher import submitit_launcher

__all__ = ["SlurmLauncher"]

log = logging.getLogger(__name__)


class SlurmLauncher(submitit_launcher.SlurmLauncher):
    """submitit's SLURM launcher that submits nothing when every run has a finished record."""

    def launch(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> Sequence[JobReturn]:
        """Submit the jobs as one job array and wait for them, unless none has a run to train."""
        from lipnorm_exp.sweeps.plan import planned_runs  # the project, at launch only

        if all(run.skipped for run in planned_runs(self.config)):
            log.info("no SLURM job submitted: every run of the sweep has a finished record")
            return []
        return super().launch(job_overrides, initial_job_idx)
