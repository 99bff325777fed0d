"""A folder lock excludes every other holder until its block ends."""

import fcntl

import pytest

from lipnorm_exp.util.errors import UserError
from lipnorm_exp.util.lock import folder_lock


def _try_lock(path) -> None:
    """Take the lock without waiting, as another worker would (``flock`` is per open file)."""
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(handle, fcntl.LOCK_UN)


def test_folder_lock_excludes_others_inside_the_block_only(tmp_path):
    path = tmp_path / ".locks" / "cora.lock"
    with folder_lock(tmp_path, "cora"):
        with pytest.raises(BlockingIOError):
            _try_lock(path)
        _try_lock(tmp_path / ".locks" / "citeseer.lock")  # other datasets are not held
    _try_lock(path)


def test_folder_lock_is_released_when_the_block_raises(tmp_path):
    with pytest.raises(RuntimeError), folder_lock(tmp_path, "cora"):
        raise RuntimeError("loader failed")
    _try_lock(tmp_path / ".locks" / "cora.lock")


def test_a_folder_in_place_of_the_lock_file_is_named_in_one_line(tmp_path):
    (tmp_path / ".locks" / "cora.lock").mkdir(parents=True)
    with pytest.raises(UserError) as error, folder_lock(tmp_path, "cora"):
        pass
    assert str(error.value) == (
        f"{tmp_path / '.locks' / 'cora.lock'} cannot be opened as a lock file (Is a directory); "
        "remove it, and it is made again"
    )
