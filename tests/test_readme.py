"""README.md's Python examples run as printed, each on its own, in an empty folder."""

import re
import subprocess
import sys

import pytest
from cli_helpers import environment
from conftest import REPO

#: every fenced Python block of the README, in order
BLOCKS = re.findall(r"^```python\n(.*?)^```", (REPO / "README.md").read_text(), re.S | re.M)


def test_the_readme_has_its_python_examples():
    assert len(BLOCKS) >= 2
    assert all("import" in block for block in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{k + 1}" for k in range(len(BLOCKS))])
def test_a_python_block_of_the_readme_runs_on_its_own(block, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", block],
        cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
