"""LipschitzNorm in float16 and bfloat16: the norms are taken in float32, so features whose
squared norms overflow float16 (norms past 181) give finite outputs and gradients, close to the
float32 computation."""

import pytest
import torch

from lipnorm_exp.nn import (
    GATLayer,
    GATLipschitzNorm,
    GATv2Layer,
    GTLayer,
    GTLipschitzNorm,
    LipschitzMultiheadAttention,
)

N, F_IN, H, C = 10, 5, 2, 4
HALF = [torch.float16, torch.bfloat16]
#: relative error of a value rounded to each dtype, times a margin for a few operations
TOL = {torch.float16: 1e-2, torch.bfloat16: 5e-2}


def graph():
    gen = torch.Generator().manual_seed(0)
    return 100 * torch.randn(N, F_IN, generator=gen), torch.randint(0, N, (2, 30), generator=gen)


def assert_near(got, want, dtype):
    """Finite and within TOL of the float32 value, relative to its largest entry."""
    assert torch.isfinite(got).all()
    assert (got.float() - want).abs().max() <= TOL[dtype] * want.abs().max()


@pytest.mark.parametrize("dtype", HALF)
def test_norms_of_large_features_do_not_overflow(dtype):
    """||z|| ~ 250 per head: ||z_i||^2 + max ||z_j||^2 is past float16's largest value."""
    x, edge_index = graph()
    z = 250 * torch.nn.functional.normalize(torch.randn(N, H, C), dim=-1)
    att, score = torch.randn(H, 2 * C), 100 * torch.randn(edge_index.size(1), H)
    want = GATLipschitzNorm()(score, z, att, edge_index)
    assert_near(
        GATLipschitzNorm()(score.to(dtype), z.to(dtype), att.to(dtype), edge_index), want, dtype
    )
    q, k, v = (300 * torch.nn.functional.normalize(torch.randn(N, H, C), dim=-1) for _ in range(3))
    want = GTLipschitzNorm()(score, q, k, v, edge_index)
    half = [t.to(dtype) for t in (score, q, k, v)]
    assert_near(GTLipschitzNorm()(*half, edge_index), want, dtype)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("cls", [GATLayer, GTLayer, GATv2Layer])
def test_layers_forward_and_backward(cls, dtype):
    torch.manual_seed(1)
    layer = cls(F_IN, C, heads=H, norm="lip")
    x, edge_index = graph()
    x32 = x.clone().requires_grad_()
    want = layer(x32, edge_index)
    (want_grad,) = torch.autograd.grad(want.sum(), x32)
    x16 = x.to(dtype).requires_grad_()
    got = layer.to(dtype)(x16, edge_index)
    (grad,) = torch.autograd.grad(got.float().sum(), x16)
    assert_near(got, want, dtype)
    assert_near(grad, want_grad, dtype)


@pytest.mark.parametrize("dtype", HALF)
def test_multihead_attention_forward_and_backward(dtype):
    torch.manual_seed(2)
    layer = LipschitzMultiheadAttention(8, 2, batch_first=True, norm="lip")
    query, key = 300 * torch.randn(2, 5, 8), 300 * torch.randn(2, 6, 8)
    padding = torch.zeros(2, 6, dtype=torch.bool)
    padding[0, -2:] = True
    inputs = [query.requires_grad_(), key.requires_grad_()]
    want, want_weights = layer(query, key, key, key_padding_mask=padding)
    want_grads = torch.autograd.grad(want.sum(), inputs)
    half = [t.detach().to(dtype).requires_grad_() for t in (query, key)]
    got, weights = layer.to(dtype)(half[0], half[1], half[1], key_padding_mask=padding)
    grads = torch.autograd.grad(got.float().sum(), half)
    assert_near(got, want, dtype)
    assert_near(weights, want_weights, dtype)
    for g, w in zip(grads, want_grads, strict=True):
        assert_near(g, w, dtype)
