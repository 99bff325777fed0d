"""``lipnorm-exp-verify``: a record trained again with today's code, and what it is judged."""

import json

import pandas as pd
import pytest

from lipnorm_exp.cli.verify import DIFFERENT, IDENTICAL, WITHIN, main, spread
from lipnorm_exp.records import COMPLETED, NUMERICS_VERSION, record_path, schema
from lipnorm_exp.training.launch import run

SMALL = ("model.depth=2", "model.hidden=16", "model.heads=2", "train.epochs=3")


@pytest.fixture
def stored(make_cfg, tmp_path, monkeypatch):
    """One finished record in ``tmp_path/runs``, made here; verification's data in tmp too."""
    monkeypatch.setenv("LIPNORM_DATA_DIR", str(tmp_path / "data"))
    [record] = run(make_cfg(*SMALL))
    return tmp_path / "runs", record


def _verify(runs, out, *arguments):
    return main(["--runs", str(runs), "--out", str(out), *arguments])


def test_a_record_made_by_todays_code_is_identical_and_a_changed_one_is_not(
    stored, tmp_path, capsys
):
    runs, record = stored
    out = tmp_path / "verification.csv"
    assert _verify(runs, out, "--run-id", record["run_id"]) == 0
    [finding] = pd.read_csv(out, dtype={"run_id": str}).to_dict("records")
    assert finding["run_id"] == record["run_id"] and finding["verdict"] == IDENTICAL
    assert finding["threads"] == 1 and finding["epochs"] == 3

    # the record trained again, kept: a record of today's numerics, the same in all but times
    kept = tmp_path / "kept"
    assert _verify(runs, out, "--run-id", record["run_id"], "--again", "--keep", str(kept)) == 0
    remade = json.loads(record_path(kept, record["run_id"]).read_text())
    assert remade[schema.NUMERICS] == NUMERICS_VERSION and remade[schema.STATUS] == COMPLETED
    assert remade[schema.SUMMARY] == record[schema.SUMMARY]
    assert remade[schema.STARTED_AT] != record[schema.STARTED_AT]

    # the same run verified again at the same commit is skipped unless asked
    assert _verify(runs, out, "--run-id", record["run_id"]) == 0
    assert "verified at this commit already" in capsys.readouterr().out

    # a stored record whose second epoch and result differ (as older code's would)
    path = record_path(runs, record["run_id"])
    changed = json.loads(path.read_text())
    changed[schema.HISTORY][1]["val_loss"] += 1e-3
    best = changed[schema.SUMMARY][schema.BEST_EPOCH]
    changed[schema.HISTORY][best - 1]["test_acc"] = 0.01  # the record stays whole and consistent
    changed[schema.SUMMARY][schema.TEST_ACC_AT_BEST_VAL] = 0.01
    path.write_text(json.dumps(changed))
    assert _verify(runs, out, "--run-id", record["run_id"], "--again") == 1
    [finding] = pd.read_csv(out, dtype={"run_id": str}).to_dict("records")  # replaced, not added
    assert finding["verdict"] == DIFFERENT and finding["first_different_epoch"] == min(best, 2)


def test_a_history_that_parts_but_ends_within_the_spread_is_within(stored, tmp_path):
    runs, record = stored
    path = record_path(runs, record["run_id"])
    changed = json.loads(path.read_text())
    changed[schema.HISTORY][2]["train_loss"] *= 1 + 1e-7  # a rounding difference at epoch 3
    path.write_text(json.dumps(changed))
    out = tmp_path / "verification.csv"
    assert _verify(runs, out, "--run-id", record["run_id"]) == 0
    [finding] = pd.read_csv(out, dtype={"run_id": str}).to_dict("records")
    assert finding["verdict"] == WITHIN and finding["first_different_epoch"] == 3


def test_the_spread_is_the_seeds_sample_std_and_at_least_half_a_point():
    assert spread([80.0]) == 0.5
    assert spread([78.0, 80.0, 82.0]) == pytest.approx(2.0)
    assert spread([80.0, 80.1, float("nan"), None]) == 0.5


def test_a_dry_run_trains_nothing_and_an_unknown_run_is_refused_in_one_line(
    stored, tmp_path, capsys
):
    runs, record = stored
    out = tmp_path / "verification.csv"
    assert _verify(runs, out, "--run-id", record["run_id"], "--dry-run") == 0
    assert "1 runs to verify" in capsys.readouterr().out and not out.exists()
    assert _verify(runs, out, "--run-id", "0123456789abcdef") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("lipnorm_exp.verify: error: --run-id 0123456789abcdef: no finished")
