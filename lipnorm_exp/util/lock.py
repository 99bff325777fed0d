"""An inter-process lock on a name inside a folder, held for a ``with`` block (``filelock``)."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from filelock import FileLock, Timeout

from lipnorm_exp.util.errors import DISK_FULL, DiskFullError, UserError

__all__ = ["folder_lock"]


@contextmanager
def folder_lock(
    folder: str | Path, name: str, on_wait: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold an exclusive lock on ``<folder>/.locks/<name>.lock`` for the block.

    Processes take turns with it: workers started together by a launcher (joblib, submitit) at
    preparing a dataset's files (one name per dataset) and at rewriting a run record's tags,
    any two processes given the same run (one name per run id), and verifies adding to one
    findings file (its name). The lock is released when
    the block ends or the process dies (``filelock``'s ``flock`` on POSIX). ``on_wait`` is
    called once, before waiting, when another process holds the lock.

    The lock file is removed as the block ends, still held, so that no run, finished or
    failed, leaves one behind: a process that opened it before and takes it after finds it
    removed and opens the name again (``filelock`` 4 on POSIX; on Windows ``filelock`` removes
    it on release itself), so two holders never hold the name at once. A killed process
    leaves its file, which the next holder removes.

    Raises:
        DiskFullError: the lock file cannot be made for want of space.
        UserError: the lock file cannot be opened (a folder in its place, say), named.
    """
    locks = Path(folder) / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    path = locks / f"{name}.lock"
    lock = FileLock(path)
    try:
        try:
            lock.acquire(blocking=False)
        except Timeout:
            if on_wait is not None:
                on_wait()
            lock.acquire()
    except OSError as error:
        if error.errno in DISK_FULL:
            raise DiskFullError.of(path) from None
        raise UserError(
            f"{path} cannot be opened as a lock file ({error.strerror}); remove it, and it is "
            "made again"
        ) from None
    try:
        yield
    finally:
        with suppress(OSError):  # Windows: an open file is not removed (filelock removes it)
            path.unlink(missing_ok=True)
        lock.release()
