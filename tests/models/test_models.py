"""Every model × normalisation builds, trains and differs where it should."""

import importlib
import pkgutil
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from omegaconf import OmegaConf
from small_models import ATTENTION, group, make, small_graph

from lipnorm_exp import models
from lipnorm_exp.config import build_model, validate
from lipnorm_exp.models import MODELS
from lipnorm_exp.models.base import DepthwiseGNN
from lipnorm_exp.models.no_norm import NoNorm
from lipnorm_exp.models.norms import NORMS, Normalisation, node_norm
from lipnorm_exp.nn.score_norm import LIPSCHITZ_NORMS, lipschitz_norm
from lipnorm_exp.records.labels import model_label
from lipnorm_exp.util.errors import ConfigError


def test_the_model_registry_names_every_model_class_of_the_package():
    """A model module's class (one with a label of its own) is in :data:`MODELS`, where it is."""
    classes = {
        f"{cls.__module__}.{cls.__qualname__}"
        for info in pkgutil.iter_modules(models.__path__)
        for cls in vars(importlib.import_module(f"{models.__name__}.{info.name}")).values()
        if isinstance(cls, type) and issubclass(cls, DepthwiseGNN) and vars(cls).get("label")
    }
    assert {MODELS.where(name) for name in MODELS} == classes
    assert all(MODELS.get(name).__name__ == MODELS.where(name).split(".")[-1] for name in MODELS)


def allowed_pairs():
    return [(m, n) for m in MODELS for n in NORMS if not NORMS.get(n).on_scores or m in ATTENTION]


@pytest.mark.parametrize(("model_name", "norm_name"), allowed_pairs())
@pytest.mark.parametrize("depth", [1, 3])
def test_every_allowed_model_and_norm_trains_with_finite_loss(model_name, norm_name, depth):
    torch.manual_seed(0)
    x, edge_index, y = small_graph()
    model = make(model_name, norm_name, depth)
    assert len(model.convs) == depth
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(5):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x, edge_index), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert all(torch.isfinite(torch.tensor(losses)))
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_each_normalisation_changes_the_output(model_name):
    x, edge_index, _ = small_graph()
    outputs = {}
    for norm_name in NORMS:
        if NORMS.get(norm_name).on_scores and model_name not in ATTENTION:
            continue
        torch.manual_seed(0)
        model = make(model_name, norm_name, depth=2).eval()
        outputs[norm_name] = model(x * 10, edge_index)
    for norm_name, out in outputs.items():
        if norm_name != "none":
            assert not torch.allclose(out, outputs["none"], atol=1e-4), norm_name


@pytest.mark.parametrize("scale_individually", [False, True])
def test_pairnorm_output_is_centred_with_the_documented_scale(scale_individually):
    norm = node_norm("pairnorm", 8, scale=2.0, scale_individually=scale_individually)
    x = torch.randn(30, 8) * 5 + 3
    out = norm(x)
    centred = x - x.mean(dim=0)
    if scale_individually:  # PN-SI: each centred row rescaled to norm s
        assert torch.allclose(out.norm(dim=1), torch.full((30,), 2.0), atol=1e-4)
        assert torch.allclose(out, 2.0 * centred / centred.norm(dim=1, keepdim=True), atol=1e-5)
    else:  # PN: centred, root mean squared row norm s
        assert torch.allclose(out.mean(dim=0), torch.zeros(8), atol=1e-5)
        assert out.pow(2).sum(dim=1).mean().sqrt().item() == pytest.approx(2.0, rel=1e-4)


def test_layernorm_normalises_each_node():
    norm = node_norm("layernorm", 8, affine=True)
    out = norm(torch.randn(30, 8) * 5 + 3)
    assert torch.allclose(out.mean(dim=1), torch.zeros(30), atol=1e-5)
    assert torch.allclose(out.var(dim=1, unbiased=False), torch.ones(30), atol=1e-3)


@pytest.mark.parametrize("model_name", ["gat", "gcn", "gt"])
def test_residual_changes_the_forward_pass(model_name):
    x, edge_index, _ = small_graph()
    torch.manual_seed(0)
    plain = make(model_name, "none", depth=3).eval()
    torch.manual_seed(0)
    residual = make(model_name, "none", depth=3, residual=True).eval()
    residual.load_state_dict(plain.state_dict())
    assert not torch.allclose(plain(x, edge_index), residual(x, edge_index))


def test_lip_layers_receive_the_configured_variant():
    model = build_model(
        group("model", "gat", depth=2), group("norm", "lip", variant="published", alpha=2.0), 5, 3
    )
    assert "lip" in repr(model).lower()
    norms = [m for m in model.modules() if type(m).__name__ == "GATLipschitzNorm"]
    assert len(norms) == 2 and all(n.variant == "published" and n.alpha == 2.0 for n in norms)


def test_gradient_groups_name_the_attention_parameters():
    model = make("gat", "lip", depth=3)
    groups = model.layer_parameters()
    assert len(groups) == 3
    attention, everything = groups[0]
    assert {p.shape for p in attention} == {torch.Size([1, 2, 4])}
    assert len(everything) > len(attention)
    assert make("gcn", "none", depth=2).layer_parameters()[0][0] == []


def test_invalid_combinations_fail_at_start_up(make_cfg):
    for overrides in (
        ["model=gin", "norm=lip"],
        ["model=gcnii", "norm=none", "model.residual=true"],
    ):
        with pytest.raises(ConfigError):
            validate(make_cfg(*overrides))


@pytest.mark.parametrize(
    ("model", "override", "message"),
    [
        ("gat", "norm.alpha=-1", r"^norm\.alpha must be a finite number > 0, got -1$"),
        ("gt", "norm.eps=0", r"^norm\.eps must be a finite number > 0, got 0$"),
        ("gat", "norm.variant=paperr", r"^norm\.variant must be paper or published, got paperr$"),
        ("gatv2", "norm.alpha=-2", r"^norm\.alpha must be a finite number > 0, got -2$"),
    ],
)
def test_bad_lipschitz_norm_options_fail_at_start_up_in_one_line(
    make_cfg, model, override, message
):
    """The schema holds the limits the layers check (they raise ValueError), in one line."""
    with pytest.raises(ConfigError, match=message) as info:
        validate(make_cfg(f"model={model}", "norm=lip", override))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_models_take_the_config_groups_keys_as_typed_keyword_arguments(model_name):
    """build_model passes the group keys as they are: equal to the class called by hand."""
    model, norm = group("model", model_name, depth=2), group("norm", "pairnorm", scale=2.0)
    options = OmegaConf.to_container(model, resolve=True)
    del options["name"]
    torch.manual_seed(0)
    built = build_model(model, norm, 5, 3)
    torch.manual_seed(0)
    by_hand = MODELS.get(model_name)(
        5, 3, norm="pairnorm", norm_options={"scale": 2.0, "scale_individually": False}, **options
    )
    assert repr(built) == repr(by_hand)
    for (name, a), b in zip(built.state_dict().items(), by_hand.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    with pytest.raises(TypeError, match="missing"):
        MODELS.get(model_name)(5, 3, norm="none", norm_options={})


class Halve(torch.nn.Module):
    def forward(self, x, batch=None):
        return x / 2


@dataclass
class HalvingNorm(Normalisation):
    """A node normalisation made of one class: halves the features after each layer."""

    def node_module(self, channels):
        return Halve()

    @staticmethod
    def label_suffix(options):
        return "-H"


@dataclass
class ScaledLipNorm(Normalisation):
    """A score normalisation made of one class: the layer's LipschitzNorm at a given alpha."""

    alpha: float
    on_scores = True

    def score_module(self, model):
        return lipschitz_norm(model.layer_class.score_contract, alpha=self.alpha)


@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_a_normalisation_of_either_kind_is_one_registered_class(monkeypatch, model_name):
    monkeypatch.setitem(NORMS._entries, "halve", HalvingNorm)
    monkeypatch.setitem(NORMS._entries, "scaled_lip", ScaledLipNorm)
    options = OmegaConf.to_container(group("model", model_name, depth=2), resolve=True)
    del options["name"]
    model = MODELS.get(model_name)(5, 3, norm="halve", norm_options={}, **options)
    assert all(isinstance(norm, Halve) for norm in model.norms)
    assert model_label({"model": {"name": model_name}, "norm": {"name": "halve"}}).endswith("-H")
    if model_name not in ATTENTION:
        return
    model = MODELS.get(model_name)(5, 3, norm="scaled_lip", norm_options={"alpha": 3.0}, **options)
    assert all(isinstance(norm, NoNorm) for norm in model.norms)
    assert [conv.norm.alpha for conv in model.convs] == [3.0, 3.0]
    lip = LIPSCHITZ_NORMS[model.layer_class.score_contract]
    assert all(type(conv.norm) is lip for conv in model.convs)
