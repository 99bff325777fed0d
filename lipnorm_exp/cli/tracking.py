"""Experiment trackers: local records only (``logger=none``) or Weights & Biases (``logger=wandb``).

The W&B tracker never blocks or stops training. The mode is ``logger.mode``, else
``WANDB_MODE``, else ``online`` when an API key is configured and ``offline`` otherwise (no
prompt); an online start that fails or times out falls back to an offline run that
``wandb sync`` uploads later, and later runs of the process start offline at once. An
error while logging is a warning, never an exception, and ``finish`` always closes the run
(so the runs of a multirun never merge).

What a W&B run holds:

- its name (`run_name`): model label, dataset, missing rate, depth and seed
  (``GAT-Lip Cora 100% missing depth 2 seed 0``), then every other key its sweep varies
  (``train.lr=0.005 model.dropout=0.5``), so that no two runs of a sweep share a name;
- its group (`run_group`): preset, scale and protocol (``missing_vector/quick/standard``),
  and the preset as its ``job_type`` (`current_preset`);
- as the run config (`wandb_config`) the keys that define the run (those its
  ``run_id`` hashes, [`defining_config`][lipnorm_exp.records.identity.defining_config]: no
  ``force``, ``device``, ``grid``, ``paths``, ``logger`` ...) and the record's ``run_id``; the
  config's ``tags`` as its tags;
- one point per epoch (the W&B step) of every metric of the history row, namespaced by
  `wandb_metrics`: ``train/loss``, ``train/acc``, ``val/acc``, ``test/acc``, ...,
  ``train/lr``, ``train/time_s``, and per-layer lists as ``grad_attn/layer_07`` (also
  ``grad_layer``, ``lipschitz``); W&B draws their line plots;
- as its summary (`run_summary`): the last epoch's metrics under those names (W&B's
  own), the best-validation epoch's under ``best/`` (``best/val/acc``, ``best/test/acc``, ...,
  ``best/epoch``), the highest training accuracy as ``max/train/acc``, the record's status,
  error, ``metric``, ``epochs_run``, ``diverged_at_epoch`` and timing (``timing/total_s``);
- when gradients were tracked (``train.track_gradients``), heat maps of the gradient norms
  (layers × epochs, log colour scale, as the paper's Fig. 2) as images: of the attention
  parameters (``grad_attn/heatmap``) and of the whole layer (``grad_layer/heatmap``), of the
  epochs so far every ``logger.heatmap_every`` epochs while the run trains (``0``: never), and
  of all its epochs when it ends. A resumed run continues its W&B run (`wandb_run_id`);
  its heat maps while it trains show the epochs this process trained, the last one all.

Training knows a tracker only by the `Tracker` protocol: the CLI
hands `make_tracker` to [`lipnorm_exp.training.launch.run`][lipnorm_exp.training.launch.run], so
this module sits above training.
"""

import functools
import logging
import netrc
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlparse

from omegaconf import DictConfig, OmegaConf

from lipnorm_exp.cli.preflight import check_tracker_package
from lipnorm_exp.data import SPLITS
from lipnorm_exp.records import FAILED, INTERRUPTED, schema
from lipnorm_exp.records.identity import defining_config
from lipnorm_exp.records.labels import dataset_label, missing_label, model_label
from lipnorm_exp.records.schema import EpochRow, Record
from lipnorm_exp.sweeps.progress import grid_choices
from lipnorm_exp.training.state import NullTracker

log = logging.getLogger(__name__)

#: seconds an online W&B start may take before falling back to an offline run
#: (``WANDB_INIT_TIMEOUT`` overrides it)
ONLINE_INIT_TIMEOUT_S = 20
#: swept keys (``+`` prefixes dropped) whose values the start of every run name shows
NAMED_KEYS = frozenset(
    "dataset dataset.missing_rate dataset.depth method model norm model.depth seed".split()
)
#: the record's summary entries the W&B summary keeps, by their W&B names (the record's own
#: but for the best training accuracy; the best epoch's metrics come from its history row, the
#: last epoch's are W&B's own summary)
RECORD_SUMMARY_NAMES = {
    schema.METRIC: schema.METRIC,
    schema.BEST_TRAIN_ACC: "max/train/acc",
    schema.EPOCHS_RUN: schema.EPOCHS_RUN,
    schema.DIVERGED_AT_EPOCH: schema.DIVERGED_AT_EPOCH,
}
#: the per-layer gradient norms of a history row drawn as heat maps, each with its caption
HEATMAP_CAPTIONS = {
    schema.GRAD_ATTN: "attention-parameter gradient norm per layer and epoch (log colour scale)",
    schema.GRAD_LAYER: "whole-layer gradient norm per layer and epoch (log colour scale)",
}
#: the file in a multirun's sweep folder where Hydra's basic sweeper saves the sweep's config
SWEEP_CONFIG_FILE = "multirun.yaml"


class WandbTracker(NullTracker):
    """One W&B run per training run (module docstring).

    Args:
        logger: the ``logger`` config group (project, entity, mode, group, heatmap_every).
        config: the W&B run config (`wandb_config`).
        name: the W&B run name (`run_name`).
        group: the W&B group (`run_group`), or ``None``.
        job_type: the W&B job type (`current_preset`), or ``None``.
        tags: W&B tags (the config's ``tags``).
        run_id: the W&B run id (`wandb_run_id`): a resumed run continues its W&B run.
    """

    #: set once an online start failed: later runs of this process go offline at once
    online_failed = False

    def __init__(
        self,
        logger: DictConfig,
        config: dict[str, Any],
        name: str,
        group: str | None = None,
        job_type: str | None = None,
        tags: Sequence[str] = (),
        run_id: str | None = None,
    ):
        import wandb

        self.wandb = wandb
        self.failures = 0
        self.heatmap_every = logger.heatmap_every
        self.rows: list[EpochRow] = []  # the epochs logged, for the heat maps so far
        timeout = float(os.environ.get("WANDB_INIT_TIMEOUT", ONLINE_INIT_TIMEOUT_S))
        kwargs = dict(
            project=logger.project,
            entity=logger.entity,
            group=group,
            job_type=job_type,
            name=name,
            tags=list(tags),
            config=config,
            id=run_id,
            resume="allow" if run_id else None,
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
            # a mode wandb checks itself (logger.mode, WANDB_MODE)
            run = self.wandb.init(mode=cast(Any, mode), **kwargs)
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

    def log_epoch(self, row: EpochRow) -> None:
        """The row's metrics, namespaced (`wandb_metrics`), at the epoch's step.

        Every ``logger.heatmap_every`` epochs, the heat maps of the epochs so far at that step.
        """
        epoch = row[schema.EPOCH]
        self.rows.append(row)
        self._safely("log", lambda: self.run.log(wandb_metrics(row), step=epoch))
        if self.heatmap_every and epoch % self.heatmap_every == 0:
            self._log_heatmaps(self.rows, step=epoch)

    def finish(self, record: Record) -> None:
        """Summary, heat maps, then ``run.finish`` (failed and interrupted runs exit 1)."""
        try:
            self._safely("summary", lambda: self.run.summary.update(run_summary(record)))
            self._log_heatmaps(record.get(schema.HISTORY) or [])
        finally:
            exit_code = int(record.get(schema.STATUS) in (FAILED, INTERRUPTED))
            self._safely("finish", lambda: self.run.finish(exit_code=exit_code))

    def _log_heatmaps(self, history: list[EpochRow], step: int | None = None) -> None:
        """The heat maps of the gradient norms ``history`` holds, as W&B images, at ``step``.

        ``<key>/heatmap`` for each key of `HEATMAP_CAPTIONS` the history has; nothing
        where it has none (gradients not tracked). ``step=None``: W&B's current step, the last
        epoch's (the end of the run).
        """
        keys = [key for key in HEATMAP_CAPTIONS if any(key in row for row in history)]
        if not keys:
            return

        def images() -> dict[str, Any]:
            return {
                f"{key}/heatmap": self.wandb.Image(
                    gradient_heatmap(history, self.run.name, key), caption=HEATMAP_CAPTIONS[key]
                )
                for key in keys
            }

        self._safely("heat map", lambda: self.run.log(images(), step=step))


def wandb_metrics(row: Mapping[str, Any]) -> dict[str, Any]:
    """A history row as W&B metrics.

    ``<split>_<name>`` becomes ``<split>/<name>``, a per-layer list ``<key>/layer_NN`` (from
    01), another scalar (``lr``, ``time_s``) ``train/<key>``; the epoch is the step, not a metric.
    """
    metrics = {}
    for key, value in row.items():
        if key == schema.EPOCH:
            continue
        if isinstance(value, list):
            metrics.update({f"{key}/layer_{i + 1:02d}": v for i, v in enumerate(value)})
            continue
        split, _, name = key.partition("_")
        metrics[f"{split}/{name}" if split in SPLITS and name else f"train/{key}"] = value
    return metrics


def run_name(cfg: DictConfig, swept: Iterable[str] = ()) -> str:
    """A readable W&B run name: model label, dataset, missing rate, depth, seed, swept values.

    ``GAT-Lip Cora 100% missing depth 2 seed 0``; a dataset without missing vectors has no rate,
    a TREES run names its tree depth (``GAT TREES d=4 depth 5 seed 0``). Each key of ``swept``
    (`sweep_keys`) that the start does not name (`NAMED_KEYS`) follows as
    ``key=value``: ``... seed 0 train.lr=0.005 model.dropout=0.5``.
    """
    parts = [model_label(cfg), dataset_label(cfg.dataset.name)]
    if "depth" in cfg.dataset:
        parts.append(f"d={cfg.dataset.depth}")
    if "missing_rate" in cfg.dataset:
        parts.append(f"{missing_label(cfg.dataset.missing_rate)} missing")
    parts += [f"depth {cfg.model.depth}", f"seed {cfg.seed}"]
    parts += [f"{key}={swept_value(cfg, key)}" for key in swept if key not in NAMED_KEYS]
    return " ".join(parts)


def swept_value(cfg: DictConfig, key: str) -> Any:
    """The value of a swept ``key`` in ``cfg``; a config group's is its option's ``name``."""
    value = OmegaConf.select(cfg, key)
    return value.name if isinstance(value, DictConfig) else value


def sweep_keys(hydra_cfg: DictConfig) -> list[str]:
    """The keys a sweep varies (more than one value), ``+`` prefixes dropped, in its order."""
    return [key.lstrip("+") for key, values in grid_choices(hydra_cfg).items() if len(values) > 1]


@functools.cache
def _saved_sweep_keys(sweep_config: Path) -> tuple[str, ...]:
    """`sweep_keys` of the sweep config Hydra saved at ``sweep_config``."""
    return tuple(sweep_keys(OmegaConf.load(sweep_config).hydra))


def current_sweep_keys() -> tuple[str, ...]:
    """`sweep_keys` of the Hydra multirun this job belongs to; none outside a multirun.

    A job's own config holds its values only, not the sweep's: the sweep's config is the one
    Hydra's basic sweeper saved in the sweep folder before the first job. Under a sweeper that
    saves none, the names show no swept key beyond `NAMED_KEYS` (the tracker never stops
    a run).
    """
    hydra = _multirun()
    saved = Path(hydra.sweep.dir) / SWEEP_CONFIG_FILE if hydra else None
    return _saved_sweep_keys(saved) if saved and saved.exists() else ()


def run_summary(record: Record) -> dict[str, Any]:
    """What the W&B summary adds of a record: status, error, best epoch, max, timing.

    The best-validation epoch's metrics (`best_epoch_metrics`), the record's summary
    entries of `RECORD_SUMMARY_NAMES` and its timing as ``timing/<key>``.
    """
    summary = record.get(schema.SUMMARY)
    kept = {
        name: summary.get(key) if summary else None for key, name in RECORD_SUMMARY_NAMES.items()
    }
    timing = {f"timing/{key}": value for key, value in record.get(schema.TIMING, {}).items()}
    return {
        "status": record[schema.STATUS],
        "error": record.get(schema.ERROR),
        **best_epoch_metrics(record),
        **kept,
        **timing,
    }


def best_epoch_metrics(record: Record) -> dict[str, Any]:
    """The best-validation epoch's metrics as ``best/<name>`` (`wandb_metrics`'s names).

    The epoch is the record summary's ``best_epoch`` (``best/epoch``); per-layer values are
    left out. Empty when no epoch finished.
    """
    summary = record.get(schema.SUMMARY)
    epoch = summary.get(schema.BEST_EPOCH) if summary else None
    history = record.get(schema.HISTORY) or []
    row = next((row for row in history if row[schema.EPOCH] == epoch), None)
    if row is None:
        return {}
    scalars = {key: value for key, value in row.items() if not isinstance(value, list)}
    return {"best/epoch": epoch, **{f"best/{k}": v for k, v in wandb_metrics(scalars).items()}}


def gradient_heatmap(history: list[EpochRow], title: str, key: str = schema.GRAD_ATTN):
    """The run's gradient norms ``key`` as an RGB array (Fig. 2's panel for one run).

    ``key``: ``grad_attn`` (the attention parameters', as Fig. 2) or ``grad_layer`` (the whole
    layer's).
    """
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from lipnorm_exp.records.heatmap import draw_gradient_heatmap

    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    image = draw_gradient_heatmap(ax, history, key=key)
    fig.colorbar(image, ax=ax, label=f"{HEATMAP_CAPTIONS[key].split(' per ')[0]} (log scale)")
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
        found = netrc.netrc(os.environ.get("NETRC")).authenticators(host or "")
    except (OSError, netrc.NetrcParseError):
        found = None
    return "online" if found else "offline"


def _hydra() -> DictConfig | None:
    """Hydra's config of the running job, or ``None`` outside Hydra."""
    from hydra.core.hydra_config import HydraConfig

    # a DictConfig of the HydraConf schema
    return cast(DictConfig, HydraConfig.get()) if HydraConfig.initialized() else None


def _multirun() -> DictConfig | None:
    """Hydra's config of the running job when it is a job of a multirun, else ``None``."""
    from hydra.types import RunMode

    hydra = _hydra()
    return hydra if hydra is not None and hydra.mode == RunMode.MULTIRUN else None


def current_preset() -> str | None:
    """The preset of the running job (``+experiment=<preset>``), or ``None``."""
    hydra = _hydra()
    return hydra.runtime.choices.get("experiment") if hydra is not None else None


def run_group(cfg: DictConfig) -> str | None:
    """The W&B group of a run.

    ``logger.group``, else ``<preset>/<scale>/<protocol>`` for a preset's run
    (``missing_vector/quick/standard``), else the sweep folder's name inside a Hydra multirun,
    else ``None``.
    """
    if cfg.logger.group:
        return cfg.logger.group
    preset = current_preset()
    if preset:
        return f"{preset}/{cfg.scale}/{cfg.protocol.name}"
    hydra = _multirun()
    return Path(hydra.sweep.dir).name if hydra else None


def wandb_config(cfg: DictConfig, run_id: str) -> dict[str, Any]:
    """The W&B run config: the keys that define the run, resolved, and its ``run_id``.

    The keys its run id hashes ([`defining_config`][lipnorm_exp.records.identity.defining_config]),
    so that W&B's filters and parallel-coordinate plots compare runs by what they compute: how a
    run was started and where it wrote (``force``, ``device``, ``paths``, ``logger``, a
    preset's ``grid``) are not there. The preset, scale and protocol are its group and job
    type, its ``tags`` its tags.
    """
    return {**defining_config(cfg), "run_id": run_id}


def wandb_run_id(cfg: DictConfig, run_id: str) -> str:
    """The W&B run id of a run: its own id, so a resumed run continues the same W&B run.

    A forced re-run (``force=true``) computes the run again from its start: it gets a W&B run
    of its own (``<run_id>-<UTC time>``), never steps appended to the finished one's.
    """
    if not cfg.get("force"):
        return run_id
    return f"{run_id}-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}"


def make_tracker(cfg: DictConfig, run_id: str) -> NullTracker:
    """The tracker named by ``logger.name``.

    Raises:
        ConfigError: ``logger=wandb`` without the ``wandb`` package
            (`check_tracker_package`; the CLI refuses it
            before it runs anything).
    """
    if cfg.logger.name != "wandb":
        return NullTracker()
    check_tracker_package(cfg.logger)
    return WandbTracker(
        cfg.logger,
        wandb_config(cfg, run_id),
        run_name(cfg, current_sweep_keys()),
        group=run_group(cfg),
        job_type=current_preset(),
        tags=list(cfg.get("tags", [])),
        run_id=wandb_run_id(cfg, run_id),
    )


__all__ = [
    "WandbTracker",
    "best_epoch_metrics",
    "current_preset",
    "current_sweep_keys",
    "default_mode",
    "make_tracker",
    "run_group",
    "run_name",
    "run_summary",
    "sweep_keys",
    "wandb_config",
    "wandb_run_id",
    "wandb_metrics",
]
