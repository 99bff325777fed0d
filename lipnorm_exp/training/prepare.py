"""What a launch does before it trains (`lipnorm_exp.training.launch.run`).

Check the config and the folders, pick the device; the runs' locks and the runs already finished
are `lipnorm_exp.training.finished`'s.
"""

from pathlib import Path

import torch
from omegaconf import DictConfig

from lipnorm_exp.config import validate
from lipnorm_exp.training.finished import CHECKPOINT_DIR
from lipnorm_exp.util.atomic import remove_stale_temps
from lipnorm_exp.util.device import pick_device
from lipnorm_exp.util.folders import writable_folder

__all__ = ["prepare"]


def prepare(cfg: DictConfig) -> tuple[Path, torch.device]:
    """Validate ``cfg``, check the folders it writes to, clear stale temporary files.

    Stale temporary files are those of killed writers of records and of checkpoints.

    Returns:
        the results folder and the device to train on.
    """
    validate(cfg)
    results_dir = writable_folder(cfg.paths.results_dir, "paths.results_dir")
    writable_folder(cfg.paths.data_dir, "paths.data_dir")
    remove_stale_temps(results_dir)
    remove_stale_temps(results_dir / CHECKPOINT_DIR)
    return results_dir, pick_device(cfg.device)
