"""The W&B tracker: offline runs read back from their transaction log, fallbacks, grouping.

W&B writes an offline run as ``wandb/offline-run-*/run-<id>.wandb``, a log of records;
:func:`read_run` reads it through W&B's own reader (``wandb leet inspect --json``) and the
files W&B documents in the run's ``files/`` folder.
"""

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
import wandb
from conftest import CONFIGS
from hydra import compose, initialize_config_dir
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import open_dict, read_write

from lipnorm_exp import tracking
from lipnorm_exp.tracking import WandbTracker, default_mode, make_tracker, run_group, wandb_metrics
from lipnorm_exp.train import run

SMALL = ("model.depth=2", "model.hidden=8", "model.heads=2", "model.dropout=0.5")


@pytest.fixture
def offline_wandb(tmp_path, monkeypatch):
    """W&B writes offline runs under ``tmp_path``, quietly, with no network call."""
    for name, value in {
        "WANDB_MODE": "offline",
        "WANDB_DIR": str(tmp_path),
        "WANDB_SILENT": "true",
        "WANDB_ERROR_REPORTING": "false",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(WandbTracker, "online_failed", False)
    wandb.teardown()  # W&B reads its environment once per process setup
    yield tmp_path / "wandb"
    wandb.teardown()


def read_run(wandb_dir: Path) -> dict:
    """The single offline run under ``wandb_dir``: run, config, history by step, summary, exit code.

    Read by W&B's own reader of its transaction log (``wandb leet inspect --json``: one JSON
    object per record; a summary value that is an object comes as ``<key>.<field>`` entries).
    ``run.finish`` returns before W&B's service process has written the last records of an
    offline run; ``wandb.teardown`` waits for that process to exit, so the log is complete when
    it is read.
    """
    wandb.teardown()
    (path,) = wandb_dir.glob("offline-run-*/run-*.wandb")
    inspect = [sys.executable, "-m", "wandb", "leet", "inspect", str(path), "--json"]
    lines = subprocess.run(inspect, capture_output=True, text=True, check=True).stdout
    out = {"dir": path.parent, "history": {}, "summary": {}, "exit_code": None}
    for record in map(json.loads, lines.splitlines()):
        kind = record["type"]
        if kind == "run":
            out["run"] = record["run"]
            out["config"] = record["run"]["config"]["update"]
        elif kind == "history":
            row = record["history"]["item"]
            out["history"].setdefault(row["_step"], {}).update(row)
        elif kind == "summary":
            out["summary"].update(record["summary"]["update"])
        elif kind == "exit":
            out["exit_code"] = record["exit"].get("exit_code", 0)
    return out


@pytest.fixture
def in_multirun(tmp_path, monkeypatch):
    """Hydra's job state as inside a multirun whose sweep folder is under ``tmp_path``."""
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        cfg = compose("config", [f"paths.log_dir={tmp_path}/logs"], return_hydra_config=True)
    with open_dict(cfg):
        cfg.hydra.mode = RunMode.MULTIRUN
    monkeypatch.setattr(HydraConfig.instance(), "cfg", None)  # restored after the test
    HydraConfig.instance().set_config(cfg)
    return Path(cfg.hydra.sweep.dir).name


def test_offline_run_holds_config_metrics_gradients_heatmap_and_summary(
    make_cfg, tmp_path, offline_wandb, in_multirun
):
    cfg = make_cfg(*SMALL, "logger=wandb", "train.track_gradients=true", "tags=[t1]")
    record = run(cfg)
    logged = read_run(offline_wandb)

    assert logged["run"]["display_name"] == "GAT-Lip cora depth 2 seed 0"
    assert logged["config"]["run_id"] == record["run_id"]
    assert logged["run"]["run_group"] == in_multirun
    assert logged["run"]["tags"] == ["t1"]
    assert logged["config"]["model"]["depth"] == 2 and logged["config"]["train"]["epochs"] == 2
    history = logged["history"]
    for row in record["history"]:
        step = history[row["epoch"]]
        for key, name in (
            ("train_loss", "train/loss"),
            ("val_acc", "val/acc"),
            ("test_acc", "test/acc"),
        ):
            assert step[name] == pytest.approx(row[key])
        for layer in (0, 1):
            name = f"layer_{layer + 1:02d}"
            assert step[f"grad_attn/{name}"] == pytest.approx(row["grad_attn"][layer])
            assert step[f"grad_layer/{name}"] == pytest.approx(row["grad_layer"][layer])
    summary = logged["summary"]
    assert summary["status"] == "completed" and logged["exit_code"] == 0
    assert summary["best_val_acc"] == pytest.approx(record["summary"]["best_val_acc"])
    best = max(row["val_acc"] for row in record["history"])
    assert summary["val/acc"] == {"max": pytest.approx(best)}  # the best epoch, not the last
    assert summary["timing/total_s"] == pytest.approx(record["timing"]["total_s"])
    heatmap = logged["dir"] / "files" / summary["grad_attn/heatmap.path"]
    assert heatmap.read_bytes().startswith(b"\x89PNG")
    assert summary["accuracy_table.nrows"] == 2 * 3  # two epochs × train/val/test

    plain = run(make_cfg(*SMALL, "force=true", f"paths.results_dir={tmp_path / 'plain'}"))
    for key in ("train_loss", "val_loss", "train_acc", "val_acc", "test_acc"):
        assert [row[key] for row in plain["history"]] == [row[key] for row in record["history"]]


def test_no_gradient_heatmap_without_tracked_gradients(make_cfg, offline_wandb):
    run(make_cfg(*SMALL, "logger=wandb", "train.epochs=1"))
    logged = read_run(offline_wandb)
    assert "accuracy_table.path" in logged["summary"]
    assert not any(key.startswith("grad_attn") for key in logged["summary"])
    assert "run_group" not in logged["run"]  # no sweep, no logger.group


def test_failed_online_start_falls_back_to_offline_and_training_completes(
    make_cfg, offline_wandb, monkeypatch, caplog
):
    monkeypatch.setenv("WANDB_MODE", "online")
    real_init, modes = wandb.init, []

    def init(mode=None, **kwargs):
        modes.append(mode)
        if mode == "online":
            raise wandb.errors.CommError("network is unreachable")
        return real_init(mode=mode, **kwargs)

    monkeypatch.setattr(wandb, "init", init)
    with caplog.at_level(logging.WARNING, logger=tracking.__name__):
        record = run(make_cfg(*SMALL, "logger=wandb", "train.epochs=1"))
    assert record["status"] == "completed"
    assert modes == ["online", "offline"]
    assert "network is unreachable" in caplog.text
    assert read_run(offline_wandb)["summary"]["status"] == "completed"
    assert WandbTracker.online_failed  # the next run of this process starts offline at once
    make_tracker(make_cfg("logger=wandb"), "next").finish({"status": "completed"})
    assert modes[-1] == "offline"


def test_logging_errors_are_warnings_and_the_run_still_finishes(
    make_cfg, offline_wandb, monkeypatch, caplog
):
    tracker = make_tracker(make_cfg("logger=wandb"), "abc")

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(tracker.run, "log", broken)
    with caplog.at_level(logging.WARNING, logger=tracking.__name__):
        for epoch in (1, 2):
            tracker.log_epoch({"epoch": epoch, "train_loss": 1.0})
        tracker.finish({"status": "failed", "history": [{"epoch": 1, "train_acc": 0.5}]})
    assert caplog.text.count("disk full") == 1  # one warning, later failures at debug level
    logged = read_run(offline_wandb)
    assert logged["summary"]["status"] == "failed" and logged["exit_code"] == 1


def test_an_offline_start_failure_leaves_a_tracker_that_does_nothing(
    make_cfg, offline_wandb, monkeypatch
):
    def init(**kwargs):
        raise OSError("read-only file system")

    monkeypatch.setattr(wandb, "init", init)
    tracker = make_tracker(make_cfg("logger=wandb"), "abc")
    assert tracker.run is None
    tracker.log_epoch({"epoch": 1, "train_loss": 1.0})
    tracker.finish({"status": "completed", "history": [{"epoch": 1, "train_acc": 0.5}]})


def test_explicit_group_wins_over_the_sweep_folder(make_cfg, offline_wandb, in_multirun):
    tracker = make_tracker(make_cfg("logger=wandb", "logger.group=mine"), "abc")
    tracker.finish({"status": "completed"})
    assert read_run(offline_wandb)["run"]["run_group"] == "mine"


def test_metrics_are_namespaced_by_split_and_layer():
    row = {"epoch": 3, "train_step_loss": 0.9, "train_acc": 0.5, "val_loss": 1.2, "test_acc": 0.4}
    row |= {"lr": 0.01, "time_s": 0.2, "grad_attn": [1.0, 2.0]}
    assert wandb_metrics(row) == {
        "train/step_loss": 0.9,
        "train/acc": 0.5,
        "val/loss": 1.2,
        "test/acc": 0.4,
        "train/lr": 0.01,
        "train/time_s": 0.2,
        "grad_attn/layer_01": 1.0,
        "grad_attn/layer_02": 2.0,
    }


def test_group_is_the_preset_inside_a_preset_sweep(make_cfg, in_multirun):
    assert run_group(make_cfg("logger=wandb")) == in_multirun  # no preset: the sweep folder
    with read_write(HydraConfig.get()), open_dict(HydraConfig.get()):
        HydraConfig.get().runtime.choices["experiment"] = "missing_vector"
    assert run_group(make_cfg("logger=wandb")) == "missing_vector"
    assert run_group(make_cfg("logger=wandb", "logger.group=mine")) == "mine"


def test_no_group_outside_a_multirun(make_cfg, monkeypatch):
    monkeypatch.setattr(HydraConfig.instance(), "cfg", None)
    assert run_group(make_cfg("logger=wandb")) is None


def test_default_mode_is_online_only_with_an_api_key(monkeypatch, tmp_path):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_BASE_URL", raising=False)
    netrc_file = tmp_path / "netrc"
    monkeypatch.setenv("NETRC", str(netrc_file))
    assert default_mode() == "offline"  # no netrc file
    netrc_file.write_text("machine example.org login user password secret\n")
    assert default_mode() == "offline"
    netrc_file.write_text("machine api.wandb.ai login user password secret\n")
    assert default_mode() == "online"
    netrc_file.unlink()
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    assert default_mode() == "online"
