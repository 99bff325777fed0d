"""The launcher's arguments (``hydra.launcher.*``), checked before a sweep starts any job.

Hydra hands them to the launcher unchecked; joblib's refuses ``n_jobs=0`` only once the sweep
has started, with a traceback. Here they are refused first, in one line.
"""

import warnings
from typing import Any

from omegaconf import DictConfig

from lipnorm_exp.config.constraints import show
from lipnorm_exp.errors import ConfigError

__all__ = ["JOBLIB", "check_launcher"]

#: ``hydra.launcher._target_`` of ``hydra/launcher=joblib``
JOBLIB = "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"

# configs/hydra/launcher/submitit_slurm.yaml holds the project's defaults for submitit's SLURM
# launcher: Hydra 1.3 composes it over the plugin's schema of the same name (its keys typed and
# checked), and says on every composition that this matching by name is deprecated.
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
    if launcher.get("_target_") == JOBLIB and _jobs_problem(launcher.get("n_jobs")):
        raise ConfigError(
            f"hydra.launcher.n_jobs must be an integer >= 1 (worker processes) or <= -1 (-1: "
            f"every CPU, -2: all but one, ...), got {show(launcher.get('n_jobs'), int)}"
        )
