"""The trainer end to end on real data: learning, determinism, best-validation selection."""

import pytest

from lipnorm_exp.train import run

SMALL = ("model.depth=2", "model.hidden=16", "model.heads=2", "model.dropout=0.0")


def test_gat_lip_learns_cora(make_cfg):
    [record] = run(make_cfg(*SMALL, "train.epochs=30", "train.lr=0.01"))
    history = record["history"]
    assert history[-1]["train_loss"] < 0.5 * history[0]["train_loss"]
    assert record["summary"]["best_val_acc"] > 0.6  # chance is 1/7


def test_same_seed_same_history_other_seed_other_history(make_cfg, tmp_path):
    [first] = run(make_cfg(*SMALL, "model.dropout=0.5", "train.epochs=3"))
    [again] = run(make_cfg(*SMALL, "model.dropout=0.5", "train.epochs=3", "force=true"))
    [other] = run(make_cfg(*SMALL, "model.dropout=0.5", "train.epochs=3", "seed=1"))
    losses = [[row["train_loss"] for row in r["history"]] for r in (first, again, other)]
    assert losses[0] == pytest.approx(losses[1], abs=1e-6)
    assert losses[0] != pytest.approx(losses[2], abs=1e-6)


def test_early_stopping_stops_after_patience(make_cfg):
    [record] = run(make_cfg(*SMALL, "train.epochs=200", "train.patience=3", "train.lr=0.05"))
    summary = record["summary"]
    assert summary["epochs_run"] < 200
    assert summary["epochs_run"] == summary["best_epoch"] + 3


def test_missing_vectors_run_on_citeseer(make_cfg):
    [record] = run(
        make_cfg(*SMALL, "dataset=citeseer", "dataset.missing_rate=1.0", "train.epochs=3")
    )
    assert record["status"] == "completed"
    assert record["config"]["dataset"]["missing_rate"] == 1.0


def test_trees_gat_lip_fits_depth_2_under_alon_yahav(make_cfg):
    """dataset=trees' own protocol; 500 passes of the 2000 it takes to fit every tree."""
    cfg = make_cfg(
        "dataset=trees", "dataset.depth=2", "model=gat", "norm=lip",
        "dataset.passes_per_epoch=50", "train.epochs=10",
    )  # fmt: skip
    [record] = run(cfg)
    assert record["config"]["protocol"]["name"] == "alon_yahav"
    history = record["history"]
    assert history[-1]["train_acc"] > history[0]["train_acc"] + 0.2
    assert record["summary"]["best_train_acc"] > 0.45  # chance is 1/4
