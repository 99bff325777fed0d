"""The Makefile as a user meets it: `make help` prints values, `make install` runs when due."""

import os
import re
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


def test_only_ci_names_a_folder_beside_the_checkout():
    """Tests, scripts, examples and the Makefile get data as a user's run does
    (``LIPNORM_RAW_DIRS``, a download), never from a fixed folder beside the checkout, which a
    fresh clone does not have; only ``.ci/run`` names one, to set ``LIPNORM_RAW_DIRS``."""
    beside = re.compile(r"\.\./" + "shared" + r"|parents?(\[\d\])?\s*/\s*[\"']" + "shared")
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    history = ("results/", "CHANGELOG.md", ".ci/run")  # records and the past say where they ran
    offenders = [
        path
        for path in tracked
        if not path.startswith(history)
        and (REPO / path).is_file()
        and beside.search((REPO / path).read_text(errors="ignore"))
    ]
    assert offenders == []
