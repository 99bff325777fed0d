"""The console commands (``[project.scripts]``): without the ``app`` extra, one line says so.

``pip install lipnorm_exp`` installs the layers (``lipnorm_exp.nn``, with torch and PyG) and
these commands; what the commands run (Hydra, pandas, matplotlib...) comes with the ``app``
extra. Each function here imports its command's module only when called, so that without the
extra the command ends in one line naming the module it lacks and the install that brings it,
exit status 2, instead of a traceback; ``lipnorm-exp --version`` answers without the extra.
"""

import importlib
import sys
from collections.abc import Sequence

from lipnorm_exp import __version__
from lipnorm_exp.util.commands import EXIT_REFUSED

__all__ = ["APP_EXTRA", "lipnorm_exp", "merge", "print_version", "report", "verify"]

#: the extra that the commands need (``pyproject.toml``'s ``[project.optional-dependencies]``)
APP_EXTRA = "app"


def print_version(argv: Sequence[str]) -> None:
    """Print the package's version and exit where ``argv`` asks for it (``--version``)."""
    if "--version" in argv:
        print(f"lipnorm_exp {__version__}")
        sys.exit(0)


def run(command: str, target: str) -> None:
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


def lipnorm_exp() -> None:
    """``lipnorm-exp``: a run or a sweep (`lipnorm_exp.__main__.console`); ``--version``."""
    print_version(sys.argv[1:])
    run("lipnorm-exp", "lipnorm_exp.__main__:console")


def report() -> None:
    """``lipnorm-exp-report``: tables, figures, scorecard (`lipnorm_exp.report.__main__`)."""
    run("lipnorm-exp-report", "lipnorm_exp.report.__main__:main")


def merge() -> None:
    """``lipnorm-exp-merge``: records into a folder of records (`lipnorm_exp.records.merge`)."""
    run("lipnorm-exp-merge", "lipnorm_exp.records.merge:main")


def verify() -> None:
    """``lipnorm-exp-verify``: runs trained again against their records (`verify`)."""
    run("lipnorm-exp-verify", "lipnorm_exp.cli.verify:main")
