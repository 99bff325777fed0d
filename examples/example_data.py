"""Planetoid data for the examples: PyG's ``Planetoid``, offline where its raw files are at hand.

PyG downloads a Planetoid dataset into ``<root>/<name>/raw`` on first use. Without a network,
the raw files are copied in from the first folder that ``$LIPNORM_RAW_DIRS`` lists (separated as
in ``PATH``) and that holds ``Planetoid/<name>/raw``: the layout and the variable that
``python -m lipnorm_exp`` reads (``paths.raw_dirs``).
"""

import os
import shutil
from pathlib import Path

from torch_geometric.datasets import Planetoid

#: where PyG's own examples keep Planetoid: ``data/Planetoid`` beside the examples' folder
DEFAULT_ROOT = Path(__file__).resolve().parents[1] / "data" / "Planetoid"


def load_planetoid(root: str | Path, name: str, transform=None) -> Planetoid:
    """``Planetoid(root, name)``, its raw files first copied from ``$LIPNORM_RAW_DIRS`` if absent.

    Args:
        root: the dataset's root folder (PyG's ``root``: it holds ``<name>/raw`` and
            ``<name>/processed``).
        name: ``Cora``, ``CiteSeer`` or ``PubMed``.
        transform: applied to the graph on access (PyG's ``transform``).
    """
    raw = Path(root) / name / "raw"
    if not raw.is_dir():
        for folder in filter(None, os.environ.get("LIPNORM_RAW_DIRS", "").split(os.pathsep)):
            mirror = Path(folder) / "Planetoid" / name / "raw"
            if mirror.is_dir():
                shutil.copytree(mirror, raw)
                break
    return Planetoid(str(root), name, transform=transform)
