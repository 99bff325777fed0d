"""The trainer end to end on real data: learning, determinism, best-validation selection."""

import pytest

from lipnorm_exp.config import build_model
from lipnorm_exp.records import schema
from lipnorm_exp.training.launch import run
from lipnorm_exp.training.state import make_optimizer

SMALL = ("model.depth=2", "model.hidden=16", "model.heads=2", "model.dropout=0.0")


def test_gat_lip_learns_cora(make_cfg):
    [record] = run(make_cfg(*SMALL, "train.epochs=30", "train.lr=0.01"))
    history = record["history"]
    assert history[-1]["train_loss"] < 0.5 * history[0]["train_loss"]
    assert record["summary"][schema.BEST_VAL_ACC] > 0.6  # chance is 1/7


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
    assert summary[schema.EPOCHS_RUN] < 200
    assert summary[schema.EPOCHS_RUN] == summary[schema.BEST_EPOCH] + 3


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
    assert record["summary"][schema.BEST_TRAIN_ACC] > 0.45  # chance is 1/4


def test_conv_weight_decay_is_the_graph_layers_own_and_the_weight_decay_the_rest(make_cfg):
    cfg = make_cfg("model=gcnii", "norm=layernorm", "model.depth=3", "train.conv_weight_decay=0.01")
    model = build_model(cfg.model, cfg.norm, 12, 3)
    convs, rest = make_optimizer(model, cfg.train).param_groups
    assert (convs["weight_decay"], rest["weight_decay"]) == (0.01, 5e-4)
    assert convs["params"] == list(model.convs.parameters())
    in_convs = {id(parameter) for parameter in convs["params"]}
    assert rest["params"] == [p for p in model.parameters() if id(p) not in in_convs]
    assert rest["params"]  # the input and output Linears, the LayerNorms
    [one_group] = make_optimizer(model, make_cfg().train).param_groups
    assert one_group["weight_decay"] == 5e-4 and one_group["params"] == list(model.parameters())


def test_a_conv_weight_decay_equal_to_the_weight_decay_trains_as_none_and_another_does_not(
    make_cfg,
):
    losses = {
        value: [
            row["train_loss"]
            for row in run(make_cfg(*SMALL, "train.epochs=4", *value))[0]["history"]
        ]
        for value in ((), ("train.conv_weight_decay=0.0005",), ("train.conv_weight_decay=0.5",))
    }
    assert losses[()] == losses[("train.conv_weight_decay=0.0005",)]
    assert losses[()] != losses[("train.conv_weight_decay=0.5",)]
