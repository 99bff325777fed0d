"""How ``python -m lipnorm_exp`` ends when it cannot run: one line, an exit status, no traceback.

A bad value, absent or unreadable data, or a folder that cannot be written
(:class:`~lipnorm_exp.errors.UserError`) is printed as ``lipnorm_exp: error: <message>`` and
ends the process with :data:`EXIT_USER_ERROR`; a stop request (Ctrl-C, SIGTERM) with
:data:`EXIT_INTERRUPTED`. ``HYDRA_FULL_ERROR=1`` raises the error instead, with its traceback.

:class:`Preflight` is a Hydra callback (``configs/hydra/default.yaml``): it checks the config
and the folders before Hydra makes its output folder or expands a sweep, so that nothing is
written for a command line that cannot run.
"""

import copy
import os
import sys
from typing import Any, NoReturn

from hydra.errors import CompactHydraException
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, open_dict, read_write

from lipnorm_exp.commands import EXIT_INTERRUPTED
from lipnorm_exp.config import check_keys, validate
from lipnorm_exp.config.launcher import check_launcher
from lipnorm_exp.errors import UserError
from lipnorm_exp.folders import writable_folder
from lipnorm_exp.sweep import check_grid_overrides, grid_jobs

__all__ = [
    "ERROR_PREFIX",
    "EXIT_INTERRUPTED",
    "EXIT_USER_ERROR",
    "FOLDERS",
    "JobError",
    "Preflight",
    "full_error_wanted",
    "interruption",
    "say",
    "stop",
]

ERROR_PREFIX = "lipnorm_exp: error: "
#: exit status of a run stopped by a bad value, absent data or an unwritable folder
EXIT_USER_ERROR = 2
#: the folders a run writes to: made and checked writable before anything runs
FOLDERS = ("results_dir", "data_dir", "log_dir")


class JobError(CompactHydraException):
    """A job of a sweep that could not run; Hydra shows its one line once the sweep has ended."""


def full_error_wanted() -> bool:
    """Whether ``HYDRA_FULL_ERROR=1`` asks for tracebacks."""
    return os.environ.get("HYDRA_FULL_ERROR") == "1"


def say(message: str) -> None:
    """Print one line to stderr."""
    print(message, file=sys.stderr, flush=True)


def interruption(stop_request: KeyboardInterrupt) -> str:
    """``lipnorm_exp: interrupted (<where the stop came from>)``."""
    return f"lipnorm_exp: interrupted ({str(stop_request) or 'Ctrl-C'})"


def stop(error: UserError) -> NoReturn:
    """End the process on ``error``: one line and :data:`EXIT_USER_ERROR` (or the traceback)."""
    if full_error_wanted():
        raise error
    say(f"{ERROR_PREFIX}{error}")
    sys.exit(EXIT_USER_ERROR)


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
    """Check what can be checked before Hydra writes anything (see the module docstring)."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        """A single run: its whole config, then its folders."""
        try:
            validate(_without_hydra(config))
            _check_folders(config)
        except UserError as error:
            stop(error)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """A sweep: every key on its own, then the folders its jobs share.

        The config here is the sweep's, in which every swept key still holds its default: a
        key that is wrong in it is wrong in every job. Rules between keys wait for each job's
        own config (``model=gcn`` with ``norm`` swept over ``none,pairnorm`` holds the default
        ``norm=lip`` here). A sweep over a preset's grid key, a sweep the basic sweeper
        cannot expand (:func:`~lipnorm_exp.sweep.grid_jobs`) and a launcher argument the
        launcher cannot take (:func:`~lipnorm_exp.config.launcher.check_launcher`) are refused.
        """
        try:
            check_grid_overrides(config.hydra)
            check_keys(_without_hydra(config))
            grid_jobs(config.hydra)
            check_launcher(config.hydra.launcher)
            _check_folders(config)
        except UserError as error:
            stop(error)
