"""One call that adds LipschitzNorm to an existing model, keeping its trained weights.

[`lipschitz_normalize`][lipnorm_exp.nn.convert.lipschitz_normalize] replaces every PyG ``GATConv``,
``GATv2Conv`` and ``TransformerConv`` and every ``torch.nn.MultiheadAttention`` inside a module by
the library's drop-in ([`GATLayer`][lipnorm_exp.nn.gat_layer.GATLayer],
[`GATv2Layer`][lipnorm_exp.nn.gatv2_layer.GATv2Layer], [`GTLayer`][lipnorm_exp.nn.gt_layer.GTLayer],
[`LipschitzMultiheadAttention`][lipnorm_exp.nn.multihead_attention.LipschitzMultiheadAttention])
with the same arguments and state dict, and the normalisation of the paper's Eq. (17), (15) or (19)
on its attention scores; a Hugging Face ``transformers`` model is switched to the attention function
of [`huggingface`][lipnorm_exp.nn.huggingface] (Eq. 19). It logs what it changed and refuses a model
in which it finds nothing to change.
"""

import logging
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any, cast

from torch import nn
from torch_geometric.nn import GATConv, GATv2Conv, TransformerConv

from lipnorm_exp.nn.gat_layer import GATLayer
from lipnorm_exp.nn.gatv2_layer import GATv2Layer
from lipnorm_exp.nn.gt_layer import GTLayer
from lipnorm_exp.nn.huggingface import use_lipschitz_attention
from lipnorm_exp.nn.lipschitz_norm import VARIANTS, check_norm_options
from lipnorm_exp.nn.multihead_attention import LipschitzMultiheadAttention
from lipnorm_exp.nn.score_norm import ScoreNorm, lipschitz_norm

__all__ = ["lipschitz_normalize"]

_log = logging.getLogger(__name__)


def lipschitz_normalize(
    model: nn.Module,
    alpha: float = 1.0,
    variant: str = "paper",
    *,
    norm: str | None = "lip",
    strict: bool = True,
) -> nn.Module:
    r"""Replace every attention layer of ``model`` by the library's layer with LipschitzNorm.

    Every ``GATConv``, ``GATv2Conv``, ``TransformerConv`` and ``torch.nn.MultiheadAttention``
    (of exactly these classes, not subclasses) anywhere inside ``model`` is replaced by
    [`GATLayer`][lipnorm_exp.nn.gat_layer.GATLayer] (Eq. 17),
    [`GATv2Layer`][lipnorm_exp.nn.gatv2_layer.GATv2Layer] (Eq. 15),
    [`GTLayer`][lipnorm_exp.nn.gt_layer.GTLayer] (Eq. 19) or
    [`LipschitzMultiheadAttention`][lipnorm_exp.nn.multihead_attention.LipschitzMultiheadAttention]
    (Eq. 19), each with the LipschitzNorm of its ``score_contract`` (`LIPSCHITZ_NORMS`), built with
    the same arguments (``MessagePassing``'s ``aggr`` and ``flow`` included) and loaded with its
    state dict, on its device and dtype and in its training mode. Hooks registered on a replaced
    module are not carried over. An ``nn.TransformerEncoder`` whose attention was replaced stops
    turning padded batches into nested tensors (``use_nested_tensor = False``), which its layers
    could no longer take. The analogue of ``torch.nn.utils.parametrizations.spectral_norm`` for
    attention.

    A Hugging Face ``transformers`` model (a ``PreTrainedModel``, or one inside ``model``)
    keeps its modules and weights and is switched to
    [`lipschitz_attention_forward`][lipnorm_exp.nn.huggingface.lipschitz_attention_forward] (Eq. 19
    per head and query over the keys its mask leaves; with ``norm=None`` the model's own attention
    scores), which every attention module of a model built on ``transformers``'
    ``AttentionInterface`` calls. What was changed is logged (``INFO``, logger
    ``lipnorm_exp.nn.convert``) as a count per class.

    Args:
        model (nn.Module): any module (a PyG ``Sequential``, ``torch_geometric.nn.models.GAT``,
            an ``nn.TransformerEncoder``...), changed in place; or one attention layer.
        alpha (float, optional): the bound $\alpha$ of the normalised scores.
            (default: `1.0`)
        variant (str, optional): ``"paper"`` or ``"published"``, for the GAT and GT norms (see
            `VARIANTS`). (default: `"paper"`)
        norm (str or None, optional): ``"lip"``, or ``None`` to swap in the library's layers
            without normalisation (they compute what the replaced layers computed).
            (default: `"lip"`)
        strict (bool, optional): refuse a ``model`` with nothing to change, and a Hugging
            Face model with no attention module (Mamba, FNet, ResNet); else warn once and
            leave them as they are. (default: `True`)

    Returns:
        nn.Module: ``model``, or its replacement when ``model`` is itself an attention layer.

    Raises:
        TypeError: ``model`` is not a module (a class, a config, a name, ``None``): one line
            naming what it is and what is taken.
        ValueError: for an ``alpha`` that is not a finite number > 0, an unknown ``variant`` or
            ``norm``; with ``strict``, for a ``model`` with nothing to change; for a Hugging Face
            model whose attention does not go through ``AttentionInterface``.
        ImportError: never for a model without Hugging Face models; for the attention
            function without ``transformers`` installed (``pip install 'lipnorm_exp[hf]'``).
    """
    if not isinstance(model, nn.Module):
        shown = " ".join(repr(model).split())  # one line, whatever a repr spans (a config's)
        what = f"the class {model.__name__}" if isinstance(model, type) else shown[:80]
        hint = ": build the model first (an instance)" if isinstance(model, type) else ""
        raise TypeError(
            f"lipschitz_normalize takes a torch.nn.Module (a model or one attention layer), got "
            f"{what} of type {type(model).__name__}{hint}"
        )
    check_norm_options("lipschitz_normalize", alpha, None, variant)
    if variant not in VARIANTS:  # None passes the check above, meant for norms without variants
        raise ValueError(
            f"lipschitz_normalize: unknown variant {variant!r}; allowed: {', '.join(VARIANTS)}"
        )
    if norm not in ("lip", None):
        raise ValueError(f"lipschitz_normalize: norm must be 'lip' or None, got {norm!r}")
    found = Counter(
        type(m).__name__ for m in model.modules() if type(m) in _BUILDERS or _made_here(m)
    )
    switched, without = use_lipschitz_attention(model, None if norm is None else alpha, strict)
    found.update(switched)
    _report(found, model, norm, strict, without)

    replaced: dict[int, nn.Module] = {}  # a module used at several places becomes one layer

    def replace(module: nn.Module) -> nn.Module:
        if id(module) in replaced:
            return replaced[id(module)]
        build = _BUILDERS.get(type(module))
        if _made_here(module):  # swapped by an earlier call: its norm follows this one
            setattr(module, "norm", _norm_for(norm, alpha, variant)(type(module)))  # noqa: B010
            return module
        if build is None:
            # every name a child is bound to (named_children() yields a shared child once)
            for name, child in list(module._modules.items()):
                if child is not None:
                    setattr(module, name, replace(child))
            if isinstance(module, nn.TransformerEncoder) and _holds_ours(module):
                module.use_nested_tensor = False
            return module
        layer = build(module, _norm_for(norm, alpha, variant))
        setattr(layer, "swapped_in", True)  # noqa: B010 (a later call resets its norm)
        parameter = next(module.parameters())
        layer.to(parameter.device, parameter.dtype)
        layer.load_state_dict(module.state_dict())
        replaced[id(module)] = layer.train(module.training)
        return replaced[id(module)]

    return replace(model)


#: ``norm_for(cls)`` gives the norm of a layer of class ``cls`` (or ``None``)
NormFor = Callable[[Any], ScoreNorm | None]  # Any: a layer class, with its score_contract


def _norm_for(norm: str | None, alpha: float, variant: str) -> NormFor:
    """The norm of each layer class: none, or the LipschitzNorm of its ``score_contract``."""
    return lambda cls: (
        None
        if norm is None
        # each LipschitzNorm keeps the contract it is built for
        else cast(ScoreNorm, lipschitz_norm(cls.score_contract, alpha, variant=variant))
    )


def _made_here(module: nn.Module) -> bool:
    """Whether ``module`` is a layer an earlier `lipschitz_normalize` swapped in."""
    return getattr(module, "swapped_in", False) is True


def _message_passing(conv: nn.Module) -> dict:
    """The ``MessagePassing`` options a PyG layer was built with."""
    return {"aggr": conv.aggr_module, "flow": conv.flow}


def _gat(conv: GATConv, norm_for: NormFor) -> GATLayer:
    return GATLayer(
        conv.in_channels, conv.out_channels, conv.heads, conv.concat, conv.negative_slope,
        conv.dropout, conv.add_self_loops, conv.edge_dim, conv.fill_value, conv.bias is not None,
        getattr(conv, "residual", False), norm=norm_for(GATLayer), **_message_passing(conv),
    )  # fmt: skip


def _gatv2(conv: GATv2Conv, norm_for: NormFor) -> GATv2Layer:
    return GATv2Layer(
        conv.in_channels, conv.out_channels, conv.heads, conv.concat, conv.negative_slope,
        conv.dropout, conv.add_self_loops, conv.edge_dim, conv.fill_value, conv.bias is not None,
        conv.share_weights, getattr(conv, "residual", False), norm=norm_for(GATv2Layer),
        **_message_passing(conv),
    )  # fmt: skip


def _gt(conv: TransformerConv, norm_for: NormFor) -> GTLayer:
    return GTLayer(
        conv.in_channels, conv.out_channels, conv.heads, conv.concat, conv.beta, conv.dropout,
        conv.edge_dim, conv.lin_key.bias is not None, conv.root_weight, norm=norm_for(GTLayer),
        **_message_passing(conv),
    )  # fmt: skip


def _mha(mha: nn.MultiheadAttention, norm_for: NormFor) -> LipschitzMultiheadAttention:
    return LipschitzMultiheadAttention(
        mha.embed_dim, mha.num_heads, mha.dropout, mha.in_proj_bias is not None,
        mha.bias_k is not None, mha.add_zero_attn, mha.kdim, mha.vdim, mha.batch_first,
        norm=norm_for(LipschitzMultiheadAttention),
    )  # fmt: skip


# Any: an instance of the key's class
_BUILDERS: dict[type, Callable[[Any, NormFor], nn.Module]] = {
    GATConv: _gat,
    GATv2Conv: _gatv2,
    TransformerConv: _gt,
    nn.MultiheadAttention: _mha,
}


def _holds_ours(encoder: nn.TransformerEncoder) -> bool:
    return any(isinstance(m, LipschitzMultiheadAttention) for m in encoder.modules())


def _report(
    found: Counter, model: nn.Module, norm: str | None, strict: bool, without: list[str]
) -> None:
    """Log what `lipschitz_normalize` changes; refuse (or warn of) a model without any.

    ``without``: the Hugging Face models left as they were for want of attention
    (``strict=False``), named in the one warning.
    """
    left = f"; left without attention: {', '.join(without)}" if without else ""
    if found:
        changed = ", ".join(f"{count} {name}" for name, count in sorted(found.items()))
        _log.info("lipschitz_normalize (norm=%s): %s", norm, changed)
        if without:
            warnings.warn(f"lipschitz_normalize: {changed} switched{left}", stacklevel=3)
        return
    looked_for = ", ".join(cls.__name__ for cls in _BUILDERS)
    message = (
        f"lipschitz_normalize: nothing to normalise in {type(model).__name__}; it looks for "
        f"{looked_for} (exactly these classes) and Hugging Face transformers models{left}"
    )
    if strict:
        raise ValueError(message + " (strict=False: a warning instead)")
    warnings.warn(message, stacklevel=3)
