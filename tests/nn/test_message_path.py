"""The CSR message path (sparse products) computes what the gather/scatter path and PyG
compute, up to float rounding: outputs and the gradients of the inputs and of every parameter,
with attention dropout too; it is taken where it applies and left where it does not."""

import pytest
import torch
from torch_geometric.nn import GATConv, GATv2Conv, TransformerConv
from torch_geometric.utils import to_torch_csr_tensor

from lipnorm_exp.nn import GATLayer, GATv2Layer, GTLayer
from lipnorm_exp.nn.csr_messages import edge_dots, message_structure, weighted_sum

N, F_IN, C = 9, 5, 4
EDGES = torch.tensor([[0, 1, 2, 3, 4, 0, 5, 3, 6, 7, 8, 2], [1, 2, 0, 0, 0, 3, 1, 3, 2, 8, 7, 8]])
PAIRS = [(GATLayer, GATConv), (GATv2Layer, GATv2Conv), (GTLayer, TransformerConv)]
#: options of each layer here: GT adds self-loops as the paper's neighbourhoods have them
OPTIONS = {GATLayer: {}, GATv2Layer: {}, GTLayer: {"add_self_loops": True}}
TOL = {"rtol": 1e-5, "atol": 1e-6}

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")


def layer_pair(cls, path, heads, **options):
    """A layer on ``path`` and its twin on the gather path, with the same parameters."""
    torch.manual_seed(0)
    layer = cls(F_IN, C, heads=heads, message_path=path, **options)
    twin = cls(F_IN, C, heads=heads, message_path="gather", **options)
    twin.load_state_dict(layer.state_dict())
    return layer, twin


def outputs_and_gradients(layer, x, edge_index, seed=3):
    """Output, and the gradients of the input and of every parameter, of a fixed loss."""
    x = x.clone().requires_grad_()
    torch.manual_seed(seed)
    out = layer(x, edge_index)
    weights = torch.linspace(-1.0, 1.0, out.numel()).view_as(out)
    grads = torch.autograd.grad((out * weights).sum(), [x, *layer.parameters()])
    return out, grads


def assert_same_function(got, want):
    (out, grads), (want_out, want_grads) = got, want
    torch.testing.assert_close(out, want_out, **TOL)
    for grad, want_grad in zip(grads, want_grads, strict=True):
        torch.testing.assert_close(grad, want_grad, **TOL)


@pytest.mark.parametrize("dropout", [0.0, 0.5])
@pytest.mark.parametrize("heads", [1, 8])
@pytest.mark.parametrize("norm", [None, "lip"])
@pytest.mark.parametrize("cls", [GATLayer, GATv2Layer, GTLayer])
def test_csr_path_equals_the_gather_path(cls, norm, heads, dropout):
    layer, twin = layer_pair(cls, "csr", heads, norm=norm, dropout=dropout, **OPTIONS[cls])
    x = torch.randn(N, F_IN)
    got = outputs_and_gradients(layer.train(), x, EDGES)
    assert layer.message_structures.get(got_edges(layer), ((N, N), heads)) is not None
    assert_same_function(got, outputs_and_gradients(twin.train(), x, EDGES))


def got_edges(layer):
    """The edges the layer aggregated along (its self-loops replaced, as it caches them)."""
    return layer.loops_added.get(EDGES, N)


@pytest.mark.parametrize("concat", [True, False])
@pytest.mark.parametrize("heads", [1, 8])
@pytest.mark.parametrize(("ours", "theirs"), PAIRS)
def test_csr_path_equals_pyg(ours, theirs, heads, concat):
    """Outputs and gradients of PyG's layer with the same parameters and dropout mask."""
    torch.manual_seed(0)
    ref = theirs(F_IN, C, heads=heads, concat=concat, dropout=0.5)
    layer = ours(F_IN, C, heads=heads, concat=concat, dropout=0.5, message_path="csr")
    layer.load_state_dict(ref.state_dict())
    x = torch.randn(N, F_IN)
    assert_same_function(
        outputs_and_gradients(layer, x, EDGES), outputs_and_gradients(ref, x, EDGES)
    )


def test_auto_takes_the_csr_path_on_the_cpu_and_csr_caches_one_structure():
    layer = GATLayer(F_IN, C, heads=2)
    assert layer.message_path == "auto"
    x = torch.randn(N, F_IN)
    layer(x, EDGES)
    edges = got_edges(layer)
    first = layer.message_structures.get(edges, ((N, N), 2))
    assert first is not None
    layer(x, EDGES)
    assert layer.message_structures.get(edges, ((N, N), 2)) is first


@pytest.mark.parametrize(
    "case", ["gather", "half precision", "sparse adjacency", "hook", "vmap", "no sum"]
)
def test_the_gather_path_where_csr_does_not_apply(case):
    """Asked for, in half precision, for a torch.sparse adjacency, with a message hook, under
    torch.func, or where the messages are not summed: no CSR structure is built."""
    options = {"aggr": "mean"} if case == "no sum" else {}
    layer = GATLayer(
        F_IN, C, heads=2, message_path="gather" if case == "gather" else "csr", **options
    )
    x, edge_index = torch.randn(N, F_IN), EDGES
    if case == "half precision":
        layer, x = layer.to(torch.bfloat16), x.to(torch.bfloat16)
    if case == "sparse adjacency":
        edge_index = to_torch_csr_tensor(EDGES.flip(0), size=(N, N))
    if case == "hook":
        layer.register_message_forward_hook(lambda module, inputs, output: output)
    if case == "vmap":
        torch.func.vmap(lambda rows: layer(rows, EDGES))(x.expand(2, N, F_IN))
    else:
        layer(x, edge_index)
    assert len(layer.message_structures) == 0


def test_an_unknown_message_path_is_refused_naming_the_allowed_ones():
    with pytest.raises(ValueError, match=r"GTLayer: message_path must be one of auto, gather, csr"):
        GTLayer(F_IN, C, message_path="dense")


def test_weighted_sum_gradients_pass_gradcheck():
    """Several heads, a target without in-edges, repeated edges: float64 gradcheck."""
    torch.manual_seed(0)
    heads = 3
    edges = torch.tensor([[0, 1, 1, 2, 3, 0], [1, 0, 0, 0, 2, 2]])
    structure = message_structure(edges, (4, 5), heads)
    alpha = torch.rand(edges.size(1), heads, dtype=torch.float64, requires_grad=True)
    value = torch.randn(4, heads, 2, dtype=torch.float64, requires_grad=True)
    out = weighted_sum(alpha, value, structure)
    assert out.shape == (5, heads, 2) and not out[4].any()
    assert torch.autograd.gradcheck(lambda a, v: weighted_sum(a, v, structure), (alpha, value))


def test_edge_dots_are_the_gathered_dot_products_and_pass_gradcheck():
    """Several heads, a target without in-edges, repeated edges, two node sets: by hand and
    float64 gradcheck."""
    torch.manual_seed(0)
    heads = 3
    edges = torch.tensor([[0, 1, 1, 2, 3, 0], [1, 0, 0, 0, 2, 2]])
    structure = message_structure(edges, (4, 5), heads)
    left = torch.randn(5, heads, 2, dtype=torch.float64, requires_grad=True)
    right = torch.randn(4, heads, 2, dtype=torch.float64, requires_grad=True)
    by_hand = (left[edges[1]] * right[edges[0]]).sum(-1)
    torch.testing.assert_close(edge_dots(left, right, structure), by_hand)
    assert torch.autograd.gradcheck(lambda q, k: edge_dots(q, k, structure), (left, right))


@pytest.mark.parametrize("cls", [GATLayer, GTLayer])
def test_fused_norm_gradients_under_vmap_are_the_loops(cls):
    """Off the gather path LipschitzNorm's squared norms are fused (``SquaredNorm``): the
    gather path's gradients, and under ``torch.func`` (seeds trained together) a loop's."""
    torch.manual_seed(0)
    layer = cls(F_IN, C, heads=2, norm="lip", message_path="csr", **OPTIONS[cls])
    xs = torch.randn(3, N, F_IN)

    def loss(x):
        return layer(x, EDGES).pow(2).sum()

    batched = torch.func.vmap(torch.func.grad(loss))(xs)
    looped = torch.stack([torch.func.grad(loss)(x) for x in xs])
    torch.testing.assert_close(batched, looped, **TOL)
    x = xs[0].requires_grad_()
    (want,) = torch.autograd.grad(loss(x), x)
    twin = layer_pair(cls, "gather", 2, norm="lip", **OPTIONS[cls])[1]
    twin.load_state_dict(layer.state_dict())
    (gather_grad,) = torch.autograd.grad(twin(x, EDGES).pow(2).sum(), x)
    torch.testing.assert_close(want, gather_grad, **TOL)


def test_a_layer_called_on_a_few_edge_tensors_in_turn_builds_each_structure_once(monkeypatch):
    """Mini-batches of two shapes and an evaluation graph: one structure per tensor, reused."""
    import lipnorm_exp.nn.attention as attention_module

    built = []
    original = attention_module.message_structure

    def counted(*args, **kwargs):
        built.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(attention_module, "message_structure", counted)
    layer = GATLayer(F_IN, C, heads=2)
    graphs = [EDGES, EDGES[:, :-2].clone(), EDGES.flip(0).clone()]
    for _ in range(3):
        for edges in graphs:
            layer(torch.randn(N, F_IN), edges)
    assert len(built) == len(graphs) and len(layer.message_structures) == len(graphs)
    for edges in graphs:  # another tensor of equal values is another input
        layer(torch.randn(N, F_IN), edges.clone())
    assert len(built) == 2 * len(graphs)


def test_last_input_forgets_the_oldest_and_what_changed_in_place():
    from lipnorm_exp.nn.last_input import LastInput

    kept = LastInput(remembered=2)
    a, b, c = torch.zeros(2), torch.zeros(2), torch.zeros(2)
    kept.keep(a, "k", 1)
    kept.keep(b, "k", 2)
    assert (kept.get(a, "k"), kept.get(b, "k"), kept.get(a, "other")) == (1, 2, None)
    kept.keep(c, "k", 3)  # a is forgotten
    assert (kept.get(a, "k"), kept.get(b, "k"), kept.get(c, "k")) == (None, 2, 3)
    c.add_(1)  # changed in place since
    assert kept.get(c, "k") is None
    del b
    assert len(kept) == 1
