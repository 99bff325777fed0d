"""Check a command line before Hydra writes anything: `Preflight`.

`Preflight` is a Hydra callback (``configs/hydra/default.yaml``): it checks the config
and the folders before Hydra makes its output folder or its sweeper. The project's sweeper
(``hydra_plugins/lipnorm_exp_sweeper``) expands the sweep
(`grid_jobs`) before it makes the sweep's folder. So nothing
is written for a command line that cannot run. What the callback refuses ends the process in one
line (`lipnorm_exp.cli.errors.stop`), and so does a sweep that cannot be expanded
(`HydraRefusals`).
"""

import copy
import importlib.util
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, open_dict, read_write

from lipnorm_exp.cli.errors import stop
from lipnorm_exp.config import check_keys, validate
from lipnorm_exp.config.launcher import check_launcher, missing_slurm
from lipnorm_exp.config.rules import given_keys_are_read
from lipnorm_exp.sweeps.plan import check_given_keys, planned_runs
from lipnorm_exp.sweeps.progress import check_grid_overrides
from lipnorm_exp.util.errors import ConfigError, UserError
from lipnorm_exp.util.folders import writable_folder

__all__ = ["FOLDERS", "Preflight", "check_tracker_package"]

#: the folders a run writes to: made and checked writable before anything runs
FOLDERS = ("results_dir", "data_dir", "log_dir")


def _without_hydra(config: DictConfig) -> DictConfig:
    """The job's config as Hydra hands it to the task function."""
    task = copy.deepcopy(config)
    with read_write(task), open_dict(task):
        del task["hydra"]
    return task


def check_tracker_package(logger: DictConfig) -> None:
    """Refuse a ``logger`` whose package is not installed, naming what to install.

    The package is looked for, not imported (the tracker imports it when a run starts).

    Raises:
        ConfigError: ``logger=wandb`` without the ``wandb`` package.
    """
    if logger.name == "wandb" and importlib.util.find_spec("wandb") is None:
        raise ConfigError(
            "logger=wandb needs the wandb package: pip install 'lipnorm_exp[wandb]' "
            "(or logger=none)"
        )


def _check_folders(config: DictConfig) -> None:
    for key in FOLDERS:
        writable_folder(config.paths[key], f"paths.{key}")


class Preflight(Callback):
    """Check what can be checked before Hydra writes anything (see the module docstring)."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        """A single run: its config, the keys it is given, its logger's package, its folders."""
        try:
            resolved = validate(_without_hydra(config))
            given_keys_are_read(resolved["model"]["name"], config.hydra.overrides.task)
            check_tracker_package(config.logger)
            _check_folders(config)
        except UserError as error:
            stop(error)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """A sweep: every key on its own, then the folders its jobs share.

        This runs before Hydra makes the sweeper, which resolves ``hydra.sweeper`` (a preset's
        grid, read from ``grid.${scale}``). The config here is the sweep's, in which every swept
        key still holds its default: a key that is wrong in it is wrong in every job. Rules
        between keys wait for each job's own config (``model=gcn`` with ``norm`` swept over
        ``none,pairnorm`` holds the default ``norm=lip`` here), but for a key a job is given
        that its model does not read (`check_given_keys`). A sweep over a preset's grid key
        and a launcher argument the launcher cannot take
        (`check_launcher`) are refused, and so are a logger
        whose package is missing (`check_tracker_package`) and the SLURM launcher where
        SLURM is missing and the sweep has a run to train; a sweep that cannot be expanded is
        refused by the sweeper (`grid_jobs`).
        """
        try:
            check_grid_overrides(config.hydra)
            check_keys(_without_hydra(config))
            check_given_keys(config)
            check_launcher(config.hydra.launcher)
            check_tracker_package(config.logger)
            no_slurm = missing_slurm(config.hydra.launcher)
            if no_slurm is not None and not all(run.skipped for run in planned_runs(config)):
                raise no_slurm  # where every run is finished the launcher submits nothing
            _check_folders(config)
        except UserError as error:
            stop(error)
