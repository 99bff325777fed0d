"""The input Linear on sparse features: the dense Linear's values and gradients, by other sums."""

import pytest
import torch
from torch import nn

from lipnorm_exp.nn.sparse_input import SparseLinear, linear, transposed


def bag_of_words(rows=50, columns=40, density=0.05, seed=0, dtype=torch.float32):
    generator = torch.Generator().manual_seed(seed)
    mask = torch.rand(rows, columns, generator=generator) < density
    return (mask * torch.rand(rows, columns, generator=generator)).to(dtype)


@pytest.mark.parametrize("bias", [True, False])
def test_a_csr_input_gives_the_dense_linears_outputs_and_gradients(bias):
    x = bag_of_words()
    layer = nn.Linear(x.size(1), 8, bias=bias)
    twin = nn.Linear(x.size(1), 8, bias=bias)
    twin.load_state_dict(layer.state_dict())
    grad = torch.randn(x.size(0), 8)
    out = linear(x.to_sparse_csr(), layer)
    out.backward(grad)
    expected = x @ twin.weight.t() + (twin.bias if bias else 0)  # by hand, dense
    expected.backward(grad)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(layer.weight.grad, twin.weight.grad)
    if bias:
        torch.testing.assert_close(layer.bias.grad, twin.bias.grad)


def test_the_sparse_products_pass_gradcheck_in_float64():
    x = bag_of_words(rows=12, columns=9, density=0.3, dtype=torch.float64).to_sparse_csr()
    weight = torch.randn(4, 9, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda w, b: SparseLinear.apply(x, w, b), (weight, bias))


def test_the_transpose_is_made_once_per_matrix():
    x = bag_of_words().to_sparse_csr()
    first = transposed(x)
    assert transposed(x) is first
    torch.testing.assert_close(first.to_dense(), x.to_dense().t())


def test_a_dense_input_is_the_layers_own_call():
    x = bag_of_words()
    layer = nn.Linear(x.size(1), 3)
    assert torch.equal(linear(x, layer), layer(x))


def test_a_csr_input_of_another_dtype_than_the_layer_is_made_dense_first():
    x = bag_of_words()
    layer = nn.Linear(x.size(1), 3).double()
    out = linear(x.to_sparse_csr(), layer)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, layer(x.double()))
