"""The contract between a layer and its score normalisation: a new one is one class.

A normalisation written here, outside the package, plugs into GATLayer and GTLayer, and the
layers then compute what a dense computation by hand gives; every LipschitzNorm keeps the
protocol of the layer it is paired with.
"""

import pytest
import torch
import torch.nn.functional as F

from lipnorm_exp.nn import (
    GATLayer,
    GATv2Layer,
    GTLayer,
    LipschitzMultiheadAttention,
    ScoreNorm,
)
from lipnorm_exp.nn.score_norm import LIPSCHITZ_NORMS, breaches, lipschitz_norm

N, F_IN, C, H = 6, 5, 3, 2
TORCH_ERROR = {"atol": 1e-5, "rtol": 1e-5}


class Constant(torch.nn.Module):
    """Scores divided by a constant ``c``: within ``alpha`` where the raw ones are within ``c``."""

    def __init__(self, c: float, alpha: float = 1.0):
        super().__init__()
        self.c, self.alpha = c, alpha

    def per_target(self, rows: int, like: torch.Tensor) -> torch.Tensor:
        return like.new_full((rows, H), self.c)


class ConstantGAT(Constant):
    """The constant normalisation of GAT's score (keeps ``GATScoreNorm``)."""

    def denominator(self, x, att, edge_index, edge_attr=None, num_targets=None):
        return self.per_target(num_targets, att)

    def forward(self, score, x, att, edge_index, edge_attr=None, num_targets=None):
        return self.alpha * score / self.c


class ConstantGT(Constant):
    """The constant normalisation of the graph transformer's score (keeps ``GTScoreNorm``)."""

    def denominator(self, query, key, value, edge_index, per_edge=False):
        return self.per_target(query.size(0), query)


def graph() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Node features, edges (no self-loop) and the dense in-neighbourhoods with self-loops."""
    torch.manual_seed(0)
    x = torch.randn(N, F_IN) / 4
    adjacency = torch.rand(N, N) < 0.4  # adjacency[i, j]: an edge j -> i
    adjacency.fill_diagonal_(False)
    target, source = adjacency.nonzero().t()
    return x, torch.stack([source, target]), adjacency | torch.eye(N, dtype=torch.bool)


def dense_attention(score: torch.Tensor, neighbours: torch.Tensor, value: torch.Tensor):
    """``[N, H, C]``: per target and head, the softmax of ``score`` ``[H, N, N]`` over its
    neighbours, applied to the sources' values ``[N, H, C]``."""
    weights = score.masked_fill(~neighbours, float("-inf")).softmax(dim=-1)
    return torch.einsum("hij,jhc->ihc", weights, value)


def test_a_new_score_norm_plugs_into_gat_and_gives_the_dense_computation():
    x, edge_index, neighbours = graph()
    norm = ConstantGAT(c=4.0, alpha=2.0)
    layer = GATLayer(F_IN, C, heads=H, norm=norm)
    with torch.no_grad():
        layer.bias.normal_()
        out = layer(x, edge_index)
        z = layer.lin(x).view(N, H, C)
        raw = (z * layer.att_dst).sum(-1).t()[:, :, None] + (z * layer.att_src).sum(-1).t()[:, None]
        assert raw.abs().max() <= norm.c  # so the normalised scores are within alpha
        score = F.leaky_relu(norm.alpha * raw / norm.c, layer.negative_slope)
        expected = dense_attention(score, neighbours, z).reshape(N, H * C) + layer.bias
    assert layer.norm is norm
    torch.testing.assert_close(out, expected, **TORCH_ERROR)


def test_a_new_score_norm_plugs_into_gt_and_gives_the_dense_computation():
    x, edge_index, neighbours = graph()
    norm = ConstantGT(c=3.0, alpha=0.5)
    layer = GTLayer(F_IN, C, heads=H, norm=norm, add_self_loops=True)
    with torch.no_grad():
        out = layer(x, edge_index)
        query, key, value = (
            lin(x).view(N, H, C) for lin in (layer.lin_query, layer.lin_key, layer.lin_value)
        )
        raw = torch.einsum("ihc,jhc->hij", query, key)
        assert raw.abs().max() <= norm.c
        attended = dense_attention(norm.alpha * raw / norm.c, neighbours, value)
        expected = attended.reshape(N, H * C) + layer.lin_skip(x)
    torch.testing.assert_close(out, expected, **TORCH_ERROR)


def test_the_layer_reads_the_new_norms_alpha_and_denominator():
    """Doubling ``c`` and ``alpha`` together leaves the scores, hence the output, unchanged."""
    x, edge_index, _ = graph()
    outputs = []
    for norm in (ConstantGT(c=3.0, alpha=0.5), ConstantGT(c=6.0, alpha=1.0)):
        torch.manual_seed(1)
        layer = GTLayer(F_IN, C, heads=H, norm=norm, add_self_loops=True)
        outputs.append(layer(x, edge_index))
    torch.testing.assert_close(*outputs, **TORCH_ERROR)
    torch.manual_seed(1)
    other = GTLayer(F_IN, C, heads=H, norm=ConstantGT(c=3.0, alpha=1.0), add_self_loops=True)
    assert not torch.allclose(other(x, edge_index), outputs[0])


@pytest.mark.parametrize("layer", [GATLayer, GATv2Layer, GTLayer, LipschitzMultiheadAttention])
def test_every_lipschitz_norm_keeps_its_layers_contract_and_lip_builds_it(layer):
    contract = layer.score_contract
    norm = lipschitz_norm(contract, alpha=0.5)
    assert isinstance(norm, ScoreNorm) and isinstance(norm, contract)
    assert type(norm) is LIPSCHITZ_NORMS[contract] and norm.alpha == 0.5
    assert breaches(norm, contract) == [] and breaches(norm, ScoreNorm) == []
    assert type(layer(4, 2, norm="lip").norm) is LIPSCHITZ_NORMS[contract]
    others = [other for other in LIPSCHITZ_NORMS if other is not contract]
    assert all(breaches(LIPSCHITZ_NORMS[other](), contract) for other in others)


def test_a_variant_goes_to_the_norms_that_have_one():
    assert lipschitz_norm(GATLayer.score_contract, variant="published").variant == "published"
    assert lipschitz_norm(GATv2Layer.score_contract, variant="published").variant is None
