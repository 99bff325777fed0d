"""Tiny node-property datasets written in OGB's on-disk format, and the configs that load them.

The layout is the one ``ogb``'s ``PygNodePropPredDataset`` reads: headerless gzip CSVs
``raw/{edge,num-node-list,num-edge-list,node-label,...}.csv.gz`` and
``split/<split>/{train,valid,test}.csv.gz``.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from conftest import CONFIGS
from omegaconf import DictConfig, OmegaConf

#: A few of ogbn-proteins' species (NCBI taxonomy ids), deliberately not 0..k-1.
SPECIES = (3702, 7227, 9606)
SPLITS = ("train", "valid", "test")


@dataclass
class TinyGraph:
    """What was written, to check the loaders against by hand."""

    folder: Path
    edges: np.ndarray  # (E, 2) as written, one row per edge
    y: np.ndarray
    split: dict[str, np.ndarray]
    meta_dict: dict
    x: np.ndarray | None = None
    edge_feat: np.ndarray | None = None
    species: np.ndarray | None = None


def write_csv(path: Path, rows: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, header=False, index=False, compression="gzip")


def _edges(rng: np.random.Generator, num_nodes: int, num_edges: int, directed: bool) -> np.ndarray:
    pairs = rng.integers(0, num_nodes, size=(4 * num_edges, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    if not directed:
        pairs = np.sort(pairs, axis=1)
    return np.unique(pairs, axis=0)[:num_edges]


def _write_common(folder: Path, num_nodes: int, edges: np.ndarray, y: np.ndarray) -> None:
    write_csv(folder / "raw" / "edge.csv.gz", edges)
    write_csv(folder / "raw" / "num-node-list.csv.gz", np.array([num_nodes]))
    write_csv(folder / "raw" / "num-edge-list.csv.gz", np.array([len(edges)]))
    write_csv(folder / "raw" / "node-label.csv.gz", y)


def _write_split(folder: Path, name: str, split: dict[str, np.ndarray]) -> None:
    for part, index in split.items():
        write_csv(folder / "split" / name / f"{part}.csv.gz", index)


def write_arxiv(
    folder: Path, num_nodes: int = 30, num_classes: int = 4, seed: int = 0
) -> TinyGraph:
    """A directed citation graph with years; the time split: ≤ 2017 / 2018 / 2019."""
    rng = np.random.default_rng(seed)
    edges = _edges(rng, num_nodes, 2 * num_nodes, directed=True)
    x = rng.normal(size=(num_nodes, 5)).round(4).astype(np.float32)
    y = rng.integers(0, num_classes, size=(num_nodes, 1))
    year = rng.choice([2015, 2016, 2017, 2018, 2019], size=(num_nodes, 1))
    year[:3, 0] = [2017, 2018, 2019]
    split = {
        "train": np.flatnonzero(year <= 2017),
        "valid": np.flatnonzero(year == 2018),
        "test": np.flatnonzero(year == 2019),
    }
    _write_common(folder, num_nodes, edges, y)
    write_csv(folder / "raw" / "node-feat.csv.gz", x)
    write_csv(folder / "raw" / "node_year.csv.gz", year)
    _write_split(folder, "time", split)
    meta_dict = {
        "dir_path": str(folder),
        "version": 1,
        "download_name": "arxiv",
        "url": "http://snap.stanford.edu/ogb/data/nodeproppred/arxiv.zip",
        "num tasks": 1,
        "num classes": num_classes,
        "eval metric": "acc",
        "task type": "multiclass classification",
        "add_inverse_edge": False,
        "has_node_attr": True,
        "has_edge_attr": False,
        "split": "time",
        "additional node files": "node_year",
        "additional edge files": "None",
        "is hetero": False,
        "binary": False,
    }
    return TinyGraph(folder, edges, y, split, meta_dict, x=x)


def write_proteins(
    folder: Path, num_nodes: int = 40, num_tasks: int = 112, seed: int = 0
) -> TinyGraph:
    """An undirected graph with 8 edge features, species and a split by species."""
    rng = np.random.default_rng(seed)
    edges = _edges(rng, num_nodes, 3 * num_nodes, directed=False)
    edge_feat = rng.uniform(size=(len(edges), 8)).round(3)
    species = np.array(SPECIES)[np.arange(num_nodes) % len(SPECIES)][rng.permutation(num_nodes)]
    y = rng.integers(0, 2, size=(num_nodes, num_tasks))
    split = {part: np.flatnonzero(species == s) for part, s in zip(SPLITS, SPECIES, strict=True)}
    _write_common(folder, num_nodes, edges, y)
    write_csv(folder / "raw" / "edge-feat.csv.gz", edge_feat)
    write_csv(folder / "raw" / "node_species.csv.gz", species[:, None])
    _write_split(folder, "species", split)
    meta_dict = {
        "dir_path": str(folder),
        "version": 1,
        "download_name": "proteins",
        "url": "http://snap.stanford.edu/ogb/data/nodeproppred/proteins.zip",
        "num tasks": num_tasks,
        "num classes": 2,
        "eval metric": "rocauc",
        "task type": "binary classification",
        "add_inverse_edge": "True",
        "has_node_attr": "False",
        "has_edge_attr": "True",
        "split": "species",
        "additional node files": "node_species",
        "additional edge files": "None",
        "is hetero": "False",
        "binary": "False",
    }
    return TinyGraph(folder, edges, y, split, meta_dict, edge_feat=edge_feat, species=species)


def configs(data_dir: Path, raw_dirs=(), **dataset) -> tuple[DictConfig, DictConfig]:
    """Struct configs ``(dataset, paths)`` as Hydra would hand them to a loader.

    ``dataset`` holds ``name`` and the keys that differ from ``configs/dataset/<name>.yaml``
    (downloads are off unless asked for).
    """
    paths = OmegaConf.create({"data_dir": str(data_dir), "raw_dirs": [str(d) for d in raw_dirs]})
    dataset = OmegaConf.merge(
        OmegaConf.load(CONFIGS / "dataset" / f"{dataset['name']}.yaml"),
        {"download": False, **dataset},
    )
    OmegaConf.set_struct(dataset, True)
    OmegaConf.set_struct(paths, True)
    return dataset, paths
