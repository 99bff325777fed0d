"""``torch.jit.script`` of the layers whose PyTorch/PyG counterparts script.

``GTLayer`` (as PyG's ``TransformerConv``) and ``LipschitzMultiheadAttention`` (as
``torch.nn.MultiheadAttention``), with and without LipschitzNorm: the scripted module gives the
eager outputs, attention weights and gradients (those of the gather message path, which a
scripted layer takes), and runs after ``torch.jit.save`` and ``torch.jit.load`` (so without
calling back into Python). ``GATConv`` and ``GATv2Conv`` do not
script, nor do ``GATLayer`` and ``GATv2Layer``.
"""

import io

import pytest
import torch
from torch import Tensor, nn
from torch_geometric.utils import to_torch_csr_tensor

from lipnorm_exp.nn import GTLayer, GTLipschitzNorm, LipschitzMultiheadAttention

F_IN, C, D = 5, 4, 3
EDGES = torch.tensor([[0, 1, 2, 3, 4, 0, 5, 3, 6, 2], [1, 2, 0, 0, 0, 3, 1, 3, 2, 2]])
BIPARTITE = torch.tensor([[0, 1, 2, 3, 4, 5, 1, 0], [0, 0, 1, 1, 2, 2, 2, 1]])

NORMS = {"none": None, "lip": "lip", "published": GTLipschitzNorm(variant="published")}
CASES = {  # layer options; edge features and a bipartite pair (sources, targets) where named
    "plain": {},
    "edges, beta, self-loops": {"edge_dim": D, "beta": True, "add_self_loops": True},
    "no root weight, self-loops, mean": {
        "root_weight": False,
        "add_self_loops": True,
        "concat": False,
    },
    "bipartite, edges, beta": {"in_channels": (F_IN, F_IN + 1), "edge_dim": D, "beta": True},
}


def saved_and_loaded(scripted: torch.jit.ScriptModule) -> torch.jit.ScriptModule:
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)


def graph(edge_dim: int | None = None, bipartite: bool = False):
    """Features (a pair for a bipartite graph), edges and edge features; the leaves of autograd."""
    gen = torch.Generator().manual_seed(3)
    edge_index = BIPARTITE if bipartite else EDGES
    if bipartite:
        x = (torch.randn(6, F_IN, generator=gen), torch.randn(3, F_IN + 1, generator=gen))
    else:
        x = (torch.randn(7, F_IN, generator=gen),)
    edge_attr = None if edge_dim is None else torch.randn(edge_index.size(1), D, generator=gen)
    leaves = [t.requires_grad_() for t in (*x, edge_attr) if t is not None]
    return (x if bipartite else x[0]), edge_index, edge_attr, leaves


def outputs_and_gradients(layer, x, edge_index, edge_attr, leaves):
    """``out``, ``edges``, ``alpha`` and the gradients of a weighted sum of ``out`` and ``alpha``
    (``None`` for a parameter the layer does not use)."""
    out, (edges, alpha) = layer(x, edge_index, edge_attr, return_attention_weights=True)
    weights = torch.linspace(-1, 1, out.numel()).view_as(out)
    loss = (out * weights).sum() + alpha.square().sum()
    grads = torch.autograd.grad(loss, [*leaves, *layer.parameters()], allow_unused=True)
    return out, edges, alpha, grads


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("norm", NORMS)
def test_scripted_gt_layer_gives_the_eager_outputs_and_gradients(norm, case):
    torch.manual_seed(0)
    options = dict(CASES[case])
    in_channels = options.pop("in_channels", F_IN)
    layer = GTLayer(in_channels, C, heads=2, norm=NORMS[norm], **options)
    scripted = torch.jit.script(layer)
    inputs = graph(options.get("edge_dim"), bipartite=isinstance(in_channels, tuple))
    eager_csr_out = outputs_and_gradients(layer, *inputs)[0]
    layer.message_path = "gather"  # what a scripted layer takes: the same arithmetic
    out, edges, alpha, grads = outputs_and_gradients(layer, *inputs)
    got_out, got_edges, got_alpha, got_grads = outputs_and_gradients(scripted, *inputs)
    torch.testing.assert_close(eager_csr_out, out, rtol=1e-5, atol=1e-6)
    assert torch.equal(got_out, out)
    assert torch.equal(got_edges, edges)
    assert torch.equal(got_alpha, alpha)
    for got, want in zip(got_grads, grads, strict=True):
        assert (got is None) == (want is None)
        if want is not None:
            torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-7)
    x, edge_index, edge_attr, _ = inputs
    assert torch.equal(scripted(x, edge_index, edge_attr), out)  # no weights asked for


@pytest.mark.parametrize("norm", NORMS)
def test_saved_and_loaded_gt_layer_gives_the_eager_outputs(norm):
    torch.manual_seed(0)
    layer = GTLayer(F_IN, C, heads=2, norm=NORMS[norm], **CASES["edges, beta, self-loops"])
    loaded = saved_and_loaded(torch.jit.script(layer))
    layer.message_path = "gather"  # what a scripted layer takes: the same arithmetic
    x, edge_index, edge_attr, _ = graph(D)
    out, (edges, alpha) = loaded(x, edge_index, edge_attr, return_attention_weights=True)
    want_out, (want_edges, want_alpha) = layer(x, edge_index, edge_attr, True)
    assert torch.equal(out, want_out)
    assert torch.equal(edges, want_edges)
    assert torch.equal(alpha, want_alpha)


def test_scripted_gt_layer_takes_a_sparse_adjacency():
    torch.manual_seed(0)
    layer = GTLayer(F_IN, C, heads=2, norm="lip")
    x = graph()[0]
    adj = to_torch_csr_tensor(EDGES.flip(0), size=(7, 7))
    out, (weighted, alpha) = torch.jit.script(layer)(x, adj, return_attention_weights=True)
    want_out, (want_weighted, want_alpha) = layer(x, adj, return_attention_weights=True)
    assert torch.equal(out, want_out)
    assert torch.equal(alpha, want_alpha)
    assert torch.equal(weighted.to_dense(), want_weighted.to_dense())


def test_scripted_gt_layer_draws_the_eager_dropout_masks_in_training():
    layer = GTLayer(F_IN, C, heads=2, dropout=0.5, norm="lip", add_self_loops=True).train()
    scripted = torch.jit.script(layer)
    layer.message_path = "gather"  # what a scripted layer takes: the same arithmetic
    x = graph()[0]
    torch.manual_seed(1)
    want = layer(x, EDGES)
    torch.manual_seed(1)
    assert torch.equal(scripted(x, EDGES), want)


def test_scripted_gt_layer_refuses_a_node_outside_the_graph_at_every_call():
    scripted = torch.jit.script(GTLayer(F_IN, C, norm="lip"))
    x = graph()[0]
    scripted(x, EDGES)
    bad = EDGES.clone()
    for _ in range(2):  # no check is skipped for a tensor seen before
        with pytest.raises(torch.jit.Error, match="holds node 7 .* has 7 source nodes"):
            scripted(x, bad.index_fill_(1, torch.tensor([0]), 7))


class Stack(nn.Module):
    """A user's model: GT-Lip layers with ReLUs, scripted as a whole."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(
            [GTLayer(F_IN, C, heads=2, norm="lip"), GTLayer(2 * C, C, norm="lip")]
        )

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        for conv in self.convs:
            out = conv(x, edge_index)
            assert isinstance(out, Tensor)  # refines the layer's output union
            x = out.relu()
        return x


def test_a_model_of_gt_layers_scripts_and_gives_the_eager_outputs():
    torch.manual_seed(0)
    model = Stack()
    x = graph()[0]
    loaded = saved_and_loaded(torch.jit.script(model))
    for conv in model.convs:
        conv.message_path = "gather"  # what a scripted layer takes: the same arithmetic
    assert torch.equal(loaded(x, EDGES), model(x, EDGES))


@pytest.mark.parametrize("norm", [None, "lip"])
def test_saved_and_loaded_multihead_attention_gives_the_eager_outputs(norm):
    torch.manual_seed(0)
    layer = LipschitzMultiheadAttention(8, 2, batch_first=True, norm=norm).eval()
    loaded = saved_and_loaded(torch.jit.script(layer))
    query, key = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    mask = torch.tensor([[False] * 4 + [True], [False] * 5])
    got = loaded(query, key, key, key_padding_mask=mask)
    want = layer(query, key, key, key_padding_mask=mask)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
