"""Cora, CiteSeer and PubMed with the public split of Kipf & Welling, offline-first."""

from omegaconf import DictConfig
from torch_geometric.datasets import Planetoid
from torch_geometric.transforms import NormalizeFeatures

from lipnorm_exp.data import DATASETS
from lipnorm_exp.data.download import ensure_files
from lipnorm_exp.data.missing import MissingVectors
from lipnorm_exp.data.task import Task

__all__ = ["PLANETOID_NAMES", "load_planetoid", "raw_file_names"]

#: Config name → PyG dataset name.
PLANETOID_NAMES = {"cora": "Cora", "citeseer": "CiteSeer", "pubmed": "PubMed"}


def raw_file_names(name: str) -> list[str]:
    """The raw files PyG's :class:`Planetoid` reads for ``name`` (``"Cora"``...)."""
    parts = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")
    return [f"ind.{name.lower()}.{part}" for part in parts]


@DATASETS.register("pubmed")
@DATASETS.register("citeseer")
@DATASETS.register("cora")
def load_planetoid(dataset: DictConfig, paths: DictConfig, seed: int) -> Task:
    """Load a Planetoid graph as one full batch (public split: 20 per class, 500 val, 1000 test).

    Raw files are taken from ``<paths.data_dir>/Planetoid/<Name>/raw``, copied there from the
    first of ``paths.raw_dirs`` that has them, or downloaded by PyG when ``dataset.download``
    allows it and the host answers. Features are row-normalised (``dataset.normalize_features``,
    default true; zero rows stay zero), then the missing-vector setting blanks the rows of a
    fraction ``dataset.missing_rate`` (default 0) of the non-training nodes, drawn with ``seed``.

    Args:
        dataset (DictConfig): ``name`` (``cora``, ``citeseer`` or ``pubmed``), ``missing_rate``,
            ``normalize_features``, ``download``.
        paths (DictConfig): ``data_dir`` and ``raw_dirs``.
        seed (int): the run's seed (draws the missing vectors).

    Returns:
        Task: the graph with ``train_mask``, ``val_mask``, ``test_mask`` and ``missing_mask``.

    Raises:
        ConfigError: ``missing_rate`` outside :math:`[0, 1]`.
        DataNotFoundError: raw files absent and no download possible.
    """
    missing = MissingVectors(dataset.get("missing_rate", 0.0), seed)
    name = PLANETOID_NAMES[dataset.name]
    ensure_files(
        name,
        paths.data_dir,
        f"Planetoid/{name}/raw",
        raw_file_names(name),
        raw_dirs=paths.get("raw_dirs") or (),
        url=Planetoid.url,
        download=dataset.get("download", True),
    )
    graphs = Planetoid(f"{paths.data_dir}/Planetoid", name, split="public")
    data = graphs[0]
    if dataset.get("normalize_features", True):
        data = NormalizeFeatures()(data)
    return Task.full_batch(dataset.name, missing(data), graphs.num_classes)
