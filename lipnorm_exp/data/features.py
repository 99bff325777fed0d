"""How a loader lays out node features: a dense matrix, or a sparse one where that is faster.

``dataset.feature_layout`` (`lipnorm_exp.data.FEATURE_LAYOUTS`): ``dense`` keeps the
features a dense tensor (numerics version 1); ``sparse`` makes them a CSR matrix, which the
models' input Linear multiplies as one (`lipnorm_exp.nn.sparse_input.linear`); ``auto``
makes them sparse where at most `AUTO_MAX_DENSITY` of the entries are non-zero. The layout
is chosen last, after normalisation and the missing vectors (which keep zeros zero).
"""

import warnings

import torch
from torch import Tensor

__all__ = ["AUTO_MAX_DENSITY", "dense", "laid_out"]

#: the largest fraction of non-zero entries ``auto`` multiplies as a sparse matrix. Measured on
#: one thread of a 2-core AMD EPYC (torch 2.13): the input Linear of a 2708 x 1433 matrix with
#: 128 outputs, forward and backward, is 16x faster as sparse products at 1% non-zero, 2x at
#: 10%, as fast at 20% and slower above (the same at 128 input features).
AUTO_MAX_DENSITY = 0.15


def laid_out(x: Tensor, layout: str) -> Tensor:
    """``x`` (a dense ``[N, F]`` feature matrix) in the ``layout`` asked for."""
    if layout == "dense" or x.dim() != 2:
        return x
    if layout == "auto" and x.count_nonzero().item() > AUTO_MAX_DENSITY * x.numel():
        return x
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Sparse CSR tensor support", UserWarning)
        return x.to_sparse_csr()


def dense(x: Tensor) -> Tensor:
    """``x`` as a dense tensor (whatever its layout)."""
    return x if x.layout == torch.strided else x.to_dense()
