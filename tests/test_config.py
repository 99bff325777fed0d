"""Config composition, validation messages and run hashing."""

import pytest
from conftest import CONFIGS, REPO
from omegaconf import OmegaConf, open_dict

from lipnorm_exp.config import validate
from lipnorm_exp.errors import ConfigError
from lipnorm_exp.records import (
    defining_config,
    iter_records,
    portable_paths,
    run_id,
    setting_key,
)

GROUPS = ("dataset", "model", "norm", "train", "logger", "paths", "method")
ATTENTION = ("gat", "gatv2", "gt")


def options(group):
    return sorted(p.stem for p in (CONFIGS / group).glob("*.yaml"))


@pytest.mark.parametrize("group", GROUPS)
def test_every_group_option_composes(make_cfg, group):
    for option in options(group):
        prefix = "+" if group == "method" else ""
        cfg = make_cfg(f"{prefix}{group}={option}")
        if group in ("dataset", "model", "norm"):
            assert cfg[group].name == option
        if group == "method":
            validate(cfg)


@pytest.mark.parametrize("model", options("model"))
@pytest.mark.parametrize("norm", options("norm"))
def test_model_norm_matrix_validates_or_refuses_lip(make_cfg, model, norm):
    cfg = make_cfg(f"model={model}", f"norm={norm}")
    if norm == "lip" and model not in ATTENTION:
        with pytest.raises(
            ConfigError, match=rf"norm=lip needs an attention model; model.name={model}"
        ):
            validate(cfg)
    else:
        validate(cfg)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["dataset.name=imagenet"], r"dataset.name: unknown value 'imagenet'; allowed: .*cora"),
        (["model.name=mlp"], r"model.name: unknown value 'mlp'; allowed: .*gat"),
        (["norm.name=batchnorm"], r"norm.name: unknown value 'batchnorm'; allowed: .*lip"),
        (["dataset.missing_rate=1.5"], r"dataset.missing_rate must be in \[0, 1\], got 1.5"),
        (["dataset.missing_rate=-0.1"], r"dataset.missing_rate must be in \[0, 1\], got -0.1"),
        (["model.depth=0"], r"model.depth must be an integer >= 1, got 0"),
        (["model.heads=0"], r"model.heads must be an integer >= 1, got 0"),
        (
            ["model.hidden=60", "model.heads=8"],
            r"model.hidden=60 must be a multiple of model.heads=8",
        ),
        (["model.dropout=1.0"], r"model.dropout must be in \[0, 1\), got 1.0"),
        (
            ["model=gcn", "norm=lip"],
            r"norm=lip needs an attention model.*allowed with lip: gat, gatv2, gt",
        ),
        (
            ["model=gcnii", "norm=none", "model.residual=true"],
            r"model.residual=true is not allowed for gcnii",
        ),
        (
            ["model=gcnii", "norm=none", "model.alpha=2"],
            r"model.alpha must be in \[0, 1\] for gcnii",
        ),
        (
            ["model=gatv2", "norm.variant=published"],
            r"norm.variant=published exists for gat and gt only",
        ),
        (["train.epochs=0"], r"train.epochs must be >= 1, got 0"),
        (["train.lipschitz_every=0"], r"train.lipschitz_every must be >= 1, got 0"),
        (["scale=huge"], r"scale must be quick or paper, got huge"),
        (["model.head_channels=0"], r"model.head_channels must be null or an integer >= 1"),
        (["model.input_width=0"], r"model.input_width must be null or an integer >= 1, got 0"),
        (["model=ggnn", "norm=none", "model.input_width=128"], r"model.input_width=128 must be"),
        (["model=gcnii", "norm=none", "model.input_width=32"], r"model.input_width=32 is not"),
        (["train.scheduler=cosine"], r"train.scheduler must be none or plateau, got cosine"),
        (["train.scheduler_factor=1.5"], r"train.scheduler_factor must be in \(0, 1\)"),
        (["model.activation=tanh"], r"model.activation must be one of elu, relu, none, got tanh"),
        (["model.post_layernorm=1"], r"model.post_layernorm must be true or false, got 1"),
        (["train.scheduler_metric=loss"], r"train.scheduler_metric must be one of val_loss, "),
        (["train.patience_metric=val_loss"], r"train.patience_metric must be one of val_acc, tr"),
    ],
)
def test_invalid_values_give_one_line_naming_the_key(make_cfg, overrides, message):
    with pytest.raises(ConfigError, match=message) as error:
        validate(make_cfg(*overrides))
    assert "\n" not in str(error.value)


def test_run_id_is_stable_and_ignores_non_defining_keys(make_cfg, tmp_path):
    cfg = make_cfg()
    same = make_cfg("force=true", "train.progress=true", "tags=[x]", "logger=wandb", "device=cuda")
    with open_dict(same):
        same.paths.results_dir = str(tmp_path / "elsewhere")
    assert run_id(cfg) == run_id(same)
    assert len(run_id(cfg)) == 16
    assert "paths" not in defining_config(cfg) and "progress" not in defining_config(cfg)["train"]


@pytest.mark.parametrize(
    "override",
    ["seed=1", "model.depth=3", "norm=none", "dataset.missing_rate=1.0", "norm.variant=published"],
)
def test_run_id_changes_with_what_defines_a_run(make_cfg, override):
    assert run_id(make_cfg()) != run_id(make_cfg(override))


def test_a_record_config_hashes_as_the_config_it_was_made_from(make_cfg):
    cfg = make_cfg("model.depth=3", "tags=[depth]")
    config = OmegaConf.to_container(cfg, resolve=True)
    config["paths"] = portable_paths(config["paths"])
    assert run_id(config) == run_id(cfg)


def test_committed_records_are_named_by_the_hash_of_their_config():
    found = [record for _, record in iter_records(REPO / "results" / "runs")]
    assert found
    assert [r["run_id"] for r in found] == [run_id(r["config"]) for r in found]


TRACKING = (
    "train.track_gradients=true",
    "train.estimate_lipschitz=true",
    "train.lipschitz_every=5",
)


def test_a_setting_is_what_defines_a_run_but_its_seed(make_cfg):
    base = make_cfg()
    assert setting_key(make_cfg("seed=3")) == setting_key(base)
    assert setting_key(make_cfg("tags=[x]", "force=true", "train.progress=true")) == setting_key(
        base
    )
    for override in (*TRACKING, "model.depth=3", "protocol=published"):
        assert setting_key(make_cfg(override)) != setting_key(base), override
        assert run_id(make_cfg(override)) != run_id(base), override


def test_trees_gives_the_model_depth_plus_one_layers_of_width_32(make_cfg):
    cfg = make_cfg("dataset=trees", "dataset.depth=5", "model=gcn", "norm=none")
    assert cfg.model.depth == 6 and cfg.model.hidden == 32
    assert make_cfg("dataset=trees", "dataset.depth=4", "model.depth=2").model.depth == 2
