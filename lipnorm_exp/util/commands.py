"""What the package's commands share: their exit statuses and a parser that refuses in one line."""

import argparse
import importlib
import math
import sys
from collections.abc import Callable
from pathlib import Path

from lipnorm_exp.util.errors import DiskFullError

__all__ = [
    "APP_EXTRA",
    "EXIT_INTERRUPTED",
    "EXIT_REFUSED",
    "OneLineParser",
    "distinct_seeds",
    "existing_folder",
    "folder_path",
    "non_negative_int",
    "positive_int",
    "positive_number",
    "run_command",
    "run_entry_point",
]

#: exit status of a refused argument (argparse's own)
EXIT_REFUSED = 2
#: exit status of a command stopped by Ctrl-C or a stop signal (128 + SIGINT)
EXIT_INTERRUPTED = 130
#: the extra that the commands need (``pyproject.toml``'s ``[project.optional-dependencies]``)
APP_EXTRA = "app"


def folder_path(text: str) -> Path:
    """An argument that names a folder: a non-empty path.

    An empty path would name the working folder without saying so.

    Raises:
        argparse.ArgumentTypeError: ``text`` is empty or blank.
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not a folder (a non-empty path)")
    return Path(text)


def _integer(text: str, low: int) -> int:
    """``text`` as an integer of at least ``low``.

    Raises:
        argparse.ArgumentTypeError: it is not one.
    """
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer >= {low}")
    return value


def positive_int(text: str) -> int:
    """An argument that is an integer >= 1 (epochs, threads)."""
    return _integer(text, 1)


def non_negative_int(text: str) -> int:
    """An argument that is an integer >= 0 (a seed, epochs left untimed)."""
    return _integer(text, 0)


def positive_number(text: str) -> float:
    """An argument that is a finite number > 0 (a learning rate).

    Raises:
        argparse.ArgumentTypeError: it is not one (``nan``, ``inf``, ``0``, ``abc``).
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number > 0")
    return value


def distinct_seeds(text: str) -> list[int]:
    """An argument of seeds separated by commas (``0,1,2``), each an integer >= 0, none twice.

    Raises:
        argparse.ArgumentTypeError: one is not such an integer, or is given twice.
    """
    try:
        seeds = [non_negative_int(part) for part in text.split(",")]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not integers >= 0 separated by commas"
        ) from None
    twice = sorted({seed for seed in seeds if seeds.count(seed) > 1})
    if twice:
        raise argparse.ArgumentTypeError(
            f"{text!r} gives seed {', '.join(map(str, twice))} twice; give each seed once"
        )
    return seeds


def existing_folder(text: str) -> Path:
    """An argument that names a folder that exists (one to read from).

    Raises:
        argparse.ArgumentTypeError: ``text`` is empty, or no folder is there.
    """
    path = folder_path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is not a folder")
    return path


class OneLineParser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` that refuses a bad argument in one line (no usage block).

    Args:
        error_prefix (str): the start of that line (``lipnorm_exp.report: error: ``).
        *args, **kwargs: `argparse.ArgumentParser`'s.
    """

    def __init__(self, *args, error_prefix: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.error_prefix = error_prefix

    def error(self, message: str):
        """Print ``<error_prefix><message>; see --help`` and exit with `EXIT_REFUSED`."""
        self.exit(EXIT_REFUSED, f"{self.error_prefix}{message}; see --help\n")


def run_command(body: Callable[[], int], refused: type[Exception], command: str, whole: str) -> int:
    """Run a command's ``body`` and return its exit status; its refusals and stops in one line.

    The body runs within `stop_requests`: Ctrl-C stops it, and so do SIGTERM and SIGHUP, whatever
    the process inherited (a command started in the background of a shell inherits Ctrl-C
    ignored).

    Args:
        body: the command's work; returns its exit status.
        refused: the error type of an argument the command cannot work with: printed as
            ``<command>: error: <message>``, exit `EXIT_REFUSED`; so is a file that could
            not be written for want of space (`DiskFullError`).
        command: the command's name in its lines (``lipnorm_exp.report``).
        whole: what a stop leaves whole and what to do, printed as ``<command>: interrupted
            (<where the stop came from>); <whole>``, exit `EXIT_INTERRUPTED`.
    """
    # a body runs with the app extra installed; this module is imported without it (psutil)
    from lipnorm_exp.util.stopping import stop_requests

    try:
        with stop_requests():
            return body()
    except (refused, DiskFullError) as error:
        print(f"{command}: error: {error}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt as stop:
        print(f"{command}: interrupted ({str(stop) or 'Ctrl-C'}); {whole}", file=sys.stderr)
        return EXIT_INTERRUPTED


def run_entry_point(command: str, target: str) -> None:
    """Run ``target`` (``module:function``) as the console command ``command`` and exit.

    The function's return value is the exit status (``None``: 0). A module of another
    distribution that cannot be found while ``target``'s module is imported ends the command in
    one line naming it and the ``app`` extra, exit status 2; one of this package's is a packaging
    fault and is raised.
    """
    module_name, function = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if not error.name or error.name.split(".")[0] == "lipnorm_exp":
            raise
        print(
            f"{command}: error: needs the Python module {error.name}, of the '{APP_EXTRA}' "
            f"extra: pip install 'lipnorm_exp[{APP_EXTRA}]'",
            file=sys.stderr,
        )
        sys.exit(EXIT_REFUSED)
    sys.exit(getattr(module, function)())
