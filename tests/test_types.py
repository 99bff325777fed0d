"""The package type-checks: mypy, as ``[tool.mypy]`` in pyproject.toml sets it up, finds no error
in any of its modules."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (it comes with the dev extra: pip install -e '.[dev]')",
)
def test_package_type_checks():
    done = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout + done.stderr
    checked = re.search(r"^Success: no issues found in (\d+) source files$", done.stdout, re.M)
    assert checked, done.stdout + done.stderr
    # the configuration names the whole package: every module is checked
    assert int(checked.group(1)) == len(list((ROOT / "lipnorm_exp").rglob("*.py")))
