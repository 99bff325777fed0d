"""Check a command line before Hydra writes anything: :class:`Preflight`, :func:`check_sweep`.

A single run is checked by :class:`Preflight`, a Hydra callback (``configs/hydra/default.yaml``),
before Hydra makes its output folder; a sweep by :func:`check_sweep`, which the project's sweeper
(``hydra_plugins/lipnorm_exp_sweeper``) calls before it makes the sweep's folder. So nothing is
written for a command line that cannot run. What they refuse ends the process in one line
(:func:`lipnorm_exp.cli.errors.stop`).
"""

import copy
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, open_dict, read_write

from lipnorm_exp.cli.errors import stop
from lipnorm_exp.config import check_keys, validate
from lipnorm_exp.config.launcher import check_launcher
from lipnorm_exp.sweeps.progress import check_grid_overrides, grid_jobs
from lipnorm_exp.util.errors import UserError
from lipnorm_exp.util.folders import writable_folder

__all__ = ["FOLDERS", "Preflight", "check_sweep"]

#: the folders a run writes to: made and checked writable before anything runs
FOLDERS = ("results_dir", "data_dir", "log_dir")


def _without_hydra(config: DictConfig) -> DictConfig:
    """The job's config as Hydra hands it to the task function."""
    task = copy.deepcopy(config)
    with read_write(task), open_dict(task):
        del task["hydra"]
    return task


def _check_folders(config: DictConfig) -> None:
    for key in FOLDERS:
        writable_folder(config.paths[key], f"paths.{key}")


class Preflight(Callback):
    """Check a single run before Hydra writes anything (see the module docstring)."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        """A single run: its whole config, then its folders."""
        try:
            validate(_without_hydra(config))
            _check_folders(config)
        except UserError as error:
            stop(error)


def check_sweep(config: DictConfig) -> list[list[str]]:
    """Check the sweep ``config``: every key on its own, then the folders its jobs share.

    The config here is the sweep's, in which every swept key still holds its default: a key
    that is wrong in it is wrong in every job. Rules between keys wait for each job's own config
    (``model=gcn`` with ``norm`` swept over ``none,pairnorm`` holds the default ``norm=lip``
    here). A sweep over a preset's grid key, a sweep that cannot be expanded
    (:func:`~lipnorm_exp.sweeps.progress.grid_jobs`) and a launcher argument the launcher cannot
    take (:func:`~lipnorm_exp.config.launcher.check_launcher`) are refused, in one line.

    Returns:
        The override lists of the sweep's jobs, in launch order (its one expansion).
    """
    try:
        check_grid_overrides(config.hydra)
        check_keys(_without_hydra(config))
        jobs = grid_jobs(config.hydra)
        check_launcher(config.hydra.launcher)
        _check_folders(config)
    except UserError as error:
        stop(error)
    return jobs
