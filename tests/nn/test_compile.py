"""``torch.compile`` traces the LipschitzNorm layers: no more graph breaks than PyG's own
layers (the only break is the data-dependent removal of input self-loops), and the compiled
layer computes the eager outputs and gradients. Counts come from ``torch._dynamo.explain``."""

import pytest
import torch
import torch._dynamo
from torch_geometric.nn import GATConv, GATv2Conv, TransformerConv

from lipnorm_exp.nn import GATLayer, GATv2Layer, GTLayer

F_IN, C, D = 5, 4, 3


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Every test traces from scratch and leaves no compiled code behind."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def graph():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(10, F_IN, generator=gen)
    edge_index = torch.randint(0, 10, (2, 30), generator=gen)
    return x, edge_index, torch.randn(30, D, generator=gen)


def graph_breaks(module, *args):
    return torch._dynamo.explain(module)(*args).graph_break_count


def test_gat_lip_breaks_the_graph_no_more_than_gatconv():
    x, edge_index, _ = graph()
    ours = graph_breaks(GATLayer(F_IN, C, heads=2, norm="lip"), x, edge_index)
    theirs = graph_breaks(GATConv(F_IN, C, heads=2), x, edge_index)
    assert ours <= theirs, (ours, theirs)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ours", "theirs", "options", "edges"),
    [
        (GATLayer, GATConv, {"edge_dim": D}, True),
        (GATLayer, GATConv, {"add_self_loops": False}, False),
        (GATv2Layer, GATv2Conv, {}, False),
        (GTLayer, TransformerConv, {}, False),
        (GTLayer, TransformerConv, {"edge_dim": D}, True),
    ],
)
def test_every_lip_layer_breaks_the_graph_no_more_than_pyg(ours, theirs, options, edges):
    x, edge_index, edge_attr = graph()
    args = (x, edge_index, edge_attr) if edges else (x, edge_index)
    lip = graph_breaks(ours(F_IN, C, heads=2, norm="lip", **options), *args)
    assert lip <= graph_breaks(theirs(F_IN, C, heads=2, **options), *args)


@pytest.mark.slow
@pytest.mark.parametrize("cls", [GATLayer, GTLayer, GATv2Layer])
def test_compiled_lip_layer_equals_eager(cls):
    """AOT autograd traces forward and backward: same outputs, same gradients."""
    torch.manual_seed(1)
    layer = cls(F_IN, C, heads=2, norm="lip", add_self_loops=True)
    x, edge_index, _ = graph()
    x = x.requires_grad_()
    params = [x, *layer.parameters()]
    compiled = torch.compile(layer, backend="aot_eager")
    got = compiled(x, edge_index)
    want = layer(x, edge_index)
    torch.testing.assert_close(got, want)
    got_grads = torch.autograd.grad(got.square().sum(), params)
    want_grads = torch.autograd.grad(want.square().sum(), params)
    for g, w in zip(got_grads, want_grads, strict=True):
        torch.testing.assert_close(g, w)
