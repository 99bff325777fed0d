"""One training epoch and one evaluation pass over a `Task`.

An evaluation whose model outputs are not all finite raises `NonFiniteError`
instead of scoring them: the arg-max of NaN logits is class 0, an accuracy of nothing. An
optimiser step that overflows (an update too large for the parameters' dtype, as Adam's with
``train.lr=1e300``) ends the epoch with a NaN loss, so the run ends as diverged.
"""

import logging
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.data import Data

from lipnorm_exp.data import SPLITS
from lipnorm_exp.data.task import Task
from lipnorm_exp.models.base import DepthwiseGNN
from lipnorm_exp.records.schema import Scores

log = logging.getLogger(__name__)

#: what torch says when a step's scalar does not fit the parameters' dtype
OVERFLOW = "without overflow"


class NonFiniteError(ArithmeticError):
    """A loss or the outputs of the model hold NaN or infinity; nothing is scored from them."""


class StepOverflowError(NonFiniteError):
    """An optimiser step whose update does not fit the parameters' dtype (`step`)."""


@dataclass
class EpochOutcome:
    """What one epoch of one run gave: its training loss, gradient norms, and metrics.

    Attributes:
        loss: mean training loss.
        grads: mean ``[depth, 2]`` gradient norms (`gradient_norms`), when tracked.
        metrics: loss and metric of every split (`score`), or ``None`` where the epoch
            diverged.
        diverged: what was not finite (the training loss, the outputs), or ``None``.
    """

    loss: float
    grads: torch.Tensor | None
    metrics: Scores | None
    diverged: str | None = None

    @classmethod
    def overflowed(cls, overflow: "StepOverflowError") -> "EpochOutcome":
        """An epoch whose optimiser step overflowed: diverged, no loss, nothing scored."""
        return cls(math.nan, None, None, str(overflow))


def outcome(loss: float, grads: torch.Tensor | None, scores: Callable[[], Scores]) -> EpochOutcome:
    """The epoch's outcome from its training ``loss``: diverged, or scored by ``scores()``.

    A non-finite loss, or outputs that ``scores`` finds not finite, make a divergence, named by
    what was not finite (an overflowed step: `EpochOutcome.overflowed`).
    """
    try:
        if not math.isfinite(loss):
            raise NonFiniteError("non-finite training loss")
        return EpochOutcome(loss, grads, scores())
    except NonFiniteError as divergence:
        return EpochOutcome(loss, grads, None, str(divergence))


def task_loss(task: Task, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over class indices, or binary cross-entropy over 0/1 targets."""
    if task.loss == "bce":
        return F.binary_cross_entropy_with_logits(logits, y.float())
    return F.cross_entropy(logits, y.view(-1))


def _forward(model: nn.Module, batch: Data, device: torch.device) -> tuple[torch.Tensor, Data]:
    batch = batch.to(device)
    return model(batch.x, batch.edge_index, getattr(batch, "batch", None)), batch


def gradient_norms(model: DepthwiseGNN) -> torch.Tensor:
    """Per graph layer: [L2 norm of the attention parameters' gradient, of the layer's].

    Returns a ``[depth, 2]`` tensor (0 where a layer has no attention parameters).
    """
    rows = []
    for attention, params in model.layer_parameters():
        rows.append(torch.stack([_grad_norm(attention), _grad_norm(params)]))
    return torch.stack(rows)


def _grad_norm(params: list[nn.Parameter]) -> torch.Tensor:
    grads = [p.grad.detach().pow(2).sum() for p in params if p.grad is not None]
    if not grads:
        return torch.zeros(())
    return torch.stack(grads).sum().sqrt().cpu()


def train_epoch(
    model: DepthwiseGNN,
    optimizer: torch.optim.Optimizer,
    task: Task,
    device: torch.device,
    track_gradients: bool = False,
) -> tuple[float, torch.Tensor | None]:
    """One pass over ``task.train_batches``.

    Returns the mean training loss and, if asked, the mean `gradient_norms` over the
    optimiser steps of the epoch.

    Raises:
        StepOverflowError: a step overflowed the parameters' dtype (`step`).
    """
    model.train()
    losses, norms = [], []
    for batch in task.train_batches:
        if not bool(batch.train_mask.any()):  # a random part may hold no training node
            continue
        optimizer.zero_grad()
        logits, batch = _forward(model, batch, device)
        mask = batch.train_mask
        loss = task_loss(task, logits[mask], batch.y[mask])
        loss.backward()
        if track_gradients:
            norms.append(gradient_norms(model))
        step(optimizer)
        losses.append(loss.detach())
    mean_loss = torch.stack(losses).mean().item()
    return mean_loss, torch.stack(norms).mean(dim=0) if norms else None


def step(optimizer: torch.optim.Optimizer) -> None:
    """One optimiser step.

    Raises:
        StepOverflowError: its update overflowed the parameters' dtype (logged as a warning).
        RuntimeError: any other error of the step.
    """
    try:
        optimizer.step()
    except RuntimeError as error:
        if OVERFLOW not in str(error):
            raise
        log.warning("the optimiser step overflowed (%s): the run diverged", error)
        raise StepOverflowError("the optimiser step overflowed the parameters' dtype") from error


@torch.no_grad()
def evaluate(model: nn.Module, task: Task, device: torch.device) -> Scores:
    """Loss and metric of every split, one forward pass per batch of ``task.eval_batches``.

    Raises:
        NonFiniteError: some output of the model is NaN or infinite.
    """
    model.eval()
    return score(task, (_forward(model, batch, device) for batch in task.eval_batches))


def score(task: Task, outputs: Iterable[tuple[torch.Tensor, Data]]) -> Scores:
    """The loss and metric of every split from ``(outputs, batch)`` pairs.

    Returns:
        [`Scores`][lipnorm_exp.records.schema.Scores].

    Raises:
        NonFiniteError: some output is NaN or infinite.
    """
    logits: dict[str, list[torch.Tensor]] = {split: [] for split in SPLITS}
    targets: dict[str, list[torch.Tensor]] = {split: [] for split in SPLITS}
    for out, batch in outputs:
        if not bool(torch.isfinite(out).all()):
            raise NonFiniteError("the model's outputs are not all finite")
        for split in SPLITS:
            mask = batch[f"{split}_mask"]
            logits[split].append(out[mask].cpu())
            targets[split].append(batch.y[mask].cpu())
    train_loss, train_acc = _scored(task, logits["train"], targets["train"])
    val_loss, val_acc = _scored(task, logits["val"], targets["val"])
    test_loss, test_acc = _scored(task, logits["test"], targets["test"])
    return Scores(
        train_loss=train_loss,
        train_acc=train_acc,
        val_loss=val_loss,
        val_acc=val_acc,
        test_loss=test_loss,
        test_acc=test_acc,
    )


def _scored(
    task: Task, logits: list[torch.Tensor], targets: list[torch.Tensor]
) -> tuple[float, float]:
    """The loss (NaN where the split holds no node) and the metric of one split's outputs."""
    out, y = torch.cat(logits), torch.cat(targets)
    loss = task_loss(task, out, y).item() if y.numel() else float("nan")
    return loss, task.metric(y, out)
