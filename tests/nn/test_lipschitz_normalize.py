"""lipschitz_normalize: every GATConv, GATv2Conv, TransformerConv and nn.MultiheadAttention of
a model (a PyG Sequential, PyG's GAT model, an nn.TransformerEncoder, a plain module) becomes
the library's layer with the same arguments and weights; with ``norm=None`` every output is
unchanged, with ``norm="lip"`` each one normalises its scores."""

import contextlib
import copy

import pytest
import torch
from torch import nn
from torch_geometric.nn import GATConv, GATv2Conv, Sequential, TransformerConv
from torch_geometric.nn.models import GAT

from lipnorm_exp.nn import (
    DenseLipschitzNorm,
    GATLayer,
    GATLipschitzNorm,
    GATv2Layer,
    GTLayer,
    GTLipschitzNorm,
    LipschitzMultiheadAttention,
    ScoreLipschitzNorm,
    lipschitz_normalize,
)

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")

N, F_IN = 7, 5
EDGES = torch.tensor([[0, 1, 2, 3, 4, 0, 5, 3, 6], [1, 2, 0, 0, 0, 3, 1, 3, 2]])
ORIGINALS = (GATConv, GATv2Conv, TransformerConv, nn.MultiheadAttention)
#: library layer -> (its norm's class, the original it replaces)
OURS = {
    GATLayer: (GATLipschitzNorm, GATConv),
    GATv2Layer: (ScoreLipschitzNorm, GATv2Conv),
    GTLayer: (GTLipschitzNorm, TransformerConv),
    LipschitzMultiheadAttention: (DenseLipschitzNorm, nn.MultiheadAttention),
}


def pyg_sequential():
    return Sequential("x, edge_index", [
        (GATConv(F_IN, 4, heads=2), "x, edge_index -> x"),
        nn.ELU(),
        (GATv2Conv(8, 4, heads=2, aggr="mean"), "x, edge_index -> x"),
        nn.ELU(),
        (TransformerConv(8, 3, heads=2, root_weight=False), "x, edge_index -> x"),
    ])  # fmt: skip


class Mixed(nn.Module):
    """Graph layers in a ModuleDict and an attention module over the nodes."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleDict({"gat": GATConv(F_IN, 4, heads=2, residual=True),
                                    "gt": TransformerConv(8, 4, heads=2, beta=True)})  # fmt: skip
        self.attention = nn.MultiheadAttention(8, 2, add_bias_kv=True)

    def forward(self, x, edge_index):
        x = self.convs["gt"](self.convs["gat"](x, edge_index).relu(), edge_index)
        return self.attention(x, x, x)[0]


GRAPH_MODELS = {
    "Sequential": pyg_sequential,
    "GAT": lambda: GAT(F_IN, 8, num_layers=3, out_channels=3, heads=2),
    "GATv2": lambda: GAT(F_IN, 8, num_layers=2, out_channels=3, v2=True, heads=2),
    "mixed": Mixed,
    "one layer": lambda: GATConv(F_IN, 4, heads=2),
}


def randomised(model: nn.Module) -> nn.Module:
    torch.manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(std=0.5)
    return model


def graph_inputs():
    return torch.randn(N, F_IN, generator=torch.Generator().manual_seed(1)), EDGES


def check_swapped(model: nn.Module, original: nn.Module, norm: str | None) -> None:
    """No original attention class is left; every library layer has the asked norm."""
    assert not [m for m in model.modules() if type(m) in ORIGINALS]
    ours = [m for m in model.modules() if type(m) in OURS]
    assert len(ours) == len([m for m in original.modules() if type(m) in ORIGINALS]) > 0
    for layer in ours:
        if norm is None:
            assert layer.norm is None
        else:
            assert type(layer.norm) is OURS[type(layer)][0] and layer.norm.alpha == 1.0
    torch.testing.assert_close(model.state_dict(), original.state_dict(), rtol=0, atol=0)


@pytest.mark.parametrize("kind", GRAPH_MODELS)
def test_graph_models_without_norm_are_unchanged(kind):
    original = randomised(GRAPH_MODELS[kind]()).eval()
    model = lipschitz_normalize(copy.deepcopy(original), norm=None)
    check_swapped(model, original, None)
    torch.testing.assert_close(model(*graph_inputs()), original(*graph_inputs()))


@pytest.mark.parametrize("kind", GRAPH_MODELS)
def test_graph_models_with_norm_normalise_every_layer(kind):
    original = randomised(GRAPH_MODELS[kind]())
    model = lipschitz_normalize(copy.deepcopy(original))
    check_swapped(model, original, "lip")
    assert model.training
    by_hand = lipschitz_normalize(copy.deepcopy(original), norm=None)
    for layer in by_hand.modules():
        if type(layer) in OURS:
            layer.norm = OURS[type(layer)][0]()
    torch.testing.assert_close(model(*graph_inputs()), by_hand(*graph_inputs()))
    assert not torch.allclose(model(*graph_inputs()), original(*graph_inputs()), atol=1e-3)


def test_options_reach_every_norm():
    model = lipschitz_normalize(Mixed(), alpha=2.0, variant="published")
    assert repr(model.convs["gat"].norm) == "GATLipschitzNorm(alpha=2.0, variant=published)"
    assert repr(model.convs["gt"].norm) == "GTLipschitzNorm(alpha=2.0, variant=published)"
    assert repr(model.attention.norm) == "DenseLipschitzNorm(alpha=2.0)"
    gatv2 = lipschitz_normalize(GATv2Conv(F_IN, 4), alpha=0.5)
    assert repr(gatv2.norm) == "ScoreLipschitzNorm(alpha=0.5)"


def test_dtype_and_mode_are_kept():
    model = lipschitz_normalize(randomised(pyg_sequential()).double().eval())
    assert all(p.dtype == torch.float64 for p in model.parameters())
    assert not any(m.training for m in model.modules())


def encoder():
    layer = nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)
    return randomised(nn.TransformerEncoder(layer, 2, enable_nested_tensor=True))


@pytest.mark.parametrize("mode", ["train", "eval", "eval no_grad"])
def test_transformer_encoder(mode):
    """Built around PyTorch's attention, the encoder would take nested tensors and fused
    kernels in inference with padding; converted, it calls every replaced layer."""
    original = encoder().train(mode == "train")
    assert original.use_nested_tensor
    x = torch.randn(3, 5, 8, generator=torch.Generator().manual_seed(2))
    padding = torch.zeros(3, 5, dtype=torch.bool)
    padding[1, 2:] = True
    plain = lipschitz_normalize(copy.deepcopy(original), norm=None)
    lip = lipschitz_normalize(copy.deepcopy(original))
    check_swapped(plain, original, None)
    check_swapped(lip, original, "lip")
    assert not lip.use_nested_tensor
    with torch.no_grad() if mode.endswith("no_grad") else contextlib.nullcontext():
        want = original(x, src_key_padding_mask=padding)
        got = plain(x, src_key_padding_mask=padding)
        normalised = lip(x, src_key_padding_mask=padding)
    keep = ~padding  # the padded positions of a nested-tensor output are 0
    torch.testing.assert_close(got[keep], want[keep], rtol=1e-5, atol=1e-5)
    assert not torch.allclose(normalised[keep], want[keep], atol=1e-3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": -1.0}, "lipschitz_normalize: alpha must be a finite number > 0"),
        ({"variant": "authors"}, "lipschitz_normalize: unknown variant 'authors'"),
        ({"variant": None}, "lipschitz_normalize: unknown variant None; allowed: paper"),
        ({"norm": "pairnorm"}, "norm must be 'lip' or None"),
    ],
)
def test_invalid_arguments_are_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        lipschitz_normalize(Mixed(), **kwargs)


class Twice(nn.Module):
    """One GATConv applied twice: its two uses share their weights."""

    def __init__(self):
        super().__init__()
        self.first = GATConv(F_IN, F_IN, heads=1)
        self.again = self.first

    def forward(self, x, edge_index):
        return self.again(self.first(x, edge_index).relu(), edge_index)


@pytest.mark.parametrize("norm", [None, "lip"])
def test_a_layer_used_twice_becomes_one_layer_used_twice(norm):
    original = randomised(Twice())
    model = lipschitz_normalize(copy.deepcopy(original), norm=norm)
    assert type(model.first) is GATLayer and model.again is model.first
    assert sum(1 for _ in model.parameters()) == sum(1 for _ in original.parameters())
    if norm is None:  # the same computation, weights still shared
        x, edges = graph_inputs()
        torch.testing.assert_close(model(x, edges), original(x, edges), rtol=1e-5, atol=1e-5)


def test_what_is_replaced_is_logged_as_a_count_per_class(caplog):
    with caplog.at_level("INFO", logger="lipnorm_exp.nn.convert"):
        lipschitz_normalize(Mixed())
    assert "(norm=lip): 1 GATConv, 1 MultiheadAttention, 1 TransformerConv" in caplog.text


@pytest.mark.parametrize("model", [nn.Linear(3, 3), nn.Sequential(nn.Linear(3, 3), nn.ReLU())])
def test_a_model_without_attention_is_refused_naming_what_is_looked_for(model):
    looked_for = "looks for GATConv, GATv2Conv, TransformerConv, MultiheadAttention"
    with pytest.raises(ValueError, match=f"nothing to normalise in {type(model).__name__}; "):
        lipschitz_normalize(model)
    with pytest.raises(ValueError, match=looked_for):
        lipschitz_normalize(model)
    before = copy.deepcopy(model.state_dict())
    with pytest.warns(UserWarning, match=looked_for):
        assert lipschitz_normalize(model, strict=False) is model
    torch.testing.assert_close(model.state_dict(), before, rtol=0, atol=0)


@pytest.mark.parametrize("given", [None, 3, "bert", {"hidden_size": 8}, nn.Linear])
def test_what_is_not_a_module_is_refused_in_one_line_naming_it(given):
    with pytest.raises(TypeError, match=r"^lipschitz_normalize takes a torch.nn.Module") as error:
        lipschitz_normalize(given)
    assert "\n" not in str(error.value) and type(given).__name__ in str(error.value)
    if given is nn.Linear:
        assert "the class Linear" in str(error.value) and "build the model first" in str(
            error.value
        )
