"""What a run can hold: a model too deep for the memory is refused before it is built, with the
deepest that fits; the paper's settings are not."""

import pytest
import torch
from omegaconf import OmegaConf

from lipnorm_exp.config import build_model, capacity, validate
from lipnorm_exp.config.capacity import (
    BYTES_PER_PARAMETER,
    activation_bytes,
    model_fits,
    parameter_count,
)
from lipnorm_exp.data import FULL_GRAPH_NODES
from lipnorm_exp.util.errors import ConfigError

GIB = 2**30


@pytest.fixture
def memory(monkeypatch):
    """A machine of 16 GiB (``memory(bytes)`` sets another size)."""

    def set_memory(size: int = 16 * GIB) -> None:
        monkeypatch.setattr(capacity, "device_memory", lambda device: (size, "cpu"))

    set_memory()
    return set_memory


def test_a_depth_of_100000_is_refused_naming_the_estimate_and_the_deepest_that_fits(
    make_cfg, memory
):
    config = validate(make_cfg("model.depth=3"), machine=False)  # GAT on Cora, 8 x 8 heads
    model, norm = config["model"], config["norm"]
    # by hand: each layer adds its parameters with their state, and keeps its input
    one, two = (parameter_count({**model, "depth": depth}, norm) for depth in (1, 2))
    kept = 2708 * 64 * 4  # Cora's nodes x the layer width x float32
    first, per_layer = one * BYTES_PER_PARAMETER + kept, (two - one) * BYTES_PER_PARAMETER + kept
    deepest = (16 * GIB - first) // per_layer + 1
    with pytest.raises(ConfigError) as refused:
        model_fits({**config, "model": {**model, "depth": 100000}})
    line = str(refused.value)
    assert line.startswith("a model of model.depth=100000, model.hidden=64, model.heads=8 is ")
    assert f"{100000 * 2708 * 64 * 4 / GIB:.1f} GiB of activations kept for the backward" in line
    assert "against 16.0 GiB of memory on cpu" in line
    assert line.endswith(f"(at most model.depth={deepest} at these widths)")
    model_fits({**config, "model": {**model, "depth": deepest}})
    with pytest.raises(ConfigError):
        model_fits({**config, "model": {**model, "depth": deepest + 1}})


@pytest.mark.parametrize(
    "overrides",
    [
        *(
            ("protocol=published", f"dataset={name}", "model.depth=30", "model.hidden=128")
            for name in ("cora", "citeseer", "ogbn_arxiv")
        ),
        ("protocol=published", "model=gt", "model.depth=30", "model.hidden=128"),
        ("dataset=trees", "dataset.depth=8", "norm=none"),
        ("dataset=ogbn_proteins", "model.depth=30", "model.hidden=128"),
    ],
    ids=["cora", "citeseer", "ogbn_arxiv", "gt", "trees8", "proteins"],
)
def test_the_papers_settings_fit_a_16_gib_machine(make_cfg, memory, overrides):
    validate(make_cfg(*overrides))


def test_the_activations_counted_are_fewer_than_a_training_step_keeps(make_cfg):
    """A real forward of a 3-layer GAT on a graph of Cora's size keeps more for its backward
    than `activation_bytes` counts (it is a lower bound)."""
    config = validate(make_cfg("model.depth=3", "model.hidden=16", "model.heads=2"))
    nodes = FULL_GRAPH_NODES["cora"]
    built = build_model(OmegaConf.create(config["model"]), OmegaConf.create(config["norm"]), 8, 7)
    built.train()
    edges = torch.randint(0, nodes, (2, 4 * nodes), generator=torch.Generator().manual_seed(0))
    kept: dict[int, int] = {}

    def keep(tensor: torch.Tensor) -> torch.Tensor:
        kept[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(keep, lambda tensor: tensor):
        built(torch.randn(nodes, 8), edges)
    assert sum(kept.values()) > activation_bytes(config) == 3 * nodes * 16 * 4 > 0
