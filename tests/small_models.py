"""Small models and graphs that tests of several wings build: each model as the app composes it."""

import torch
from conftest import CONFIGS
from hydra import compose, initialize_config_dir

from lipnorm_exp.config import build_model

#: the models with attention layers (a score normalisation applies to them)
ATTENTION = ("gat", "gatv2", "gt")


def group(name, option, **changes):
    """The group ``name``'s option ``option`` as the app composes it (its defaults list too)."""
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        section = compose("config", overrides=[f"{name}={option}"])[name]
    section.update(changes)
    return section


def small_graph(num_nodes=12, num_features=5, num_classes=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(num_nodes, num_features, generator=gen)
    src = torch.randint(0, num_nodes, (40,), generator=gen)
    dst = torch.randint(0, num_nodes, (40,), generator=gen)
    edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
    y = torch.randint(0, num_classes, (num_nodes,), generator=gen)
    return x, edge_index, y


def make(model_name, norm_name, depth, **model_changes):
    heads = {"heads": 2} if model_name in ATTENTION else {}
    model = group("model", model_name, depth=depth, hidden=8, dropout=0.0, **heads, **model_changes)
    return build_model(model, group("norm", norm_name), 5, 3)
