"""The threads a run computes on: ``train.threads``, set for the run's duration (`run_threads`).

torch's default (one thread per core) costs the most where it is least expected: on a machine
whose other cores are busy, each parallel region of an epoch waits for a thread that is not
scheduled, and a small graph's products are too short to gain from a second thread anyway. So
``auto`` trains on one thread, except on a full graph of at least `AUTO_MIN_NODES` nodes, which
gets every thread the process was given at its start (`process_threads`: a joblib sweep's worker
is given cores // n_jobs, ``OMP_NUM_THREADS`` sets it for any process). An integer is used as
given. The record's ``machine.threads`` names the count the run used; one-thread runs compute as
they always did. Measured: ``scripts/bench_threads.py``, ``docs/performance.md``.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

import torch
from omegaconf import DictConfig

from lipnorm_exp.config.schema import AUTO
from lipnorm_exp.data import FULL_GRAPH_NODES

__all__ = ["AUTO_MIN_NODES", "process_threads", "run_threads", "threads_of"]

#: ``auto`` gives more than one thread to full graphs of at least this many nodes: above PubMed
#: (19,717 nodes, whose epoch gained nothing from a second thread on the busy 2-core machine of
#: results/bench/threads.md), below ogbn-arxiv (169,343)
AUTO_MIN_NODES = 100_000


@cache
def process_threads() -> int:
    """The threads torch had when this process first asked.

    Its cores, or what its start limited them to (``OMP_NUM_THREADS``, which joblib sets in a
    sweep's workers to cores // n_jobs).
    """
    return torch.get_num_threads()


def threads_of(threads: int | str, dataset: str) -> int:
    """The threads of a run of ``dataset`` (its ``dataset.name``) at ``train.threads``."""
    if threads != AUTO:
        return int(threads)
    if FULL_GRAPH_NODES.get(dataset, 0) >= AUTO_MIN_NODES:
        return process_threads()
    return 1


@contextmanager
def run_threads(cfg: DictConfig) -> Iterator[int]:
    """Within, torch computes on ``cfg``'s threads (`threads_of`); after, on those before."""
    process_threads()  # read before any run sets them
    before = torch.get_num_threads()
    threads = threads_of(cfg.train.threads, cfg.dataset.name)
    torch.set_num_threads(threads)
    try:
        yield threads
    finally:
        torch.set_num_threads(before)
