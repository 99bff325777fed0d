"""Planetoid data for the examples: PyG's ``Planetoid``, offline where its raw files are at hand.

PyG downloads a Planetoid dataset into ``<root>/<name>/raw`` on first use. Without a network,
the raw files are copied in from the first folder that ``$LIPNORM_RAW_DIRS`` lists (separated as
in ``PATH``) and that holds ``Planetoid/<name>/raw``: the layout and the variable that
``python -m lipnorm_exp`` reads (``paths.raw_dirs``). A ``raw`` folder left empty or partial (a
download cut short) is completed from there. Where neither the folder nor a download can provide
them, the script ends in one line naming the folder and the fix.
"""

import os
import shutil
import sys
from pathlib import Path

from torch_geometric.datasets import Planetoid

#: where PyG's own examples keep Planetoid: ``data/Planetoid`` beside the examples' folder
DEFAULT_ROOT = Path(__file__).resolve().parents[1] / "data" / "Planetoid"


def raw_mirror(name: str) -> Path | None:
    """The first ``Planetoid/<name>/raw`` under a folder of ``$LIPNORM_RAW_DIRS``, or ``None``."""
    for folder in filter(None, os.environ.get("LIPNORM_RAW_DIRS", "").split(os.pathsep)):
        mirror = Path(folder) / "Planetoid" / name / "raw"
        if mirror.is_dir():
            return mirror
    return None


def fill_from(mirror: Path, raw: Path) -> None:
    """Copy into ``raw`` each file of ``mirror`` it lacks (under a temporary name, then renamed)."""
    raw.mkdir(parents=True, exist_ok=True)
    for source in sorted(mirror.iterdir()):
        target = raw / source.name
        if source.is_file() and not target.is_file():
            partial = target.with_name(f".{target.name}.partial")
            shutil.copyfile(source, partial)
            partial.replace(target)


def load_planetoid(root: str | Path, name: str, transform=None) -> Planetoid:
    """``Planetoid(root, name)``, its missing raw files first copied from ``$LIPNORM_RAW_DIRS``.

    Args:
        root: the dataset's root folder (PyG's ``root``: it holds ``<name>/raw`` and
            ``<name>/processed``).
        name: ``Cora``, ``CiteSeer`` or ``PubMed``.
        transform: applied to the graph on access (PyG's ``transform``).

    Exits with status 2 and one line where the raw files are neither there, nor under
    ``$LIPNORM_RAW_DIRS``, nor downloadable.
    """
    raw = Path(root) / name / "raw"
    mirror = raw_mirror(name)
    if mirror is not None:
        fill_from(mirror, raw)
    try:
        return Planetoid(str(root), name, transform=transform)
    except OSError as error:  # the download failed: no network, or the host refused
        print(
            f"{Path(sys.argv[0]).name}: error: {name}'s raw files are not all in {raw} and "
            f"their download failed ({type(error).__name__}: {error}); set LIPNORM_RAW_DIRS "
            f"to a folder holding Planetoid/{name}/raw, or run once on a machine with a network",
            file=sys.stderr,
        )
        sys.exit(2)
