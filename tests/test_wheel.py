"""The CLI installed from a wheel runs in any folder: configs come from the package
(``pkg://lipnorm_exp.configs``), data, records and logs go under the working folder."""

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from cli_helpers import REPO, SHARED_DATASETS, environment

#: what a wheel is built from
SOURCES = ("pyproject.toml", "README.md", "configs", "lipnorm_exp")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The python of a virtual environment (system packages visible) with the wheel installed."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(REPO / name, source / name, ignore=ignore)
        else:
            shutil.copy(REPO / name, source / name)
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run([*build, "-w", str(root / "dist"), str(source)], check=True)
    venv.create(root / "venv", system_site_packages=True, with_pip=False)
    python = root / "venv" / "bin" / "python"
    (wheel,) = (root / "dist").glob("*.whl")
    # --ignore-installed: a lipnorm_exp among the system packages must not count as installed
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q"]
    options = ["--no-deps", "--no-index", "--ignore-installed"]
    subprocess.run([*install, *options, str(wheel)], check=True)
    return python


def files(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*") if "__pycache__" not in path.parts}


@pytest.mark.slow
def test_the_wheel_runs_in_an_empty_folder_and_writes_there(installed, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in environment().items() if k != "PYTHONPATH"}
    where = "import lipnorm_exp, os; print(os.path.dirname(lipnorm_exp.__file__))"
    found = subprocess.run(
        [str(installed), "-c", where], cwd=work, env=env, capture_output=True, text=True
    )
    assert found.returncode == 0, found.stderr
    package = Path(found.stdout.strip())
    assert package.is_relative_to(installed.parents[1])  # the wheel's copy, not the checkout
    shipped = files(package)
    args = ["model.depth=1", "train.epochs=1", "train.progress=false", "logger=none"]
    data = [f"paths.data_dir={work / 'data'}", f"paths.raw_dirs=[{SHARED_DATASETS}]"]
    done = subprocess.run(
        [str(installed), "-m", "lipnorm_exp", *args, *data],
        cwd=work, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (record,) = (work / "results" / "runs").glob("*.json")
    assert json.loads(record.read_text())["status"] == "completed"
    assert list((work / "logs" / "runs").iterdir())
    assert (work / "data" / "Planetoid" / "Cora" / "processed").is_dir()
    assert files(package) == shipped
