"""A folder lock excludes every other holder until its block ends, and leaves no file behind."""

import fcntl
import subprocess
import sys

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


def test_the_lock_file_is_removed_as_the_block_ends_also_when_it_raises(tmp_path):
    path = tmp_path / ".locks" / "cora.lock"
    with folder_lock(tmp_path, "cora"):
        assert path.exists()
    assert not path.exists()
    with pytest.raises(RuntimeError), folder_lock(tmp_path, "cora"):
        raise RuntimeError("loader failed")
    assert not path.exists()


#: another process taking the lock: it says when it waits, when it holds, and holds it until
#: its standard input ends
HOLDER = """
import sys
from lipnorm_exp.util.lock import folder_lock
with folder_lock(sys.argv[1], "cora", lambda: print("waiting", flush=True)):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_process_waiting_on_a_lock_file_removed_at_release_holds_the_name(tmp_path):
    path = tmp_path / ".locks" / "cora.lock"
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
    with folder_lock(tmp_path, "cora"):
        waiter = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], **pipes)
        assert waiter.stdout.readline() == "waiting\n"  # it opened the file this block removes
    assert waiter.stdout.readline() == "held\n"
    with pytest.raises(BlockingIOError):
        _try_lock(path)  # the file at the name is the one it holds, not a removed one
    waiter.communicate("", timeout=60)
    assert waiter.returncode == 0 and not path.exists()
