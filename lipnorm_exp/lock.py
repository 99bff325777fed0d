"""An inter-process lock on a name inside a folder, held for a ``with`` block."""

import fcntl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from lipnorm_exp.errors import UserError

__all__ = ["folder_lock"]


def _opened(path: Path) -> IO[str]:
    try:
        return open(path, "w")
    except OSError as error:
        raise UserError(
            f"{path} cannot be opened as a lock file ({error.strerror}); remove it, and it is "
            "made again"
        ) from None


@contextmanager
def folder_lock(
    folder: str | Path, name: str, on_wait: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<folder>/.locks/<name>.lock`` for the block.

    Processes take turns with it: workers started together by a launcher (joblib, submitit) at
    preparing a dataset's files (one name per dataset) and at rewriting a run record's tags,
    and any two processes given the same run (one name per run id). The lock is released when
    the block ends or the process dies. ``on_wait`` is called once, before waiting, when
    another process holds the lock.

    Raises:
        UserError: the lock file cannot be opened (a folder in its place, say), named.
    """
    locks = Path(folder) / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    with _opened(locks / f"{name}.lock") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
