"""The layers are drop-ins for GATConv, TransformerConv and GATv2Conv: a PyG state dict loads,
and with ``norm=None`` they compute what PyG computes for every input PyG takes (edge
features, bipartite pairs, torch.sparse adjacencies, ``size``); plus repr, reset_parameters,
argument validation and the returned weights."""

import copy
import weakref

import pytest
import torch
from conftest import assert_reset_parameters_redraws
from torch_geometric.nn import GATConv, GATv2Conv, TransformerConv
from torch_geometric.utils import (
    add_self_loops,
    remove_self_loops,
    to_edge_index,
    to_torch_coo_tensor,
    to_torch_csr_tensor,
)

from lipnorm_exp.nn import (
    DenseLipschitzNorm,
    GATLayer,
    GATLipschitzNorm,
    GATv2Layer,
    GTLayer,
    GTLipschitzNorm,
    ScoreLipschitzNorm,
)
from lipnorm_exp.nn.arguments import EdgeIndexError

pytestmark = [
    pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning"),
    pytest.mark.filterwarnings("ignore:Sparse CSR tensor support:UserWarning"),
]

N, F_IN, C, D = 7, 5, 4, 3
# node 6 has no in-edges; (3, 3) is an input self-loop that must not be counted twice
EDGES = torch.tensor([[0, 1, 2, 3, 4, 0, 5, 3, 6], [1, 2, 0, 0, 0, 3, 1, 3, 2]])
# bipartite: 6 sources with 5 features, 4 targets with 3; target 3 has no in-edges
N_SRC, N_DST, F_SRC, F_DST = 6, 4, 5, 3
BIPARTITE = torch.tensor([[0, 1, 2, 3, 4, 5, 1, 0], [0, 0, 1, 1, 2, 2, 2, 1]])

PAIRS = [
    (GATLayer, GATConv, {}),
    (GATLayer, GATConv, {"residual": True}),
    (GATv2Layer, GATv2Conv, {}),
    (GATv2Layer, GATv2Conv, {"share_weights": True}),
    (GATv2Layer, GATv2Conv, {"residual": True}),
    (GTLayer, TransformerConv, {}),
    (GTLayer, TransformerConv, {"beta": True}),
    (GTLayer, TransformerConv, {"root_weight": False, "bias": False}),
]
EDGE_PAIRS = [(GATLayer, GATConv, {}), (GATv2Layer, GATv2Conv, {}), (GTLayer, TransformerConv, {})]
LAYERS = [GATLayer, GTLayer, GATv2Layer]


def twins(ours, theirs, kwargs, heads=2, concat=True, in_channels=F_IN):
    """PyG's layer with random biases, and ours with its state dict loaded (strictly)."""
    torch.manual_seed(0)
    ref = theirs(in_channels, C, heads=heads, concat=concat, **kwargs)
    with torch.no_grad():
        for name, p in ref.named_parameters():
            if name.endswith("bias"):
                p.normal_()
    layer = ours(in_channels, C, heads=heads, concat=concat, **kwargs)
    layer.load_state_dict(ref.state_dict())
    return layer, ref


def assert_same(got, want):
    """Same output, same edges, same attention weights."""
    (out, (ei, alpha)), (want_out, (want_ei, want_alpha)) = got, want
    torch.testing.assert_close(out, want_out, rtol=1e-5, atol=1e-5)
    assert torch.equal(ei, want_ei)
    torch.testing.assert_close(alpha, want_alpha, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("heads", [1, 3])
@pytest.mark.parametrize("concat", [True, False])
@pytest.mark.parametrize(("ours", "theirs", "kwargs"), PAIRS)
def test_equals_pyg_without_norm(ours, theirs, kwargs, heads, concat):
    layer, ref = twins(ours, theirs, kwargs, heads, concat)
    x = torch.randn(N, F_IN)
    got = layer(x, EDGES, return_attention_weights=True)
    assert_same(got, ref(x, EDGES, return_attention_weights=True))
    loops = ours is not GTLayer  # PyG's defaults: TransformerConv adds no self-loops
    assert got[1][0].size(1) == (8 + N if loops else EDGES.size(1))


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), PAIRS)
def test_parameter_names_are_pygs(ours, theirs, kwargs):
    layer, ref = twins(ours, theirs, {**kwargs, "edge_dim": D})
    assert set(layer.state_dict()) == set(ref.state_dict())


@pytest.mark.parametrize("fill_value", ["mean", 0.5, "add"])
@pytest.mark.parametrize(("ours", "theirs", "kwargs"), EDGE_PAIRS)
def test_edge_features_equal_pyg(ours, theirs, kwargs, fill_value):
    """Self-loops get their features from ``fill_value``, as in PyG (TransformerConv adds none)."""
    if ours is not GTLayer:
        kwargs = {**kwargs, "fill_value": fill_value}
    layer, ref = twins(ours, theirs, {**kwargs, "edge_dim": D})
    x, edge_attr = torch.randn(N, F_IN), torch.randn(EDGES.size(1), D)
    got = layer(x, EDGES, edge_attr, return_attention_weights=True)
    assert_same(got, ref(x, EDGES, edge_attr, return_attention_weights=True))
    without = layer(x, EDGES, return_attention_weights=True)
    assert not torch.allclose(got[1][1], without[1][1])  # the features do enter the scores


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), EDGE_PAIRS)
def test_one_dimensional_edge_features_equal_pyg(ours, theirs, kwargs):
    layer, ref = twins(ours, theirs, {**kwargs, "edge_dim": 1})
    x, edge_attr = torch.randn(N, F_IN), torch.randn(EDGES.size(1))
    columns = edge_attr[:, None] if theirs is TransformerConv else edge_attr  # it needs [E, 1]
    assert torch.allclose(layer(x, EDGES, edge_attr), ref(x, EDGES, columns), atol=1e-5)


@pytest.mark.parametrize("edge_dim", [None, D])
@pytest.mark.parametrize(
    ("ours", "theirs", "kwargs"), [*EDGE_PAIRS, (GATLayer, GATConv, {"residual": True})]
)
def test_bipartite_equals_pyg(ours, theirs, kwargs, edge_dim):
    layer, ref = twins(ours, theirs, {**kwargs, "edge_dim": edge_dim}, in_channels=(F_SRC, F_DST))
    x = (torch.randn(N_SRC, F_SRC), torch.randn(N_DST, F_DST))
    edge_attr = None if edge_dim is None else torch.randn(BIPARTITE.size(1), D)
    got = layer(x, BIPARTITE, edge_attr, return_attention_weights=True)
    assert_same(got, ref(x, BIPARTITE, edge_attr, return_attention_weights=True))
    assert got[0].size(0) == N_DST


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), EDGE_PAIRS[:2])
def test_square_bipartite_pair_with_self_loops_equals_pyg(ours, theirs, kwargs):
    """As many sources as targets: the appended self-loop (i, i) carries source i's message,
    aggregated per node by our layers and gathered by PyG's."""
    layer, ref = twins(ours, theirs, kwargs, in_channels=(F_SRC, F_DST))
    x = (torch.randn(N, F_SRC), torch.randn(N, F_DST))
    got = layer(x, EDGES, return_attention_weights=True)
    assert_same(got, ref(x, EDGES, return_attention_weights=True))


def test_gat_without_target_features_takes_the_size_as_pyg():
    """GATConv's ``(x_src, None)``: no target term in the score, targets counted by ``size``."""
    layer, ref = twins(GATLayer, GATConv, {}, in_channels=(F_SRC, F_DST))
    x, size = (torch.randn(N_SRC, F_SRC), None), (N_SRC, N_DST)
    got = layer(x, BIPARTITE, size=size, return_attention_weights=True)
    assert_same(got, ref(x, BIPARTITE, size=size, return_attention_weights=True))
    assert got[0].size(0) == N_DST


@pytest.mark.parametrize("to_sparse", [to_torch_coo_tensor, to_torch_csr_tensor])
@pytest.mark.parametrize(("ours", "theirs", "kwargs"), EDGE_PAIRS)
def test_sparse_adjacency_equals_pyg_and_the_edge_list(ours, theirs, kwargs, to_sparse):
    """A torch.sparse adjacency, transposed (one row per target), as PyG's layers take it;
    the weights come back as the values of the adjacency used (as GATConv returns them)."""
    layer, ref = twins(ours, theirs, kwargs)
    x, adj_t = torch.randn(N, F_IN), to_sparse(EDGES.flip(0), size=(N, N))
    out, (adj_alpha, alpha) = layer(x, adj_t, return_attention_weights=True)
    want, (_, want_alpha) = ref(x, adj_t, return_attention_weights=True)
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(alpha, want_alpha, rtol=1e-5, atol=1e-5)
    assert adj_alpha.layout == adj_t.layout
    torch.testing.assert_close(to_edge_index(adj_alpha)[1], alpha)
    torch.testing.assert_close(out, layer(x, EDGES), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("to_sparse", [to_torch_coo_tensor, to_torch_csr_tensor])
@pytest.mark.parametrize("cls", LAYERS)
def test_lip_norm_on_a_sparse_adjacency_equals_the_edge_list(cls, to_sparse):
    torch.manual_seed(2)
    layer = cls(F_IN, C, heads=2, norm="lip")
    x, adj_t = 10 * torch.randn(N, F_IN), to_sparse(EDGES.flip(0), size=(N, N))
    torch.testing.assert_close(layer(x, adj_t), layer(x, EDGES), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), PAIRS[:1] + PAIRS[2:3] + PAIRS[5:6])
def test_attention_dropout_equals_pyg_in_training(ours, theirs, kwargs):
    """Same seed, same dropout mask on the attention weights: same training-mode output."""
    layer, ref = twins(ours, theirs, {**kwargs, "dropout": 0.5})
    x = torch.randn(N, F_IN)
    torch.manual_seed(5)
    out = layer(x, EDGES)
    torch.manual_seed(5)
    want = ref(x, EDGES)
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
    layer = cls(F_IN, C, heads=3, concat=concat, norm="lip", add_self_loops=True)
    out = layer(torch.randn(N, F_IN), EDGES)
    assert out.shape == (N, 3 * C if concat else C)
    out2, (ei, alpha) = layer(torch.randn(N, F_IN), EDGES, return_attention_weights=True)
    assert out2.shape == out.shape
    assert ei.shape == (2, 8 + N) and alpha.shape == (8 + N, 3)
    sums = torch.zeros(N, 3).index_add_(0, ei[1], alpha)
    torch.testing.assert_close(sums, torch.ones(N, 3))  # a distribution over each N(i)


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), EDGE_PAIRS)
def test_lazy_input_size_equals_pyg(ours, theirs, kwargs):
    """``in_channels=-1`` (PyG's lazy ``Linear``) works as PyG's layer does."""
    torch.manual_seed(0)
    ref, layer = theirs(-1, C, heads=2, **kwargs), ours(-1, C, heads=2, **kwargs)
    x = torch.randn(N, F_IN)
    want = ref(x, EDGES, return_attention_weights=True)
    layer.load_state_dict(ref.state_dict())
    assert_same(layer(x, EDGES, return_attention_weights=True), want)


@pytest.mark.parametrize("cls", LAYERS)
def test_without_self_loops_uses_the_given_edges(cls):
    layer = cls(F_IN, C, add_self_loops=False)
    _, (ei, _) = layer(torch.randn(N, F_IN), EDGES, return_attention_weights=True)
    assert torch.equal(ei, EDGES)


@pytest.mark.parametrize(
    ("layer", "text"),
    [
        (GATLayer(64, 8, heads=8, norm="lip"), "GATLayer(64, 8, heads=8, norm=lip)"),
        (GATLayer(64, 8, heads=8, norm=GATLipschitzNorm()), "GATLayer(64, 8, heads=8, norm=lip)"),
        (GATLayer((6, 4), 8, norm="lip"), "GATLayer((6, 4), 8, heads=1, norm=lip)"),
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


@pytest.mark.parametrize(
    ("cls", "options"),
    [
        (GATLayer, {"residual": True}),
        (GATLayer, {"in_channels": (F_SRC, F_DST)}),
        (GTLayer, {"beta": True}),
        (GATv2Layer, {"residual": True}),
    ],
)
def test_reset_parameters_draws_new_weights(cls, options):
    layer = cls(**{"in_channels": F_IN, **options}, out_channels=C, heads=2, edge_dim=D)
    assert_reset_parameters_redraws(layer)


@pytest.mark.parametrize(("cls", "wrong"), [(GATLayer, "lipschitz"), (GATv2Layer, "pairnorm")])
def test_an_unknown_norm_name_is_a_clear_error(cls, wrong):
    allowed = f"allowed: none, lip, or a {cls.score_contract.__name__}$"
    with pytest.raises(ValueError, match=f"^{cls.__name__}: unknown norm '{wrong}'; {allowed}"):
        cls(F_IN, C, norm=wrong)


@pytest.mark.parametrize(
    ("cls", "wrong", "breach"),
    [
        (GATLayer, GTLipschitzNorm(), "denominator does not take (x, att, edge_index, "),
        (GTLayer, GATLipschitzNorm(), "denominator does not take (query, key, value, "),
        (GTLayer, DenseLipschitzNorm(), "denominator does not take (query, key, value, "),
        (GATv2Layer, torch.nn.LayerNorm(4), "has no alpha; has no denominator"),
    ],
)
def test_a_norm_of_another_kind_is_refused_naming_what_it_lacks(cls, wrong, breach):
    with pytest.raises(TypeError) as info:
        cls(F_IN, C, norm=wrong)
    message = str(info.value)
    expected = f"{cls.__name__}: norm {type(wrong).__name__} is not a {cls.score_contract.__name__}"
    assert message.startswith(f"{expected}: ") and breach in message and "\n" not in message


@pytest.mark.parametrize("cls", LAYERS)
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"heads": 1.5}, "heads must be an integer >= 1, got 1.5"),
        ({"heads": True}, "heads must be an integer >= 1, got True"),
        ({"out_channels": -1}, "out_channels must be an integer >= 1, got -1"),
        ({"out_channels": 0}, "out_channels must be an integer >= 1, got 0"),
        ({"in_channels": -2}, r"in_channels must be an integer >= 1 or -1 \(inferred\), got -2"),
        ({"in_channels": (F_IN, 0)}, r"in_channels must be .*, got \(5, 0\)"),
        ({"edge_dim": 0}, "edge_dim must be an integer >= 1, got 0"),
    ],
)
def test_arguments_pyg_refuses_are_value_errors_naming_them(cls, kwargs, message):
    arguments = {"in_channels": F_IN, "out_channels": C, **kwargs}
    with pytest.raises(ValueError, match=f"^{cls.__name__}: {message}$"):
        cls(**arguments)


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), EDGE_PAIRS)
@pytest.mark.parametrize("norm", [None, "lip"])
def test_an_edge_index_outside_the_graph_is_refused_naming_it(ours, theirs, kwargs, norm):
    outside = torch.tensor([[0, 1], [1, N]])
    with pytest.raises(IndexError, match="edge_index"):  # PyG's layer
        theirs(F_IN, C)(torch.randn(N, F_IN), outside)
    with pytest.raises(ValueError, match="edge_index") as info:
        ours(F_IN, C, norm=norm)(torch.randn(N, F_IN), outside)
    assert isinstance(info.value, IndexError) and str(info.value) == (
        f"{ours.__name__}: edge_index holds node {N} (row 1, the targets), but the graph has "
        f"{N} target nodes; allowed: 0 to {N - 1}"
    )
    negative = torch.tensor([[-1, 1], [1, 2]])
    with pytest.raises(ValueError, match=r"edge_index holds node -1 \(row 0, the sources\)"):
        ours(F_IN, C, norm=norm)(torch.randn(N, F_IN), negative)


@pytest.mark.parametrize(("ours", "theirs", "kwargs"), EDGE_PAIRS)
def test_an_empty_graph_gives_an_empty_output_as_in_pyg(ours, theirs, kwargs):
    layer, ref = twins(ours, theirs, kwargs)
    empty, no_edges = torch.randn(0, F_IN), torch.zeros(2, 0, dtype=torch.long)
    torch.testing.assert_close(layer(empty, no_edges), ref(empty, no_edges))
    lip = ours(F_IN, C, heads=2, norm="lip")
    assert lip(empty, no_edges).shape == (0, 2 * C)
    assert torch.isfinite(lip(torch.randn(N, F_IN), no_edges)).all()


@pytest.mark.parametrize("cls", LAYERS)
def test_invalid_options_are_clear_errors(cls):
    with pytest.raises(ValueError, match="heads must be an integer >= 1"):
        cls(F_IN, C, heads=0)
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\)"):
        cls(F_IN, C, dropout=1.0)


def test_layers_reuse_the_self_loops_of_the_same_edge_index_and_only_of_it():
    """A deep stack replaces one edge_index's self-loops once; a changed tensor is redone."""
    torch.manual_seed(0)
    x, edge_index = torch.randn(6, 4), torch.tensor([[0, 1, 2, 2, 4], [1, 2, 2, 3, 5]])
    layer = GTLayer(4, 2, heads=2, add_self_loops=True)
    first = layer(x, edge_index, return_attention_weights=True)[1][0]
    again = layer(x, edge_index, return_attention_weights=True)[1][0]
    expected = add_self_loops(remove_self_loops(edge_index)[0], num_nodes=6)[0]
    assert again is first and torch.equal(first, expected)
    edge_index[1, 0] = 0  # the same tensor changed in place: (0, 1) becomes a self-loop
    changed = layer(x, edge_index, return_attention_weights=True)[1][0]
    assert torch.equal(changed, add_self_loops(remove_self_loops(edge_index)[0], num_nodes=6)[0])
    other = edge_index.clone()
    assert layer(x, other, return_attention_weights=True)[1][0] is not changed


def test_a_layer_keeps_no_edge_index_alive_and_checks_a_changed_one_again():
    """The reuse lives in the layer and holds its input weakly; copies start without it."""
    x = torch.randn(6, 4)
    layer = GTLayer(4, 2, add_self_loops=True)
    edge_index = torch.tensor([[0, 1, 2], [1, 2, 3]])
    layer(x, edge_index)
    dropped = weakref.ref(edge_index)
    del edge_index
    assert dropped() is None
    edge_index = torch.tensor([[0, 1, 2], [1, 2, 3]])
    replaced = layer(x, edge_index, return_attention_weights=True)[1][0]
    assert layer(x, edge_index, return_attention_weights=True)[1][0] is replaced
    assert copy.deepcopy(layer)(x, edge_index, return_attention_weights=True)[1][0] is not replaced
    edge_index[0, 0] = 6  # the same tensor changed in place: node 6 is outside the graph
    with pytest.raises(EdgeIndexError, match="edge_index holds node 6"):
        layer(x, edge_index)
