"""An inter-process lock per dataset, so parallel sweep workers prepare its files once."""

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["dataset_lock"]


@contextmanager
def dataset_lock(data_dir: str | Path, name: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<data_dir>/.locks/<name>.lock`` for the block.

    Workers started together by a launcher (joblib, submitit) would otherwise copy raw files
    and write PyG's ``processed/`` files at the same time and read each other's half-written
    files. The lock is released when the block ends or the process dies.
    """
    folder = Path(data_dir) / ".locks"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
