"""A run's parameter count from its config equals that of the model it trains on its data."""

import math

import pytest
from omegaconf import OmegaConf

from lipnorm_exp.config import build_model
from lipnorm_exp.data import load_task
from lipnorm_exp.report.params import count_text, io_widths, parameter_count


@pytest.mark.parametrize(
    "overrides",
    [
        ("dataset=cora", "model=gat", "norm=lip", "model.depth=3"),
        ("dataset=citeseer", "model=gcn", "norm=pairnorm", "model.depth=4", "model.hidden=128"),
        ("dataset=cora", "model=ggnn", "norm=none", "model.depth=2"),
        ("dataset=cora", "model=gcnii", "norm=none", "model.depth=5"),
        ("dataset=trees", "dataset.depth=2", "model=gin", "norm=none"),
    ],
)
def test_the_count_from_a_config_is_that_of_the_model_built_on_the_real_data(make_cfg, overrides):
    cfg = make_cfg(*overrides)
    task = load_task(cfg.dataset, cfg.paths, seed=0)
    model = build_model(cfg.model, cfg.norm, task.num_features, task.num_outputs)
    config = OmegaConf.to_container(cfg, resolve=True)
    assert io_widths(config["dataset"]) == (task.num_features, task.num_outputs)
    assert parameter_count(config) == sum(p.numel() for p in model.parameters())


def test_a_dataset_of_unknown_widths_has_no_count_and_counts_print_short():
    assert parameter_count({"dataset": {"name": "ogbn_proteins"}, "model": {}, "norm": {}}) is None
    assert [count_text(n) for n in (850, 92_345, 1_234_567, math.nan)] == [
        "850",
        "92.3k",
        "1.2M",
        "–",
    ]
