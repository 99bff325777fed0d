"""What the trainer sees of a dataset: batches with split masks, sizes, loss and metric."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch_geometric.data import Data

Metric = Callable[[torch.Tensor, torch.Tensor], float]


def accuracy(y_true: torch.Tensor, logits: torch.Tensor) -> float:
    """Fraction of rows whose arg-max logit is the label (``nan`` for no rows)."""
    if y_true.numel() == 0:
        return float("nan")
    return (logits.argmax(dim=-1) == y_true).float().mean().item()


@dataclass
class Task:
    """A prediction task in the one shape every trainer loop takes.

    Every batch is a `Data` with ``x``, ``edge_index``, ``y`` and
    boolean node masks ``train_mask``, ``val_mask`` and ``test_mask`` marking the nodes whose
    prediction counts for that split (all nodes of a full-batch graph, a mini-batch of a big
    graph, or the roots of a batch of trees). Training takes the loss over ``train_mask`` of
    each batch of ``train_batches``; evaluation runs one forward pass per batch of
    ``eval_batches`` and scores every split on it.

    Args:
        name: dataset name as configured.
        train_batches: iterable re-read every epoch.
        eval_batches: iterable re-read every evaluation.
        num_features: input feature width.
        num_outputs: width of the model's output (classes, or binary tasks).
        loss: ``"cross_entropy"`` (labels are class indices) or ``"bce"`` (multi-label 0/1).
        metric_name: what ``*_acc`` in the records holds: ``"accuracy"`` or ``"rocauc"``.
        metric: ``metric(y_true, logits) -> float`` over the rows of one split.
        generators: the generators that ``train_batches`` draws from besides torch's global
            one, so that a resumed run restores them (`lipnorm_exp.training.checkpoint`).
    """

    name: str
    train_batches: Iterable[Data]
    eval_batches: Iterable[Data]
    num_features: int
    num_outputs: int
    loss: str = "cross_entropy"
    metric_name: str = "accuracy"
    metric: Metric = accuracy
    generators: tuple[torch.Generator, ...] = ()

    @classmethod
    def full_batch(cls, name: str, data: Data, num_outputs: int, **kwargs) -> "Task":
        """A task on one graph trained and evaluated as a whole."""
        return cls(name, [data], [data], data.num_features, num_outputs, **kwargs)
