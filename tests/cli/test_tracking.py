"""The W&B tracker: offline runs read back from their transaction log, fallbacks, grouping,
names that tell every run of a preset's grid apart.

W&B writes an offline run as ``wandb/offline-run-*/run-<id>.wandb``, a log of records;
:func:`read_runs` reads it through W&B's own reader (``wandb leet inspect --json``) and the
files W&B documents in the run's ``files/`` folder.
"""

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import wandb
from cli_helpers import ERROR_PREFIX, command, environment, start
from conftest import CONFIGS
from hydra import compose, initialize_config_dir
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import OmegaConf, open_dict, read_write

from lipnorm_exp.cli import tracking
from lipnorm_exp.cli.errors import EXIT_USER_ERROR
from lipnorm_exp.cli.tracking import (
    WandbTracker,
    default_mode,
    make_tracker,
    run_group,
    run_name,
    sweep_keys,
    wandb_metrics,
    wandb_run_id,
)
from lipnorm_exp.records import schema
from lipnorm_exp.records.identity import defining_config
from lipnorm_exp.sweeps.plan import job_configs
from lipnorm_exp.sweeps.progress import grid_runs
from lipnorm_exp.training.launch import run
from lipnorm_exp.util.errors import ConfigError

SMALL = ("model.depth=2", "model.hidden=8", "model.heads=2", "model.dropout=0.5")
PRESETS = sorted(path.stem for path in (CONFIGS / "experiment").glob("*.yaml"))


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


def read_runs(wandb_dir: Path) -> list[dict]:
    """The offline runs under ``wandb_dir``: run, config, history by step, summary, exit code.

    Read by W&B's own reader of its transaction log (``wandb leet inspect --json``: one JSON
    object per record; a summary value that is an object comes as ``<key>.<field>`` entries).
    ``run.finish`` returns before W&B's service process has written the last records of an
    offline run; ``wandb.teardown`` waits for that process to exit, so the log is complete when
    it is read.
    """
    wandb.teardown()
    return [read_log(path) for path in sorted(wandb_dir.glob("offline-run-*/run-*.wandb"))]


def read_run(wandb_dir: Path) -> dict:
    """The single offline run under ``wandb_dir`` (:func:`read_runs`)."""
    (logged,) = read_runs(wandb_dir)
    return logged


def read_log(path: Path) -> dict:
    """One run's transaction log, read by ``wandb leet inspect --json`` (:func:`read_runs`)."""
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


def strings(value) -> list[str]:
    """Every string in a nested config (dicts and lists)."""
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return [value] if isinstance(value, str) else []


def assert_no_table(summary: dict) -> None:
    """No W&B table in a summary (a table's entry has ``_type`` ``table-file``)."""
    assert "table-file" not in summary.values()


@pytest.fixture
def in_multirun(tmp_path, monkeypatch):
    """Hydra's job state as inside a multirun whose sweep folder is under ``tmp_path``."""
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        cfg = compose("config", [f"paths.log_dir={tmp_path}/logs"], return_hydra_config=True)
    with open_dict(cfg):
        cfg.hydra.mode = RunMode.MULTIRUN
    sweep_dir = Path(cfg.hydra.sweep.dir)
    sweep_dir.mkdir(parents=True)
    OmegaConf.save(cfg, sweep_dir / "multirun.yaml")  # as Hydra's sweeper does before the jobs
    monkeypatch.setattr(HydraConfig.instance(), "cfg", None)  # restored after the test
    HydraConfig.instance().set_config(cfg)
    return sweep_dir.name


def test_offline_run_holds_config_metrics_gradients_heatmap_and_summary(
    make_cfg, tmp_path, offline_wandb, in_multirun
):
    cfg = make_cfg(*SMALL, "logger=wandb", "train.track_gradients=true", "tags=[t1]")
    [record] = run(cfg, tracker=make_tracker)
    logged = read_run(offline_wandb)

    assert logged["run"]["display_name"] == "GAT-Lip Cora 0% missing depth 2 seed 0"
    assert logged["config"]["run_id"] == record["run_id"]
    assert logged["dir"].name.endswith(f"-{record['run_id']}")  # the W&B run's id
    assert logged["run"]["run_group"] == in_multirun  # a sweep without a preset
    assert logged["run"]["tags"] == ["t1"]
    assert logged["config"]["model"]["depth"] == 2 and logged["config"]["train"]["epochs"] == 2
    # the keys that define the run, as its id hashes them: none of how or where it ran
    assert {key: value for key, value in logged["config"].items() if key != "_wandb"} == {
        **defining_config(cfg),
        "run_id": record["run_id"],
    }
    for key in ("paths", "force", "device", "logger", "tags", "grid", "seeds_per_job"):
        assert key not in logged["config"]
    assert "progress" not in logged["config"]["train"]
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
    assert summary["best/epoch"] == record["summary"][schema.BEST_EPOCH]
    assert summary["best/val/acc"] == pytest.approx(record["summary"][schema.BEST_VAL_ACC])
    assert summary["best/test/acc"] == pytest.approx(record["summary"][schema.TEST_ACC_AT_BEST_VAL])
    assert summary["test/acc"] == pytest.approx(record["history"][-1]["test_acc"])
    assert summary["timing/total_s"] == pytest.approx(record["timing"]["total_s"])
    for key in ("grad_attn", "grad_layer"):  # the attention parameters' and the whole layer's
        heatmap = logged["dir"] / "files" / summary[f"{key}/heatmap.path"]
        assert heatmap.read_bytes().startswith(b"\x89PNG")
    assert_no_table(summary)

    [plain] = run(make_cfg(*SMALL, "force=true", f"paths.results_dir={tmp_path / 'plain'}"))
    for key in ("train_loss", "val_loss", "train_acc", "val_acc", "test_acc"):
        assert [row[key] for row in plain["history"]] == [row[key] for row in record["history"]]


def test_summary_holds_the_best_validation_epoch_under_best_and_the_last_epoch_as_is(
    make_cfg, offline_wandb
):
    tracker = make_tracker(make_cfg("logger=wandb"), "abc")
    rows = [
        {"epoch": 1, "train_acc": 0.5, "val_acc": 0.4, "test_acc": 0.3, "val_loss": 1.5},
        {"epoch": 2, "train_acc": 0.6, "val_acc": 0.7, "test_acc": 0.6, "val_loss": 1.0},
        {"epoch": 3, "train_acc": 0.9, "val_acc": 0.5, "test_acc": 0.4, "val_loss": 1.2},
    ]
    for row in rows:
        tracker.log_epoch(row)
    summary = {schema.METRIC: "accuracy", schema.BEST_EPOCH: 2, schema.BEST_TRAIN_ACC: 0.9}
    summary[schema.EPOCHS_RUN] = 3
    tracker.finish({"status": "completed", "history": rows, "summary": summary})
    logged = read_run(offline_wandb)["summary"]
    best = {key: logged[key] for key in logged if key.startswith("best/")}
    assert best == {
        "best/epoch": 2,
        "best/train/acc": 0.6,
        "best/val/acc": 0.7,
        "best/test/acc": 0.6,
        "best/val/loss": 1.0,
    }
    assert (logged["val/acc"], logged["test/acc"]) == (0.5, 0.4)  # the last epoch's
    assert logged["max/train/acc"] == 0.9 and logged[schema.EPOCHS_RUN] == 3
    assert not any(key in logged for key in (schema.BEST_VAL_ACC, schema.TEST_ACC_AT_BEST_VAL))


def heatmap_steps(logged: dict) -> dict[str, list[int]]:
    """The steps of the history at which each gradient heat map was logged, by its name."""
    steps: dict[str, list[int]] = {}
    for step, row in sorted(logged["history"].items()):
        for name in row:
            if name.endswith("/heatmap._type"):
                steps.setdefault(name.removesuffix("._type"), []).append(step)
    return steps


@pytest.mark.parametrize(("every", "while_training"), [(2, [2, 4]), (0, [])])
def test_heatmaps_are_logged_while_training_every_heatmap_every_epochs_and_at_the_end(
    make_cfg, offline_wandb, every, while_training
):
    overrides = ("logger=wandb", f"logger.heatmap_every={every}", "train.track_gradients=true")
    [record] = run(make_cfg(*SMALL, *overrides, "train.epochs=5"), tracker=make_tracker)
    assert len(record["history"]) == 5
    steps = [*while_training, 5]  # and at the end, at the last epoch's step
    assert heatmap_steps(read_run(offline_wandb)) == {
        "grad_attn/heatmap": steps,
        "grad_layer/heatmap": steps,
    }


def test_no_gradient_heatmap_without_tracked_gradients(make_cfg, offline_wandb):
    run(make_cfg(*SMALL, "logger=wandb", "train.epochs=1"), tracker=make_tracker)
    logged = read_run(offline_wandb)
    assert logged["summary"]["best/epoch"] == 1
    assert not any(key.startswith("grad_") for key in logged["summary"])
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
        [record] = run(make_cfg(*SMALL, "logger=wandb", "train.epochs=1"), tracker=make_tracker)
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


def test_a_run_keeps_its_w_and_b_id_and_a_forced_rerun_gets_its_own(make_cfg):
    """Resumed, a run continues its W&B run (resume="allow"); forced, it starts a new one."""
    plain, forced = make_cfg(*SMALL), make_cfg(*SMALL, "force=true")
    assert wandb_run_id(plain, "0123456789abcdef") == "0123456789abcdef"
    again = wandb_run_id(forced, "0123456789abcdef")
    assert again.startswith("0123456789abcdef-") and len(again) == len("0123456789abcdef") + 16


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


def test_group_is_preset_scale_and_protocol_inside_a_preset_sweep(make_cfg, in_multirun):
    assert run_group(make_cfg("logger=wandb")) == in_multirun  # no preset: the sweep folder
    with read_write(HydraConfig.get()), open_dict(HydraConfig.get()):
        HydraConfig.get().runtime.choices["experiment"] = "missing_vector"
    assert run_group(make_cfg("logger=wandb")) == "missing_vector/quick/standard"
    paper = make_cfg("logger=wandb", "scale=paper", "protocol=published")
    assert run_group(paper) == "missing_vector/paper/published"
    assert run_group(make_cfg("logger=wandb", "logger.group=mine")) == "mine"


def test_a_job_names_the_keys_its_sweep_varies_as_the_saved_sweep_config_says(
    make_cfg, in_multirun
):
    saved = Path(HydraConfig.get().sweep.dir) / "multirun.yaml"
    sweep = OmegaConf.load(saved)
    sweep.hydra.overrides.task = ["model.dropout=0.0,0.5", "seed=0", "model.depth=2,4"]
    OmegaConf.save(sweep, saved)
    cfg = make_cfg("model.dropout=0.5", "model.depth=4")
    name = "GAT-Lip Cora 0% missing depth 4 seed 0"
    assert run_name(cfg, tracking.current_sweep_keys()) == f"{name} model.dropout=0.5"
    saved.unlink()  # a sweeper that saves no config: the named keys only, and no error
    assert run_name(cfg, tracking.current_sweep_keys()) == name


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


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [
        *(
            pytest.param(preset, (f"scale={scale}",), id=f"{preset}-{scale}")
            for preset in PRESETS
            for scale in ("quick", "paper")
        ),
        # lr, hidden, heads and dropout swept too
        pytest.param("gradients", ("+search=supplementary",), id="gradients-search"),
    ],
)
def test_every_run_of_a_preset_grid_has_its_own_name(preset, overrides):
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        sweep = compose("config", [f"+experiment={preset}", *overrides], return_hydra_config=True)
        keys = sweep_keys(sweep.hydra)
        names = [run_name(job, keys) for job in job_configs(sweep)]
    assert len(set(names)) == len(names) == grid_runs(sweep.hydra)


@pytest.mark.slow  # through the CLI
def test_a_preset_sweep_names_groups_and_types_its_runs_and_shares_no_local_path(
    tmp_path, data_dir
):
    overrides = (
        "+experiment=missing_vector",  # 0% and 100% missing vectors
        "grid.quick.methods=gat",
        "grid.quick.depths=1",
        "grid.quick.epochs=2",
        "model.hidden=8",
        "model.heads=1",
        "model.dropout=0.0,0.5",  # swept on the command line
        "logger=wandb",
    )
    env = environment(WANDB_MODE="offline", WANDB_DIR=str(tmp_path))
    process = start(command(tmp_path, data_dir, *overrides), env)
    _, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    logged = read_runs(tmp_path / "wandb")
    assert sorted(run["run"]["display_name"] for run in logged) == [
        f"GAT Cora {missing} missing depth 1 seed 0 model.dropout={dropout}"
        for missing in ("0%", "100%")
        for dropout in ("0.0", "0.5")
    ]
    for one in logged:
        assert one["run"]["run_group"] == "missing_vector/quick/standard"
        assert one["run"]["job_type"] == "missing_vector"
        assert not any(os.path.isabs(text) for text in strings(one["config"]))
        assert one["summary"]["best/val/acc"] > 0


def test_run_without_a_tracker_refuses_a_logger_in_one_line_naming_the_fix(make_cfg, tmp_path):
    results = tmp_path / "runs"
    cfg = make_cfg(*SMALL, "logger=wandb", "train.epochs=1", f"paths.results_dir={results}")
    with pytest.raises(ConfigError, match=r"^logger\.name=wandb needs its tracker: call run\("):
        run(cfg)
    assert not results.exists()  # refused before the run's folder, lock or data


@pytest.mark.slow  # through the CLI
def test_logger_wandb_without_the_package_is_refused_in_one_line_before_anything_is_made(
    tmp_path,
):
    """A run and a sweep: one line naming the package to install, no folder, no data."""
    no_wandb = tmp_path / "no_wandb"
    no_wandb.mkdir()  # an environment without wandb: its import fails, as if not installed
    (no_wandb / "sitecustomize.py").write_text('import sys\nsys.modules["wandb"] = None\n')
    env = environment()
    env["PYTHONPATH"] = os.pathsep.join((str(no_wandb), env["PYTHONPATH"]))
    cases = {"run": (), "sweep": ("--multirun", "seed=0,1")}
    processes = {
        name: start(command(tmp_path / name, tmp_path / name / "data", "logger=wandb", *extra), env)
        for name, extra in cases.items()
    }
    for name, process in processes.items():
        _, err = process.communicate(timeout=300)
        assert process.returncode == EXIT_USER_ERROR, err
        assert err.splitlines() == [
            f"{ERROR_PREFIX}logger=wandb needs the wandb package: pip install "
            "'lipnorm_exp[wandb]' (or logger=none)"
        ]
        assert not (tmp_path / name).exists()  # no records, logs or data folder
