"""Rules between keys of a config whose every key is valid on its own.

Each rule takes the resolved config (plain containers, as
`lipnorm_exp.config.validate` builds it) and raises a one-line
`ConfigError` naming the keys and what is allowed.
"""

from collections.abc import Callable, Iterable
from typing import Any

from lipnorm_exp.config.capacity import history_fits, model_fits
from lipnorm_exp.config.schema import MODELS as MODEL_SCHEMAS
from lipnorm_exp.config.schema import AttentionModel, unread_model_keys
from lipnorm_exp.models import MODELS
from lipnorm_exp.models.norms import NORMS
from lipnorm_exp.util.errors import ConfigError

__all__ = ["MACHINE_RULES", "RULES", "check_rules", "given_keys_are_read"]

Rule = Callable[[dict[str, Any]], None]


def _is_attention(model: dict[str, Any]) -> bool:
    """Whether the model has attention layers, read from its schema (no model class imported)."""
    return issubclass(MODEL_SCHEMAS[model["name"]], AttentionModel)


def given_keys_are_read(model_name: str, overrides: Iterable[str]) -> None:
    """A key given on the command line (or by a sweep's job) is one the run reads.

    The keys of the ``model`` group that model ``model_name`` does not read
    (`lipnorm_exp.config.schema.unread_model_keys`: ``model.heads``, ``model.message_path``
    on a model without attention) change nothing it computes: added, they would record a run as
    if they had, or make a sweep's runs repeat across them. ``overrides`` are Hydra's, as written
    (``+model.message_path=csr``, ``++model.heads=2``); those that add a key (``+``, ``++``) are
    checked. A key the composed config already holds, because a protocol sets it for every
    model, may be given a value without ``+``: the records of that protocol's runs hold it, and
    the commands that made them (a searched width, ``model.head_channels=128``) make them again.
    """
    unread = unread_model_keys(model_name)
    for override in overrides:
        if not override.startswith("+"):
            continue
        key = override.lstrip("+").split("=", 1)[0]
        group, _, name = key.partition(".")
        if group == "model" and name in unread:
            readers = ", ".join(other for other in MODELS if name not in unread_model_keys(other))
            raise ConfigError(
                f"{override}: model.name={model_name} does not read {key}, so its runs would "
                f"be recorded (or repeated) as if it did; allowed: leave {key} out, or a model "
                f"that reads it ({readers})"
            )


def attention_norm_needs_attention(config: dict[str, Any]) -> None:
    """A norm on attention scores (``norm=lip``) needs attention layers."""
    norm, model = config["norm"]["name"], config["model"]
    if NORMS.get(norm).on_scores and not _is_attention(model):
        allowed = ", ".join(name for name in MODELS if _is_attention({"name": name}))
        raise ConfigError(
            f"norm={norm} needs an attention model; model.name={model['name']} is not one "
            f"(allowed with {norm}: {allowed})"
        )


def heads_divide_the_width(config: dict[str, Any]) -> None:
    """Concatenated heads split ``model.hidden`` evenly unless ``head_channels`` is set."""
    model = config["model"]
    if not _is_attention(model) or model["head_channels"] is not None or not model["concat"]:
        return
    if model["hidden"] % model["heads"]:
        raise ConfigError(
            f"model.hidden={model['hidden']} must be a multiple of model.heads={model['heads']} "
            "when heads are concatenated (model.concat=true)"
        )


def gatv2_has_the_paper_variant_only(config: dict[str, Any]) -> None:
    """GATv2's LipschitzNorm is the general rule of the paper; no published code exists."""
    model, norm = config["model"], config["norm"]
    if model["name"] == "gatv2" and norm["name"] == "lip" and norm["variant"] != "paper":
        raise ConfigError(
            f"norm.variant={norm['variant']} exists for gat and gt only; allowed for gatv2: paper"
        )


def gcnii_mixes_in_its_input(config: dict[str, Any]) -> None:
    """GCNII has its own initial residual, at the layer width."""
    model = config["model"]
    if model["name"] != "gcnii":
        return
    if model["residual"]:
        raise ConfigError(
            "model.residual=true is not allowed for gcnii (it has its own initial residual); "
            "allowed: false"
        )
    if model["input_width"] not in (None, model["hidden"]):
        raise ConfigError(
            f"model.input_width={model['input_width']} is not allowed for gcnii (every layer "
            f"mixes in the input at width model.hidden={model['hidden']}); allowed: null, "
            f"{model['hidden']}"
        )


def ggnn_only_pads_its_input(config: dict[str, Any]) -> None:
    """``GatedGraphConv`` zero-pads a narrower input and cannot take a wider one."""
    model = config["model"]
    if model["name"] == "ggnn" and (model["input_width"] or 0) > model["hidden"]:
        raise ConfigError(
            f"model.input_width={model['input_width']} must be <= model.hidden={model['hidden']} "
            "for ggnn (GatedGraphConv only pads a narrower input)"
        )


def neighbour_sampling_needs_pyg_lib(config: dict[str, Any]) -> None:
    """``dataset.loader=neighbor`` samples with pyg-lib."""
    if config["dataset"].get("loader") != "neighbor":
        return
    import torch_geometric.typing

    if not torch_geometric.typing.WITH_PYG_LIB:
        raise ConfigError("dataset.loader=neighbor needs pyg-lib; allowed here: random_nodes")


def meta_dict_is_a_homogeneous_csv_graph(config: dict[str, Any]) -> None:
    """A dataset of one's own is read from OGB's CSV files of one homogeneous graph."""
    meta = config["dataset"].get("meta_dict") or {}
    if any(str(meta.get(key)) == "True" for key in ("binary", "is hetero")):
        raise ConfigError("dataset.meta_dict: only homogeneous graphs in CSV files are supported")


def seeds_trained_together_are_distinct(config: dict[str, Any]) -> None:
    """A list of seeds (runs trained together) names at least one seed, each once."""
    seeds = config["seed"]
    if isinstance(seeds, list) and (not seeds or len(set(seeds)) != len(seeds)):
        raise ConfigError(
            f"seed={seeds} must be one seed or a list of distinct seeds (runs trained together)"
        )


#: the rules between keys, in the order they are checked
RULES: tuple[Rule, ...] = (
    seeds_trained_together_are_distinct,
    attention_norm_needs_attention,
    heads_divide_the_width,
    gatv2_has_the_paper_variant_only,
    gcnii_mixes_in_its_input,
    ggnn_only_pads_its_input,
    meta_dict_is_a_homogeneous_csv_graph,
)
#: then the rules of what this machine can run (what a run can hold last: it builds the model),
#: which import torch
MACHINE_RULES: tuple[Rule, ...] = (neighbour_sampling_needs_pyg_lib, model_fits, history_fits)


def check_rules(config: dict[str, Any], machine: bool = True) -> None:
    """Run every rule of `RULES` on the resolved ``config``.

    Then those of `MACHINE_RULES`, unless ``machine`` is false.
    """
    for rule in RULES + (MACHINE_RULES if machine else ()):
        rule(config)
