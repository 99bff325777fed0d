"""OpenMP's idle threads told to sleep, not spin: `passive_wait`, before torch loads.

By default (``OMP_WAIT_POLICY`` unset) libgomp's worker threads spin for a while after each
parallel region, holding a core; on a machine whose cores other processes need, a run of two
threads then took many times the CPU and the wall time of one (``docs/performance.md``). libgomp
reads the policy once, when it is loaded with torch, so the commands that train set it first.
"""

import os

__all__ = ["WAIT_POLICY", "passive_wait"]

#: the environment variable and the value `passive_wait` gives it
WAIT_POLICY = ("OMP_WAIT_POLICY", "PASSIVE")


def passive_wait() -> None:
    """``OMP_WAIT_POLICY=PASSIVE`` for this process and its children, unless it is set already."""
    os.environ.setdefault(*WAIT_POLICY)
