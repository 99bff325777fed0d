r"""What a run can hold: sizes refused before anything is allocated, with the estimate.

A model's parameters, their gradients and Adam's two moments take `BYTES_PER_PARAMETER`
bytes per parameter; the parameters are counted exactly on a model built on PyTorch's ``meta``
device (no memory), at depths 1 and 2, and the count extrapolated to ``model.depth`` (every
layer after the first is alike), for one input feature and one output (a lower bound: the
dataset's widths are not known before its data is read). On a dataset trained as one whole
graph of known size (`lipnorm_exp.data.FULL_GRAPH_NODES`), a training step also keeps, for its
backward pass, at least each graph layer's input: $L \cdot N \cdot W$ float32 values for
$L$ = ``model.depth`` layers of width $W$ over $N$ nodes (`activation_bytes`). The sum above
the memory of the device the run would use (`device_memory`) refuses the config in one line
naming ``model.depth``, the estimate, the memory and the deepest model that fits. A run's
history holds about `BYTES_PER_EPOCH` bytes per epoch, refused likewise. torch is imported by
the checks, so a config is composed and its keys checked without it.
"""

import functools
import json
import math
import os
from typing import Any

from omegaconf import OmegaConf

from lipnorm_exp.config.build import build_model
from lipnorm_exp.data import FULL_GRAPH_NODES
from lipnorm_exp.util.errors import ConfigError

__all__ = [
    "BYTES_PER_ACTIVATION",
    "BYTES_PER_EPOCH",
    "BYTES_PER_PARAMETER",
    "activation_bytes",
    "device_memory",
    "history_fits",
    "model_fits",
    "parameter_count",
]

#: float32 parameter, gradient and Adam's two moments
BYTES_PER_PARAMETER = 16
#: one float32 value a layer keeps for its backward pass
BYTES_PER_ACTIVATION = 4
#: one epoch's row of the history (in memory, in the checkpoint and in the record), at least
BYTES_PER_EPOCH = 1024


def device_memory(device: str) -> tuple[int, str]:
    """The bytes of memory of the device ``device`` (a ``device`` value) names, and its name.

    ``auto`` and ``cuda[:i]`` name a GPU's memory where CUDA is available; otherwise (and for
    ``cpu``) the machine's physical memory.
    """
    import torch

    from lipnorm_exp.util.device import parse_device

    parsed = parse_device(device)
    if parsed.type == "cuda" and torch.cuda.is_available():
        index = parsed.index or 0
        if index < torch.cuda.device_count():
            return torch.cuda.get_device_properties(index).total_memory, f"cuda:{index}"
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "cpu"


UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB")


def _size(count: int) -> str:
    """``count`` bytes in the largest binary unit up to TiB: ``125.8 GiB``."""
    power = min(int(math.log(max(count, 1), 1024)), len(UNITS) - 1)
    return f"{count / 1024**power:.1f} {UNITS[power]}"


def parameter_count(model: dict[str, Any], norm: dict[str, Any]) -> int:
    """Parameters of the model of the ``model`` and ``norm`` groups, for 1 input and output."""
    first, per_layer, _ = _layer_counts(json.dumps({**model, "depth": 0}), json.dumps(norm))
    return first + (model["depth"] - 1) * per_layer


def activation_bytes(config: dict[str, Any]) -> int:
    r"""The least memory a training step of ``config`` keeps for its backward pass, in bytes.

    $L \cdot N \cdot W$ float32 values: each of the $L$ graph layers keeps its input, $N$
    nodes by the layer width $W$, to compute its weights' gradient. 0 where $N$ is not known
    before the data is read (a sampled or batched dataset, or one of one's own).
    """
    dataset, model = config["dataset"], config["model"]
    nodes = 0 if dataset.get("meta_dict") else FULL_GRAPH_NODES.get(dataset["name"], 0)
    return model["depth"] * nodes * _width(config) * BYTES_PER_ACTIVATION


def _width(config: dict[str, Any]) -> int:
    model = json.dumps({**config["model"], "depth": 0})
    return _layer_counts(model, json.dumps(config["norm"]))[2]


@functools.cache
def _layer_counts(model: str, norm: str) -> tuple[int, int, int]:
    """Parameters of the model at depth 1, of each further layer, and its layer width."""
    import torch

    norm_group = OmegaConf.create(json.loads(norm))

    def at_depth(depth: int) -> tuple[int, int]:
        model_group = OmegaConf.create({**json.loads(model), "depth": depth})
        try:
            with torch.device("meta"):
                built = build_model(model_group, norm_group, 1, 1)
        except RuntimeError as error:  # a weight of more elements than a tensor can index
            if "overflow" in str(error):
                raise OverflowError(str(error)) from error
            raise
        return sum(parameter.numel() for parameter in built.parameters()), built.layer_width()

    first, width = at_depth(1)
    return first, at_depth(2)[0] - first, width


def model_fits(config: dict[str, Any]) -> None:
    """Refuse a model whose parameters, optimiser state and activations exceed the memory."""
    model, memory_of = config["model"], device_memory(config["device"])
    sizes = ", ".join(
        f"model.{key}={model[key]}"
        for key in ("depth", "hidden", "heads", "head_channels")
        if model.get(key) is not None
    )
    smaller = "allowed: a smaller model.depth, model.hidden, model.heads or model.head_channels"
    try:
        count = parameter_count(model, config["norm"])
    except OverflowError:
        raise ConfigError(
            f"a model of {sizes} is more than a run can hold: one of its weights has more "
            f"elements than a tensor can index; {smaller}"
        ) from None
    kept = activation_bytes(config)
    if count * BYTES_PER_PARAMETER + kept <= memory_of[0]:
        return
    activations = f" and {_size(kept)} of activations kept for the backward pass" if kept else ""
    one, two = (_needed({**config, "model": {**model, "depth": depth}}) for depth in (1, 2))
    deepest = (memory_of[0] - one) // (two - one) + 1 if two > one and memory_of[0] >= one else 0
    raise ConfigError(
        f"a model of {sizes} is more than a run can hold: at least {count:.3g} parameters, "
        f"{_size(count * BYTES_PER_PARAMETER)} with their gradients and Adam's state"
        f"{activations}, against {_size(memory_of[0])} of memory on {memory_of[1]}; "
        f"{smaller} (at most model.depth={deepest} at these widths)"
    )


def _needed(config: dict[str, Any]) -> int:
    """The bytes `model_fits` compares with the memory: parameters, their state, activations."""
    count = parameter_count(config["model"], config["norm"])
    return count * BYTES_PER_PARAMETER + activation_bytes(config)


def history_fits(config: dict[str, Any]) -> None:
    """Refuse more epochs than the run's history can hold in the device's memory."""
    epochs, (memory, _) = config["train"]["epochs"], device_memory("cpu")
    if epochs * BYTES_PER_EPOCH > memory:
        raise ConfigError(
            f"train.epochs={epochs} is more than a run can hold: its history alone takes "
            f"{_size(epochs * BYTES_PER_EPOCH)} (about {BYTES_PER_EPOCH} bytes per epoch) "
            f"against {_size(memory)} of memory; allowed: at most {memory // BYTES_PER_EPOCH}"
        )
