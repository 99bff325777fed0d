"""Datasets by config name: ``load_task(cfg.dataset, cfg.paths, seed)`` → :class:`Task`."""

from collections.abc import Callable

from omegaconf import DictConfig

from lipnorm_exp.data.task import MONITORED, SPLITS, Task
from lipnorm_exp.util.lock import folder_lock
from lipnorm_exp.util.registry import Registry

DATASETS: Registry[Callable[[DictConfig, DictConfig, int], Task]] = Registry("dataset.name")


def load_task(dataset: DictConfig, paths: DictConfig, seed: int) -> Task:
    """Build the task named by ``dataset.name`` (data under ``paths.data_dir``).

    Loading holds a :func:`~lipnorm_exp.util.lock.folder_lock` named after the dataset, so
    concurrent workers find, copy or process the files one after the other.
    """
    loader = DATASETS.get(dataset.name)
    with folder_lock(paths.data_dir, dataset.name):
        return loader(dataset, paths, seed)


# Importing the loaders fills the registry.
from lipnorm_exp.data import ogb, planetoid, trees  # noqa: E402, F401

__all__ = ["DATASETS", "MONITORED", "SPLITS", "Task", "load_task"]
