"""With ``norm=None`` and PyG's weights, the layers compute what GATConv, TransformerConv and
GATv2Conv compute; plus repr, reset_parameters, norm validation and the returned weights."""

import pytest
import torch
from torch_geometric.nn import GATConv, GATv2Conv, TransformerConv
from torch_geometric.utils import add_self_loops, remove_self_loops

from lipnorm_exp.errors import ConfigError
from lipnorm_exp.nn import (
    GATLayer,
    GATLipschitzNorm,
    GATv2Layer,
    GTLayer,
    GTLipschitzNorm,
    ScoreLipschitzNorm,
)

N, F_IN, C = 7, 5, 4
# node 6 has no in-edges; (3, 3) is an input self-loop that must not be counted twice
EDGES = torch.tensor([[0, 1, 2, 3, 4, 0, 5, 3, 6], [1, 2, 0, 0, 0, 3, 1, 3, 2]])

PAIRS = [
    (GATLayer, GATConv, {}),
    (GATv2Layer, GATv2Conv, {}),
    (GATv2Layer, GATv2Conv, {"share_weights": True}),
    (GTLayer, TransformerConv, {}),
    (GTLayer, TransformerConv, {"beta": True}),
    (GTLayer, TransformerConv, {"root_weight": False, "bias": False}),
]
LAYERS = [GATLayer, GTLayer, GATv2Layer]


def pyg_input(cls):
    """TransformerConv adds no self-loops: give it the edges GTLayer uses."""
    if cls is not TransformerConv:
        return EDGES
    return add_self_loops(remove_self_loops(EDGES)[0], num_nodes=N)[0]


def twins(ours, theirs, kwargs, heads, concat):
    torch.manual_seed(0)
    ref = theirs(F_IN, C, heads=heads, concat=concat, **kwargs)
    with torch.no_grad():
        for name, p in ref.named_parameters():
            if name.endswith("bias"):
                p.normal_()
    layer = ours(F_IN, C, heads=heads, concat=concat, **kwargs)
    state = ref.state_dict()
    if not kwargs.get("root_weight", True):  # TransformerConv keeps an unused lin_skip then
        state = {k: v for k, v in state.items() if not k.startswith("lin_skip.")}
    layer.load_state_dict(state)
    return layer, ref


@pytest.mark.parametrize("heads", [1, 3])
@pytest.mark.parametrize("concat", [True, False])
@pytest.mark.parametrize(("ours", "theirs", "kwargs"), PAIRS)
def test_equals_pyg_without_norm(ours, theirs, kwargs, heads, concat):
    layer, ref = twins(ours, theirs, kwargs, heads, concat)
    x = torch.randn(N, F_IN)
    out, (ei, alpha) = layer(x, EDGES, return_attention_weights=True)
    want, (want_ei, want_alpha) = ref(x, pyg_input(theirs), return_attention_weights=True)
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
    assert torch.equal(ei, want_ei)
    torch.testing.assert_close(alpha, want_alpha, rtol=1e-5, atol=1e-5)
    assert ei.size(1) == 8 + N  # 8 edges without the input self-loop, one loop per node


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), PAIRS[:2] + PAIRS[3:4])
def test_attention_dropout_equals_pyg_in_training(ours, theirs, kwargs):
    """Same seed, same dropout mask on the attention weights: same training-mode output."""
    layer, ref = twins(ours, theirs, {**kwargs, "dropout": 0.5}, 2, True)
    x = torch.randn(N, F_IN)
    torch.manual_seed(5)
    out = layer(x, EDGES)
    torch.manual_seed(5)
    want = ref(x, pyg_input(theirs))
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
    torch.manual_seed(6)
    assert not torch.allclose(layer(x, EDGES), want)  # the mask does change the output


@pytest.mark.parametrize("cls", LAYERS)
def test_lip_norm_changes_the_attention(cls):
    torch.manual_seed(1)
    plain, lip = cls(F_IN, C, heads=2), cls(F_IN, C, heads=2, norm="lip")
    lip.load_state_dict(plain.state_dict())
    x = 10 * torch.randn(N, F_IN)
    _, (_, a_plain) = plain(x, EDGES, return_attention_weights=True)
    _, (_, a_lip) = lip(x, EDGES, return_attention_weights=True)
    assert not torch.allclose(a_plain, a_lip, atol=1e-3)


@pytest.mark.parametrize("cls", LAYERS)
@pytest.mark.parametrize("concat", [True, False])
def test_return_attention_weights_shapes(cls, concat):
    layer = cls(F_IN, C, heads=3, concat=concat, norm="lip")
    out = layer(torch.randn(N, F_IN), EDGES)
    assert out.shape == (N, 3 * C if concat else C)
    out2, (ei, alpha) = layer(torch.randn(N, F_IN), EDGES, return_attention_weights=True)
    assert out2.shape == out.shape
    assert ei.shape == (2, 8 + N) and alpha.shape == (8 + N, 3)
    sums = torch.zeros(N, 3).index_add_(0, ei[1], alpha)
    torch.testing.assert_close(sums, torch.ones(N, 3))  # a distribution over each N(i)


def test_without_self_loops_uses_the_given_edges():
    layer = GTLayer(F_IN, C, add_self_loops=False)
    _, (ei, _) = layer(torch.randn(N, F_IN), EDGES, return_attention_weights=True)
    assert torch.equal(ei, EDGES)


@pytest.mark.parametrize(
    ("layer", "text"),
    [
        (GATLayer(64, 8, heads=8, norm="lip"), "GATLayer(64, 8, heads=8, norm=lip)"),
        (GATLayer(64, 8, heads=8, norm=GATLipschitzNorm()), "GATLayer(64, 8, heads=8, norm=lip)"),
        (GTLayer(16, 16), "GTLayer(16, 16, heads=1, norm=none)"),
        (GATv2Layer(3, 2, heads=2, norm="none"), "GATv2Layer(3, 2, heads=2, norm=none)"),
        (
            GATLayer(4, 4, norm=GATLipschitzNorm(alpha=2.0, variant="published")),
            "GATLayer(4, 4, heads=1, norm=GATLipschitzNorm(alpha=2.0, variant=published))",
        ),
        (
            GTLayer(4, 4, norm=GTLipschitzNorm(variant="published")),
            "GTLayer(4, 4, heads=1, norm=GTLipschitzNorm(alpha=1.0, variant=published))",
        ),
        (
            GATv2Layer(4, 4, norm=ScoreLipschitzNorm(alpha=0.5)),
            "GATv2Layer(4, 4, heads=1, norm=ScoreLipschitzNorm(alpha=0.5))",
        ),
    ],
)
def test_repr(layer, text):
    assert repr(layer) == text


@pytest.mark.parametrize("cls", LAYERS)
def test_reset_parameters_draws_new_weights(cls):
    layer = cls(F_IN, C, heads=2, norm="lip")
    with torch.no_grad():
        for p in layer.parameters():
            p.fill_(0.123)
    layer.reset_parameters()
    for name, p in layer.named_parameters():
        assert not torch.any(p == 0.123), name


@pytest.mark.parametrize(
    ("cls", "wrong"),
    [
        (GATLayer, "lipschitz"),
        (GATLayer, GTLipschitzNorm()),
        (GTLayer, GATLipschitzNorm()),
        (GATv2Layer, "pairnorm"),
        (GATv2Layer, torch.nn.LayerNorm(4)),
    ],
)
def test_invalid_norm_is_a_clear_error(cls, wrong):
    allowed = f"allowed: none, lip, or a {cls.default_norm.__name__} instance"
    with pytest.raises(ConfigError, match=allowed) as info:
        cls(F_IN, C, norm=wrong)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("cls", LAYERS)
def test_invalid_options_are_clear_errors(cls):
    with pytest.raises(ConfigError, match="heads must be >= 1"):
        cls(F_IN, C, heads=0)
    with pytest.raises(ConfigError, match=r"dropout must be in \[0, 1\)"):
        cls(F_IN, C, dropout=1.0)
