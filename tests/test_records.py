"""Run records: one atomic JSON per run, skip when finished, divergence and failure recorded,
tags added on reuse, one reader for a folder of records."""

import json
import math
import os

import pytest

import lipnorm_exp.train as train_module
from lipnorm_exp.records import (
    COMPLETED,
    DIVERGED,
    FAILED,
    add_tags,
    iter_records,
    portable_paths,
    read_record,
    record_path,
    run_id,
    write_record,
)
from lipnorm_exp.train import run

SMALL = ("model.depth=2", "model.hidden=16", "model.heads=2")


def test_write_record_is_atomic_and_leaves_no_temp_files(tmp_path):
    write_record(tmp_path, {"run_id": "abc", "status": "completed", "x": [1.0, math.nan]})
    write_record(tmp_path, {"run_id": "abc", "status": "diverged"})
    assert [p.name for p in tmp_path.iterdir()] == ["abc.json"]
    assert (tmp_path / "abc.json").stat().st_mode & 0o777 == 0o644
    assert read_record(tmp_path, "abc")["status"] == "diverged"
    assert read_record(tmp_path, "missing") is None


def test_write_record_keeps_the_old_record_when_writing_fails(tmp_path):
    write_record(tmp_path, {"run_id": "abc", "status": "completed"})
    with pytest.raises(TypeError):
        write_record(tmp_path, {"run_id": "abc", "status": object()})
    assert read_record(tmp_path, "abc")["status"] == "completed"
    assert [p.name for p in tmp_path.iterdir()] == ["abc.json"]


def test_record_paths_are_relative_to_the_root_where_they_lie_under_it():
    paths = {
        "root_dir": "/repo",
        "data_dir": "/repo/data",
        "raw_dirs": ["/repo/../shared/datasets", "/elsewhere/raw"],
        "results_dir": "/tmp/runs",
        "log_dir": "/repo2/logs",
    }
    assert portable_paths(paths) == {
        "root_dir": ".",
        "data_dir": "data",
        "raw_dirs": ["../shared/datasets", "/elsewhere/raw"],
        "results_dir": "/tmp/runs",
        "log_dir": "/repo2/logs",
    }


def test_completed_run_record_holds_config_summary_history_and_versions(make_cfg):
    cfg = make_cfg(*SMALL, "train.epochs=3")
    record = run(cfg)
    on_disk = json.loads(record_path(cfg.paths.results_dir, run_id(cfg)).read_text())
    assert on_disk["status"] == "completed" and on_disk["error"] is None
    assert (
        on_disk["config"]["model"]["depth"] == 2 and on_disk["config"]["dataset"]["name"] == "cora"
    )
    assert [row["epoch"] for row in on_disk["history"]] == [1, 2, 3]
    for key in ("train_loss", "train_acc", "val_loss", "val_acc", "test_acc", "time_s"):
        assert all(math.isfinite(row[key]) for row in on_disk["history"])
    summary = on_disk["summary"]
    best = max(on_disk["history"], key=lambda row: row["val_acc"])
    assert summary["best_val_acc"] == best["val_acc"]
    assert summary["test_acc_at_best_val"] == best["test_acc"]
    assert summary["epochs_run"] == 3 and summary["metric"] == "accuracy"
    assert set(on_disk["versions"]) == {"python", "torch", "torch_geometric", "lipnorm_exp"}
    assert on_disk["machine"]["device"] == "cpu" and on_disk["machine"]["cpus"] == os.cpu_count()
    assert on_disk["machine"]["processor"]
    assert on_disk["timing"]["total_s"] > 0 and record["run_id"] == on_disk["run_id"]


def test_finished_run_is_skipped_unless_forced(make_cfg, monkeypatch):
    cfg = make_cfg(*SMALL)
    first = run(cfg)
    calls = []
    monkeypatch.setattr(train_module, "fit", lambda *a, **k: calls.append(1) or {})
    again = run(cfg)
    assert again["skipped"] and again["run_id"] == first["run_id"] and not calls
    assert again["started_at"] == first["started_at"]
    monkeypatch.undo()
    forced = run(make_cfg(*SMALL, "force=true"))
    assert not forced.get("skipped") and forced["started_at"] != first["started_at"]


def test_non_finite_loss_ends_the_run_as_diverged(make_cfg, monkeypatch):
    real = train_module.train_epoch
    calls = []

    def explode_on_third(*args, **kwargs):
        calls.append(1)
        loss, grads = real(*args, **kwargs)
        return (math.inf if len(calls) == 3 else loss), grads

    monkeypatch.setattr(train_module, "train_epoch", explode_on_third)
    cfg = make_cfg(*SMALL, "train.epochs=5")
    record = run(cfg)
    assert record["status"] == "diverged"
    assert record["summary"]["diverged_at_epoch"] == 3 and record["summary"]["epochs_run"] == 2
    assert "epoch 3" in record["error"]
    assert read_record(cfg.paths.results_dir, record["run_id"])["status"] == "diverged"


def test_an_error_during_training_writes_a_failed_record_and_is_raised(make_cfg, monkeypatch):
    def crash(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(train_module, "train_epoch", crash)
    cfg = make_cfg(*SMALL)
    with pytest.raises(RuntimeError, match="out of memory"):
        run(cfg)
    record = read_record(cfg.paths.results_dir, run_id(cfg))
    assert record["status"] == "failed" and record["error"] == "RuntimeError: out of memory"
    monkeypatch.undo()
    assert run(cfg)["status"] == "completed"  # a failed run is not skipped


def test_reusing_a_finished_record_adds_the_tags_it_lacks(make_cfg, monkeypatch):
    first = run(make_cfg(*SMALL, "tags=[missing_vector]"))
    path = record_path(make_cfg().paths.results_dir, first["run_id"])
    before = json.loads(path.read_text())
    monkeypatch.setattr(train_module, "fit", lambda *a, **k: pytest.fail("trained again"))
    again = run(make_cfg(*SMALL, "tags=[pubmed_depth,missing_vector]"))
    assert again["skipped"] and again["config"]["tags"] == ["missing_vector", "pubmed_depth"]
    after = path.read_text()
    on_disk = json.loads(after)
    assert on_disk["config"]["tags"] == ["missing_vector", "pubmed_depth"]
    assert {**on_disk, "config": {**on_disk["config"], "tags": ["missing_vector"]}} == before
    assert [p.name for p in path.parent.glob("*.json")] == [path.name]
    run(make_cfg(*SMALL, "tags=[pubmed_depth]"))  # no new tag: the record stays as it is
    assert path.read_text() == after


def test_add_tags_rereads_the_stored_record_so_no_tag_is_lost(tmp_path):
    record = {"run_id": "abc", "status": COMPLETED, "config": {"tags": ["a"]}}
    write_record(tmp_path, record)
    stale = json.loads(json.dumps(record))
    add_tags(tmp_path, record, ["b"])
    assert add_tags(tmp_path, stale, ["c"])["config"]["tags"] == ["a", "b", "c"]
    assert read_record(tmp_path, "abc")["config"]["tags"] == ["a", "b", "c"]
    unchanged = read_record(tmp_path, "abc")
    assert add_tags(tmp_path, unchanged, ["c", "a"]) is unchanged
    assert add_tags(tmp_path, {**record, "run_id": "gone"}, ["z"])["config"]["tags"] == ["a"]
    assert not record_path(tmp_path, "gone").exists()


def test_iter_records_reads_every_record_below_a_folder_in_path_order(tmp_path):
    for folder, rid, status in (
        ("b", "r2", DIVERGED),
        ("a/deep", "r1", COMPLETED),
        ("c", "r3", FAILED),
    ):
        write_record(tmp_path / folder, {"run_id": rid, "status": status, "config": {}})
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    (tmp_path / "broken.json").write_text("{")
    with pytest.warns(UserWarning) as caught:
        found = list(iter_records(tmp_path))
    assert [(path.relative_to(tmp_path).as_posix(), r["run_id"]) for path, r in found] == [
        ("a/deep/r1.json", "r1"),
        ("b/r2.json", "r2"),
        ("c/r3.json", "r3"),
    ]
    messages = sorted(str(warning.message) for warning in caught)
    assert "broken.json: not readable as JSON" in messages[0]
    assert "notes.json: not a run record" in messages[1]
    assert list(iter_records(tmp_path / "absent")) == []
