"""glibc's allocator told to keep freed memory for the next epoch: `keep_freed_memory`.

By default glibc gives every freed block above 128 KiB back to the kernel (it was mapped for it
alone, or it trims the top of the heap) and the next epoch faults the same pages in again: a
Cora epoch of a deep GAT takes thousands of minor page faults for tensors it frees and makes
again at the same sizes. With blocks up to `KEPT_BYTES` served from the heap and the heap
trimmed only above twice that, an epoch reuses its memory. Where it is measured, and what it
gains: ``docs/performance.md`` (``scripts/bench_allocator.py``). The arithmetic is the same
(only the addresses of the buffers differ), so a run's numbers are the same bit for bit.
"""

import ctypes
import platform

__all__ = ["KEPT_BYTES", "SETTINGS", "keep_freed_memory", "set_malloc"]

#: ``mallopt`` parameters (glibc's ``malloc.h``)
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
#: blocks up to this size come from the heap and go back to it: glibc's largest mmap threshold
#: on 64-bit machines (the ceiling of its own dynamic threshold)
KEPT_BYTES = 32 * 2**20
#: the settings `keep_freed_memory` makes: the heap trimmed above twice the threshold (glibc's
#: own rule when it raises the threshold) and grown by the threshold at a time
SETTINGS = {
    M_MMAP_THRESHOLD: KEPT_BYTES,
    M_TRIM_THRESHOLD: 2 * KEPT_BYTES,
    M_TOP_PAD: KEPT_BYTES,
}


def set_malloc(settings: dict[int, int]) -> bool:
    """``mallopt(parameter, value)`` for each of ``settings``; whether glibc took them all.

    Not glibc (macOS, musl): nothing is changed and the answer is ``False``.
    """
    if platform.libc_ver()[0] != "glibc":
        return False
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return all([mallopt(parameter, value) == 1 for parameter, value in settings.items()])


def keep_freed_memory() -> bool:
    """Apply `SETTINGS` to this process (a run's start); whether glibc took them."""
    return set_malloc(SETTINGS)
