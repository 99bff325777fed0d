"""Datasets by config name: ``load_task(cfg.dataset, cfg.paths, seed)`` → a task.

`DATASETS` names each loader where it is defined; the loader (and torch and PyG with it)
is imported when a run loads its data, so the config is checked without them. What a run sees
of a dataset is a `Task`.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING

from omegaconf import DictConfig

from lipnorm_exp.util.lock import folder_lock
from lipnorm_exp.util.registry import Registry

if TYPE_CHECKING:
    from lipnorm_exp.data.task import Task

__all__ = [
    "DATASETS",
    "FEATURE_LAYOUTS",
    "FULL_GRAPH_NODES",
    "MONITORED",
    "SPLITS",
    "TREES_MAX_DEPTH",
    "load_task",
]

#: ``dataset.name`` → its loader (a loader may serve several names: Planetoid)
DATASETS: "Registry[Callable[[DictConfig, DictConfig, int], Task]]" = Registry(
    "dataset.name",
    {
        "cora": "lipnorm_exp.data.planetoid.load_planetoid",
        "citeseer": "lipnorm_exp.data.planetoid.load_planetoid",
        "pubmed": "lipnorm_exp.data.planetoid.load_planetoid",
        "trees": "lipnorm_exp.data.trees.load_trees",
        "ogbn_arxiv": "lipnorm_exp.data.ogb.load_ogbn_arxiv",
        "ogbn_proteins": "lipnorm_exp.data.ogb.load_ogbn_proteins",
    },
    labels={
        "cora": "Cora",
        "citeseer": "CiteSeer",
        "pubmed": "PubMed",
        "trees": "TREES",
        "ogbn_arxiv": "ogbn-arxiv",
        "ogbn_proteins": "ogbn-proteins",
    },
)
#: the nodes of each dataset trained on as one whole graph (every layer sees them all at once), by
#: ``dataset.name``, as its loader gives them (a dataset of one's own, ``dataset.meta_dict``,
#: excepted): Planetoid's as ``tests/data/test_planetoid.py`` loads them, ogbn-arxiv's as OGB
#: publishes it
FULL_GRAPH_NODES = {"cora": 2708, "citeseer": 3327, "pubmed": 19717, "ogbn_arxiv": 169343}
#: how a loader lays out node features: ``dataset.feature_layout`` (`features`)
FEATURE_LAYOUTS = ("auto", "sparse", "dense")
#: the splits a task's batches mark (``<split>_mask``) and every record scores, in this order
SPLITS = ("train", "val", "test")
#: columns of an epoch's row a schedule or an early stop may watch, and whether higher is better
MONITORED = {"val_loss": False, "val_acc": True, "train_acc": True}
#: the deepest TREES (`trees` stores keys and values as ``int16``)
TREES_MAX_DEPTH = 14


def load_task(dataset: DictConfig, paths: DictConfig, seed: int) -> "Task":
    """Build the task named by ``dataset.name`` (data under ``paths.data_dir``).

    Loading holds a `folder_lock` named after the dataset, so
    concurrent workers find, copy or process the files one after the other.
    """
    loader = DATASETS.get(dataset.name)
    with folder_lock(paths.data_dir, dataset.name):
        return loader(dataset, paths, seed)
