"""Experiment trackers: local records only (``logger=none``) or Weights & Biases (``logger=wandb``).

The W&B tracker never blocks or stops training. The mode is ``logger.mode``, else
``WANDB_MODE``, else ``online`` when an API key is configured and ``offline`` otherwise (no
prompt); an online start that fails or times out falls back to an offline run that
``wandb sync`` uploads later, and later runs of the process start offline at once. An
error while logging is a warning, never an exception, and ``finish`` always closes the run
(so the runs of a multirun never merge).

What a W&B run holds:

- its name, readable (:func:`run_name`: ``GAT-Lip cora depth 20 seed 0``); the record's run
  id is the W&B run config's ``run_id``;
- the resolved config as the run config, and the tags;
- one point per epoch (the W&B step) of every metric of the history row, namespaced by
  :func:`wandb_metrics`: ``train/loss``, ``train/acc``, ``val/acc``, ``test/acc``, ...,
  ``train/lr``, ``train/time_s``, and per-layer lists as ``grad_attn/layer_07`` (also
  ``grad_layer``, ``lipschitz``);
- as its summary, the best epoch rather than the last (``define_metric``: ``val/acc`` and
  ``train/acc`` at their maximum, ``val/loss`` at its minimum), then the record's status,
  error, summary (``best_val_acc``, ``test_acc_at_best_val``, ...) and timing;
- at the end, the train/val/test accuracy curves as one chart and, when gradients were
  tracked, the heat map of the attention-gradient norms (layers × epochs, log colour scale,
  as the paper's Fig. 2).

Runs share a group (:func:`run_group`): ``logger.group`` when set, else the preset
(``+experiment=<preset>``), else the Hydra sweep folder's name.
"""

import logging
import netrc
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from omegaconf import DictConfig, OmegaConf

from lipnorm_exp.data import SPLITS
from lipnorm_exp.errors import ConfigError
from lipnorm_exp.labels import model_label
from lipnorm_exp.records import FAILED, INTERRUPTED

log = logging.getLogger(__name__)

#: seconds an online W&B start may take before falling back to an offline run
#: (``WANDB_INIT_TIMEOUT`` overrides it)
ONLINE_INIT_TIMEOUT_S = 20
#: history keys drawn in the accuracy chart
ACCURACY_KEYS = ("train_acc", "val_acc", "test_acc")
#: W&B summary of a metric: its best value over the epochs instead of the last
BEST_SUMMARIES = {"val/acc": "max", "train/acc": "max", "val/loss": "min"}


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
        name: the W&B run name (:func:`run_name`).
        group: the W&B group (:func:`run_group`), or ``None``.
        tags: W&B tags (the config's ``tags``).
    """

    #: set once an online start failed: later runs of this process go offline at once
    online_failed = False

    def __init__(
        self,
        logger: DictConfig,
        config: dict[str, Any],
        name: str,
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
            name=name,
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
        for metric, summary in BEST_SUMMARIES.items():
            run.define_metric(metric, summary=summary)
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
        """The row's metrics, namespaced (:func:`wandb_metrics`), at the epoch's step."""
        self._safely("log", lambda: self.run.log(wandb_metrics(row), step=row["epoch"]))

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


def wandb_metrics(row: dict[str, Any]) -> dict[str, Any]:
    """A history row as W&B metrics.

    ``<split>_<name>`` becomes ``<split>/<name>``, a per-layer list ``<key>/layer_NN`` (from
    01), another scalar (``lr``, ``time_s``) ``train/<key>``; the epoch is the step, not a metric.
    """
    metrics = {}
    for key, value in row.items():
        if key == "epoch":
            continue
        if isinstance(value, list):
            metrics.update({f"{key}/layer_{i + 1:02d}": v for i, v in enumerate(value)})
            continue
        split, _, name = key.partition("_")
        metrics[f"{split}/{name}" if split in SPLITS and name else f"train/{key}"] = value
    return metrics


def run_name(cfg: DictConfig) -> str:
    """A readable W&B run name: model label, dataset, depth, seed.

    ``GAT-Lip cora depth 20 seed 0``; a TREES run names the tree depth too (``trees d=4``).
    """
    dataset = cfg.dataset.name
    if dataset == "trees":
        dataset = f"trees d={cfg.dataset.depth}"
    return f"{model_label(cfg)} {dataset} depth {cfg.model.depth} seed {cfg.seed}"


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

    from lipnorm_exp.heatmap import draw_gradient_heatmap

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


def run_group(cfg: DictConfig) -> str | None:
    """The W&B group of a run.

    ``logger.group``, else the preset (Hydra's choice for ``experiment``), else the sweep
    folder's name inside a Hydra multirun, else ``None``.
    """
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    if cfg.logger.group:
        return cfg.logger.group
    if not HydraConfig.initialized():
        return None
    hydra = HydraConfig.get()
    preset = hydra.runtime.choices.get("experiment")
    if preset:
        return preset
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
        {**OmegaConf.to_container(cfg, resolve=True), "run_id": run_id},
        run_name(cfg),
        group=run_group(cfg),
        tags=list(cfg.get("tags", [])),
    )


__all__ = [
    "NullTracker",
    "WandbTracker",
    "default_mode",
    "make_tracker",
    "run_group",
    "run_name",
    "wandb_metrics",
]
