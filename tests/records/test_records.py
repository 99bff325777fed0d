"""Run records: one atomic JSON per run, skip when finished, divergence, failure and
interruption recorded without losing a finished record, broken records set aside and redone,
temporary files of killed writers removed, tags added on reuse, one reader for a folder."""

import json
import logging
import math
import os
import platform
import re
import warnings
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

import lipnorm_exp.records.store as store
import lipnorm_exp.training.alone as alone_module
import lipnorm_exp.training.epoch as epoch_module
import lipnorm_exp.training.launch as train_module
import lipnorm_exp.training.member as member_module
import lipnorm_exp.training.together as together_module
from lipnorm_exp.records import (
    COMPLETED,
    DIVERGED,
    FAILED,
    INTERRUPTED,
    RERUN_SUFFIX,
    SUMMARY_KEYS,
    BadRecordError,
    add_tags,
    iter_records,
    portable_paths,
    read_record,
    record_path,
    record_problem,
    run_id,
    schema,
    write_record,
)
from lipnorm_exp.records.numerics import NUMERICS_VERSION
from lipnorm_exp.records.provenance import processor_model
from lipnorm_exp.records.schema import SCHEMA_VERSION, SUMMARY_ACCURACIES, SUMMARY_EPOCHS
from lipnorm_exp.training.checkpoint import CHECKPOINT_DIR
from lipnorm_exp.training.epoch import NonFiniteError, evaluate
from lipnorm_exp.training.launch import launch_records, run
from lipnorm_exp.util.atomic import temp_path
from lipnorm_exp.util.errors import ConfigError

SMALL = ("model.depth=2", "model.hidden=16", "model.heads=2")


REPO = Path(__file__).resolve().parents[2]


#: the one epoch of a :func:`stub` record, as its summary says it
ROW = {"epoch": 1, "val_acc": 0.5, "test_acc": 0.5}


def stub(name: str, status: str = COMPLETED, **fields) -> dict:
    """A minimal valid record; its run id is its config's (``name`` tells stubs apart)."""
    config = {"dataset": {"name": name}, "model": {"name": "x"}, "norm": {"name": "x"}}
    config["train"] = {}
    summary = schema.Summary(
        **dict.fromkeys(SUMMARY_ACCURACIES, 0.5),
        metric="accuracy",
        best_epoch=1,
        epochs_run=1,
        diverged_at_epoch=2 if status == DIVERGED else None,
    )
    return {
        schema.RUN_ID: run_id(config),
        schema.STATUS: status,
        schema.CONFIG: config,
        schema.SUMMARY: summary,
        schema.HISTORY: [dict(ROW)],
        **fields,
    }


ABC, OTHER = stub("abc")[schema.RUN_ID], stub("other")[schema.RUN_ID]
RID = stub("rid")[schema.RUN_ID]


def refuse_constants(name):
    raise ValueError(f"{name} is not JSON")


def test_write_record_is_atomic_and_leaves_no_temp_files(tmp_path):
    write_record(tmp_path, stub("abc", history=[{**ROW, "val_loss": math.nan}]))
    on_disk = json.loads((tmp_path / f"{ABC}.json").read_text(), parse_constant=refuse_constants)
    assert on_disk["history"][0]["val_loss"] is None
    write_record(tmp_path, stub("abc", DIVERGED))
    assert [p.name for p in tmp_path.iterdir()] == [f"{ABC}.json"]
    assert (tmp_path / f"{ABC}.json").stat().st_mode & 0o777 == 0o644
    assert read_record(tmp_path, ABC)["status"] == "diverged"
    assert read_record(tmp_path, "missing") is None


def test_write_record_keeps_the_old_record_when_writing_fails(tmp_path):
    write_record(tmp_path, stub("abc"))
    with pytest.raises(TypeError):
        write_record(tmp_path, stub("abc", error=object()))
    assert read_record(tmp_path, ABC)["status"] == "completed"
    assert [p.name for p in tmp_path.iterdir()] == [f"{ABC}.json"]


def test_record_paths_are_relative_to_the_root_wherever_they_lie():
    paths = {
        "root_dir": "/repo",
        "data_dir": "/repo/data",
        "raw_dirs": ["/repo/../raw/datasets", "/elsewhere/raw"],
        "results_dir": "/tmp/runs",
        "log_dir": "/repo2/logs",
    }
    assert portable_paths(paths) == {
        "root_dir": ".",
        "data_dir": "data",
        "raw_dirs": ["../raw/datasets", "../elsewhere/raw"],
        "results_dir": "../tmp/runs",
        "log_dir": "../repo2/logs",
    }


def test_completed_run_record_holds_config_summary_history_and_versions(make_cfg):
    cfg = make_cfg(*SMALL, "train.epochs=3")
    [record] = run(cfg)
    on_disk = json.loads(record_path(cfg.paths.results_dir, run_id(cfg)).read_text())
    assert on_disk["status"] == "completed" and on_disk["error"] is None
    assert (
        on_disk["config"]["model"]["depth"] == 2 and on_disk["config"]["dataset"]["name"] == "cora"
    )
    assert [row["epoch"] for row in on_disk["history"]] == [1, 2, 3]
    for key in ("train_loss", "train_acc", "val_loss", "val_acc", "test_acc", "time_s"):
        assert all(math.isfinite(row[key]) for row in on_disk["history"])
    summary = on_disk["summary"]
    assert tuple(summary) == SUMMARY_KEYS
    assert set(SUMMARY_KEYS) == {schema.METRIC, *SUMMARY_ACCURACIES, *SUMMARY_EPOCHS}
    best = max(on_disk["history"], key=lambda row: row["val_acc"])
    assert summary[schema.BEST_VAL_ACC] == best["val_acc"]
    assert summary[schema.TEST_ACC_AT_BEST_VAL] == best["test_acc"]
    assert summary[schema.EPOCHS_RUN] == 3 and summary[schema.METRIC] == "accuracy"
    assert set(on_disk["versions"]) == {"python", "torch", "torch_geometric", "lipnorm_exp"}
    assert on_disk["machine"]["device"] == "cpu" and on_disk["machine"]["cpus"] == os.cpu_count()
    assert on_disk["machine"]["processor"] and on_disk["machine"]["processor_model"]
    assert on_disk["machine"]["threads"] == 1  # train.threads=auto on Cora
    assert on_disk[schema.SCHEMA_VERSION_KEY] == SCHEMA_VERSION == 2
    assert on_disk[schema.NUMERICS] == NUMERICS_VERSION
    assert list(on_disk)[:2] == [schema.SCHEMA_VERSION_KEY, schema.RUN_ID]
    assert on_disk["timing"]["total_s"] > 0 and record["run_id"] == on_disk["run_id"]


def test_a_record_of_before_the_versions_reads_as_schema_1_of_unversioned_numerics():
    old = stub("rid")
    assert record_problem(old, RID) is None
    assert (schema.schema_version(old), schema.numerics_version(old)) == (1, None)
    new = stub("rid", schema_version=SCHEMA_VERSION, numerics=NUMERICS_VERSION)
    assert record_problem(new, RID) is None
    assert (schema.schema_version(new), schema.numerics_version(new)) == (2, NUMERICS_VERSION)
    assert record_problem(stub("rid", numerics=None), RID) is None


def test_the_key_lists_are_read_from_the_declarations_and_each_name_is_a_declared_key():
    assert schema.RECORD_FIELDS[:3] == (schema.SCHEMA_VERSION_KEY, schema.RUN_ID, schema.STATUS)
    assert schema.RECORD_FIELDS[-1] == schema.FINISHED_AT and len(schema.RECORD_FIELDS) == 19
    assert schema.RECORD_KEYS == (schema.RUN_ID, schema.STATUS, schema.CONFIG)
    assert SUMMARY_KEYS[0] == schema.METRIC and SUMMARY_KEYS[-1] == schema.DIVERGED_AT_EPOCH
    assert SUMMARY_EPOCHS == (schema.BEST_EPOCH, schema.EPOCHS_RUN, schema.DIVERGED_AT_EPOCH)
    assert schema.STATUSES == (COMPLETED, DIVERGED, FAILED, schema.INTERRUPTED)
    declared = {*schema.RECORD_FIELDS, *SUMMARY_KEYS, *schema.EpochRow.__annotations__}
    named = {value for name, value in vars(schema).items() if name.isupper() and type(value) is str}
    assert named - set(schema.STATUSES) <= declared


def test_the_processor_model_is_cpuinfos_model_name_else_the_platforms(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: X\nmodel name\t: Example CPU @ 2.0GHz\n")
    assert processor_model(cpuinfo) == "Example CPU @ 2.0GHz"
    elsewhere = platform.processor() or platform.machine()
    assert processor_model(tmp_path / "absent") == elsewhere
    cpuinfo.write_text("processor\t: 0\nHardware\t: Y\n")
    assert processor_model(cpuinfo) == elsewhere


def test_finished_run_is_skipped_unless_forced(make_cfg, monkeypatch):
    cfg = make_cfg(*SMALL)
    [first] = run(cfg)
    calls = []
    monkeypatch.setattr(train_module, "fit", lambda *a, **k: calls.append(1) or {})
    [(again, reused)] = launch_records(cfg)
    assert reused and again["run_id"] == first["run_id"] and not calls
    assert again["started_at"] == first["started_at"] and "skipped" not in again
    monkeypatch.undo()
    [(forced, reused)] = launch_records(make_cfg(*SMALL, "force=true"))
    assert not reused and forced["started_at"] != first["started_at"]


def test_non_finite_loss_ends_the_run_as_diverged(make_cfg, monkeypatch):
    real = alone_module.train_epoch
    calls = []

    def explode_on_third(*args, **kwargs):
        calls.append(1)
        loss, grads = real(*args, **kwargs)
        return (math.inf if len(calls) == 3 else loss), grads

    monkeypatch.setattr(alone_module, "train_epoch", explode_on_third)
    cfg = make_cfg(*SMALL, "train.epochs=5")
    [record] = run(cfg)
    assert record["status"] == "diverged"
    assert (
        record["summary"][schema.DIVERGED_AT_EPOCH] == 3
        and record["summary"][schema.EPOCHS_RUN] == 2
    )
    assert record["error"] == "non-finite training loss at epoch 3"
    assert read_record(cfg.paths.results_dir, record["run_id"])["status"] == "diverged"


def test_an_optimiser_step_that_overflows_ends_the_run_as_diverged(make_cfg, caplog):
    with caplog.at_level(logging.WARNING, logger="lipnorm_exp.training.epoch"):
        [record] = run(make_cfg(*SMALL, "train.lr=1e300", "train.epochs=3"))
    assert record["status"] == DIVERGED and record["summary"][schema.DIVERGED_AT_EPOCH] == 1
    assert record["error"] == "the optimiser step overflowed the parameters' dtype at epoch 1"
    assert "the optimiser step overflowed" in caplog.text


def test_a_copy_whose_step_overflows_diverges_and_the_others_train_on(
    make_cfg, monkeypatch, tmp_path
):
    """Seeds trained together: the step of seed 1's copy overflows at epoch 1, seed 0 trains."""
    [alone] = run(make_cfg(*SMALL, "train.epochs=3", f"paths.results_dir={tmp_path / 'alone'}"))
    optimizers = []
    real_init, real_step = together_module.Together.__init__, together_module.step

    def keep_optimizers(self, members, device):
        real_init(self, members, device)
        optimizers.extend(member.state.optimizer for member in members)

    def overflow_seed_1(optimizer):
        if optimizer is optimizers[1]:
            raise epoch_module.StepOverflowError("seed 1's step overflowed")
        real_step(optimizer)

    monkeypatch.setattr(together_module.Together, "__init__", keep_optimizers)
    monkeypatch.setattr(together_module, "step", overflow_seed_1)
    first, second = run(make_cfg(*SMALL, "train.epochs=3", "seed=[0,1]"))
    assert second["status"] == DIVERGED and second["summary"][schema.DIVERGED_AT_EPOCH] == 1
    assert second["error"] == "seed 1's step overflowed at epoch 1"
    assert first["status"] == COMPLETED and len(first["history"]) == 3
    assert first["history"][-1]["train_loss"] == pytest.approx(alone["history"][-1]["train_loss"])


def test_an_epoch_with_a_non_finite_validation_loss_is_never_the_best(make_cfg, monkeypatch):
    real = alone_module.evaluate
    calls = []

    def overflow_second(*args, **kwargs):
        calls.append(1)
        metrics = real(*args, **kwargs)
        return {**metrics, "val_loss": math.inf, "val_acc": 0.99} if len(calls) == 2 else metrics

    monkeypatch.setattr(alone_module, "evaluate", overflow_second)
    [record] = run(make_cfg(*SMALL, "train.epochs=4"))
    assert record["status"] == COMPLETED and record["history"][1]["val_acc"] == 0.99
    assert record[schema.SUMMARY][schema.BEST_EPOCH] != 2
    assert record[schema.SUMMARY][schema.BEST_VAL_ACC] < 0.99


def test_a_model_whose_outputs_turn_nan_keeps_its_last_finite_epoch(make_cfg, monkeypatch):
    """The step of epoch 3 leaves NaN weights while its loss was finite: no accuracy of NaN."""
    real = alone_module.train_epoch
    calls = []

    def poison_third_step(model, *args, **kwargs):
        calls.append(1)
        loss, grads = real(model, *args, **kwargs)
        if len(calls) == 3:
            with torch.no_grad():
                model.output.weight.fill_(math.nan)
        return loss, grads

    monkeypatch.setattr(alone_module, "train_epoch", poison_third_step)
    [record] = run(make_cfg(*SMALL, "train.epochs=5"))
    assert record["status"] == DIVERGED
    assert record["error"] == "the model's outputs are not all finite at epoch 3"
    summary, history = record["summary"], record["history"]
    assert [row["epoch"] for row in history] == [1, 2]
    assert summary[schema.DIVERGED_AT_EPOCH] == 3 and summary[schema.EPOCHS_RUN] == 2
    assert summary[schema.FINAL_TRAIN_ACC] == history[-1]["train_acc"]
    assert summary[schema.BEST_VAL_ACC] == max(row["val_acc"] for row in history)


def test_evaluation_refuses_non_finite_outputs(make_cfg):
    from lipnorm_exp.config import build_model
    from lipnorm_exp.data import load_task

    cfg = make_cfg(*SMALL)
    task = load_task(cfg.dataset, cfg.paths, 0)
    model = build_model(cfg.model, cfg.norm, task.num_features, task.num_outputs)
    assert evaluate(model, task, torch.device("cpu"))["val_acc"] >= 0
    with torch.no_grad():
        model.output.bias[0] = math.inf
    with pytest.raises(NonFiniteError):
        evaluate(model, task, torch.device("cpu"))


def interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def fail(*args, **kwargs):
    raise RuntimeError("out of memory")


def test_an_interrupted_run_is_recorded_as_interrupted_and_run_again(make_cfg, monkeypatch):
    cfg = make_cfg(*SMALL)
    monkeypatch.setattr(alone_module, "train_epoch", interrupt)
    with pytest.raises(KeyboardInterrupt):
        run(cfg)
    record = read_record(cfg.paths.results_dir, run_id(cfg))
    assert record["status"] == INTERRUPTED and record["error"] == "KeyboardInterrupt"
    monkeypatch.undo()
    assert run(cfg)[0]["status"] == COMPLETED  # an interrupted run is not skipped


@pytest.mark.parametrize(("stop", "status"), [(interrupt, INTERRUPTED), (fail, FAILED)])
def test_a_forced_rerun_that_does_not_finish_keeps_the_completed_record(
    make_cfg, monkeypatch, stop, status
):
    cfg = make_cfg(*SMALL, "force=true")
    [first] = run(cfg)
    path = record_path(cfg.paths.results_dir, first["run_id"])
    before = path.read_text()
    monkeypatch.setattr(alone_module, "train_epoch", stop)
    with pytest.raises((KeyboardInterrupt, RuntimeError)):
        run(cfg)
    assert path.read_text() == before
    beside = json.loads(path.with_name(path.name + RERUN_SUFFIX).read_text())
    assert beside["status"] == status and beside["error"]
    assert beside["started_at"] != first["started_at"]
    assert [r["status"] for _, r in iter_records(path.parent)] == [COMPLETED]
    monkeypatch.undo()
    [again] = run(cfg)  # a forced re-run that finishes replaces it
    assert read_record(path.parent, first["run_id"])["started_at"] == again["started_at"]
    assert sorted(p.name for p in path.parent.iterdir() if not p.name.startswith(".")) == [
        path.name
    ]


def _edit(path, change) -> None:
    """Change the stored record at ``path`` by hand (``Infinity`` written as JSON allows)."""
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_bytes(os.urandom(512)),
        lambda path: path.write_text("[1, 2, 3]"),
        lambda path: path.write_text('{"status": "completed"}'),
        lambda path: path.write_text(path.read_text()[:100]),
        lambda path: path.write_text(path.read_text().replace('"summary"', '"summery"')),
        lambda path: (path.unlink(), path.mkdir(), (path / "x").write_text("a folder")),
        lambda path: _edit(path, lambda r: r["config"].update(seed=1)),
        lambda path: _edit(path, lambda r: r["config"]["model"].update(depth=3)),
        lambda path: _edit(path, lambda r: r.update(history="epochs")),
        lambda path: _edit(path, lambda r: r["history"][1].update(val_loss=math.inf)),
        lambda path: _edit(path, lambda r: r.update(status=DIVERGED)),
        lambda path: _edit(path, lambda r: r["summary"].update(best_val_acc=0.999)),
        lambda path: _edit(path, lambda r: r.update(note="added by hand")),
    ],
    ids=[
        "random_bytes",
        "json_list",
        "stub",
        "truncated",
        "no_summary",
        "folder",
        "seed_edited",
        "depth_edited",
        "history_a_string",
        "history_infinity",
        "diverged_without_divergence",
        "summary_not_its_history",
        "extra_key",
    ],  # fmt: skip
)
def test_a_broken_record_is_set_aside_with_a_warning_and_its_run_redone(make_cfg, damage, caplog):
    cfg = make_cfg(*SMALL)
    [first] = run(cfg)
    path = record_path(cfg.paths.results_dir, first["run_id"])
    damage(path)
    broken = sorted(path.parent.iterdir())
    with caplog.at_level(logging.WARNING, logger=store.__name__):
        [(again, reused)] = launch_records(cfg)
    assert re.search(rf"{path.name}: .*; set aside as {path.name}\.broken-", caplog.text)
    assert not reused and again["status"] == COMPLETED
    assert read_record(path.parent, first["run_id"])["started_at"] == again["started_at"]
    (aside,) = path.parent.glob(f"{path.name}.broken-*")
    assert aside.exists() and [p.name for p in broken if p.name.startswith(".")] == [".locks"]
    assert [r["run_id"] for _, r in iter_records(path.parent)] == [first["run_id"]]


def test_read_record_says_what_is_wrong_with_a_record(tmp_path):
    write_record(tmp_path, stub("abc", status="running"))
    with pytest.raises(BadRecordError, match=rf"{ABC}\.json: unknown status 'running'"):
        read_record(tmp_path, ABC)
    write_record(tmp_path, stub("other"), record_path(tmp_path, ABC))
    with pytest.raises(BadRecordError, match=rf"{ABC}\.json: the record of run {OTHER}"):
        read_record(tmp_path, ABC)


def change(record: dict, dotted: str, value) -> dict:
    """``record`` with ``dotted`` (``summary.best_val_acc``) set to ``value``."""
    record = json.loads(json.dumps(record))
    *path, last = dotted.split(".")
    target = record
    for key in path:
        target = target[key]
    target[last] = value
    return record


@pytest.mark.parametrize(
    ("status", "dotted", "value", "problem"),
    [
        (COMPLETED, "summary", {}, "a completed record whose summary has no metric, best_epoch"),
        (COMPLETED, "config", {}, "config.dataset is None, not a mapping"),
        (COMPLETED, "config.model", 3, "config.model is 3, not a mapping"),
        (COMPLETED, "config.norm", {"alpha": 1}, "config.norm.name is None, not a name"),
        (COMPLETED, "config.tags", "a", "config.tags is 'a', not a list of names"),
        (COMPLETED, "summary.best_val_acc", "0.8", "summary.best_val_acc is '0.8', not a number"),
        (
            COMPLETED,
            "summary.test_acc_at_best_val",
            math.nan,
            "test_acc_at_best_val is nan, not a number in [0, 1]",
        ),
        (
            COMPLETED,
            "summary.test_acc_at_best_val",
            7.5,
            "test_acc_at_best_val is 7.5, not a number in [0, 1]",
        ),
        (
            COMPLETED,
            "summary.final_train_acc",
            None,
            "final_train_acc is None, not a number in [0, 1]",
        ),
        (
            COMPLETED,
            "summary.best_train_acc",
            True,
            "best_train_acc is True, not a number in [0, 1]",
        ),
        (
            DIVERGED,
            "summary.best_val_acc",
            -0.1,
            "summary.best_val_acc is -0.1, not a number in [0, 1] or null",
        ),
        (COMPLETED, "summary.epochs_run", 2.5, "summary.epochs_run is 2.5, not an integer >= 0"),
        (COMPLETED, "summary.metric", 1, "summary.metric is 1, not a name"),
        (COMPLETED, "run_id", 7, "run_id is 7, not a name"),
        (COMPLETED, schema.SCHEMA_VERSION_KEY, "2", "schema_version is '2', not an integer >= 1"),
        (COMPLETED, schema.SCHEMA_VERSION_KEY, None, "schema_version is None, not an integer >= 1"),
        (COMPLETED, schema.NUMERICS, 0, "numerics is 0, not an integer >= 1 or null"),
        (COMPLETED, schema.NUMERICS, True, "numerics is True, not an integer >= 1 or null"),
        (COMPLETED, "status", "running", "unknown status 'running' (allowed: completed, "),
        (COMPLETED, schema.MACHINE, "a laptop", "machine is 'a laptop', not an object"),
        (COMPLETED, schema.TIMING, [1.0], "timing is [1.0], not an object"),
        (COMPLETED, schema.HISTORY, None, "a completed record without its history"),
        (DIVERGED, schema.HISTORY, None, "a diverged record without its history"),
        (COMPLETED, schema.FINISHED_AT, 3, "finished_at is 3, not text"),
        (COMPLETED, schema.GIT_COMMIT, ["abc"], "git_commit is ['abc'], not text or null"),
        (COMPLETED, schema.DEVICE, None, "device is None, not text"),
        (COMPLETED, "summary.best_val_accc", 0.5, "its summary holds keys no run writes: best_va"),
        (COMPLETED, schema.RESUMED_AT, [True], "resumed_at is [True], not a list of epoch numbers"),
        (COMPLETED, schema.STOPPED_AFTER_EPOCH, 2.0, "stopped_after_epoch is 2.0, not an integer"),
    ],
)
def test_a_well_formed_but_wrong_record_is_refused_naming_what_failed(
    status, dotted, value, problem
):
    assert record_problem(stub("abc", status)) is None
    found = record_problem(change(stub("abc", status), dotted, value), ABC)
    assert problem in (found or "")


def test_a_finished_record_whose_history_was_removed_is_not_reused():
    record = stub("abc")
    del record[schema.HISTORY]
    assert record_problem(record, ABC) == "a completed record without its history"


def test_records_that_pass_the_checks():
    diverged = stub("abc", DIVERGED)
    diverged["summary"].update(dict.fromkeys((schema.BEST_VAL_ACC, schema.BEST_EPOCH), None))
    assert record_problem(diverged, ABC) is None
    assert record_problem(stub("abc", FAILED, summary=None)) is None
    assert record_problem(stub("abc"), "abd") == f"the record of run {ABC}"
    committed = sorted((REPO / "results" / "runs").glob("*.json"))
    assert committed and not [
        (path.name, problem)
        for path in committed
        if (problem := record_problem(json.loads(path.read_text()), path.stem))
    ]


def test_the_reader_sets_aside_records_that_fail_the_checks_and_counts_them(tmp_path):
    good, other = stub("rid"), stub("fedcba")
    write_record(tmp_path / "a", good)
    write_record(tmp_path / "b", change(good, "summary.test_acc_at_best_val", 7.5))
    write_record(tmp_path / "c", other, tmp_path / "c" / f"{RID}.json")  # another run's record
    (tmp_path / "notes.json").write_text('{"hello": 1}')  # not named as a record: left alone
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = iter_records(tmp_path)
        found = [path.relative_to(tmp_path).as_posix() for path, _ in records]
    assert found == [f"a/{RID}.json"]
    assert [path.parent.name for path in records.set_aside] == ["b", "c"]
    assert all(path.name.startswith(f"{RID}.json.broken-") for path in records.set_aside)
    messages = sorted(str(warning.message) for warning in caught)
    assert (
        "summary.test_acc_at_best_val is 7.5, not a number in [0, 1]; set aside as" in messages[0]
    )
    assert f"the record of run {other['run_id']}; set aside as" in messages[1]
    assert "notes.json: not a run record (no run_id, status, config); skipped" in messages[2]
    assert (tmp_path / "notes.json").exists()


def test_temporary_files_of_writers_that_are_gone_are_removed(make_cfg, tmp_path):
    cfg = make_cfg(*SMALL)
    runs = tmp_path / "runs"
    runs.mkdir()
    ours = temp_path(runs / "mine.json")  # this process is alive: still being written
    dead = temp_path(runs / "abc.json", pid=999999999)  # no such process
    other = runs / ".notes.999999999.0a1b2c3d.tmp"  # another program's: never removed
    for path in (ours, dead, other):
        path.write_text("{")
    checkpoints = runs / CHECKPOINT_DIR
    checkpoints.mkdir()
    temp_path(checkpoints / "abc.pt", pid=999999999).write_bytes(b"half a checkpoint")
    run(cfg)
    assert sorted(p.name for p in runs.glob(".*.tmp")) == sorted([ours.name, other.name])
    assert list(checkpoints.glob(".*.tmp")) == []


def test_an_unwritable_results_folder_stops_the_run_before_any_data_is_read(make_cfg, monkeypatch):
    monkeypatch.setattr(member_module, "load_task", lambda *a, **k: pytest.fail("data read"))
    with pytest.raises(ConfigError, match=r"^paths\.results_dir=/proc/lipnorm_runs is not a "):
        run(make_cfg(*SMALL, "paths.results_dir=/proc/lipnorm_runs"))


def test_an_error_during_training_writes_a_failed_record_and_is_raised(make_cfg, monkeypatch):
    def crash(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(alone_module, "train_epoch", crash)
    cfg = make_cfg(*SMALL)
    with pytest.raises(RuntimeError, match="out of memory"):
        run(cfg)
    record = read_record(cfg.paths.results_dir, run_id(cfg))
    assert record["status"] == "failed" and record["error"] == "RuntimeError: out of memory"
    monkeypatch.undo()
    assert run(cfg)[0]["status"] == "completed"  # a failed run is not skipped


def test_reusing_a_finished_record_adds_the_tags_it_lacks(make_cfg, monkeypatch):
    [first] = run(make_cfg(*SMALL, "tags=[missing_vector]"))
    path = record_path(make_cfg().paths.results_dir, first["run_id"])
    before = json.loads(path.read_text())
    monkeypatch.setattr(train_module, "fit", lambda *a, **k: pytest.fail("trained again"))
    [(again, reused)] = launch_records(make_cfg(*SMALL, "tags=[pubmed_depth,missing_vector]"))
    assert reused and again["config"]["tags"] == ["missing_vector", "pubmed_depth"]
    after = path.read_text()
    on_disk = json.loads(after)
    assert on_disk["config"]["tags"] == ["missing_vector", "pubmed_depth"]
    assert {**on_disk, "config": {**on_disk["config"], "tags": ["missing_vector"]}} == before
    assert [p.name for p in path.parent.glob("*.json")] == [path.name]
    run(make_cfg(*SMALL, "tags=[pubmed_depth]"))  # no new tag: the record stays as it is
    assert path.read_text() == after


def test_add_tags_rereads_the_stored_record_so_no_tag_is_lost(tmp_path):
    record = stub("abc")
    record["config"]["tags"] = ["a"]
    write_record(tmp_path, record)
    stale = json.loads(json.dumps(record))
    add_tags(tmp_path, record, ["b"])
    assert add_tags(tmp_path, stale, ["c"])["config"]["tags"] == ["a", "b", "c"]
    assert read_record(tmp_path, ABC)["config"]["tags"] == ["a", "b", "c"]
    unchanged = read_record(tmp_path, ABC)
    assert add_tags(tmp_path, unchanged, ["c", "a"]) is unchanged
    assert add_tags(tmp_path, {**record, "run_id": "gone"}, ["z"])["config"]["tags"] == ["a"]
    assert not record_path(tmp_path, "gone").exists()


def test_iter_records_reads_every_record_below_a_folder_in_path_order(tmp_path):
    for folder, rid, status in (
        ("b", "r2", DIVERGED),
        ("a/deep", "r1", COMPLETED),
        ("c", "r3", FAILED),
    ):
        write_record(tmp_path / folder, stub(rid, status))
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    (tmp_path / "broken.json").write_text("{")
    with pytest.warns(UserWarning) as caught:
        found = list(iter_records(tmp_path))
    r1, r2, r3 = (stub(name)[schema.RUN_ID] for name in ("r1", "r2", "r3"))
    assert [(path.relative_to(tmp_path).as_posix(), r["run_id"]) for path, r in found] == [
        (f"a/deep/{r1}.json", r1),
        (f"b/{r2}.json", r2),
        (f"c/{r3}.json", r3),
    ]
    messages = sorted(str(warning.message) for warning in caught)
    assert "broken.json: not a run record (not readable as JSON" in messages[0]
    assert "notes.json: not a run record" in messages[1]
    assert list(iter_records(tmp_path / "absent")) == []


def test_a_run_on_the_version_1_paths_computes_version_1_and_others_today_s():
    from lipnorm_exp.records.numerics import VERSION_1, made_by_current_numerics, run_numerics

    gat = {"model": {"name": "gat", "message_path": "gather"}, "dataset": {"name": "cora"}}
    gat["dataset"]["feature_layout"] = "dense"
    assert run_numerics(gat) == VERSION_1
    assert run_numerics({"model": {"name": "gcn"}, "dataset": {"feature_layout": "dense"}}) == 1
    assert run_numerics({"model": {}, "dataset": {}}) == VERSION_1  # made before the keys
    for group, key, fast in (
        ("model", "message_path", "auto"),
        ("dataset", "feature_layout", "auto"),
    ):
        other = {**gat, group: {**gat[group], key: fast}}
        assert run_numerics(other) == NUMERICS_VERSION != VERSION_1
    old = stub("rid", numerics=VERSION_1)
    assert made_by_current_numerics(old, OmegaConf.create(gat))
    assert not made_by_current_numerics(
        old, OmegaConf.create({**gat, "model": {"message_path": "csr"}})
    )
    assert not made_by_current_numerics(stub("rid"), OmegaConf.create(gat))  # unversioned
