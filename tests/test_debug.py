"""``+debug=fdr``: a fast dev run of any config through the real command line."""

import json
import subprocess
import sys

import pytest
from cli_helpers import environment


@pytest.mark.slow
def test_a_fast_dev_run_trains_one_epoch_and_keeps_its_record_apart(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "lipnorm_exp", "+debug=fdr", "model=gt", "train.progress=false"],
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = (tmp_path / "debug" / "runs").glob("*.json")
    record = json.loads(path.read_text())
    assert record["status"] == "completed" and len(record["history"]) == 1
    config = record["config"]
    assert (config["model"]["name"], config["model"]["depth"], config["model"]["hidden"]) == (
        "gt",
        2,
        8,
    )
    assert not (tmp_path / "results").exists()
