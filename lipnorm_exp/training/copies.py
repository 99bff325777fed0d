"""Copies of one model architecture evaluated as one batch: ``vmap`` over stacked parameters.

Each copy is a whole module with its own leaf parameters (and its own optimiser, schedule and
early stop, see `lipnorm_exp.training.together`). A forward pass stacks the parameters and
buffers of the copies asked for along a new first dimension and calls the architecture once under
``torch.func.vmap`` with ``torch.func.functional_call``: every kernel runs on all copies at
once, and the gradient of a sum of per-copy losses reaches each copy's own parameters as if it
had been trained alone. Buffers a forward pass updates in place (BatchNorm's running
statistics) are written back to their copies. Dropout draws each copy's masks from that copy's
own random stream (`lipnorm_exp.nn.copy_dropout`).
"""

from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap

from lipnorm_exp.models.base import DepthwiseGNN
from lipnorm_exp.nn.copy_dropout import RandomStream, copy_streams

__all__ = ["StackedCopies"]


def _stacked(models: Sequence[nn.Module], named: str) -> dict[str, Tensor]:
    """The parameters (``named_parameters``) or buffers (``named_buffers``) of ``models``.

    Returns ``{name: [len(models), ...]}``, each stacked along a new first dimension. Not
    ``torch.func.stack_module_state``: that one returns new leaves, detached from the models,
    while here each copy's gradient must reach its own model's parameters, which its own
    optimiser steps (`lipnorm_exp.training.together`).
    """
    tensors = [dict(getattr(model, named)()) for model in models]
    return {name: torch.stack([each[name] for each in tensors]) for name in tensors[0]}


class StackedCopies:
    """Models of one architecture run as a batch.

    Args:
        models: the copies; the first one's structure is the one called.
        streams: one random stream per copy, for its dropout masks.
    """

    def __init__(self, models: Sequence[DepthwiseGNN], streams: Sequence[RandomStream]):
        if len(models) != len(streams):
            raise ValueError(f"{len(models)} models but {len(streams)} random streams")
        self.models = list(models)
        self.streams = list(streams)
        self.structure = models[0]

    def train(self, mode: bool = True) -> None:
        """Training (or evaluation) mode on every copy."""
        for model in self.models:
            model.train(mode)

    def __call__(self, copies: Sequence[int], x: Tensor, *args) -> Tensor:
        """Outputs ``[len(copies), ...]`` of the copies ``copies`` (indices) on their inputs.

        Args:
            copies: which copies to run, in output order.
            x: each copy's input, stacked: ``[len(copies), N, F]``.
            *args: inputs shared by every copy (``edge_index``, ``batch``).
        """
        chosen = [self.models[k] for k in copies]
        params = _stacked(chosen, "named_parameters")
        buffers = _stacked(chosen, "named_buffers")

        def one(copy_params, copy_buffers, copy_x):
            return functional_call(self.structure, (copy_params, copy_buffers), (copy_x, *args))

        with copy_streams([self.streams[k] for k in copies]):
            out = vmap(one, randomness="same")(params, buffers, x)
        with torch.no_grad():
            for index, model in enumerate(chosen):
                for name, buffer in model.named_buffers():
                    buffer.copy_(buffers[name][index])
        return out
