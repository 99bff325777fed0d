"""The wheel as a user installs it: ``pip install "lipnorm_exp[app]"`` into a fresh virtual
environment, every dependency resolved from the package index as the wheel declares it, then its
console scripts in an empty folder: a run on Cora writes there and nowhere else, the ``--help``
of ``lipnorm-exp``, ``lipnorm-exp-report`` and ``lipnorm-exp-merge``, and the shell completion
of ``lipnorm-exp``.

The environment sees none of this interpreter's packages but torch (and what torch requires),
lent through a ``.pth`` file and pinned to this interpreter's version, so that pip never fetches
another torch build; what the wheel's extras forget to declare is missing there.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from cli_helpers import REPO, environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import lipnorm_exp
from lipnorm_exp.config import preset_names, preset_path
from lipnorm_exp.config.help import preset_summary

pytestmark = pytest.mark.slow

#: what a wheel is built from
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "configs", "hydra_plugins", "lipnorm_exp")
#: the one distribution lent to the environment, with what it requires
LENT = "torch"


def required_closure(name: str) -> list[metadata.Distribution]:
    """The installed distribution ``name`` and every one it requires, transitively."""
    found: dict[str, metadata.Distribution] = {}
    todo = [name]
    while todo:
        dist = metadata.distribution(todo.pop())
        key = canonicalize_name(dist.metadata["Name"])
        if key not in found:
            found[key] = dist
            requirements = (Requirement(line) for line in dist.requires or ())
            todo += [
                r.name for r in requirements if not r.marker or r.marker.evaluate({"extra": ""})
            ]
    return list(found.values())


def lend(name: str, folder: Path) -> None:
    """Link the top-level files and folders of ``name`` and what it requires into ``folder``."""
    folder.mkdir()
    for dist in required_closure(name):
        tops = {file.parts[0] for file in dist.files if file.parts[0] not in ("..", "__pycache__")}
        for top in tops:
            link = folder / top
            if not link.exists():  # a namespace folder shared by several distributions
                link.symlink_to(dist.locate_file(top))


def build_wheel(root: Path) -> Path:
    """The wheel of this checkout, built as the README says (``pip wheel --no-deps``)."""
    source = root / "source"
    source.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy(REPO / name, source / name)
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(root / "dist")]
    subprocess.run([*build, str(source)], check=True)
    (wheel,) = (root / "dist").glob("*.whl")
    return wheel


def install(root: Path, extras: str) -> Path:
    """The ``bin`` folder of a fresh virtual environment with the wheel installed with ``extras``.

    ``extras`` is what follows the wheel's path in the requirement (``[app]``, or ``""``).
    """
    wheel = build_wheel(root)
    env = root / "venv"
    venv.create(env, with_pip=False)
    lend(LENT, root / "lent")
    site = sysconfig.get_path("purelib", vars={"base": str(env), "platbase": str(env)})
    (Path(site) / "lent.pth").write_text(f"{root / 'lent'}\n")
    pinned = root / "constraints.txt"
    pinned.write_text(f"{LENT}=={metadata.version(LENT)}\n")
    pip = [sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install"]
    options = ["-q", "--no-compile", "--constraint", str(pinned)]
    subprocess.run([*pip, *options, f"{wheel}{extras}"], check=True)
    return env / "bin"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The ``bin`` folder of a fresh virtual environment with the wheel installed with ``[app]``."""
    return install(tmp_path_factory.mktemp("wheel"), "[app]")


@pytest.fixture(scope="module")
def library_installed(tmp_path_factory) -> Path:
    """The same with the wheel alone: the layers' library, no extra."""
    return install(tmp_path_factory.mktemp("library"), "")


def test_the_wheel_ships_the_license_and_the_version(tmp_path):
    with zipfile.ZipFile(build_wheel(tmp_path)) as wheel:
        names = wheel.namelist()
        (license_file,) = [name for name in names if name.endswith(".dist-info/licenses/LICENSE")]
        assert wheel.read(license_file).decode().startswith("MIT License")
        (meta,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        assert f"Version: {lipnorm_exp.__version__}\n" in wheel.read(meta).decode()


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """A command with this test's environment, less the checkout on the path."""
    base = {k: v for k, v in environment().items() if k != "PYTHONPATH"}
    return subprocess.run(
        args, cwd=cwd, env={**base, **env}, capture_output=True, text=True, timeout=300
    )


def files(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*") if "__pycache__" not in path.parts}


def test_lipnorm_exp_trains_on_cora_in_an_empty_folder_and_writes_only_there(installed, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    where = "import lipnorm_exp, os; print(os.path.dirname(lipnorm_exp.__file__))"
    found = run([str(installed / "python"), "-c", where], work)
    assert found.returncode == 0, found.stderr
    package = Path(found.stdout.strip())
    assert package.is_relative_to(installed.parent)  # the wheel's copy, not the checkout
    shipped = files(package)
    args = ["model.depth=1", "train.epochs=1", "train.progress=false", "logger=none"]
    done = run([str(installed / "lipnorm-exp"), *args, f"paths.data_dir={work / 'data'}"], work)
    assert done.returncode == 0, done.stderr
    (record,) = (work / "results" / "runs").glob("*.json")
    assert json.loads(record.read_text())["status"] == "completed"
    assert list((work / "logs" / "runs").iterdir())
    assert (work / "data" / "Planetoid" / "Cora" / "processed").is_dir()
    assert files(package) == shipped


def test_help_names_the_presets_the_config_groups_and_the_documentation(installed, tmp_path):
    shown = run([str(installed / "lipnorm-exp"), "--help"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "powered by Hydra" not in shown.stdout
    for preset in preset_names():
        line = rf"^  {preset} +{re.escape(preset_summary(preset_path(preset)))}$"
        assert re.search(line, shown.stdout, re.MULTILINE), preset
    for group in ("dataset", "model", "norm", "protocol", "experiment", "ablation", "method"):
        assert f"\n{group}: " in shown.stdout
    assert "\nmodel: gat, gatv2, gcn, gcnii, ggnn, gin, gt\n" in shown.stdout
    assert "_base" not in shown.stdout  # shared keys (configs/model_base) are not options
    assert "documentation\n(docs/ of the lipnorm_exp repository; make docs)" in shown.stdout
    report = run([str(installed / "lipnorm-exp-report"), "--help"], tmp_path)
    assert report.returncode == 0 and "--runs" in report.stdout, report.stderr
    merge = run([str(installed / "lipnorm-exp-merge"), "--help"], tmp_path)
    assert merge.returncode == 0 and "--prefer" in merge.stdout, merge.stderr


def test_bash_completes_the_keys_and_options_of_lipnorm_exp(installed, tmp_path):
    complete = (
        'eval "$(lipnorm-exp -sc install=bash)"; '
        'for COMP_LINE in "lipnorm-exp mod" "lipnorm-exp +experiment=miss"; do '
        "COMP_POINT=${#COMP_LINE}; COMP_CWORD=1; hydra_bash_completion; "
        'printf "%s\\n" "${COMPREPLY[@]}"; done'
    )
    path = f"{installed}{os.pathsep}{os.environ['PATH']}"
    done = run(["bash", "-c", complete], tmp_path, PATH=path)
    assert done.returncode == 0, done.stderr
    assert {"model=", "+experiment=missing_vector"} <= set(done.stdout.split()), done.stdout


def test_hydra_finds_the_slurm_launcher_of_the_installed_wheel_without_the_project(
    installed, tmp_path
):
    found = (
        "import sys; from hydra.core.plugins import Plugins; "
        "from hydra.plugins.launcher import Launcher; "
        "print([f'{c.__module__}.{c.__name__}' for c in Plugins.instance().discover(Launcher)]); "
        "print('lipnorm_exp' in sys.modules, 'torch' in sys.modules)"
    )
    done = run([str(installed / "python"), "-c", found], tmp_path)
    assert done.returncode == 0, done.stderr
    launchers, imported = done.stdout.strip().splitlines()
    assert "hydra_plugins.lipnorm_exp_launcher.slurm_launcher.SlurmLauncher" in launchers
    assert imported == "False False"  # another Hydra app's start imports neither


def test_the_library_alone_trains_a_layer_and_its_commands_name_the_app_extra(
    library_installed, tmp_path
):
    python = str(library_installed / "python")
    layer = (
        "import torch; from lipnorm_exp.nn import GATLayer, GATLipschitzNorm; "
        "edges = torch.tensor([[0, 1, 2], [1, 2, 0]]); "
        "out = GATLayer(4, 2, heads=2, norm=GATLipschitzNorm())(torch.randn(3, 4), edges); "
        "out.sum().backward(); print(tuple(out.shape))"
    )
    trained = run([python, "-c", layer], tmp_path)
    assert trained.returncode == 0 and trained.stdout == "(3, 4)\n", trained.stderr
    absent = run([python, "-c", "import hydra"], tmp_path)
    assert absent.returncode == 1  # the app extra's packages are not there
    for command in ("lipnorm-exp", "lipnorm-exp-report", "lipnorm-exp-merge", "lipnorm-exp-verify"):
        done = run([str(library_installed / command), "--help"], tmp_path)
        assert done.returncode == 2 and done.stdout == "", done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"{command}: error: needs the Python module "), line
        assert line.endswith(", of the 'app' extra: pip install 'lipnorm_exp[app]'"), line
    as_module = run([python, "-m", "lipnorm_exp", "--help"], tmp_path)  # the same command
    assert as_module.returncode == 2 and as_module.stdout == "", as_module.stderr
    assert as_module.stderr.startswith("lipnorm-exp: error: needs the Python module ")
    version = run([str(library_installed / "lipnorm-exp"), "--version"], tmp_path)
    assert version.returncode == 0, version.stderr
    assert version.stdout == f"lipnorm_exp {lipnorm_exp.__version__}\n"
