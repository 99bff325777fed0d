"""Offline-first raw files: use what is on disk, copy from a local mirror, download last.

A dataset's files live in ``<data_dir>/<relative>``. When some are absent, the first folder of
``raw_dirs`` laid out like ``data_dir`` that holds them all is copied in (each file under a
temporary name, then renamed: a kill never leaves a partial copy); failing that, a
download is left to the dataset's own loader, but only when it is allowed and the host answers
within seconds. Otherwise `DataNotFoundError` says in one line which
files are expected where, and the keys that fix it (``paths.raw_dirs``, ``dataset.download``).
"""

import socket
import threading
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from lipnorm_exp.data.prepare import copy_file
from lipnorm_exp.util.atomic import remove_stale_temps
from lipnorm_exp.util.errors import DataNotFoundError

__all__ = ["ensure_files", "host_reachable"]


def host_reachable(url: str, timeout: float = 3.0) -> bool:
    """Whether a TCP connection to the host of ``url`` opens within ``timeout`` seconds.

    The name lookup counts against the timeout too (it runs in a daemon thread that is left
    behind if it stalls), so the answer never takes much longer than ``timeout``.
    """
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    opened: list[bool] = []

    def connect() -> None:
        try:
            with socket.create_connection((parts.hostname, port), timeout=timeout):
                opened.append(True)
        except OSError:
            pass

    thread = threading.Thread(target=connect, daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(opened)


def _missing(folder: Path, files: Sequence[str]) -> list[str]:
    return [name for name in files if not (folder / name).is_file()]


def ensure_files(
    name: str,
    data_dir: str | Path,
    relative: str | Path,
    files: Sequence[str],
    raw_dirs: Sequence[str | Path] | None = (),
    url: str | None = None,
    download: bool = True,
) -> bool:
    """Make ``files`` present in ``<data_dir>/<relative>``, or make sure a download can start.

    Args:
        name (str): dataset name for the error message.
        data_dir (str or Path): root the dataset is stored and processed under.
        relative (str or Path): the dataset's folder inside ``data_dir`` (and inside every
            folder of ``raw_dirs``), e.g. ``Planetoid/Cora/raw``.
        files (Sequence[str]): file names, relative to that folder (may contain ``/``).
        raw_dirs (Sequence): folders laid out like ``data_dir`` (``paths.raw_dirs``); the
            first one holding every file is copied from. Folders that do not exist are skipped;
            ``None``: a dataset no mirror can hold (and the message does not offer one).
            (default: ``()``)
        url (str, optional): where the dataset's loader downloads from; only its host is
            contacted here. ``None`` means no download exists. (default: ``None``)
        download (bool): whether a download may be left to the loader. (default: ``True``)

    Returns:
        bool: ``True`` when the files are on disk (found or copied), ``False`` when they are
        absent and the loader may download them.

    Raises:
        DataNotFoundError: files absent, no mirror holds them and no download can be made.
    """
    folder = Path(data_dir) / relative
    for parent in sorted({(folder / file).parent for file in files}):
        remove_stale_temps(parent)  # copies a kill cut short
    missing = _missing(folder, files)
    if not missing:
        return True
    for root in raw_dirs or ():
        mirror = Path(root) / relative
        if mirror.resolve() != folder.resolve() and not _missing(mirror, files):
            for file in missing:
                copy_file(mirror / file, folder / file)
            return True
    where = f"{name}: raw files not found in {folder} (expected {', '.join(missing)})"
    fixes = "put them there"
    if raw_dirs is not None:
        mirrors = ", ".join(str(root) for root in raw_dirs)
        where += f" nor as {relative} under paths.raw_dirs=[{mirrors}]"
        fixes += (
            f" or set paths.raw_dirs=[<a folder holding {relative}>]"
            " (or the environment variable LIPNORM_RAW_DIRS=<that folder>)"
        )
    if url is None:
        raise DataNotFoundError(f"{where}; {fixes} (there is no download for it)")
    if not download:
        raise DataNotFoundError(
            f"{where}, and the download is off; {fixes}, or allow the download "
            "(dataset.download=true) on a machine with a network"
        )
    if not host_reachable(url):
        raise DataNotFoundError(
            f"{where}, and {urlsplit(url).hostname} cannot be reached for the download; "
            f"{fixes}, or run once on a machine with a network"
        )
    return False
