"""Files written whole or not at all: a temporary name in the same folder, then a rename.

A temporary file is named ``.<target name>.<pid>.<random>.tmp``, so a writer killed before its
rename leaves a file that `remove_stale_temps` recognises as left behind (its process
has ended) and removes, while files being written by live processes are left alone.
"""

import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lipnorm_exp.util.processes import process_alive

__all__ = ["STALE_AFTER_S", "remove_stale_temps", "replacing", "temp_path", "write_whole"]

#: a temporary file named without a process id counts as left behind after this long untouched
STALE_AFTER_S = 3600.0


def temp_path(target: str | Path) -> Path:
    """A fresh temporary path beside ``target``, naming this process."""
    target = Path(target)
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


@contextmanager
def replacing(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``target`` in one rename.

    On an error (or a ``KeyboardInterrupt``) the temporary file is removed and ``target`` is
    left as it was.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = temp_path(target)
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_whole(target: str | Path, text: str) -> Path:
    """Write ``text`` to ``target`` whole or not at all (`replacing`); returns ``target``."""
    with replacing(target) as temporary:
        temporary.write_text(text)
    return Path(target)


def _writer_gone(path: Path, now: float) -> bool:
    """Whether the process that wrote temporary file ``path`` can no longer rename it."""
    parts = path.name.split(".")
    if len(parts) >= 5 and parts[-3].isdigit():
        return not process_alive(int(parts[-3]))
    try:
        return now - path.stat().st_mtime > STALE_AFTER_S
    except FileNotFoundError:
        return False


def remove_stale_temps(folder: str | Path, recursive: bool = False) -> list[Path]:
    """Remove the temporary files (``.*.tmp``) of ``folder`` whose writers are gone.

    A name carrying a process id is stale once that process has ended; any other is stale once
    untouched for `STALE_AFTER_S` seconds. ``recursive``: also in the folders below.
    Returns the files removed.
    """
    now, removed = time.time(), []
    found = Path(folder).rglob(".*.tmp") if recursive else Path(folder).glob(".*.tmp")
    for path in sorted(found):
        if path.is_file() and _writer_gone(path, now):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed
