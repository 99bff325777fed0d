"""One run's state between epochs: its schedule, early stop, history, best epoch and outcome.

`RunState` is what the training loop (`lipnorm_exp.training.launch.fit`) hands each
epoch's numbers to, whether its engine trains one run or several together: every run keeps the same
rows, selects its best epoch and stops on the same rule.
"""

import math
import time
from collections.abc import Callable
from typing import Any, Literal, Protocol, TypedDict

import torch
from omegaconf import DictConfig

from lipnorm_exp.data import MONITORED
from lipnorm_exp.models.base import DepthwiseGNN
from lipnorm_exp.records import COMPLETED, DIVERGED, EPOCH_TIME_KEY, schema
from lipnorm_exp.records.schema import EpochRow, Record, Scores, Status, Summary, epoch_value
from lipnorm_exp.training.checkpoint import copied

__all__ = [
    "MIN_IMPROVEMENT",
    "EarlyStopping",
    "NullTracker",
    "RunResult",
    "RunState",
    "Tracker",
    "TrackerFactory",
    "make_optimizer",
    "make_scheduler",
    "summarise",
]


class Tracker(Protocol):
    """What receives a run's epochs as they end, and its record once it ends."""

    def log_epoch(self, row: EpochRow) -> None:
        """One epoch's row of the history."""

    def finish(self, record: Record) -> None:
        """The run's record, written: the run is over (finished, stopped or failed)."""


class NullTracker:
    """Tracks nothing: the run record is the only output (``logger=none``)."""

    def log_epoch(self, row: EpochRow) -> None:
        """Per-epoch metrics (ignored)."""

    def finish(self, record: Record) -> None:
        """End of run (nothing to close)."""


#: makes a run's tracker from its config and run id (the CLI's:
#: `lipnorm_exp.cli.tracking.make_tracker`, which reads ``logger``)
TrackerFactory = Callable[[DictConfig, str], Tracker]


def make_optimizer(model: DepthwiseGNN, train: DictConfig) -> torch.optim.Adam:
    """Adam over ``model``'s parameters with ``train.lr`` and ``train.weight_decay``.

    Where ``train.conv_weight_decay`` is set, the graph layers' parameters (``model.convs``) take
    that weight decay instead and the rest (the input and output Linears, the normalisations)
    keep ``train.weight_decay``: GCNII's own setup (Chen et al., 2020) puts 0.01 on its
    convolutions and 5e-4 on its Linears.

    The step updates the parameters together (``foreach=True``, the CUDA default, here on every
    device): the same arithmetic parameter by parameter, so the same numbers, in fewer calls (a
    deep stack's step on the CPU about twice as fast).
    """
    if train.conv_weight_decay is None:
        return torch.optim.Adam(
            model.parameters(), lr=train.lr, weight_decay=train.weight_decay, foreach=True
        )
    conv_parameters = list(model.convs.parameters())
    in_convs = {id(parameter) for parameter in conv_parameters}
    others = [parameter for parameter in model.parameters() if id(parameter) not in in_convs]
    groups = [
        {"params": conv_parameters, "weight_decay": train.conv_weight_decay},
        {"params": others, "weight_decay": train.weight_decay},
    ]
    return torch.optim.Adam(groups, lr=train.lr, foreach=True)


def make_scheduler(
    optimizer: torch.optim.Optimizer, train: DictConfig
) -> torch.optim.lr_scheduler.ReduceLROnPlateau | None:
    """The learning-rate schedule of ``train.scheduler``, or ``None`` for ``none``.

    ``plateau`` multiplies the lr by ``scheduler_factor`` once ``scheduler_metric`` has not
    improved for ``scheduler_patience`` epochs: the validation loss as the authors' scripts,
    or the training accuracy as Alon & Yahav's (an accuracy must rise by more than 1e-4,
    their absolute threshold).
    """
    if train.scheduler == "none":
        return None
    mode: Literal["min", "max"]
    threshold_mode: Literal["rel", "abs"]
    if MONITORED[train.scheduler_metric]:
        mode, threshold_mode = "max", "abs"
    else:
        mode, threshold_mode = "min", "rel"
    return torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer,
        mode=mode,
        factor=train.scheduler_factor,
        patience=train.scheduler_patience,
        threshold_mode=threshold_mode,
    )


#: the least rise of an accuracy that counts as an improvement for early stopping
MIN_IMPROVEMENT = 1e-4


class EarlyStopping:
    """Stop after ``train.patience`` epochs without a better ``train.patience_metric``.

    An accuracy counts as better when it rises by more than `MIN_IMPROVEMENT` (Alon &
    Yahav's rule); a run whose monitored accuracy reaches 1 stops at once, having nothing left
    to improve. ``patience=0`` never stops.
    """

    def __init__(self, train: DictConfig):
        self.patience = train.patience
        self.metric = train.patience_metric
        self.best: float | None = None
        self.best_epoch = 0

    def stop(self, row: EpochRow) -> bool:
        """Take one epoch's row; whether training should end after it."""
        if not self.patience:
            return False
        value = epoch_value(row, self.metric)
        if self.best is None or value > self.best + MIN_IMPROVEMENT:
            self.best, self.best_epoch = value, row[schema.EPOCH]
        return value >= 1.0 or row[schema.EPOCH] - self.best_epoch >= self.patience


def may_be_best(row: EpochRow) -> bool:
    """Whether an epoch may be a run's best: its training and validation losses are finite.

    An epoch whose validation loss overflowed scored nothing trustworthy, whatever its
    accuracy says.
    """
    return math.isfinite(row[schema.TRAIN_STEP_LOSS]) and math.isfinite(row[schema.VAL_LOSS])


def summarise(
    history: list[EpochRow], best: EpochRow | None, metric: str, diverged_at: int | None
) -> Summary:
    """Summary metrics of a run from its history and best-validation epoch."""
    train_accs = [row[schema.TRAIN_ACC] for row in history]
    return Summary(
        metric=metric,
        best_epoch=best[schema.EPOCH] if best else None,
        best_val_acc=best[schema.VAL_ACC] if best else None,
        test_acc_at_best_val=best[schema.TEST_ACC] if best else None,
        train_acc_at_best_val=best[schema.TRAIN_ACC] if best else None,
        best_train_acc=max(train_accs) if train_accs else None,
        final_train_acc=train_accs[-1] if train_accs else None,
        epochs_run=len(history),
        diverged_at_epoch=diverged_at,
    )


class RunState:
    """The epochs of one run so far, and whether it goes on.

    The best epoch is the one with the highest validation accuracy (the first one on ties).
    A run ends after ``train.epochs`` epochs, on `EarlyStopping`, or at a divergence
    (`diverge`), which leaves no row: the history holds the epochs before it.

    Args:
        optimizer: the run's optimiser (its lr is logged and scheduled).
        train: the ``train`` config group.
        tracker: receives every row.
    """

    def __init__(self, optimizer: torch.optim.Optimizer, train: DictConfig, tracker: Tracker):
        self.optimizer = optimizer
        self.train = train
        self.tracker = tracker
        self.scheduler = make_scheduler(optimizer, train)
        self.stopping = EarlyStopping(train)
        self.history: list[EpochRow] = []
        self.best: EpochRow | None = None
        self.status: Status = COMPLETED
        self.error: str | None = None
        self.diverged_at: int | None = None
        self.done = False
        self.epoch = 0  # the last epoch finished
        self.started = time.perf_counter()

    def state_dict(self) -> dict[str, Any]:
        """A copy of what decides the run's next epochs: optimiser, schedule, early stop, rows.

        Only a run that goes on has one worth keeping (`lipnorm_exp.training.checkpoint`): its
        status is ``completed`` so far. Rows are never changed once added, so the history is
        copied as a list of the same rows.
        """
        return {
            "epoch": self.epoch,
            "optimizer": copied(self.optimizer.state_dict()),
            "scheduler": copied(self.scheduler.state_dict()) if self.scheduler else None,
            "stopping": {"best": self.stopping.best, "best_epoch": self.stopping.best_epoch},
            "history": list(self.history),
            "best": self.best,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Go on from ``state`` (`state_dict`) as if the epochs before it had run here."""
        self.epoch = state["epoch"]
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scheduler is not None:
            self.scheduler.load_state_dict(state["scheduler"])
        self.stopping.best = state["stopping"]["best"]
        self.stopping.best_epoch = state["stopping"]["best_epoch"]
        self.history = list(state["history"])
        self.best = state["best"]

    def start_epoch(self) -> None:
        """Start the clock of the epoch's ``time_s``."""
        self.started = time.perf_counter()

    def diverge(self, epoch: int, what: str) -> None:
        """End the run as ``diverged``: ``what`` was not finite at ``epoch``."""
        self.status, self.diverged_at = DIVERGED, epoch
        self.error = f"{what} at epoch {epoch}"
        self.done = True

    def end_epoch(
        self,
        epoch: int,
        loss: float,
        metrics: Scores,
        grads: torch.Tensor | None = None,
        lipschitz: Callable[[], list[float]] | None = None,
    ) -> EpochRow:
        """Record one finished epoch; returns its row.

        Args:
            epoch: 1-based epoch number.
            loss: mean training loss of the epoch.
            metrics: loss and metric of every split (`evaluate`).
            grads: mean ``[depth, 2]`` gradient norms of the epoch, when tracked.
            lipschitz: called for the per-layer Lipschitz estimates when they are due.
        """
        row: EpochRow = {schema.EPOCH: epoch, schema.TRAIN_STEP_LOSS: loss, **metrics}
        if self.scheduler is not None:
            row[schema.LR] = self.optimizer.param_groups[0]["lr"]
            self.scheduler.step(epoch_value(row, self.train.scheduler_metric))
        row[EPOCH_TIME_KEY] = time.perf_counter() - self.started
        if grads is not None:
            row[schema.GRAD_ATTN] = grads[:, 0].tolist()
            row[schema.GRAD_LAYER] = grads[:, 1].tolist()
        due = epoch == 1 or epoch % self.train.lipschitz_every == 0
        if self.train.estimate_lipschitz and due and lipschitz is not None:
            row[schema.LIPSCHITZ] = lipschitz()
        self.history.append(row)
        self.epoch = epoch
        self.tracker.log_epoch(row)
        if may_be_best(row) and (
            self.best is None or row[schema.VAL_ACC] > self.best[schema.VAL_ACC]
        ):
            self.best = row
        self.done = self.stopping.stop(row) or epoch >= self.train.epochs
        return row

    def result(self, metric: str) -> "RunResult":
        """``status``, ``error``, ``summary`` and ``history`` as they go into the record."""
        return RunResult(
            status=self.status,
            error=self.error,
            summary=summarise(self.history, self.best, metric, self.diverged_at),
            history=self.history,
        )


class RunResult(TypedDict):
    """What a run's training gives its record (`RunState.result`), in the record's order."""

    status: Status
    error: str | None
    summary: Summary
    history: list[EpochRow]
