"""Processes (psutil): whether one still runs, by its id; the cores this one may use."""

import psutil

__all__ = ["process_alive", "usable_cores"]


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie waiting to be reaped has)."""
    if pid <= 0:
        return False
    try:
        return psutil.Process(pid).status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:  # it exists, owned by someone else
        return True


def usable_cores() -> int:
    """The CPU cores this process may run on.

    Its affinity where the system keeps one (Linux, Windows: a SLURM job's or ``taskset``'s
    share), else the machine's logical cores.
    """
    try:
        return len(psutil.Process().cpu_affinity() or ()) or psutil.cpu_count() or 1
    except AttributeError:  # macOS: no affinity
        return psutil.cpu_count() or 1
