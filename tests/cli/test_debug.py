"""``+debug=fdr``: a fast dev run of any config through the real command line."""

import json
import sys

import pytest
from cli_helpers import cli


@pytest.mark.slow
def test_a_fast_dev_run_trains_one_epoch_and_keeps_its_record_apart(tmp_path):
    done = cli(
        [sys.executable, "-m", "lipnorm_exp", "+debug=fdr", "model=gt", "train.progress=false"],
        timeout=300,
        cwd=tmp_path,
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
