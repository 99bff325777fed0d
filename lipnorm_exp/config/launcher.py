"""The launcher's arguments (``hydra.launcher.*``), checked before a sweep starts any job.

Hydra hands them to the launcher unchecked; joblib's refuses ``n_jobs=0``, and sbatch a job of
0 CPUs or minutes, only once the sweep has started, with a traceback. Here they are refused
first, in one line.
"""

import shutil
import warnings
from typing import Any

from omegaconf import DictConfig

from lipnorm_exp.util.constraints import show
from lipnorm_exp.util.errors import ConfigError

__all__ = [
    "JOBLIB",
    "SLURM_PROGRAMS",
    "SUBMITIT",
    "check_launcher",
    "missing_slurm",
    "quiet_schema_matching",
]

#: ``hydra.launcher._target_`` of ``hydra/launcher=joblib``
JOBLIB = "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"
#: ``hydra.launcher._target_`` of ``hydra/launcher=submitit_slurm`` and ``submitit_local``
SUBMITIT = (
    "hydra_plugins.lipnorm_exp_launcher.slurm_launcher.SlurmLauncher",
    "hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher",
)
#: what the SLURM launcher submits with and runs its jobs with
SLURM_PROGRAMS = ("sbatch", "srun")
#: the submitit launchers' sizes per job: key → (the smallest value, what ``null`` means, if
#: allowed); sbatch would refuse the others only once the sweep has started
SUBMITIT_SIZES = {
    "timeout_min": (1, None),
    "cpus_per_task": (1, "the cluster's default"),
    "mem_gb": (1, "the cluster's default"),
    "gpus_per_node": (0, "none"),
    "nodes": (1, None),
    "tasks_per_node": (1, None),
    "array_parallelism": (1, None),
}


def quiet_schema_matching() -> None:
    """Silence Hydra's deprecation warning about the SLURM launcher's config, for the CLI.

    ``configs/hydra/launcher/submitit_slurm.yaml`` holds the project's defaults for submitit's
    SLURM launcher: Hydra 1.3 composes it over the plugin's schema of the same name (its keys
    typed and checked), and says on every composition that this matching by name is
    deprecated. The entry point calls this before Hydra composes anything.
    """
    warnings.filterwarnings(
        "ignore",
        message="\n'hydra/launcher/submitit_slurm' is validated against ConfigStore schema",
        category=UserWarning,
    )


def _jobs_problem(n_jobs: Any) -> bool:
    return type(n_jobs) is not int or n_jobs == 0


def check_launcher(launcher: DictConfig) -> None:
    """Refuse a launcher argument the launcher cannot work with.

    joblib's ``n_jobs`` is a number of worker processes (>= 1) or, negative, all CPUs but
    ``-n_jobs - 1`` (-1: every CPU), as joblib counts them; 0 means nothing.

    Raises:
        ConfigError: naming the key, the value and what is allowed.
    """
    target = launcher.get("_target_")
    if target == JOBLIB and _jobs_problem(launcher.get("n_jobs")):
        raise ConfigError(
            f"hydra.launcher.n_jobs must be an integer >= 1 (worker processes) or <= -1 (-1: "
            f"every CPU, -2: all but one, ...), got {show(launcher.get('n_jobs'), int)}"
        )
    if target in SUBMITIT:
        for key, (smallest, null) in SUBMITIT_SIZES.items():
            if key in launcher:
                _check_size(key, launcher.get(key), smallest, null)


def missing_slurm(launcher: DictConfig) -> ConfigError | None:
    """The refusal of the SLURM launcher on a machine without SLURM, or ``None``.

    ``None`` for another launcher, or where `SLURM_PROGRAMS` are on ``PATH``. The caller
    raises it where the sweep has something to submit (the launcher submits nothing when every
    run is finished).
    """
    if launcher.get("_target_") != SUBMITIT[0]:
        return None
    missing = [program for program in SLURM_PROGRAMS if shutil.which(program) is None]
    if not missing:
        return None
    return ConfigError(
        f"hydra/launcher=submitit_slurm needs SLURM, and {' and '.join(missing)} cannot be "
        "found on this machine's PATH; run the sweep where SLURM is (a cluster's login node), "
        "or use hydra/launcher=basic or joblib here"
    )


def _check_size(key: str, value: Any, smallest: int, null: str | None) -> None:
    """Refuse a submitit size that is not an integer >= ``smallest`` (or ``null``, if allowed)."""
    if value is None and null is not None:
        return
    if type(value) is not int or value < smallest:
        allowed = f" (or null: {null})" if null is not None else ""
        raise ConfigError(
            f"hydra.launcher.{key} must be an integer >= {smallest}{allowed}, "
            f"got {show(value, int)}"
        )
