"""`shifted_softmax` gives PyG's softmax weights and gradients bit for bit."""

import pytest
import torch
from torch_geometric.utils import softmax

from lipnorm_exp.nn.shifted_softmax import shifted_softmax


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(500,), (500, 4)])
def test_weights_and_gradients_are_pygs(dtype, shape):
    torch.manual_seed(0)
    score = (10 * torch.randn(shape, dtype=dtype)).requires_grad_()
    index = torch.randint(0, 60, (shape[0],))  # 80 targets: some without in-edges
    ours, pygs = shifted_softmax(score, index, None, 80), softmax(score, index, None, 80)
    assert torch.equal(ours, pygs)
    weights = torch.randn(shape, dtype=dtype)
    (grad_ours,) = torch.autograd.grad((ours * weights).sum(), score)
    (grad_pygs,) = torch.autograd.grad((pygs * weights).sum(), score)
    assert torch.equal(grad_ours, grad_pygs)


def test_all_minus_infinity_is_pygs():
    score = torch.tensor([-torch.inf, -torch.inf, 1.0])
    index = torch.tensor([0, 0, 1])
    assert torch.equal(
        shifted_softmax(score, index, None, 2).isnan(), softmax(score, index, None, 2).isnan()
    )
