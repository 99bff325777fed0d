r"""A Linear layer applied to sparse input features: one sparse-dense product each way.

Bag-of-words features (Planetoid's: about 1% of the entries non-zero) make the input Linear
$H^{(0)} = X W^\top + b$ most of a shallow model's work when $X$ is dense. With
$X$ a CSR matrix, the forward pass and the weight's gradient are both sparse-dense
products:

$$
H^{(0)} = X W^\top + b, \qquad
\frac{\partial L}{\partial W} = \Big(X^\top \frac{\partial L}{\partial H^{(0)}}\Big)^\top,
\qquad \frac{\partial L}{\partial b} = \mathbf{1}^\top \frac{\partial L}{\partial H^{(0)}},
$$

with $X^\top$ transposed once per feature matrix and kept while that matrix lives. The
features get no gradient (they are data). The products equal the dense ones up to rounding
(the terms are added in another order).
"""

import warnings

import torch
from torch import Tensor, nn
from torch.utils.weak import WeakIdKeyDictionary

from lipnorm_exp.nn.csr_messages import CSR_DTYPES

__all__ = ["SparseLinear", "linear", "transposed"]

#: each sparse feature matrix's transpose (CSR), kept while the matrix lives
_TRANSPOSES = WeakIdKeyDictionary()


def transposed(x: Tensor) -> Tensor:
    """The CSR transpose of the CSR matrix ``x``, made once per matrix."""
    found = _TRANSPOSES.get(x)
    if found is None:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Sparse CSR tensor support", UserWarning)
            found = x.t().to_sparse_csr()
        _TRANSPOSES[x] = found
    return found


class SparseLinear(torch.autograd.Function):
    r"""$X W^\top + b$ of a CSR ``X``, differentiated in ``W`` and ``b`` only."""

    @staticmethod
    def forward(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        """The product, and the bias added where there is one."""
        if bias is None:
            return torch.mm(x, weight.t())
        return torch.addmm(bias, x, weight.t())

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        """Keep ``X`` for the backward pass (its transpose is made there, once)."""
        ctx.x = inputs[0]
        ctx.has_bias = inputs[2] is not None

    @staticmethod
    def backward(ctx, grad: Tensor):
        """The gradients of ``W`` and ``b``; ``X`` gets none."""
        grad_weight = torch.mm(transposed(ctx.x), grad).t() if ctx.needs_input_grad[1] else None
        grad_bias = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return None, grad_weight, grad_bias


def linear(x: Tensor, layer: nn.Linear) -> Tensor:
    """``layer(x)``, as sparse-dense products where ``x`` is a CSR matrix.

    A CSR ``x`` of a dtype the sparse kernels do not take here (half precision on the CPU), or of
    another dtype than the layer's, is made dense first.
    """
    if x.layout != torch.sparse_csr:
        return layer(x)
    weight = layer.weight
    if x.dtype != weight.dtype or (x.device.type == "cpu" and x.dtype not in CSR_DTYPES):
        return layer(x.to_dense().to(weight.dtype))
    return SparseLinear.apply(x, weight, layer.bias)
