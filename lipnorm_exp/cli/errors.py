"""How ``python -m lipnorm_exp`` ends when it cannot run: one line, an exit status, no traceback.

A bad value, absent or unreadable data, or a folder that cannot be written
(`UserError`) is printed as ``lipnorm_exp: error: <message>`` and
ends the process with `EXIT_USER_ERROR`; a stop request (Ctrl-C, SIGTERM) with
`EXIT_INTERRUPTED`. ``HYDRA_FULL_ERROR=1`` raises the error instead, with its traceback.
"""

import os
import sys
from typing import NoReturn

from hydra.errors import CompactHydraException

from lipnorm_exp.util.commands import EXIT_INTERRUPTED
from lipnorm_exp.util.errors import UserError

__all__ = [
    "ERROR_PREFIX",
    "EXIT_INTERRUPTED",
    "EXIT_USER_ERROR",
    "JobError",
    "full_error_wanted",
    "interruption",
    "say",
    "stop",
]

ERROR_PREFIX = "lipnorm_exp: error: "
#: exit status of a run stopped by a bad value, absent data or an unwritable folder
EXIT_USER_ERROR = 2


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
    """End the process on ``error``: one line and `EXIT_USER_ERROR` (or the traceback)."""
    if full_error_wanted():
        raise error
    say(f"{ERROR_PREFIX}{error}")
    sys.exit(EXIT_USER_ERROR)
