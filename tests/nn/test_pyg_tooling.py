"""The graph layers where PyG's tooling expects PyG's layers: state dicts load both ways for
every argument combination, MessagePassing's options (``aggr``, ``flow``) act as in PyG, and
PyG's explain API (``Explainer`` with ``GNNExplainer``) gives PyG's explanations on graphs with
and without self-loops."""

import itertools

import pytest
import torch
from torch_geometric.explain import Explainer, GNNExplainer
from torch_geometric.nn import GATConv, GATv2Conv, TransformerConv

from lipnorm_exp.nn import GATLayer, GATv2Layer, GTLayer

N, F_IN, C, D = 7, 5, 4, 3
# (3, 3) is a self-loop of the input; node 6 has no in-edges
EDGES = torch.tensor([[0, 1, 2, 3, 4, 0, 5, 3, 6], [1, 2, 0, 0, 0, 3, 1, 3, 2]])
NO_LOOPS = EDGES[:, EDGES[0] != EDGES[1]]
BIPARTITE = torch.tensor([[0, 1, 2, 3, 4, 5, 1, 0], [0, 0, 1, 1, 2, 2, 2, 1]])
PAIRS = [(GATLayer, GATConv), (GATv2Layer, GATv2Conv), (GTLayer, TransformerConv)]

#: the arguments that decide which parameters a layer has, beside in_channels and edge_dim
OPTIONS = {
    GATLayer: {"bias": [True, False], "residual": [False, True], "concat": [True, False]},
    GATv2Layer: {
        "bias": [True, False],
        "share_weights": [False, True],
        "residual": [False, True],
        "concat": [True, False],
    },
    GTLayer: {
        "bias": [True, False],
        "root_weight": [True, False],
        "beta": [False, True],
        "concat": [True, False],
    },
}


def combinations(ours):
    """Every combination (shared weights need sources and targets of one width)."""
    names = ["in_channels", "edge_dim", *OPTIONS[ours]]
    values = [[F_IN, (F_IN, 2)], [None, D], *OPTIONS[ours].values()]
    every = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]
    return [k for k in every if not (k.get("share_weights") and k["in_channels"] != F_IN)]


def with_random_biases(layer):
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if name.endswith("bias"):
                p.normal_()
    return layer


def graph(kwargs):
    """Inputs for a layer built with ``kwargs``: features, edges and edge features."""
    gen = torch.Generator().manual_seed(1)
    if isinstance(kwargs["in_channels"], tuple):
        x, edges = (
            (torch.randn(6, F_IN, generator=gen), torch.randn(3, 2, generator=gen)),
            BIPARTITE,
        )
    else:
        x, edges = torch.randn(N, F_IN, generator=gen), EDGES
    edge_attr = None if kwargs["edge_dim"] is None else torch.randn(edges.size(1), D, generator=gen)
    return x, edges, edge_attr


@pytest.mark.parametrize(("ours", "theirs"), PAIRS, ids=["GAT", "GATv2", "GT"])
def test_state_dicts_load_both_ways_for_every_argument_combination(ours, theirs):
    for kwargs in combinations(ours):
        if isinstance(kwargs["in_channels"], tuple) and ours is not GTLayer:
            kwargs = {**kwargs, "add_self_loops": False}  # PyG's rule for bipartite graphs
        torch.manual_seed(0)
        ref = with_random_biases(theirs(out_channels=C, heads=2, **kwargs))
        layer = ours(out_channels=C, heads=2, **kwargs)
        layer.load_state_dict(ref.state_dict())
        assert list(layer.state_dict()) == list(ref.state_dict()), kwargs
        back = theirs(out_channels=C, heads=2, **kwargs)
        back.load_state_dict(layer.state_dict())
        x, edges, edge_attr = graph(kwargs)
        want = ref(x, edges, edge_attr)
        torch.testing.assert_close(layer(x, edges, edge_attr), want, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(back(x, edges, edge_attr), want)


def test_same_seed_gives_transformer_convs_weights_without_root_weight():
    torch.manual_seed(2)
    ref = TransformerConv(F_IN, C, heads=2, root_weight=False)
    torch.manual_seed(2)
    layer = GTLayer(F_IN, C, heads=2, root_weight=False)
    for (name, p), q in zip(ref.state_dict().items(), layer.state_dict().values(), strict=True):
        assert torch.equal(p, q), name


@pytest.mark.parametrize("edge_dim", [None, D])
@pytest.mark.parametrize(
    "options",
    [{"flow": "target_to_source"}, {"aggr": "mean"}, {"aggr": "max"},
     {"aggr": "mean", "flow": "target_to_source"}],
    ids=str,
)  # fmt: skip
@pytest.mark.parametrize(("ours", "theirs"), PAIRS, ids=["GAT", "GATv2", "GT"])
def test_message_passing_options_act_as_in_pyg(ours, theirs, options, edge_dim):
    """With self-loops (which the layers otherwise aggregate per node)."""
    torch.manual_seed(0)
    loops = {"add_self_loops": True} if ours is GTLayer else {}
    ref = with_random_biases(theirs(F_IN, C, heads=2, edge_dim=edge_dim, **options))
    layer = ours(F_IN, C, heads=2, edge_dim=edge_dim, **loops, **options)
    layer.load_state_dict(ref.state_dict())
    x = torch.randn(N, F_IN)
    edge_attr = None if edge_dim is None else torch.randn(EDGES.size(1), D)
    got = layer(x, EDGES, edge_attr, return_attention_weights=True)
    if loops:  # TransformerConv adds no self-loops: give it ours
        edges, loop_attr = layer.neighbourhoods(EDGES, edge_attr, (N, N))
        want = ref(x, edges, loop_attr, return_attention_weights=True)
    else:
        want = ref(x, EDGES, edge_attr, return_attention_weights=True)
    torch.testing.assert_close(got[0], want[0], rtol=1e-5, atol=1e-5)
    assert torch.equal(got[1][0], want[1][0])
    torch.testing.assert_close(got[1][1], want[1][1], rtol=1e-5, atol=1e-5)
    default = ours(F_IN, C, heads=2, edge_dim=edge_dim, **loops)
    default.load_state_dict(ref.state_dict())
    assert not torch.allclose(default(x, EDGES, edge_attr), got[0])  # the option does act


class TwoLayers(torch.nn.Module):
    def __init__(self, conv, **kwargs):
        super().__init__()
        self.conv1 = conv(F_IN, C, heads=2, **kwargs)
        self.conv2 = conv(2 * C, 3, **kwargs)

    def forward(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


def explain(model, edges):
    explainer = Explainer(
        model,
        GNNExplainer(epochs=5),
        explanation_type="model",
        node_mask_type="attributes",
        edge_mask_type="object",
        model_config={"mode": "multiclass_classification", "return_type": "raw",
                      "task_level": "node"},
    )  # fmt: skip
    torch.manual_seed(3)
    return explainer(torch.randn(N, F_IN, generator=torch.Generator().manual_seed(4)), edges,
                     index=1)  # fmt: skip


@pytest.mark.parametrize("edges", [EDGES, NO_LOOPS], ids=["self-loops", "no self-loops"])
@pytest.mark.parametrize(("ours", "theirs"), PAIRS, ids=["GAT", "GATv2", "GT"])
def test_gnn_explainer_gives_pygs_explanation(ours, theirs, edges):
    """Node-level, on the same weights: PyG's node and edge masks; with LipschitzNorm (and GT
    with the paper's self-loops) a mask over the given edges."""
    torch.manual_seed(0)
    ref = TwoLayers(theirs)
    model = TwoLayers(ours)
    model.load_state_dict(ref.state_dict())
    got, want = explain(model, edges), explain(ref, edges)
    torch.testing.assert_close(got.edge_mask, want.edge_mask, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got.node_mask, want.node_mask, rtol=1e-4, atol=1e-5)
    loops = {"add_self_loops": True} if ours is GTLayer else {}
    lip = TwoLayers(ours, norm="lip", **loops)
    lip.load_state_dict(ref.state_dict())
    mask = explain(lip, edges).edge_mask
    assert mask.shape == (edges.size(1),) and mask.isfinite().all()
    assert mask[edges[1] == 1].gt(0).any()  # the explained node's in-edges matter
