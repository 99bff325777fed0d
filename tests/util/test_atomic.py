"""Temporary files: a writer's own are cleaned up once it is gone; no other file ever is."""

import os
import subprocess
import sys
import time

from lipnorm_exp.util import atomic
from lipnorm_exp.util.atomic import STALE_AFTER_S, remove_stale_temps, temp_path, write_whole


def _ended_pid() -> int:
    """The id of a process that has ended (this test's own child, reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _age(path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_only_this_packages_temporaries_of_ended_writers_are_removed(tmp_path):
    live = temp_path(tmp_path / "mine.json")  # this process: still being written
    dead = temp_path(tmp_path / "abc.json", pid=_ended_pid())
    others = [
        tmp_path / ".precious.tmp",  # another program's, old
        tmp_path / ".notes.99999999.ab.tmp",  # looks like a dead process id
        tmp_path / ".abc.json.999999999.0a1b2c3d.tmp",  # named as this package once named them
        tmp_path / ".x.lipnorm-zzzzzzzz-999999999-0a1b2c3d.tmp",  # close to ours, not ours
    ]
    for path in (live, dead, *others):
        path.write_text("{")
        _age(path, 2 * STALE_AFTER_S)
    assert remove_stale_temps(tmp_path) == [dead]
    assert sorted(tmp_path.iterdir()) == sorted([live, *others])


def test_another_machines_temporary_is_removed_only_once_untouched_for_long(tmp_path, monkeypatch):
    fresh, old = temp_path(tmp_path / "a.json"), temp_path(tmp_path / "b.json")
    for path in (fresh, old):
        path.write_text("{")
    _age(old, STALE_AFTER_S + 60)
    monkeypatch.setattr(atomic, "_host", lambda: "0123abcd")  # the folder seen from elsewhere
    assert remove_stale_temps(tmp_path) == [old]
    assert fresh.exists()


def test_a_recursive_clean_up_reaches_the_folders_below(tmp_path):
    below = tmp_path / "tables"
    below.mkdir()
    dead = temp_path(below / "table1.csv", pid=_ended_pid())
    dead.write_text("half")
    assert remove_stale_temps(tmp_path) == []
    assert remove_stale_temps(tmp_path, recursive=True) == [dead]


def test_a_whole_write_leaves_no_temporary(tmp_path):
    write_whole(tmp_path / "out.txt", "text")
    assert [path.name for path in tmp_path.iterdir()] == ["out.txt"]
