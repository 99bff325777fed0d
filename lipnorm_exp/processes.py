"""Whether a process still runs, by its id."""

import os
from pathlib import Path

__all__ = ["process_alive"]

_PROC = Path("/proc")


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie waiting to be reaped has).

    Where ``/proc`` exists its state letter is read; elsewhere signal 0 is sent.
    """
    if pid <= 0:
        return False
    if (_PROC / "self").exists():
        try:
            stat = (_PROC / str(pid) / "stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            return False
        return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
