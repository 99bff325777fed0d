"""GATv2 with the general LipschitzNorm (Eq. 15): the Lipschitz bound of the score it uses, the
two terms of its denominator, and the scale of the normalised scores."""

import pytest
import torch
import torch.nn.functional as F
from torch_geometric.utils import add_self_loops, remove_self_loops

from lipnorm_exp.nn import GATv2Layer, ScoreLipschitzNorm

N, F_IN, H, C = 6, 5, 3, 4
EDGES = torch.tensor([[1, 2, 3, 0, 1, 4, 0, 5, 2], [0, 0, 0, 1, 2, 2, 3, 3, 5]])


def loops():
    return add_self_loops(remove_self_loops(EDGES)[0], num_nodes=N)[0]


def raw_scores(layer, x, ei):
    """g~_ij = a_h . LeakyReLU(W_r x_i + W_l x_j + b), per edge and head, by hand."""
    src, dst = ei
    shape = (-1, layer.heads, layer.out_channels)
    xl, xr = layer.lin_l(x).view(shape), layer.lin_r(x).view(shape)
    return (F.leaky_relu(xr[dst] + xl[src], layer.negative_slope) * layer.att).sum(-1)


@pytest.mark.parametrize("channels", [C, 1])
@pytest.mark.parametrize("share_weights", [False, True])
@pytest.mark.parametrize("slope", [0.2, 1.5])
def test_score_lipschitz_bounds_every_row_gradient(share_weights, slope, channels):
    """L_h >= |grad of g~_ij w.r.t. its row [x_i || x_j]|, at random rows and heads; with one
    channel per head W_h is a row, Frobenius = spectral norm, and the bound is attained."""
    torch.manual_seed(0)
    layer = GATv2Layer(F_IN, channels, heads=H, negative_slope=slope, share_weights=share_weights)
    lip = layer.score_lipschitz().detach()
    worst = torch.zeros(H)
    for _ in range(20):
        row = (3 * torch.randn(2 * F_IN)).requires_grad_()
        x = torch.stack([row[:F_IN], row[F_IN:]])  # node 0 = x_i, node 1 = x_j
        score = raw_scores(layer, x, torch.tensor([[1], [0]]))[0]
        for h in range(H):
            (grad,) = torch.autograd.grad(score[h], row, retain_graph=True)
            worst[h] = torch.maximum(worst[h], grad.norm())
    assert torch.all(worst <= lip + 1e-6)
    assert torch.all(worst >= (0.999 if channels == 1 else 0.05) * lip)


def test_score_lipschitz_is_the_frobenius_product_per_head():
    torch.manual_seed(1)
    layer = GATv2Layer(F_IN, C, heads=H)
    for h in range(H):
        rows = slice(h * C, (h + 1) * C)
        w = torch.cat([layer.lin_r.weight[rows], layer.lin_l.weight[rows]], dim=1)
        want = layer.att[0, h].norm() * torch.linalg.matrix_norm(w, ord="fro")
        torch.testing.assert_close(layer.score_lipschitz()[h], want)


def test_score_term_decides_when_features_vanish():
    """With zero features only the bias scores remain: max_j |g_ij| = alpha at every node."""
    torch.manual_seed(2)
    layer = GATv2Layer(F_IN, C, heads=H)
    with torch.no_grad():
        layer.lin_l.bias.normal_()
        layer.lin_r.bias.normal_()
    ei = loops()
    x = torch.zeros(N, F_IN)
    norm = ScoreLipschitzNorm(alpha=0.5)
    g = norm(raw_scores(layer, x, ei), x, layer.score_lipschitz(), ei)
    per_node = torch.stack([g[ei[1] == i].abs().amax(dim=0) for i in range(N)])
    torch.testing.assert_close(per_node, torch.full((N, H), 0.5))


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3, 1e6])
def test_normalised_scores_stay_within_alpha(scale):
    torch.manual_seed(3)
    layer = GATv2Layer(F_IN, C, heads=H)
    with torch.no_grad():
        layer.lin_r.bias.normal_()
    ei = loops()
    x = scale * torch.randn(N, F_IN)
    raw = raw_scores(layer, x, ei)
    g = ScoreLipschitzNorm(alpha=2.0)(raw, x, layer.score_lipschitz(), ei)
    assert g.abs().max() <= 2.0 + 1e-6
    if scale >= 1e3:  # the raw scores grow with the input, the normalised ones do not
        assert raw.abs().max() > 100 * g.abs().max()


def test_without_biases_normalised_scores_ignore_input_scale():
    """No bias: g~ is positively homogeneous, Eq. 15 divides by a degree-1 quantity."""
    torch.manual_seed(4)
    layer = GATv2Layer(F_IN, C, heads=H, bias=False).double()
    ei = loops()
    x = torch.randn(N, F_IN, dtype=torch.float64)
    norm = ScoreLipschitzNorm()
    g1 = norm(raw_scores(layer, x, ei), x, layer.score_lipschitz(), ei)
    g2 = norm(raw_scores(layer, 1e4 * x, ei), 1e4 * x, layer.score_lipschitz(), ei)
    torch.testing.assert_close(g1, g2)
