r"""Empirical Lipschitz constants of graph layers: spectral norms of their Jacobians.

For a graph layer $f_l$ and the node features $H^{(l-1)}$ it receives on a
batch, the local Lipschitz constant is the largest singular value of the Jacobian,

$$
\hat L_l = \left\|J_{f_l}(H^{(l-1)})\right\|_2
= \max_{\|V\|_F = 1} \left\|J_{f_l}(H^{(l-1)})\,V\right\|_F
\;\le\; L(f_l),
$$

a lower bound of the layer's Lipschitz constant (the paper's Eq. 2 takes the supremum over
all inputs; LipschitzNorm bounds it by Corollaries 1 and 2). It is found by power iteration
on $J^\top J$, one Jacobian-vector product (``torch.func.jvp``) and one
vector-Jacobian product (``torch.func.vjp``) per step, so the Jacobian is never formed.
The start vector comes from its own generator: the estimate leaves the global random
state, hence training, unchanged.
"""

from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.func import jvp, vjp
from torch_geometric.data import Data

from lipnorm_exp.models.base import DepthwiseGNN

#: power-iteration steps of `layer_lipschitz` (each one a JVP and a VJP)
ITERATIONS = 10


def spectral_norm(
    fn: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    iterations: int = ITERATIONS,
    seed: int = 0,
) -> float:
    r"""Largest singular value of the Jacobian of ``fn`` at ``x``, by power iteration.

    $$
    v_{t+1} = \frac{J^\top J v_t}{\|J^\top J v_t\|}, \qquad
    \hat\sigma = \|J v_T\| \le \sigma_{\max}(J)
    $$

    Args:
        fn: a function of one tensor (the other inputs fixed).
        x: the point where the Jacobian is taken.
        iterations: power-iteration steps $T$. (default: `10`)
        seed: seed of the random start vector $v_0$. (default: `0`)

    Returns:
        $\hat\sigma$; the error shrinks like $(\sigma_2 / \sigma_1)^{2T}$.
    """
    x = x.detach()
    generator = torch.Generator(device=x.device).manual_seed(seed)
    v = torch.randn(x.shape, generator=generator, device=x.device, dtype=x.dtype)
    pullback = vjp(fn, x)[1]
    for _ in range(iterations):
        v = v / v.norm().clamp_min(torch.finfo(v.dtype).tiny)
        (v,) = pullback(jvp(fn, (x,), (v,))[1])
    v = v / v.norm().clamp_min(torch.finfo(v.dtype).tiny)
    return jvp(fn, (x,), (v,))[1].norm().item()


def _of_first(
    conv: nn.Module, rest: tuple[Any, ...], kwargs: dict[str, Any]
) -> Callable[[torch.Tensor], torch.Tensor]:
    """``conv`` as a function of its first input, its other inputs fixed."""
    return lambda h: conv(h, *rest, **kwargs)


def layer_lipschitz(model: DepthwiseGNN, batch: Data, iterations: int = ITERATIONS) -> list[float]:
    """`spectral_norm` of each graph layer of ``model`` at the input it receives on ``batch``.

    The model runs in evaluation mode (no dropout) and is put back in its former mode. Each
    layer's other inputs (edges, GCNII's initial features) are held fixed.

    Args:
        model: a `DepthwiseGNN` (its ``convs`` are the layers).
        batch: a graph with ``x`` and ``edge_index`` (and ``batch`` for PairNorm), on the
            model's device.
        iterations: power-iteration steps per layer. (default: `10`)

    Returns:
        One estimate per graph layer, first layer first.
    """
    calls: list[tuple[nn.Module, tuple, dict]] = []
    hooks = [
        conv.register_forward_hook(
            lambda module, args, kwargs, _: calls.append((module, args, kwargs)),
            with_kwargs=True,
        )
        for conv in model.convs
    ]
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            model(batch.x, batch.edge_index, getattr(batch, "batch", None))
        for hook in hooks:  # before the estimates call the layers again
            hook.remove()
        return [
            spectral_norm(_of_first(conv, args[1:], kwargs), args[0], iterations)
            for conv, args, kwargs in calls
        ]
    finally:
        for hook in hooks:
            hook.remove()
        model.train(was_training)


__all__ = ["ITERATIONS", "layer_lipschitz", "spectral_norm"]
