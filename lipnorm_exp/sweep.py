"""Sweep progress: "run k of n" for each job and a done/skipped/diverged count at the end.

:class:`SweepProgress` is a Hydra callback (``configs/hydra/default.yaml``). At the start
of a multirun it counts the grid the basic sweeper will expand and passes the total to
the jobs through an environment variable (inherited by joblib and submitit workers);
each job appends its outcome to ``<sweep dir>/progress.jsonl``; the end prints the tally.
"""

import atexit
import json
import logging
import os
from collections import Counter
from pathlib import Path
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig

from lipnorm_exp.records import COMPLETED, DIVERGED, FAILED

__all__ = [
    "SweepProgress",
    "grid_jobs",
    "grid_size",
    "note_outcome",
    "sweep_axes",
    "sweep_position",
    "tally",
]

log = logging.getLogger(__name__)

TOTAL_ENV = "LIPNORM_SWEEP_TOTAL"
PROGRESS_FILE = "progress.jsonl"
SKIPPED = "skipped"
OUTCOMES = (COMPLETED, DIVERGED, SKIPPED, FAILED)


def _param_arguments(hydra_cfg: DictConfig) -> list[str]:
    """``hydra.sweeper.params`` as ``key=value`` strings, as :class:`BasicSweeper` writes them."""
    params = hydra_cfg.sweeper.get("params") or {}
    return [f"{key}={value}" for key, value in params.items()]


def grid_jobs(hydra_cfg: DictConfig) -> list[list[str]]:
    """The override lists of the jobs the basic sweeper makes, in launch order.

    As :class:`BasicSweeper` does: ``hydra.sweeper.params`` as ``key=value`` strings, then
    the command line (``hydra.overrides.task``), expanded into their cartesian product.
    """
    arguments = [*_param_arguments(hydra_cfg), *hydra_cfg.overrides.task]
    overrides = OverridesParser.create().parse_overrides(arguments)
    return BasicSweeper.split_arguments(overrides, None)[0]


def sweep_axes(hydra_cfg: DictConfig) -> dict[str, list[Any]]:
    """The values each key of ``hydra.sweeper.params`` takes, in the sweeper's order.

    Keys are written as on the command line (``+method``, ``model.depth``); values are typed
    as Hydra parses them (``range(1,4)`` → ``[1, 2, 3]``, ``0.0,1.0`` → floats); a key set to
    one value takes that value alone.
    """
    overrides = OverridesParser.create().parse_overrides(_param_arguments(hydra_cfg))
    return {
        override.get_key_element(): (
            list(override.sweep_iterator()) if override.is_sweep_override() else [override.value()]
        )
        for override in overrides
    }


def grid_size(hydra_cfg: DictConfig) -> int:
    """Number of jobs the basic sweeper makes of ``hydra.sweeper.params`` + command line."""
    return len(grid_jobs(hydra_cfg))


def sweep_position() -> str:
    """``"[k/n]"`` inside a multirun job (``"[k]"`` when n is unknown), ``""`` otherwise."""
    if not HydraConfig.initialized():
        return ""
    hydra_cfg = HydraConfig.get()
    if hydra_cfg.mode != RunMode.MULTIRUN:
        return ""
    total = os.environ.get(TOTAL_ENV)
    index = hydra_cfg.job.num + 1
    return f"[{index}/{total}]" if total else f"[{index}]"


def note_outcome(record: dict[str, Any] | None, error: str | None = None) -> None:
    """Append this job's outcome to the sweep's progress file (no-op outside a multirun)."""
    if not sweep_position():
        return
    hydra_cfg = HydraConfig.get()
    outcome = FAILED if record is None else record["status"]
    if record is not None and record.get("skipped"):
        outcome = SKIPPED
    line = json.dumps({"job": hydra_cfg.job.num, "outcome": outcome, "error": error})
    path = Path(hydra_cfg.sweep.dir) / PROGRESS_FILE
    with open(path, "a") as handle:  # one short append per job: atomic on local disks
        handle.write(line + "\n")


def tally(sweep_dir: str | Path) -> Counter:
    """Outcomes (completed, diverged, skipped, failed) of the jobs of one sweep."""
    path = Path(sweep_dir) / PROGRESS_FILE
    if not path.exists():
        return Counter()
    return Counter(json.loads(line)["outcome"] for line in path.read_text().splitlines() if line)


class SweepProgress(Callback):
    """Hydra callback announcing the grid size and the final tally of a multirun.

    Hydra skips ``on_multirun_end`` when a job raised (the sweeper re-raises the first
    failure after all jobs ran), which is when the tally matters most; the tally is then
    printed at interpreter exit instead.
    """

    def __init__(self) -> None:
        self._sweep_dir: str | None = None

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Count the grid, hand the total to the jobs and arm the exit-time tally."""
        total = grid_size(config.hydra)
        os.environ[TOTAL_ENV] = str(total)
        self._sweep_dir = str(config.hydra.sweep.dir)
        atexit.register(self._report)
        log.info("sweep of %d runs; records in %s", total, config.paths.results_dir)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Print the tally (every job succeeded)."""
        atexit.unregister(self._report)
        self._report()

    def _report(self) -> None:
        """Log ``sweep finished: a completed, b diverged, c skipped, d failed (of n)``."""
        counts = tally(self._sweep_dir)
        summary = ", ".join(f"{counts[k]} {k}" for k in OUTCOMES)
        log.info("sweep finished: %s (of %s)", summary, os.environ.get(TOTAL_ENV, "?"))
        os.environ.pop(TOTAL_ENV, None)
