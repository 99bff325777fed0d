"""Experiment trackers: local records only (``logger=none``) or Weights & Biases (``logger=wandb``).

The W&B tracker never blocks or stops training. The mode is ``logger.mode``, else
``WANDB_MODE``, else ``online`` when an API key is configured and ``offline`` otherwise (no
prompt); an online start that fails or times out falls back to an offline run that
``wandb sync`` uploads later, and later runs of the process start offline at once. An
error while logging is a warning, never an exception, and ``finish`` always closes the run
(so the runs of a multirun never merge).

What a W&B run holds: the resolved config, the tags, one point per epoch of every metric
of the history row, with per-layer lists as ``<key>/layer_01``, ``<key>/layer_02``, ...
(``grad_attn``, ``grad_layer``, ``lipschitz``); at the end the train/val/test accuracy
curves as one chart, the heat map of the attention-gradient norms (layers × epochs, log
colour scale, as the paper's Fig. 2) when gradients were tracked, and the run's status,
summary, error and timing as its summary. Runs of one Hydra sweep share a group: the sweep
folder's name, unless ``logger.group`` names one.
"""

import logging
import netrc
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from omegaconf import DictConfig, OmegaConf

from lipnorm_exp.errors import ConfigError
from lipnorm_exp.records import FAILED, INTERRUPTED

log = logging.getLogger(__name__)

#: seconds an online W&B start may take before falling back to an offline run
#: (``WANDB_INIT_TIMEOUT`` overrides it)
ONLINE_INIT_TIMEOUT_S = 20
#: history keys drawn in the accuracy chart
ACCURACY_KEYS = ("train_acc", "val_acc", "test_acc")


class NullTracker:
    """Tracks nothing: the run record is the only output."""

    def log_epoch(self, row: dict[str, Any]) -> None:
        """Per-epoch metrics (ignored)."""

    def finish(self, record: dict[str, Any]) -> None:
        """End of run (nothing to close)."""


class WandbTracker(NullTracker):
    """One W&B run per training run (module docstring).

    Args:
        logger: the ``logger`` config group (project, entity, mode, group).
        config: the whole resolved run config, stored as the W&B run config.
        run_id: the run's hash, used as the W&B run name.
        group: the W&B group (the sweep's, see :func:`make_tracker`), or ``None``.
        tags: W&B tags (the config's ``tags``).
    """

    #: set once an online start failed: later runs of this process go offline at once
    online_failed = False

    def __init__(
        self,
        logger: DictConfig,
        config: dict[str, Any],
        run_id: str,
        group: str | None = None,
        tags: Sequence[str] = (),
    ):
        import wandb

        self.wandb = wandb
        self.failures = 0
        timeout = float(os.environ.get("WANDB_INIT_TIMEOUT", ONLINE_INIT_TIMEOUT_S))
        kwargs = dict(
            project=logger.project,
            entity=logger.entity,
            group=group,
            name=run_id,
            tags=list(tags),
            config=config,
            reinit="finish_previous",
            settings=wandb.Settings(init_timeout=timeout, silent=True),
        )
        mode = logger.mode or os.environ.get("WANDB_MODE") or default_mode()
        if mode == "online" and WandbTracker.online_failed:
            mode = "offline"
        self.run = self._start(mode, kwargs)

    def _start(self, mode: str, kwargs: dict[str, Any]):
        """``wandb.init`` in ``mode``, else offline, else no run (``None``) and a warning."""
        try:
            run = self.wandb.init(mode=mode, **kwargs)
        except Exception as error:  # no network, bad key, time-out
            if mode == "offline":
                log.warning("W&B offline start failed (%s); tracking nothing", error)
                return None
            log.warning("W&B %s start failed (%s); writing an offline run", mode, error)
            if mode == "online":
                WandbTracker.online_failed = True
            return self._start("offline", kwargs)
        if run.offline:
            log.info("W&B offline run in %s (upload: wandb sync)", run.settings.sync_dir)
        elif run.url:
            log.info("W&B run %s", run.url)
        return run

    def _safely(self, what: str, action: Callable[[], Any]) -> None:
        """Call ``action`` if there is a run; a failure is a warning (the first) or a debug line."""
        if self.run is None:
            return
        try:
            action()
        except Exception as error:
            self.failures += 1
            level = logging.WARNING if self.failures == 1 else logging.DEBUG
            log.log(level, "W&B %s failed (%s); training goes on", what, error)

    def log_epoch(self, row: dict[str, Any]) -> None:
        """The row's scalars, and each per-layer list as ``<key>/layer_NN``."""
        metrics = {}
        for key, value in row.items():
            if isinstance(value, list):
                metrics.update({f"{key}/layer_{i + 1:02d}": v for i, v in enumerate(value)})
            else:
                metrics[key] = value
        self._safely("log", lambda: self.run.log(metrics, step=row["epoch"]))

    def finish(self, record: dict[str, Any]) -> None:
        """Summary, status and figures, then ``run.finish`` (failed and interrupted runs exit 1)."""
        history = record.get("history") or []
        try:
            self._safely("summary", lambda: self.run.summary.update(run_summary(record)))
            if history:
                self._safely("figures", lambda: self.run.log(self._figures(history)))
        finally:
            exit_code = int(record.get("status") in (FAILED, INTERRUPTED))
            self._safely("finish", lambda: self.run.finish(exit_code=exit_code))

    def _figures(self, history: list[dict[str, Any]]) -> dict[str, Any]:
        """The accuracy chart and, with tracked gradients, the gradient heat map."""
        epochs = [row["epoch"] for row in history]
        ys = [[row[key] for row in history] for key in ACCURACY_KEYS]
        figures = {
            "accuracy": self.wandb.plot.line_series(
                epochs, ys, keys=list(ACCURACY_KEYS), title="accuracy", xname="epoch"
            )
        }
        if any("grad_attn" in row for row in history):
            figures["grad_attn/heatmap"] = self.wandb.Image(
                gradient_heatmap(history, self.run.name),
                caption="attention-gradient norm per layer and epoch (log colour scale)",
            )
        return figures


def run_summary(record: dict[str, Any]) -> dict[str, Any]:
    """What the W&B summary shows of a record: status, error, summary metrics, timing."""
    timing = {f"timing/{key}": value for key, value in (record.get("timing") or {}).items()}
    return {
        "status": record["status"],
        "error": record.get("error"),
        **(record.get("summary") or {}),
        **timing,
    }


def gradient_heatmap(history: list[dict[str, Any]], title: str):
    """The run's attention-gradient norms as an RGB array (Fig. 2's panel for one run)."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from lipnorm_exp.report.figures import draw_gradient_heatmap

    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    image = draw_gradient_heatmap(ax, history)
    fig.colorbar(image, ax=ax, label="attention-gradient norm (log scale)")
    ax.set_title(title)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def default_mode() -> str:
    """``online`` when a W&B API key is configured (variable or netrc), else ``offline``."""
    if os.environ.get("WANDB_API_KEY"):
        return "online"
    host = urlparse(os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai")).hostname
    try:
        found = netrc.netrc(os.environ.get("NETRC")).authenticators(host)
    except (OSError, netrc.NetrcParseError):
        found = None
    return "online" if found else "offline"


def sweep_group() -> str | None:
    """The sweep folder's name inside a Hydra multirun, else ``None``."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    if not HydraConfig.initialized():
        return None
    hydra = HydraConfig.get()
    return Path(hydra.sweep.dir).name if hydra.mode == RunMode.MULTIRUN else None


def make_tracker(cfg: DictConfig, run_id: str) -> NullTracker:
    """The tracker named by ``logger.name``.

    Raises:
        ConfigError: ``logger=wandb`` without the ``wandb`` package.
    """
    if cfg.logger.name != "wandb":
        return NullTracker()
    try:
        import wandb  # noqa: F401
    except ImportError as error:
        raise ConfigError(
            "logger=wandb needs the wandb package: pip install 'lipnorm_exp[wandb]'"
        ) from error
    return WandbTracker(
        cfg.logger,
        OmegaConf.to_container(cfg, resolve=True),
        run_id,
        group=cfg.logger.group or sweep_group(),
        tags=list(cfg.get("tags", [])),
    )


__all__ = ["NullTracker", "WandbTracker", "default_mode", "make_tracker", "sweep_group"]
