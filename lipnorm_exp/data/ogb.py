"""OGB node-property datasets: ogbn-arxiv (full batch) and ogbn-proteins (mini-batches).

Both go through ``ogb``'s own ``PygNodePropPredDataset`` and are scored with ``ogb``'s
``Evaluator``. A dataset lives in ``<paths.data_dir>/ogb/<ogbn_name>/`` (``raw/``, ``split/``,
``processed/``), OGB's own layout. Offline first: files on disk are used, files found under
``<raw_dir>/ogb/<ogbn_name>/`` for a folder of ``paths.raw_dirs`` are copied in, and only then
is ``ogb`` left to download (``dataset.download``, and only when its host answers within
seconds); otherwise `DataNotFoundError` names the folder.

``dataset.meta_dict`` (``null`` in the YAML files) points at a dataset of one's own in OGB's
on-disk CSV format instead: it is ``ogb``'s ``meta_dict`` (``dir_path``, ``version``,
``"num tasks"``, ``"num classes"``, ``split``, ``add_inverse_edge``, ``has_node_attr``, ...;
flags may be YAML booleans; a heterogeneous or binary graph is refused by
`lipnorm_exp.config.rules`). Such a dataset is never downloaded.

``ogb`` is imported only when one of these datasets is asked for (it is the ``ogb`` extra),
without its update check against PyPI, and without its stdin question about new releases: a
folder whose files are all present is taken as current. Nothing here changes process-wide
state for longer than a load: the socket timeout and the safe globals ``torch.load`` needs to
read ``ogb``'s processed file hold while the dataset is read, and the stand-in module that
turns off the update check while ``ogb`` is imported.

The processed graph holds the dataset's name and the SHA-256 of its raw files
(`SourceStamp`, as Planetoid's): a processed folder made from
other files, or another dataset's, is prepared again with a warning.
"""

import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import pandas as pd
import torch
import torch.nn.functional as F
import torch_geometric.typing
from omegaconf import DictConfig, OmegaConf
from torch_geometric.data import Data
from torch_geometric.data.data import DataEdgeAttr, DataTensorAttr
from torch_geometric.data.storage import GlobalStorage
from torch_geometric.loader import NeighborLoader, RandomNodeLoader
from torch_geometric.utils import index_to_mask, scatter, to_undirected

from lipnorm_exp.data.download import ensure_files
from lipnorm_exp.data.missing import MissingVectors
from lipnorm_exp.data.prepare import SourceStamp, load_prepared, read_gzip
from lipnorm_exp.data.task import Task
from lipnorm_exp.util.errors import ConfigError, DataNotFoundError

__all__ = ["load_ogbn_arxiv", "load_ogbn_proteins"]

_MASKS = {"train_mask": "train", "val_mask": "valid", "test_mask": "test"}
_DOWNLOAD_TIMEOUT_S = 60.0


def _import_ogb(name: str) -> ModuleType:
    """``ogb.nodeproppred``, imported without its update check; one line if ``ogb`` is absent."""
    absent = object()
    outdated = sys.modules.get("outdated", absent)
    # makes ogb skip its version check against PyPI (typeshed's sys.modules omits None)
    sys.modules["outdated"] = None  # type: ignore[assignment]
    try:
        import ogb.nodeproppred as ogbn
    except ModuleNotFoundError as error:
        raise ConfigError(
            f"dataset {name} needs the ogb package (module '{error.name}' is missing): "
            "pip install 'lipnorm_exp[ogb]'"
        ) from None
    finally:
        if outdated is absent:
            del sys.modules["outdated"]
        else:
            sys.modules["outdated"] = outdated  # type: ignore[assignment]  # as it was
    return ogbn


def _meta_info(ogbn: ModuleType, name: str, meta_dict: DictConfig | None) -> dict:
    """OGB's meta information: the packaged ``master.csv`` column, or the configured dict."""
    if meta_dict is None:
        assert ogbn.__file__ is not None, "ogb is a package of files"
        master = Path(ogbn.__file__).parent / "master.csv"
        return pd.read_csv(master, index_col=0, keep_default_na=False)[name].to_dict()
    meta = cast(dict[str, Any], OmegaConf.to_container(meta_dict, resolve=True))
    return {key: str(value) if isinstance(value, bool) else value for key, value in meta.items()}


def _required_files(meta: dict) -> list[str]:
    """Every file ``ogb`` reads for a homogeneous CSV dataset, relative to its folder."""
    raw = ["edge", "num-node-list", "num-edge-list", "node-label"]
    raw += ["node-feat"] if meta["has_node_attr"] == "True" else []
    raw += ["edge-feat"] if meta["has_edge_attr"] == "True" else []
    for key in ("additional node files", "additional edge files"):
        raw += meta[key].split(",") if meta[key] != "None" else []
    split = [f"split/{meta['split']}/{part}.csv.gz" for part in _MASKS.values()]
    return [f"raw/{file}.csv.gz" for file in raw] + split


@contextmanager
def _ogb_reading() -> Iterator[None]:
    """While ``ogb`` downloads and reads a dataset, and only then.

    A stalled download fails instead of hanging (``ogb`` opens URLs without a timeout), and
    ``torch.load``, weights-only since torch 2.6, may read the PyG classes of ``ogb``'s
    processed file.
    """
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(_DOWNLOAD_TIMEOUT_S)
    try:
        with torch.serialization.safe_globals([DataEdgeAttr, DataTensorAttr, GlobalStorage]):
            yield
    finally:
        socket.setdefaulttimeout(previous)


def _load(name: str, dataset: DictConfig, paths: DictConfig) -> tuple[ModuleType, Any, Data]:
    """``ogb.nodeproppred``, ``ogb``'s dataset ``name`` and its graph, its files made present.

    The graph is the dataset's first, without its `SourceStamp`.
    """
    ogbn = _import_ogb(name)
    custom = dataset.meta_dict is not None
    meta = _meta_info(ogbn, name, dataset.meta_dict)
    if custom:
        data_dir, relative, raw_dirs, url = meta["dir_path"], Path(), None, None
    else:
        dir_name = name.replace("-", "_")
        if (Path(paths.data_dir) / "ogb" / f"{dir_name}_pyg").is_dir():  # as ogb looks it up
            dir_name += "_pyg"
        data_dir, relative, url = paths.data_dir, Path("ogb") / dir_name, meta["url"]
        raw_dirs = paths.raw_dirs
    folder = Path(data_dir) / relative
    files = _required_files(meta)
    if ensure_files(name, data_dir, relative, files, raw_dirs, url, dataset.download):
        (folder / f"RELEASE_v{meta['version']}.txt").touch()  # ogb asks on stdin without it
    elif folder.exists():  # ogb would ask on stdin, then replace the folder
        raise DataNotFoundError(
            f"{name}: {folder} is incomplete; add the missing files or remove it to download anew"
        )
    raw = [folder / file for file in files]
    stamp = SourceStamp(name, raw)
    build = partial(
        ogbn.PygNodePropPredDataset,
        name,
        root=str(Path(paths.data_dir) / "ogb"),
        pre_transform=stamp,
        meta_dict=meta if custom else None,
    )
    with _ogb_reading():
        loaded = load_prepared(build, folder / "processed", raw, read_gzip, stamp)
    return ogbn, loaded, stamp.removed(loaded[0])


def _masks(split: dict[str, torch.Tensor], num_nodes: int) -> dict[str, torch.Tensor]:
    """Boolean node masks from ``ogb``'s index split."""
    return {mask: index_to_mask(split[part], num_nodes) for mask, part in _MASKS.items()}


def _accuracy(evaluator, y_true: torch.Tensor, logits: torch.Tensor) -> float:
    """``Task.metric`` through ``ogb``'s accuracy: class indices vs. arg-max logits."""
    if y_true.numel() == 0:
        return float("nan")
    prediction = {"y_true": y_true.view(-1, 1), "y_pred": logits.argmax(dim=-1, keepdim=True)}
    return evaluator.eval(prediction)["acc"]


def _rocauc(evaluator, y_true: torch.Tensor, logits: torch.Tensor) -> float:
    """``Task.metric`` through ``ogb``'s ROC-AUC, averaged over the tasks with both labels.

    ``nan`` when no task has a positive and a negative row (``ogb`` raises there).
    """
    if not ((y_true == 1).any(dim=0) & (y_true == 0).any(dim=0)).any():
        return float("nan")
    return evaluator.eval({"y_true": y_true, "y_pred": logits})["rocauc"]


def load_ogbn_arxiv(dataset: DictConfig, paths: DictConfig, seed: int) -> Task:
    """ogbn-arxiv, trained and evaluated full batch on OGB's time split.

    The 128-d title/abstract embeddings are the features and the 40 subject areas the
    classes. Citations point from a paper to the papers it cites; with
    ``dataset.to_undirected`` (true in the YAML file, as in OGB's baselines) every edge is added
    in both directions, so a paper also hears from the papers citing it. Features of a
    fraction ``dataset.missing_rate`` of the non-training nodes are zeroed (the paper's §7.1
    missing-vector setting).
    Accuracy is ``ogb``'s ``Evaluator("ogbn-arxiv")``.

    Args:
        dataset (DictConfig): ``name``, ``download``, ``meta_dict``, ``to_undirected`` and
            ``missing_rate`` (``configs/dataset/ogbn_arxiv.yaml``).
        paths (DictConfig): ``data_dir`` and ``raw_dirs``.
        seed (int): seeds the draw of the nodes losing their features.

    Raises:
        ConfigError: ``ogb`` not installed.
        DataNotFoundError: files absent and no download possible.
    """
    missing = MissingVectors(dataset.missing_rate, seed)
    ogbn, loaded, graph = _load("ogbn-arxiv", dataset, paths)
    edge_index = graph.edge_index
    if dataset.to_undirected:
        edge_index = to_undirected(edge_index, num_nodes=graph.num_nodes)
    masks = _masks(loaded.get_idx_split(), graph.num_nodes)
    data = Data(x=graph.x, edge_index=edge_index, y=graph.y.view(-1), **masks)
    data = missing(data)
    metric = partial(_accuracy, ogbn.Evaluator("ogbn-arxiv"))
    return Task.full_batch(dataset.name, data, loaded.num_classes, metric=metric)


def _protein_features(graph: Data) -> torch.Tensor:
    r"""Species one-hot next to the edge features summed onto each node.

    $$
    \mathbf{x}_i = \mathrm{onehot}(s_i) \,\Vert\, \sum_{j \in \mathcal{N}(i)} \mathbf{e}_{ji}
    $$

    The species ids found in ``node_species`` are numbered in increasing order (8 species in
    ogbn-proteins); its edges are stored in both directions, so the sum runs over every
    interaction of node $i$ once (8 features, 16 in all).
    """
    _, species = torch.unique(graph.node_species.view(-1), return_inverse=True)
    one_hot = F.one_hot(species).float()
    edge_sum = scatter(graph.edge_attr.float(), graph.edge_index[1], 0, graph.num_nodes, "sum")
    return torch.cat([one_hot, edge_sum], dim=-1)


def _seed_masks(batch: Data) -> Data:
    """Keep only the seed nodes of a neighbour-sampled batch (its first ``batch_size``)."""
    seeds = torch.arange(batch.num_nodes) < batch.batch_size
    for mask in _MASKS:
        batch[mask] = batch[mask] & seeds
    return batch


def _loader(dataset: DictConfig) -> str:
    """``dataset.loader``, ``auto`` resolved to ``neighbor`` where pyg-lib is installed."""
    if dataset.loader == "auto":
        return "neighbor" if torch_geometric.typing.WITH_PYG_LIB else "random_nodes"
    return dataset.loader


def load_ogbn_proteins(dataset: DictConfig, paths: DictConfig, seed: int) -> Task:
    """ogbn-proteins: 112 binary tasks on OGB's species split, trained in mini-batches.

    Node features are built by `_protein_features`; the loss is binary cross-entropy
    per task and the metric ``ogb``'s ``Evaluator("ogbn-proteins")`` ROC-AUC (over the
    tasks with both labels among the rows scored). The graph (40M edges) is cut into
    batches for training, and for evaluation unless asked otherwise; a batch keeps the
    edges between its own nodes only.

    Args:
        dataset (DictConfig): ``name``; ``download``; ``meta_dict``; ``loader``, the training
            batches: ``random_nodes`` (the subgraphs induced by ``num_parts`` random parts of
            all nodes, PyG ``RandomNodeLoader``: every node once per epoch), ``neighbor``
            (``batch_size`` training nodes with ``num_neighbors`` sampled neighbours per hop,
            PyG ``NeighborLoader``, needs pyg-lib; only these seed nodes count) or ``auto``
            (``neighbor`` when pyg-lib is installed, else ``random_nodes``); ``eval_batches``:
            ``full`` (the whole graph at once) or ``batched`` (the subgraphs of
            ``eval_num_parts`` fixed parts of the nodes). Values: ``configs/dataset/
            ogbn_proteins.yaml``.
        paths (DictConfig): ``data_dir`` and ``raw_dirs``.
        seed (int): seeds the order of the training batches.

    Raises:
        ConfigError: ``ogb`` not installed.
        DataNotFoundError: files absent and no download possible.
    """
    loader = _loader(dataset)
    ogbn, loaded, graph = _load("ogbn-proteins", dataset, paths)
    masks = _masks(loaded.get_idx_split(), graph.num_nodes)
    data = Data(x=_protein_features(graph), edge_index=graph.edge_index, y=graph.y.float(), **masks)
    order: dict[str, Any] = {"shuffle": True, "generator": torch.Generator().manual_seed(seed)}
    if loader == "random_nodes":
        train_batches = RandomNodeLoader(data, dataset.num_parts, **order)
    else:
        train_batches = NeighborLoader(
            data,
            num_neighbors=list(dataset.num_neighbors),
            batch_size=dataset.batch_size,
            input_nodes=data.train_mask,
            transform=_seed_masks,
            **order,
        )
    if dataset.eval_batches == "full":
        eval_batches = [data]
    else:
        eval_batches = RandomNodeLoader(data, dataset.eval_num_parts)
    evaluator = ogbn.Evaluator("ogbn-proteins")
    evaluator.num_tasks = loaded.num_tasks  # a dataset in this format may have other counts
    return Task(
        dataset.name,
        train_batches,
        eval_batches,
        data.num_features,
        loaded.num_tasks,
        loss="bce",
        metric_name="rocauc",
        metric=partial(_rocauc, evaluator),
        generators=(order["generator"],),
    )
