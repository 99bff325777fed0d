"""Crash-safe data preparation: files written whole, half-prepared folders rebuilt, bad files named.

A kill at any moment of preparing a dataset leaves a folder the next run uses or repairs:

- raw files are copied under a temporary name and renamed (`copy_file`), so a copy is
  there whole or not at all;
- processed files of the datasets built here are saved the same way (`AtomicSave`);
- processed files are read as tensors and plain data only, never as objects whose loading runs
  code (a file planted in a shared data folder, say): a processed folder holding one is
  removed and built again with a warning, like one that cannot be read;
- a processed folder that cannot be read back (a kill while a library wrote it, a file
  truncated since) is removed and built again from the raw files (`load_prepared`),
  after those have been read through, so that one that is truncated or unreadable is named in
  one line instead of failing deep inside the library that parses it;
- a Python package that reading or preparing needs and that is not installed is named with
  the ``pip install`` that fixes it, and no file is blamed;
- processed tensors know what they are: the dataset's name and the SHA-256 of each raw file
  are stored in them (`SourceStamp`), and a processed folder whose tensors say
  otherwise (another dataset's, older raw files', or ones made before the stamp) is built again
  with a warning.

Temporary files that a killed writer left behind are removed on the next preparation.
"""

import gzip
import hashlib
import json
import logging
import os
import pickle
import shutil
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from lipnorm_exp.util.atomic import remove_stale_temps, replacing
from lipnorm_exp.util.errors import DataError, MissingPackageError, UserError

__all__ = [
    "AtomicSave",
    "SourceStamp",
    "Stamp",
    "check_edges",
    "copy_file",
    "load_prepared",
    "read_gzip",
    "read_raw_files",
    "weights_only_loads",
]

log = logging.getLogger(__name__)

T = TypeVar("T", bound=Sequence[Any])  # a dataset: its graphs by index

#: torch's switch that makes every ``torch.load`` weights-only, whatever its caller asks
FORCE_WEIGHTS_ONLY = "TORCH_FORCE_WEIGHTS_ONLY_LOAD"
#: torch's opposite switch, which may not be set at the same time
FORCE_NO_WEIGHTS_ONLY = "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"


def _first_line(error: BaseException) -> str:
    """``Type: first line of the message``."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def _why_unreadable(error: BaseException) -> str:
    """Why a processed folder could not be read, in words (`_first_line` for most errors)."""
    if isinstance(error, pickle.UnpicklingError):  # refused by torch's weights-only reader
        return "it holds objects other than tensors and plain data, which loading could run as code"
    return _first_line(error)


@contextmanager
def weights_only_loads() -> Iterator[None]:
    """Within the block, every ``torch.load`` reads tensors and plain data only.

    PyG reads a processed file weights-only but retries a refused one with
    ``weights_only=False``, and reads a processed folder's ``pre_transform.pt`` that way from
    the start: either would run the code a planted pickle names. torch's own switch,
    `FORCE_WEIGHTS_ONLY`, overrides both; it is set for the block (its opposite unset) and
    restored after. PyG's warning that its first, weights-only, try failed is not shown: its
    advice (allow what the file names) is what must not be done, and `load_prepared` says why
    it prepares the folder again.
    """
    before = {
        name: os.environ.pop(name, None) for name in (FORCE_WEIGHTS_ONLY, FORCE_NO_WEIGHTS_ONLY)
    }
    os.environ[FORCE_WEIGHTS_ONLY] = "1"
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Weights only load failed", UserWarning)
            yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def copy_file(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` (metadata too) through a temporary name and a rename."""
    with replacing(target) as temporary:
        shutil.copy2(source, temporary)


class AtomicSave:
    """Mixin for a PyG ``InMemoryDataset``: its processed file is saved whole or not at all."""

    @classmethod
    def save(cls, data_list: Sequence[Any], path: str) -> None:
        """``InMemoryDataset.save`` to a temporary name, then a rename to ``path``."""
        with replacing(path) as temporary:
            # the dataset class this is mixed into has ``save``
            super().save(data_list, str(temporary))  # type: ignore[misc]


class Stamp(Protocol):
    """What a dataset's processed files must be: `mismatch` says how they are not."""

    def mismatch(self, dataset: Sequence[Any]) -> str | None:
        """Why ``dataset`` (as built from the processed files) is not what it must be, or None."""


class SourceStamp:
    """A PyG ``pre_transform`` that stores in the processed tensors what they were made from.

    The stamp is a JSON text under `KEY` of the (single) graph: the dataset's name and
    the SHA-256 of each raw file, by file name. Its ``repr`` does not depend on the raw files,
    so PyG does not warn that the ``pre_transform`` changed when they do.

    Args:
        name: the dataset's name (``Cora``).
        raw_files: its raw files, present.
    """

    #: the graph attribute holding the stamp
    KEY = "lipnorm_source"

    def __init__(self, name: str, raw_files: Sequence[Path]):
        digests = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in raw_files}
        self.text = json.dumps({"dataset": name, "raw_sha256": digests}, sort_keys=True)

    def __call__(self, data: Any) -> Any:
        """Stamp ``data`` (a PyG graph) with its source."""
        data[self.KEY] = self.text
        return data

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def mismatch(self, dataset: Sequence[Any]) -> str | None:
        """Why the stamp of ``dataset``'s graph is not this one (``None`` when it is), in words."""
        data = dataset[0]
        stored = data.get(self.KEY) if self.KEY in data else None
        if stored is None:
            return "its tensors do not say what they were made from"
        try:
            stored = json.loads(stored)
        except (TypeError, ValueError):
            return "its record of what it was made from cannot be read"
        wanted = json.loads(self.text)
        if stored.get("dataset") != wanted["dataset"]:
            return f"it holds {stored.get('dataset')}, not {wanted['dataset']}"
        changed = [f for f, d in wanted["raw_sha256"].items() if stored["raw_sha256"].get(f) != d]
        return f"it was made from other raw files ({', '.join(changed)})" if changed else None

    def removed(self, data: Any) -> Any:
        """``data`` without the stamp."""
        del data[self.KEY]
        return data


def check_edges(data: Any, graph_file: Path) -> None:
    """Refuse a graph whose edges name nodes it does not have: its graph file is foreign.

    Raises:
        DataError: naming ``graph_file``, the node named and the number of nodes.
    """
    edges = data.edge_index
    if edges.numel() and int(edges.max()) >= data.num_nodes:
        raise DataError(
            f"{graph_file} names node {int(edges.max())} of a graph of {data.num_nodes} nodes: "
            "it is another dataset's graph file, or damaged; delete it so that it is copied or "
            "downloaded again"
        )


def read_gzip(path: Path) -> None:
    """Read a gzip file to its end (a truncated one raises)."""
    with gzip.open(path, "rb") as handle:
        while handle.read(1 << 20):
            pass


def read_raw_files(files: Sequence[Path], read: Callable[[Path], Any]) -> None:
    """Read every file of ``files`` that exists with ``read``.

    Raises:
        MissingPackageError: reading needs a package that is not installed.
        DataError: the first file that cannot be read, named with the reason, in one line.
    """
    for path in files:
        if not path.exists():
            continue
        try:
            read(path)
        except ImportError as error:  # the file may be fine: what reads it is missing
            raise MissingPackageError.of(error, f"reading {path}") from error
        except DataError:  # ``read`` named the file and what is wrong with it
            raise
        except Exception as error:  # whatever the parser raises, the file is what is wrong
            raise DataError(
                f"{path} cannot be read ({_first_line(error)}); it may be truncated: delete it "
                "so that it is copied or downloaded again"
            ) from error


def load_prepared(
    build: Callable[[], T],
    processed_dir: Path,
    raw_files: Sequence[Path] = (),
    read_raw: Callable[[Path], Any] = Path.read_bytes,
    stamp: Stamp | None = None,
) -> T:
    """``build()`` the dataset, rebuilding its processed folder once where it cannot be read.

    With a ``stamp`` (the ``pre_transform`` ``build`` processes with), a processed folder whose
    first graph holds another stamp is removed, with a warning saying why, and built again. The
    processed files are read weights-only (`weights_only_loads`): a folder holding a file of
    other objects is removed, with a warning, and built again, none of its code run.

    Args:
        build: makes the dataset (processing the raw files when ``processed_dir`` lacks them).
        processed_dir: the folder ``build`` writes its processed files to.
        raw_files: the raw files ``build`` processes; read through with ``read_raw`` when
            building fails, so that a bad one is named.
        read_raw: reads one raw file, raising when it cannot. (default: read its bytes)
        stamp: what the processed dataset must be (`SourceStamp`: what its tensors
            say they were made from). (default: not checked)

    Raises:
        MissingPackageError: building needs a package that is not installed.
        DataError: a raw file cannot be read, or building fails again after a rebuild.
    """
    if processed_dir.is_dir():
        remove_stale_temps(processed_dir)
    with weights_only_loads():
        return _prepared(build, processed_dir, raw_files, read_raw, stamp)


def _prepared(
    build: Callable[[], T],
    processed_dir: Path,
    raw_files: Sequence[Path],
    read_raw: Callable[[Path], Any],
    stamp: Stamp | None,
) -> T:
    """`load_prepared`'s work, once its loads are weights-only."""
    try:
        return _built_from(build, processed_dir, stamp)
    except UserError:
        raise
    except ImportError as error:  # nothing on disk is at fault: keep the folder
        raise MissingPackageError.of(error, f"preparing {processed_dir}") from error
    except Exception as error:  # a library's reader failing on a file a kill cut short
        failure = error
    read_raw_files(raw_files, read_raw)
    if processed_dir.exists():
        reason = _why_unreadable(failure)
        log.warning("%s cannot be read (%s); preparing it again", processed_dir, reason)
        shutil.rmtree(processed_dir)
        try:
            return build()
        except UserError:
            raise
        except Exception as error:
            failure = error
    raise DataError(f"preparing {processed_dir} failed ({_first_line(failure)})") from failure


def _built_from(build: Callable[[], T], processed_dir: Path, stamp: Stamp | None) -> T:
    """``build()``, built again once where its processed tensors are not of ``stamp``."""
    dataset = build()
    why = stamp.mismatch(dataset) if stamp is not None else None
    if why is None:
        return dataset
    log.warning("%s: %s; preparing it again", processed_dir, why)
    shutil.rmtree(processed_dir)
    return build()
