"""Config composition, the schema and its one-line messages, and run hashing."""

import inspect
import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import pytest
import torch
from cli_helpers import cli
from conftest import CONFIGS, REPO
from omegaconf import DictConfig, OmegaConf, open_dict

from lipnorm_exp.config import build_model, schema, validate
from lipnorm_exp.config.capacity import device_memory, parameter_count
from lipnorm_exp.config.rules import given_keys_are_read
from lipnorm_exp.data import DATASETS
from lipnorm_exp.models import MODELS
from lipnorm_exp.models.attention import AttentionGNN
from lipnorm_exp.models.base import DepthwiseGNN
from lipnorm_exp.models.gin import GIN
from lipnorm_exp.models.norms import NORMS
from lipnorm_exp.records import (
    defining_config,
    iter_records,
    portable_paths,
    run_id,
    setting_key,
)
from lipnorm_exp.records.added_keys import with_added_keys
from lipnorm_exp.util.constraints import AtLeast, Between, describe, fits, show
from lipnorm_exp.util.errors import ConfigError

GROUPS = ("dataset", "model", "norm", "train", "logger", "paths", "method")
ATTENTION = ("gat", "gatv2", "gt")


def options(group):
    return sorted(p.stem for p in (CONFIGS / group).glob("*.yaml"))


@pytest.mark.parametrize("group", GROUPS)
def test_every_group_option_composes_and_validates(make_cfg, group):
    for option in options(group):
        prefix = "+" if group == "method" else ""
        cfg = make_cfg(f"{prefix}{group}={option}", *(["norm=none"] if group == "model" else []))
        if group in ("dataset", "model", "norm"):
            assert cfg[group].name == option
        validate(cfg)


def test_the_schema_has_one_entry_per_registered_option():
    assert sorted(schema.DATASETS) == sorted(DATASETS) == options("dataset")
    assert sorted(schema.MODELS) == sorted(MODELS) == options("model")
    assert sorted(schema.NORMS) == sorted(NORMS) == options("norm")
    assert sorted(schema.LOGGERS) == options("logger")


@pytest.mark.parametrize("model", options("model"))
def test_a_model_option_composes_to_exactly_the_keys_its_schema_requires(make_cfg, model):
    cfg = make_cfg(f"model={model}", "norm=none")
    composed = set(cfg.model)
    required = {
        name
        for name, field in schema.MODELS[model].__dataclass_fields__.items()
        if "MAY_BE_ABSENT" not in repr(field.type)
    }
    assert composed == required


def test_every_committed_record_config_passes_the_schema():
    configs = [record["config"] for _, record in iter_records(REPO / "results" / "runs")]
    assert configs
    for config in configs:  # with the keys added since it was made
        validate(with_added_keys(OmegaConf.create(config)))


@pytest.mark.parametrize(
    ("annotation", "value", "ok"),
    [
        (bool, True, True),
        (bool, "no", False),
        (bool, 1, False),
        (int, True, False),
        (int, 3, True),
        (int, 3.0, False),
        (float, 3, True),
        (float, False, False),
        (Annotated[int, AtLeast(1)] | None, None, True),
        (Annotated[int, AtLeast(1)] | None, 0, False),
        (list[Annotated[int, AtLeast(-1)]], [10, -1], True),
        (list[Annotated[int, AtLeast(-1)]], [10, "a"], False),
        (Annotated[float, Between(0, 1, open_high=True)], 1.0, False),
    ],
)
def test_values_are_checked_as_they_are_never_converted(annotation, value, ok):
    assert fits(annotation, value) is ok


def test_descriptions_say_what_is_allowed_and_values_show_their_wrong_kind():
    assert describe(Annotated[int, AtLeast(1)] | None) == "null or an integer >= 1"
    assert describe(Annotated[float, Between(0, 1, open_low=True)]) == "a finite number in (0, 1]"
    assert show("abc", int) == "abc (a string)" and show(True, int) == "true (a boolean)"
    assert show(0, Annotated[int, AtLeast(1)]) == "0" and show(None) == "null"


#: command-line values of the wrong type, unknown keys and the like: (overrides, the message)
BAD_VALUES = [
    (["model.depth=abc"], r"^model\.depth must be an integer >= 1, got abc \(a string\)$"),
    (
        ["seed=abc"],
        r"^seed must be an integer in \[0, 4294967295\] or a list \(each item an integer in "
        r"\[0, 4294967295\]\), got abc \(a string\)$",
    ),
    (["train.lr=abc"], r"^train\.lr must be a finite number > 0, got abc \(a string\)$"),
    (
        ["dataset.missing_rate=abc"],
        r"^dataset\.missing_rate must be a finite number in \[0, 1\], got abc",
    ),
    (["model.residual=no"], r"^model\.residual must be true or false, got no \(a string\)$"),
    (["model.depth=true"], r"^model\.depth must be an integer >= 1, got true \(a boolean\)$"),
    (["+foo=1"], r"^foo=1 is not a key of the config; allowed: ablation, dataset, device, "),
    (["device=tpu"], r"^device must be auto, cpu, cuda or cuda:<index>, got tpu$"),
    (["norm.alpha=abc"], r"^norm\.alpha must be a finite number > 0, got abc \(a string\)$"),
    (["train.epochs=1.5"], r"^train\.epochs must be an integer >= 1, got 1\.5 \(a number\)$"),
    (["model=gcn", "norm=none", "+model.beta=1"], r"^model\.beta=1 is not a key of model gcn; "),
    (["+protocol.foo=1"], r"^protocol\.foo=1 is not a key of protocol; allowed: batch_size_per_"),
    (["+dataset.depth=3"], r"^dataset\.depth=3 is not a key of dataset cora; allowed: download, "),
    (["~model.depth"], r"^model\.depth is missing; it must be an integer >= 1$"),
    (
        ["tags=abc"],
        r"^tags must be a list \(each item a label of 1 to 64 characters on one line\), got abc "
        r"\(a string\)$",
    ),
    (["logger=wandb", "logger.mode=on"], r"^logger\.mode must be null or one of online, "),
    (["paths.data_dir=/etc/hosts"], r"^paths\.data_dir must be a folder .*, got /etc/hosts$"),
    (["paths.results_dir=/etc/hosts/runs"], r"^paths\.results_dir must be a folder"),
    (
        [f"paths.results_dir=/tmp/{'a' * 256}/runs"],
        r"^paths\.results_dir must be a folder \(a non-empty path with no file in the way, each "
        r"of its names at most 255 bytes\), got /tmp/a{35}\.\.\. \(266 characters\)$",
    ),
    (
        [f"tags=[{'x' * 5000}]"],
        r"^tags must be a list \(each item a label of 1 to 64 characters on one line\), got "
        r"\['x{38}\.\.\. \(5004 characters\)$",
    ),
    (["tags=['']"], r"^tags must be a list \(each item a label of 1 to 64 characters"),
    (["dataset=trees", "dataset.depth=abc"], r"^dataset\.depth must be an integer in \[1, 14\]"),
    (["dataset=trees", "dataset.depth=15"], r"^dataset\.depth must be an integer in \[1, 14\]"),
    (
        ["+experiment=gcnii", "grid.missing_rate.cora=x"],
        r"^dataset\.missing_rate must be a finite number in \[0, 1\], got x \(a string\)$",
    ),
    (
        ["train.epochs=${nowhere}"],
        r"^train\.epochs cannot be resolved: Interpolation key 'nowhere'",
    ),
]


@pytest.mark.parametrize(("overrides", "message"), BAD_VALUES)
def test_a_wrong_type_or_unknown_key_gives_one_line_naming_it(make_cfg, overrides, message):
    with pytest.raises(ConfigError, match=message):
        validate(make_cfg(*overrides))


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
        (["dataset.name=imagenet"], r"dataset.name must be one of .*cora.*, got imagenet$"),
        (["model.name=mlp"], r"model.name must be one of .*gat.*, got mlp$"),
        (["norm.name=batchnorm"], r"norm.name must be one of .*lip.*, got batchnorm$"),
        # a protocol's name is the option that set it, never a folder of its own
        (["protocol.name=bogus"], r"protocol.name must be one of alon_yahav, .*, got bogus$"),
        (["protocol.name="], r"protocol.name must be one of .*standard, got ''$"),
        (["protocol.name=../../escape"], r"protocol.name must be one of .*, got \.\./\.\./escape$"),
        (
            ["dataset.missing_rate=1.5"],
            r"dataset.missing_rate must be a finite number in \[0, 1\], got 1.5",
        ),
        (
            ["dataset.missing_rate=-0.1"],
            r"dataset.missing_rate must be a finite number in \[0, 1\], got -0",
        ),
        (["model.depth=0"], r"model.depth must be an integer >= 1, got 0"),
        (["model.heads=0"], r"model.heads must be an integer >= 1, got 0"),
        (
            ["model.hidden=60", "model.heads=8"],
            r"model.hidden=60 must be a multiple of model.heads=8",
        ),
        (["model.dropout=1.0"], r"model.dropout must be a finite number in \[0, 1\), got 1.0"),
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
            r"model.alpha must be a finite number in \[0, 1\]",
        ),
        (
            ["model=gatv2", "norm.variant=published"],
            r"norm.variant=published exists for gat and gt only",
        ),
        (["train.epochs=0"], r"train.epochs must be an integer >= 1, got 0"),
        (["train.lipschitz_every=0"], r"train.lipschitz_every must be an integer >= 1, got 0"),
        (["scale=huge"], r"scale must be quick or paper, got huge"),
        (["model.head_channels=0"], r"model.head_channels must be null or an integer >= 1"),
        (["model.input_width=0"], r"model.input_width must be null or an integer >= 1, got 0"),
        (["model=ggnn", "norm=none", "model.input_width=128"], r"model.input_width=128 must be"),
        (["model=gcnii", "norm=none", "model.input_width=32"], r"model.input_width=32 is not"),
        (["train.scheduler=cosine"], r"train.scheduler must be none or plateau, got cosine"),
        (
            ["train.scheduler_factor=1.5"],
            r"train.scheduler_factor must be a finite number in \(0, 1\)",
        ),
        (["model.activation=tanh"], r"model.activation must be one of elu, relu, none, got tanh"),
        (["model.post_layernorm=1"], r"post_layernorm must be true or false, got 1 \(an integer\)"),
        (["train.scheduler_metric=loss"], r"train.scheduler_metric must be one of val_loss, "),
        (["train.patience_metric=val_loss"], r"train.patience_metric must be val_acc or train_acc"),
        (["train.lr=inf"], r"^train\.lr must be a finite number > 0, got inf \(not finite\)$"),
        (["train.lr=nan"], r"^train\.lr must be a finite number > 0, got nan \(not finite\)$"),
        (["train.weight_decay=inf"], r"^train\.weight_decay must be a finite number >= 0, got inf"),
        (["norm.alpha=inf"], r"^norm\.alpha must be a finite number > 0, got inf"),
        (["norm.eps=inf"], r"^norm\.eps must be a finite number > 0, got inf"),
        (["model=gcnii", "norm=none", "model.theta=-inf"], r"^model\.theta must be a finite "),
        (
            ["paths.results_dir="],
            r"^paths\.results_dir must be a folder \(a non-empty path .*got ''$",
        ),
        (["paths.data_dir="], r"^paths\.data_dir must be a folder \(a non-empty path .*got ''$"),
        (
            ["train.epochs=100000000000000000000"],
            r"^train\.epochs=100000000000000000000 is more than a run can hold: its history alone "
            r"takes [0-9.]+ TiB \(about 1024 bytes per epoch\) against [0-9.]+ GiB of memory; "
            r"allowed: at most \d+$",
        ),
        (
            ["model.hidden=1000000000", "model.heads=1"],
            r"^a model of model\.depth=10, model\.hidden=1000000000, model\.heads=1 is more than "
            r"a run can hold: at least 1e\+19 parameters, [0-9.]+ TiB with their gradients and "
            r"Adam's state and [0-9.]+ TiB of activations kept for the backward pass, against "
            r"[0-9.]+ GiB of memory on cpu; allowed: a smaller model\.depth",
        ),
        (["model.head_channels=100000000"], r"model\.head_channels=100000000 is more than a run"),
        (
            ["model.heads=64", "model.head_channels=100000000"],
            r"^a model of model\.depth=10, model\.hidden=64, model\.heads=64, "
            r"model\.head_channels=100000000 is more than a run can hold: one of its weights has "
            r"more elements than a tensor can index; allowed: a smaller model\.depth",
        ),
        (
            ["paths.raw_dirs=['']"],
            r"^paths\.raw_dirs must be a list \(each item a folder \(a non-empty path "
            r".*got \[''\]$",
        ),
        (["model.depth=100000000"], r"model\.depth=100000000, .* at least 4\.29e\+11 parameters"),
    ],
)
def test_invalid_values_give_one_line_naming_the_key(make_cfg, overrides, message):
    with pytest.raises(ConfigError, match=message) as error:
        validate(make_cfg(*overrides))
    assert "\n" not in str(error.value)


def test_the_largest_model_a_run_can_hold_is_found_without_allocating_it(make_cfg):
    cfg = validate(make_cfg("model=gt", "model.depth=5"))
    with torch.device("cpu"):
        built = build_model(OmegaConf.create(cfg["model"]), OmegaConf.create(cfg["norm"]), 1, 1)
    exact = sum(parameter.numel() for parameter in built.parameters())
    assert parameter_count(cfg["model"], cfg["norm"]) == exact
    memory, where = device_memory("cpu")
    assert where == "cpu" and memory > 2**30


def test_a_key_a_model_has_no_use_for_is_refused_with_the_keys_it_has(make_cfg):
    with pytest.raises(ConfigError) as error:
        validate(make_cfg("model=gcn", "norm=none", "+model.train_eps=true"))
    allowed = str(error.value).split("allowed: ", 1)[1].split(", ")
    assert allowed == sorted(schema.Model.__dataclass_fields__)


def test_run_id_is_stable_and_ignores_non_defining_keys(make_cfg, tmp_path):
    cfg = make_cfg()
    same = make_cfg("force=true", "train.progress=true", "tags=[x]", "logger=wandb", "device=cuda")
    with open_dict(same):
        same.paths.results_dir = str(tmp_path / "elsewhere")
    assert run_id(cfg) == run_id(same)
    assert len(run_id(cfg)) == 16
    assert "paths" not in defining_config(cfg) and "progress" not in defining_config(cfg)["train"]


def test_raw_dirs_are_none_unless_the_environment_lists_some(make_cfg, monkeypatch, tmp_path):
    """The shipped config names no folder of a machine; ``LIPNORM_RAW_DIRS`` lists them."""
    monkeypatch.delenv("LIPNORM_RAW_DIRS", raising=False)
    cfg = make_cfg()
    assert cfg.paths.raw_dirs == []
    folders = [str(tmp_path / "a"), "relative/b"]
    monkeypatch.setenv("LIPNORM_RAW_DIRS", os.pathsep.join([folders[0], "", folders[1]]))
    listed = make_cfg()
    assert list(listed.paths.raw_dirs) == folders
    validate(listed)
    assert run_id(listed) == run_id(cfg)
    assert "shared" not in (CONFIGS / "paths" / "default.yaml").read_text()


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


def test_committed_records_name_no_folder_of_the_machine_they_ran_on():
    """Every folder of a committed record's ``paths`` is relative to its checkout
    (`portable_paths`): none starts at the root of the machine that made it."""
    absolute = {
        name: folder
        for _, record in iter_records(REPO / "results" / "runs")
        for name, value in record["config"]["paths"].items()
        for folder in (value if isinstance(value, list) else [value])
        if isinstance(folder, str) and Path(folder).is_absolute()
    }
    assert absolute == {}


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


def test_a_model_class_takes_the_schema_of_its_nearest_class_with_keys_of_its_own():
    class Sparse(AttentionGNN):  # a new attention model, no keys of its own
        label = "Sparse"

    class Deeper(GIN):
        label = "Deeper"

    assert schema.model_schema(Sparse) is schema.AttentionModel
    assert schema.model_schema(Deeper) is schema.GIN
    assert schema.model_schema(DepthwiseGNN) is schema.Model
    assert {name: schema.model_schema(MODELS.get(name)) for name in MODELS} == schema.MODELS


def _constructor_keywords(model_class: type) -> set[str]:
    """The keyword-only arguments of ``model_class``'s constructor and its bases'."""
    found = set()
    for cls in model_class.__mro__:
        if "__init__" in vars(cls):
            parameters = inspect.signature(cls.__init__).parameters.values()
            found |= {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}
    return found - {"norm", "norm_options"}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_keys_a_model_does_not_read_are_refused_when_given(name):
    """The unread keys are the schema's keys its constructor does not take, and no other."""
    keys = set(schema.MODELS[name].__dataclass_fields__) - {"name"}
    unread = set(schema.unread_model_keys(name))
    assert keys - unread == _constructor_keywords(MODELS.get(name))
    assert (unread == set()) == issubclass(MODELS.get(name), AttentionGNN)
    for key in unread:
        for override in (f"+model.{key}=x", f"++model.{key}=x"):
            with pytest.raises(ConfigError) as refused:
                given_keys_are_read(name, ["model.depth=2", override])
            assert str(refused.value).startswith(
                f"{override}: model.name={name} does not read model.{key}"
            )
            assert str(refused.value).endswith("or a model that reads it (gat, gatv2, gt)")
    given_keys_are_read(name, [f"model.{key}=1" for key in sorted(keys - unread)])
    # a key a protocol set for every model takes a value as the commands of its records gave it
    given_keys_are_read(name, [f"model.{key}=1" for key in sorted(unread)])


def _checkout_configs(folder: Path, local: str | None = None) -> Path:
    """The checkout's ``configs/`` copied to ``folder``: without ``local/`` (as cloned), or
    with a ``local/default.yaml`` of the ``local`` YAML."""
    configs = folder / "configs"
    shutil.copytree(CONFIGS, configs, ignore=shutil.ignore_patterns("local"))
    if local is not None:
        (configs / "local").mkdir()
        (configs / "local" / "default.yaml").write_text(f"# @package _global_\n{local}")
    return configs


def _cli_config(configs: Path, *overrides: str) -> DictConfig:
    """The config ``python -m lipnorm_exp --cfg job`` composes from ``configs``."""
    args = [sys.executable, "-m", "lipnorm_exp", "--config-path", str(configs), "--cfg", "job"]
    done = cli([*args, *overrides])
    assert done.returncode == 0, done.stderr
    return OmegaConf.create(done.stdout)


@pytest.mark.slow  # through the CLI
def test_a_local_override_sets_defaults_the_command_line_still_wins_over(tmp_path):
    local = "model:\n  depth: 3\n  hidden: 16\ntrain:\n  progress: false\n"
    cloned = _cli_config(_checkout_configs(tmp_path / "cloned"))
    mine = _checkout_configs(tmp_path / "mine", local)
    assert (cloned.model.depth, cloned.model.hidden, cloned.train.progress) == (10, 64, True)
    overridden = _cli_config(mine, "model.hidden=8")
    assert (overridden.model.depth, overridden.model.hidden) == (3, 8)  # the command line wins
    assert not overridden.train.progress
    del overridden.model["depth"], overridden.model["hidden"], overridden.train["progress"]
    del cloned.model["depth"], cloned.model["hidden"], cloned.train["progress"]
    assert overridden == cloned  # the rest as without it


@pytest.mark.slow  # through the CLI
@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("train:\n\tepochs: 3\n", "line 3, column 1 is not YAML (found character '\\t'"),
        ("train: [\n", "is not YAML (expected the node content"),
        ("- a\n- b\n", "is not a mapping of keys (ConfigTypeError"),
    ],
)
def test_a_broken_local_config_is_named_in_one_line_with_its_fix(tmp_path, content, said):
    configs = _checkout_configs(tmp_path, content)
    args = [sys.executable, "-m", "lipnorm_exp", "--config-path", str(configs), "--cfg", "job"]
    done = cli(args)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.strip()]
    assert line.startswith("lipnorm_exp: error: ") and str(configs / "local") in line
    assert said in line and line.endswith("or delete it")


@pytest.mark.slow  # through the CLI
def test_a_local_config_without_its_package_line_is_named_with_the_line_to_add(tmp_path):
    configs = _checkout_configs(tmp_path)
    (configs / "local").mkdir()
    (configs / "local" / "default.yaml").write_text("model:\n  depth: 3\n")
    args = [sys.executable, "-m", "lipnorm_exp", "--config-path", str(configs)]
    done = cli([*args, f"paths.results_dir={tmp_path / 'runs'}", f"paths.log_dir={tmp_path}/l"])
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        "lipnorm_exp: error: configs/local/default.yaml sets its keys under local. instead of at "
        "the top; allowed: `# @package _global_` as its first line"
    )
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow  # through the CLI
def test_an_empty_local_config_is_accepted_and_changes_no_run(tmp_path, data_dir):
    """A personal file without keys (as a user starts one: empty, or comments only) sets nothing:
    the run's record is the one the defaults make, under the same run id."""
    ids = {}
    for name, local in (("cloned", None), ("empty", ""), ("comments", "# mine, later\n")):
        configs = _checkout_configs(tmp_path / name)
        if local is not None:
            (configs / "local").mkdir()
            (configs / "local" / "default.yaml").write_text(local)
        runs = tmp_path / name / "runs"
        args = [sys.executable, "-m", "lipnorm_exp", "--config-path", str(configs)]
        paths = [f"paths.data_dir={data_dir}", f"paths.results_dir={runs}"]
        done = cli([*args, *paths, f"paths.log_dir={tmp_path / name}/l", "train.epochs=1"])
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        ids[name] = sorted(path.name for path in runs.glob("*.json"))
    assert len(ids["cloned"]) == 1 and ids["empty"] == ids["comments"] == ids["cloned"]


def test_a_config_that_is_not_utf8_is_refused_in_one_line():
    from lipnorm_exp.cli.hydra_refusals import refusal_line

    error = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
    line = refusal_line(error, [])
    assert line is not None and "is not UTF-8 text (invalid start byte at byte 0)" in line
    assert line.endswith("rewrite or delete it")


@pytest.mark.slow  # through the CLI
def test_a_search_without_multirun_is_refused_not_run_at_the_defaults(tmp_path):
    args = [sys.executable, "-m", "lipnorm_exp", "+search=supplementary", "train.epochs=1"]
    paths = [f"paths.{key}={tmp_path / key}" for key in ("results_dir", "log_dir", "data_dir")]
    done = cli([*args, *paths])
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "which one run cannot; allowed: --multirun" in done.stderr
    assert not list(tmp_path.glob("results_dir/*.json"))  # no run recorded
