"""Stopping cleanly: SIGTERM and SIGHUP as Ctrl-C, and sweep workers that stop with their sweep.

Inside `stop_requests`, SIGTERM and SIGHUP raise `Stopped` (a
``KeyboardInterrupt``) in the main thread as Ctrl-C raises ``KeyboardInterrupt``, so that a run
ends as ``interrupted`` ([`lipnorm_exp.training.launch.run`][lipnorm_exp.training.launch.run])
instead of vanishing. A run in a worker process of a sweep on the sweep's machine (joblib or
submitit-local launchers) also watches the sweep's own process, named by `SWEEP_PID_ENV` (set while
`running_sweep`): once that process has ended, however it ended (``kill -9`` included), the worker
stops itself the same way, within `WATCH_INTERVAL_S` seconds. Jobs on other machines (a SLURM
cluster) run on.
"""

import os
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lipnorm_exp.util.processes import process_alive

__all__ = [
    "STOP_SIGNALS",
    "held_stops",
    "SWEEP_PID_ENV",
    "WATCH_INTERVAL_S",
    "Stopped",
    "in_sweep_worker",
    "install_stop_handlers",
    "running_sweep",
    "stop_requests",
    "sweep_process",
]

#: the environment variable naming the process that runs a sweep, as ``<host>:<pid>``
SWEEP_PID_ENV = "LIPNORM_SWEEP_PID"
#: signals that stop a run as Ctrl-C does
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
#: seconds between two looks of a worker at its sweep's process
WATCH_INTERVAL_S = 0.5

_reasons: dict[int, str] = {}


class Stopped(KeyboardInterrupt):
    """A request to stop other than Ctrl-C; the message says where it came from."""


def _raise_stopped(signum: int, frame: Any) -> None:
    raise Stopped(_reasons.pop(signum, f"stopped by {signal.Signals(signum).name}"))


def install_stop_handlers() -> dict[int, Any]:
    """Make the `STOP_SIGNALS` raise `Stopped`, and Ctrl-C ``KeyboardInterrupt``.

    Call from the main thread. Returns the handlers replaced, by signal.
    """
    previous: dict[int, Any] = {
        number: signal.getsignal(number) for number in (*STOP_SIGNALS, signal.SIGINT)
    }
    for number in STOP_SIGNALS:
        signal.signal(number, _raise_stopped)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return previous


def sweep_process() -> str:
    """The value of `SWEEP_PID_ENV` that names this process."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _sweep_pid() -> int | None:
    """The id of the process running this job's sweep, when it runs on this machine."""
    host, _, pid = os.environ.get(SWEEP_PID_ENV, "").rpartition(":")
    return int(pid) if host == socket.gethostname() and pid.isdigit() else None


def in_sweep_worker() -> bool:
    """Whether this process runs a job for a sweep running in another process of this machine."""
    pid = _sweep_pid()
    return pid is not None and pid != os.getpid()


class _SweepWatch(threading.Thread):
    """Stops this process's run (SIGTERM to itself) once process ``pid`` has ended."""

    def __init__(self, pid: int):
        super().__init__(name="sweep-watch", daemon=True)
        self.pid = pid
        self.done = threading.Event()

    def run(self) -> None:
        """Look every `WATCH_INTERVAL_S` seconds until the block ends or the sweep has."""
        while not self.done.wait(WATCH_INTERVAL_S):
            if not process_alive(self.pid):
                _reasons[signal.SIGTERM] = f"stopped: its sweep (process {self.pid}) has ended"
                os.kill(os.getpid(), signal.SIGTERM)
                return


@contextmanager
def held_stops() -> Iterator[None]:
    """Within the block, Ctrl-C and the `STOP_SIGNALS` are held until it ends.

    The first one received takes effect as the block ends, so that a finished run's record is
    written whole before the run stops. Outside the main thread (where no signal handler can be
    set) the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    numbers = (*STOP_SIGNALS, signal.SIGINT)
    previous = {number: signal.getsignal(number) for number in numbers}
    for number in numbers:
        signal.signal(number, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if received:
            signal.raise_signal(received[0])


@contextmanager
def stop_requests() -> Iterator[None]:
    """Within the block, stop requests raise ``KeyboardInterrupt`` (see the module docstring).

    Outside the main thread (where no signal handler can be set) the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = install_stop_handlers()
    pid = _sweep_pid()
    watch = _SweepWatch(pid) if pid is not None and in_sweep_worker() else None
    if watch is not None:
        watch.start()
    try:
        yield
    finally:
        if watch is not None:
            watch.done.set()
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextmanager
def running_sweep() -> Iterator[None]:
    """Within the block, this process runs a sweep.

    Its workers know it by `SWEEP_PID_ENV` (`sweep_process`), inherited by joblib
    and submitit workers, and stop requests raise (`install_stop_handlers`) so that the
    sweep ends as Ctrl-C ends it. Both are restored as the block ends. Call from the main thread.
    """
    previous = install_stop_handlers()
    os.environ[SWEEP_PID_ENV] = sweep_process()
    try:
        yield
    finally:
        os.environ.pop(SWEEP_PID_ENV, None)
        for number, handler in previous.items():
            signal.signal(number, handler)
