"""The Makefile as a user meets it: `make help` prints values, `make install` runs when due."""

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _make(*arguments: str, cwd: Path = REPO) -> str:
    done = subprocess.run(
        ["make", "--no-print-directory", *arguments], cwd=cwd, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_help_prints_values_not_variable_names():
    listing = _make("help")
    assert "$(" not in listing
    assert "write its record to runs" in listing and "records in results/runs" in listing


def test_install_runs_only_where_pyproject_changed_since_the_environment_s_stamp(tmp_path):
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    stamp = tmp_path / "env" / ".lipnorm_exp-installed"
    stamp.parent.mkdir()

    def installs(target: str) -> bool:
        return "pip install" in _make("-n", target, f"INSTALLED={stamp}", cwd=tmp_path)

    targets = ("install", "run", "test")  # `make run` and `make test` install first where due
    assert all(installs(target) for target in targets)  # a new environment: no stamp yet
    stamp.touch()
    os.utime(tmp_path / "pyproject.toml", (0, 0))
    assert not any(installs(target) for target in targets)  # nothing changed since
    os.utime(tmp_path / "pyproject.toml")
    os.utime(stamp, (0, 0))
    assert all(installs(target) for target in targets)  # pyproject.toml changed since
