"""The console commands (``[project.scripts]``): without the ``app`` extra, one line says so.

``pip install lipnorm_exp`` installs the layers (``lipnorm_exp.nn``, with torch and PyG) and
these commands; what the commands run (Hydra, pandas, matplotlib...) comes with the ``app``
extra. Each function here imports its command's module only when called, so that without the
extra the command ends in one line naming the module it lacks and the install that brings it,
exit status 2, instead of a traceback; ``lipnorm-exp --version`` answers without the extra. The
commands that train set OpenMP's wait policy before anything imports torch.
"""

import sys
from collections.abc import Sequence

from lipnorm_exp import __version__
from lipnorm_exp.util.commands import run_entry_point
from lipnorm_exp.util.openmp import passive_wait

__all__ = ["lipnorm_exp", "merge", "print_version", "report", "verify"]


def print_version(argv: Sequence[str]) -> None:
    """Print the package's version and exit where ``argv`` asks for it (``--version``)."""
    if "--version" in argv:
        print(f"lipnorm_exp {__version__}")
        sys.exit(0)


def lipnorm_exp() -> None:
    """``lipnorm-exp``: a run or a sweep (`lipnorm_exp.cli.app.console`); ``--version``.

    OpenMP's threads wait asleep (`passive_wait`: before torch is imported, as it must be).
    """
    print_version(sys.argv[1:])
    passive_wait()
    run_entry_point("lipnorm-exp", "lipnorm_exp.cli.app:console")


def report() -> None:
    """``lipnorm-exp-report``: tables, figures, scorecard (`lipnorm_exp.report.command`)."""
    run_entry_point("lipnorm-exp-report", "lipnorm_exp.report.command:main")


def merge() -> None:
    """``lipnorm-exp-merge``: records into a folder of records (`lipnorm_exp.records.merge`)."""
    run_entry_point("lipnorm-exp-merge", "lipnorm_exp.records.merge:main")


def verify() -> None:
    """``lipnorm-exp-verify``: runs trained again against their records (`verify`).

    OpenMP's threads wait asleep (`passive_wait`).
    """
    passive_wait()
    run_entry_point("lipnorm-exp-verify", "lipnorm_exp.cli.verify:main")
