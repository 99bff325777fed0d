"""The console commands of ``[project.scripts]`` without the ``app`` extra: each ends in one line
naming the extra to install, exit 2, and ``lipnorm-exp --version`` prints the package's version;
with it, each command's ``--help`` (and the report's refusals) answer without importing torch,
pandas or matplotlib.

Each command runs in a subprocess as its console script calls it (the entry point that
``pyproject.toml`` names), with every module that the ``app`` extra's distributions provide made
unimportable by a finder at the front of ``sys.meta_path``, as after ``pip install lipnorm_exp``,
and under ``python -X importtime``, whose report names every module the process imported.
``tests/project/test_wheel.py`` installs the wheel without extras and runs the installed scripts.
"""

import re
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata

import pytest
from cli_helpers import environment
from conftest import PYPROJECT, REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import lipnorm_exp

PROJECT = PYPROJECT["project"]
#: console command → its entry point (``module:function``)
SCRIPTS: dict[str, str] = PROJECT["scripts"]
#: ``python -m`` commands → the module they run and the console command they are (named so in
#: their one line)
PYTHON_M = {
    "python -m lipnorm_exp": ("lipnorm_exp", "lipnorm-exp"),
    "python -m lipnorm_exp.report": ("lipnorm_exp.report", "lipnorm-exp-report"),
}
#: namespace packages that this project shares with the extra's distributions
SHARED = {"hydra_plugins"}
#: what a command imports only for its work (a run, a report), never for its help or refusals
HEAVY = {"torch", "pandas", "matplotlib"}
#: a line of ``-X importtime``'s report (its header, or a module it names)
IMPORT_LINE = re.compile(r"^import time:(?:\s+\d+ \|\s+\d+ \|\s*(\S+)|.*)\n", re.M)


def app_modules() -> set[str]:
    """The top-level modules that the ``app`` extra's distributions provide here."""
    wanted = {
        canonicalize_name(Requirement(line).name)
        for line in PROJECT["optional-dependencies"]["app"]
    }
    provided = metadata.packages_distributions()
    return {
        module
        for module, distributions in provided.items()
        if module not in SHARED and {canonicalize_name(d) for d in distributions} & wanted
    }


@dataclass
class Answer:
    """What a command gave: its exit status, its output, and the top-level modules it imported
    (``-X importtime``'s report, left out of ``stderr``)."""

    returncode: int
    stdout: str
    stderr: str
    imported: set[str]


def console(command: str, *arguments: str, blocked: set[str]) -> Answer:
    """``command`` called as its console script calls its entry point, or ``python -m <module>``
    for a ``command`` of `PYTHON_M`.

    A module named in ``blocked``, or inside one, cannot be imported.
    """
    if command in PYTHON_M:
        call = f"import runpy\nrunpy.run_module({PYTHON_M[command][0]!r}, run_name='__main__')\n"
    else:
        module, function = SCRIPTS[command].split(":")
        call = f"from {module} import {function}\nsys.exit({function}())\n"
    script = (
        "import importlib.abc, sys\n"
        "class Absent(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if any(name == b or name.startswith(b + '.') for b in {sorted(blocked)!r}):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Absent())\n"
        f"sys.argv = [{command!r}, *{list(arguments)!r}]\n" + call
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", script],
        cwd=REPO, env=environment(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    imported = {name.split(".")[0] for name in IMPORT_LINE.findall(done.stderr) if name}
    return Answer(done.returncode, done.stdout, IMPORT_LINE.sub("", done.stderr), imported)


def test_the_blocked_modules_are_the_app_extras():
    assert {"hydra", "omegaconf", "pandas", "matplotlib"} <= app_modules()
    assert app_modules().isdisjoint({"torch", "torch_geometric", "numpy", "lipnorm_exp"})


def test_every_console_command_has_a_guarded_entry_point():
    assert sorted(SCRIPTS) == [
        "lipnorm-exp", "lipnorm-exp-merge", "lipnorm-exp-report", "lipnorm-exp-verify"
    ]  # fmt: skip
    assert {target.split(":")[0] for target in SCRIPTS.values()} == {"lipnorm_exp.cli.console"}


@pytest.mark.parametrize("command", [*sorted(SCRIPTS), *PYTHON_M])
@pytest.mark.parametrize("arguments", [[], ["--help"]])
def test_without_the_app_extra_each_command_names_the_extra_in_one_line(command, arguments):
    done = console(command, *arguments, blocked=app_modules())
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    shown = PYTHON_M[command][1] if command in PYTHON_M else command
    named = re.fullmatch(
        rf"{shown}: error: needs the Python module (\S+), of the 'app' extra: "
        r"pip install 'lipnorm_exp\[app\]'",
        line,
    )
    assert named and named.group(1).split(".")[0] in app_modules(), line


@pytest.mark.parametrize("command", [*sorted(SCRIPTS), *PYTHON_M])
def test_with_the_app_extra_each_command_runs(command):
    done = console(command, "--help", blocked=set())
    assert done.returncode == 0, done.stderr
    assert "usage" in done.stdout.lower() or "Config groups" in done.stdout


def test_the_import_report_names_what_a_command_imports(tmp_path):
    done = console("lipnorm-exp-report", "--runs", str(tmp_path), blocked=set())
    assert done.stderr.strip().endswith("holds no run records (*.json, searched recursively)")
    assert {"pandas", "matplotlib"} <= done.imported  # the report's work, once its records load


@pytest.mark.parametrize("command", [*sorted(SCRIPTS), *PYTHON_M])
def test_each_commands_help_imports_no_torch_pandas_or_matplotlib(command):
    done = console(command, "--help", blocked=set())
    assert done.returncode == 0, done.stderr
    assert "usage" in done.stdout.lower() or "Config groups" in done.stdout
    assert "lipnorm_exp" in done.imported
    assert done.imported & HEAVY == set()


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (["--only", "nothing"], "argument --only: invalid choice: 'nothing'"),
        (["--runs", "nowhere"], "--runs nowhere is not a folder; give the folder of run records"),
        (["--out", "Makefile"], "--out Makefile is a file, not a folder; give a folder"),
    ],
)
def test_the_reports_refusals_import_no_torch_pandas_or_matplotlib(arguments, says):
    done = console("lipnorm-exp-report", *arguments, blocked=set())
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"lipnorm_exp.report: error: {says}")
    assert done.imported & HEAVY == set()


@pytest.mark.parametrize("blocked", [set(), "app"])
def test_version_prints_the_package_version_with_or_without_the_extra(blocked):
    done = console("lipnorm-exp", "--version", blocked=app_modules() if blocked else set())
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"lipnorm_exp {lipnorm_exp.__version__}\n"
    assert tuple(map(int, lipnorm_exp.__version__.split("."))) >= (0, 3, 0)


def test_python_m_lipnorm_exp_prints_the_package_version_not_hydras():
    done = subprocess.run(
        [sys.executable, "-m", "lipnorm_exp", "--version"],
        cwd=REPO, env=environment(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"lipnorm_exp {lipnorm_exp.__version__}\n"


def test_a_missing_module_of_the_package_itself_is_a_fault_not_an_extra():
    done = console("lipnorm-exp", blocked={"lipnorm_exp.sweeps"})
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "pip install" not in done.stderr
