"""Files written whole or not at all: a temporary name in the same folder, then a rename.

A temporary file is named ``.<target name>.lipnorm-<host>-<pid>-<random>.tmp`` (``<host>`` a
short hash of the machine's name), so that a writer killed before its rename leaves a file that
`remove_stale_temps` recognises as this package's and as left behind: on this machine, once its
process has ended; written on another machine sharing the folder, once untouched for
`STALE_AFTER_S` seconds. Every other file, another program's ``.tmp`` among them, is left alone.
"""

import hashlib
import os
import re
import secrets
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lipnorm_exp.util.errors import DISK_FULL, DiskFullError
from lipnorm_exp.util.processes import process_alive

__all__ = ["STALE_AFTER_S", "remove_stale_temps", "replacing", "temp_path", "write_whole"]

#: a temporary file of this package written on another machine counts as left behind after
#: this long untouched (its process cannot be asked about from here)
STALE_AFTER_S = 3600.0

#: the name of a temporary file of this package: the target's name, the machine, the process
_TEMP_NAME = re.compile(r"\..+\.lipnorm-(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp")


def _host() -> str:
    """This machine, as the temporary names of this package name it (8 hex digits)."""
    return hashlib.blake2s(socket.gethostname().encode(), digest_size=4).hexdigest()


def temp_path(target: str | Path, pid: int | None = None) -> Path:
    """A fresh temporary path beside ``target``, naming this machine and process ``pid``.

    ``pid``: the writing process, this one by default.
    """
    target = Path(target)
    writer = os.getpid() if pid is None else pid
    return target.with_name(f".{target.name}.lipnorm-{_host()}-{writer}-{secrets.token_hex(4)}.tmp")


@contextmanager
def replacing(target: str | Path, size: int | None = None) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``target`` in one rename.

    On an error (or a ``KeyboardInterrupt``) the temporary file is removed and ``target`` is
    left as it was. ``size``: the bytes to be written, where known.

    Raises:
        DiskFullError: its device has no room for the file (one line naming the folder, and
            ``size``).
    """
    target = Path(target)
    temporary = temp_path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        yield temporary
        os.replace(temporary, target)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, OSError) and error.errno in DISK_FULL:
            raise DiskFullError.of(target, size) from error
        raise


def write_whole(target: str | Path, text: str) -> Path:
    """Write ``text`` to ``target`` whole or not at all (`replacing`); returns ``target``."""
    data = text.encode()
    with replacing(target, len(data)) as temporary:
        temporary.write_bytes(data)
    return Path(target)


def _left_behind(path: Path, now: float) -> bool:
    """Whether ``path`` is a temporary file of this package that its writer will not rename."""
    named = _TEMP_NAME.fullmatch(path.name)
    if named is None:
        return False
    if named["host"] == _host():
        return not process_alive(int(named["pid"]))
    try:
        return now - path.stat().st_mtime > STALE_AFTER_S
    except FileNotFoundError:
        return False


def remove_stale_temps(folder: str | Path, recursive: bool = False) -> list[Path]:
    """Remove the temporary files of this package in ``folder`` that their writers left behind.

    Only names `temp_path` makes are considered (see the module); ``recursive``: also in the
    folders below. Returns the files removed.
    """
    now, removed = time.time(), []
    found = Path(folder).rglob(".*.tmp") if recursive else Path(folder).glob(".*.tmp")
    for path in sorted(found):
        if path.is_file() and _left_behind(path, now):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed
