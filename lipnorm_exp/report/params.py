"""A run's parameter count, from its config alone (OGB's convention: beside test accuracy).

The model of a record's ``model`` and ``norm`` groups is built on PyTorch's ``meta`` device
(no memory, no data) for its dataset's input and output widths (`io_widths`), and its
parameters counted: the count of the model the run trained, without loading a graph.
"""

import functools
import json
import math
from collections.abc import Mapping
from typing import Any

import torch
from omegaconf import OmegaConf

from lipnorm_exp.config import build_model
from lipnorm_exp.report.aggregate import MISSING, Selection
from lipnorm_exp.report.run_row import CONFIG

#: ``dataset.name`` → (input features, classes) of the datasets whose widths are fixed
#: (ogbn-proteins' features are built from its graph: not listed, its count is left out)
DATASET_WIDTHS = {
    "cora": (1433, 7),
    "citeseer": (3703, 6),
    "pubmed": (500, 3),
    "ogbn_arxiv": (128, 40),
}
#: TREES at tree depth d: 2^(d+1) features, 2^d classes (`lipnorm_exp.data.trees`)
TREES = "trees"


def io_widths(dataset: Mapping[str, Any]) -> tuple[int, int] | None:
    """Input and output widths of a run's ``dataset`` group; ``None`` for a dataset unknown here."""
    if dataset.get("name") == TREES:
        depth = int(dataset["depth"])
        return 2 ** (depth + 1), 2**depth
    return DATASET_WIDTHS.get(str(dataset.get("name")))


def parameter_count(config: Mapping[str, Any]) -> int | None:
    """The number of parameters of the model a run's ``config`` trains.

    ``None`` where the dataset's widths are unknown (`io_widths`).
    """
    widths = io_widths(config["dataset"])
    if widths is None:
        return None
    return _count(json.dumps(config["model"], sort_keys=True), json.dumps(config["norm"]), *widths)


@functools.cache
def _count(model: str, norm: str, in_channels: int, out_channels: int) -> int:
    """`parameter_count` of the groups as JSON (cached: seeds share a model)."""
    with torch.device("meta"):
        built = build_model(
            OmegaConf.create(json.loads(model)),
            OmegaConf.create(json.loads(norm)),
            in_channels,
            out_channels,
        )
    return sum(parameter.numel() for parameter in built.parameters())


def selection_params(chosen: Selection | None) -> float:
    """`parameter_count` of a cell's chosen setting (its seeds share one); NaN for none."""
    count = None if chosen is None else parameter_count(chosen.setting[CONFIG])
    return math.nan if count is None else float(count)


def count_text(count: float) -> str:
    """``92k``, ``1.2M``, ``850``: a parameter count as a table prints it; ``–`` for NaN."""
    if math.isnan(count):
        return MISSING
    for size, unit in ((1e6, "M"), (1e3, "k")):
        if count >= size:
            value = count / size
            return f"{value:.1f}{unit}" if value < 100 else f"{value:.0f}{unit}"
    return f"{count:.0f}"


__all__ = ["DATASET_WIDTHS", "count_text", "io_widths", "parameter_count", "selection_params"]
