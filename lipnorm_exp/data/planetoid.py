"""Cora, CiteSeer and PubMed with the public split of Kipf & Welling, offline-first."""

import pickletools
from functools import partial
from pathlib import Path

from omegaconf import DictConfig
from torch_geometric.datasets import Planetoid
from torch_geometric.io.planetoid import read_file
from torch_geometric.transforms import NormalizeFeatures

from lipnorm_exp.data.download import ensure_files
from lipnorm_exp.data.features import laid_out
from lipnorm_exp.data.missing import MissingVectors
from lipnorm_exp.data.prepare import (
    AtomicSave,
    SourceStamp,
    check_edges,
    load_prepared,
    read_raw_files,
)
from lipnorm_exp.data.task import Task
from lipnorm_exp.util.errors import DataError

__all__ = ["PLANETOID_NAMES", "SafePlanetoid", "load_planetoid", "raw_file_names"]

#: Config name → PyG dataset name.
PLANETOID_NAMES = {"cora": "Cora", "citeseer": "CiteSeer", "pubmed": "PubMed"}
#: the parts of a Planetoid dataset, one raw file each
RAW_PARTS = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")
#: the one part that is text; the others are Python pickles
TEXT_PART = "test.index"
#: what the published pickles call as they are read (``module name``, as pickle's GLOBAL opcode
#: names it): NumPy arrays, a SciPy CSR matrix, the graph's ``defaultdict`` of lists
PLANETOID_GLOBALS = frozenset(
    {
        "numpy.core.multiarray _reconstruct",
        "numpy ndarray",
        "numpy dtype",
        "scipy.sparse.csr csr_matrix",
        "collections defaultdict",
        "__builtin__ list",
    }
)
#: pickle opcodes that find a callable by name: GLOBAL and INST name it in the file,
#: STACK_GLOBAL (protocol 4) builds the name at load time, which no published file does
NAMING_OPCODES = ("GLOBAL", "INST", "STACK_GLOBAL")


def raw_file_names(name: str) -> list[str]:
    """The raw files PyG's `Planetoid` reads for ``name`` (``"Cora"``...)."""
    return [f"ind.{name.lower()}.{part}" for part in RAW_PARTS]


class SafePlanetoid(AtomicSave, Planetoid):
    """PyG's `Planetoid`, its processed file saved whole or not at all."""


def check_raw_pickle(path: Path) -> None:
    """Refuse a raw Planetoid pickle that would call anything but `PLANETOID_GLOBALS`.

    PyG unpickles the raw files, and unpickling runs whatever callable a pickle names; a file
    planted in a shared data folder could run any code. The file's opcodes are read without
    running any (`pickletools.genops`): each callable named (`NAMING_OPCODES`) must be one the
    published files name, so nothing else can be called when PyG reads it.

    Raises:
        DataError: a file naming another callable, in one line.
        ValueError: a file that is not a whole pickle (truncated, say).
    """
    if path.name.endswith(TEXT_PART):
        return
    with path.open("rb") as handle:
        for opcode, argument, _ in pickletools.genops(handle):
            if opcode.name in NAMING_OPCODES and argument not in PLANETOID_GLOBALS:
                called = str(argument).replace(" ", ".") if argument else "a name built as it loads"
                raise DataError(
                    f"{path} is not a Planetoid file: its pickle calls {called}, which would run "
                    "as it is read (the published files call only NumPy, SciPy and collections "
                    "constructors); delete it so that it is copied or downloaded again"
                )


def read_raw_file(path: Path) -> object:
    """One raw Planetoid file read as PyG reads it, once `check_raw_pickle` passes it.

    Raises when it cannot be read.
    """
    check_raw_pickle(path)
    prefix, part = path.name.removeprefix("ind.").split(".", 1)
    return read_file(str(path.parent), prefix, part)


def load_planetoid(dataset: DictConfig, paths: DictConfig, seed: int) -> Task:
    """Load a Planetoid graph as one full batch (public split: 20 per class, 500 val, 1000 test).

    Raw files are taken from ``<paths.data_dir>/Planetoid/<Name>/raw``, copied there from the
    first of ``paths.raw_dirs`` that has them, or downloaded by PyG when ``dataset.download``
    allows it and the host answers. Features are row-normalised when
    ``dataset.normalize_features`` says so (zero rows stay zero), then the missing-vector setting
    blanks the rows of a fraction ``dataset.missing_rate`` of the non-training nodes, drawn with
    ``seed``; last, the features take the layout ``dataset.feature_layout`` says
    (`laid_out`: a sparse matrix where few entries are non-zero).

    Args:
        dataset (DictConfig): ``name`` (``cora``, ``citeseer`` or ``pubmed``), ``missing_rate``,
            ``normalize_features``, ``feature_layout``, ``download``.
        paths (DictConfig): ``data_dir`` and ``raw_dirs``.
        seed (int): the run's seed (draws the missing vectors).

    Returns:
        Task: the graph with ``train_mask``, ``val_mask``, ``test_mask`` and ``missing_mask``.

    Raises:
        DataNotFoundError: raw files absent and no download possible.
        DataError: a raw file that cannot be read (truncated, say), or a graph file that is
            not this dataset's, named.
    """
    missing = MissingVectors(dataset.missing_rate, seed)
    name = PLANETOID_NAMES[dataset.name]
    ensure_files(
        name,
        paths.data_dir,
        f"Planetoid/{name}/raw",
        raw_file_names(name),
        raw_dirs=paths.raw_dirs,
        url=Planetoid.url,
        download=dataset.download,
    )
    root = Path(paths.data_dir) / "Planetoid"
    raw_files = [root / name / "raw" / file for file in raw_file_names(name)]
    read_raw_files(raw_files, check_raw_pickle)  # before PyG unpickles any of them
    stamp = SourceStamp(name, raw_files)
    graphs = load_prepared(
        partial(SafePlanetoid, str(root), name, split="public", pre_transform=stamp),
        root / name / "processed",
        raw_files,
        read_raw_file,
        stamp,
    )
    data = stamp.removed(graphs[0])
    check_edges(data, raw_files[RAW_PARTS.index("graph")])
    if dataset.normalize_features:
        data = NormalizeFeatures()(data)
    data = missing(data)
    data.x = laid_out(data.x, dataset.feature_layout)
    return Task.full_batch(dataset.name, data, graphs.num_classes)
