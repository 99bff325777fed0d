"""An inter-process lock on a name inside a folder, held for a ``with`` block."""

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["folder_lock"]


@contextmanager
def folder_lock(folder: str | Path, name: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<folder>/.locks/<name>.lock`` for the block.

    Workers started together by a launcher (joblib, submitit) use it to take turns: at
    preparing a dataset's files (one name per dataset), at rewriting a run record's tags. The
    lock is released when the block ends or the process dies.
    """
    locks = Path(folder) / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
