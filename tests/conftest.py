"""Shared fixtures: configs composed through Hydra with paths in a temporary folder."""

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from lipnorm_exp.config import register_resolvers
from lipnorm_exp.data import load_task
from lipnorm_exp.data.planetoid import PLANETOID_NAMES
from lipnorm_exp.util.errors import DataNotFoundError

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, a package before Python 3.11 (the dev extra's tomli)
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"
#: the checkout's pyproject.toml, parsed
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())

register_resolvers()

if os.environ.get("PYTEST_XDIST_WORKER"):  # workers share the cores: one thread each
    os.environ["OMP_NUM_THREADS"] = "1"
    torch.set_num_threads(1)


#: what tools keep in the checkout of their own accord (bytecode, pytest's and the linters' caches)
CACHES = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
#: what the checkout held untracked as the session started
UNTRACKED = pytest.StashKey[set[str]]()
#: what the tests left in the checkout that it did not hold before
LEFT = pytest.StashKey[list[str]]()


def untracked() -> set[str] | None:
    """The paths in the checkout that git does not track, a new folder as one, caches aside;
    ``None`` where the checkout is not git's."""
    listed = subprocess.run(
        ["git", "status", "--porcelain", "--ignored=matching", "--untracked-files=normal"],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    if listed.returncode != 0:
        return None
    paths = (line[3:] for line in listed.stdout.splitlines() if line[:2] in ("??", "!!"))
    return {path for path in paths if CACHES.isdisjoint(path.rstrip("/").split("/"))}


def pytest_sessionstart(session: pytest.Session) -> None:
    """Note what the checkout holds untracked as the tests start (once, not in each worker)."""
    before = None if hasattr(session.config, "workerinput") else untracked()
    if before is not None:
        session.config.stash[UNTRACKED] = before


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the session where the tests left files in the checkout: they write under tmp paths."""
    before = session.config.stash.get(UNTRACKED, None)
    left = sorted((untracked() or set()) - before) if before is not None else []
    if left:
        session.config.stash[LEFT] = left
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    """Name what the tests left in the checkout (`pytest_sessionfinish`), if anything."""
    left = config.stash.get(LEFT, [])
    if left:
        terminalreporter.write_sep("=", "the tests wrote into the checkout", red=True)
        terminalreporter.write_line(f"{', '.join(left)}: a test writes under tmp paths only")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with end-to-end runs (``slow``) first, each file's tests in their order.

    The suite's workers take whole files (``--dist loadfile``) in this order: the longest files
    start first and the short ones fill in at the end, so the workers finish together.
    """
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


def assert_reset_parameters_redraws(layer: torch.nn.Module) -> None:
    """``layer.reset_parameters()`` replaces every parameter's values (none keeps a filler)."""
    with torch.no_grad():
        for p in layer.parameters():
            p.fill_(0.123)
    layer.reset_parameters()
    for name, p in layer.named_parameters():
        assert not torch.any(p == 0.123), name


def compose_config(tmp_path: Path, overrides: list[str] = ()) -> DictConfig:
    """The app's config with test paths, CPU, 2 epochs, no progress bar, local logger.

    Personal overrides (``configs/local/default.yaml``) are left out.
    """
    base = [
        f"paths.data_dir={tmp_path / 'data'}",
        f"paths.results_dir={tmp_path / 'runs'}",
        f"paths.log_dir={tmp_path / 'logs'}",
        "device=cpu",
        "train.epochs=2",
        "train.progress=false",
        "logger=none",
        "~local",  # no personal overrides (configs/local/default.yaml) in the tests
    ]
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        return compose("config", overrides=[*base, *overrides])


@pytest.fixture
def make_cfg(tmp_path):
    """``make_cfg(*overrides)`` → a composed config whose files go under ``tmp_path``."""
    return lambda *overrides: compose_config(tmp_path, list(overrides))


def prepared_data(folder: Path) -> Path:
    """``folder/data`` with Cora copied in and processed: runs started at once only read it."""
    cfg = compose_config(folder)
    try:
        load_task(cfg.dataset, cfg.paths, seed=0)
    except DataNotFoundError as error:  # offline, and no LIPNORM_RAW_DIRS
        pytest.skip(f"Cora's raw files: {error}")
    return Path(cfg.paths.data_dir)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """Cora prepared once per test module, shared by the command lines it starts."""
    return prepared_data(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="session")
def planetoid_raw(tmp_path_factory) -> Callable[[str], Path]:
    """``planetoid_raw("cora")`` → a folder holding that dataset's raw Planetoid files.

    They are got the way a run gets them, through the project's own data path: copied from the
    folders ``$LIPNORM_RAW_DIRS`` lists, else downloaded where there is a network (once per
    session). Where neither gives them, the test is skipped with the loader's one-line reason.
    """
    root = tmp_path_factory.mktemp("planetoid")

    def raw_folder(name: str) -> Path:
        cfg = compose_config(root, [f"dataset={name}"])
        try:
            load_task(cfg.dataset, cfg.paths, seed=0)
        except DataNotFoundError as error:
            pytest.skip(f"{name}'s raw files: {error}")
        return Path(cfg.paths.data_dir) / "Planetoid" / PLANETOID_NAMES[name] / "raw"

    return raw_folder
