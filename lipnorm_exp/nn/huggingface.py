r"""LipschitzNorm in Hugging Face ``transformers`` models, through their attention interface.

A ``transformers`` model built on its attention interface calls, in every attention module,
the function its config names (``config._attn_implementation``) with the heads' queries, keys
and values, the mask, the scaling and the dropout.
[`lipschitz_attention_forward`][lipnorm_exp.nn.huggingface.lipschitz_attention_forward] is such a
function: per head and query, the scores of
[`DenseLipschitzNorm`][lipnorm_exp.nn.dense_lipschitz_norm.DenseLipschitzNorm] (paper Eq. 19, over
the keys and values the mask leaves to that query), then the softmax of
[`LipschitzMultiheadAttention`][lipnorm_exp.nn.LipschitzMultiheadAttention].
[`register_lipschitz_attention`][lipnorm_exp.nn.huggingface.register_lipschitz_attention] registers
it under `ATTENTION_NAME`, with ``transformers``' boolean (SDPA) masks, so that
``from_pretrained(..., attn_implementation="lipschitz_norm")`` finds it, and
[`use_lipschitz_attention`][lipnorm_exp.nn.huggingface.use_lipschitz_attention] switches the models
inside a module to it, keeping their weights
([`lipschitz_normalize`][lipnorm_exp.nn.lipschitz_normalize] calls it).

``transformers`` (the ``hf`` extra) is imported only by these functions, never by importing
this module: ``lipnorm_exp.nn`` imports without it, and a module that holds no Hugging Face
model (none can exist before ``transformers`` is imported) is looked through without it.
"""

import sys
from collections import Counter
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import Tensor, nn

from lipnorm_exp.nn import copy_dropout
from lipnorm_exp.nn.dense_lipschitz_norm import DenseLipschitzNorm
from lipnorm_exp.nn.multihead_attention import _additive, _softmax

if TYPE_CHECKING:  # an optional package (the hf extra), imported only where a model is one
    from transformers import PreTrainedModel

__all__ = [
    "ALPHA_KEY",
    "ATTENTION_NAME",
    "huggingface_models",
    "lipschitz_attention_forward",
    "register_lipschitz_attention",
    "use_lipschitz_attention",
]

#: the name of the attention function in ``transformers``' ``AttentionInterface``
ATTENTION_NAME = "lipschitz_norm"
#: the config attribute that holds $\alpha$ (``None``: the scores are not normalised;
#: absent, as after ``from_pretrained(..., attn_implementation="lipschitz_norm")``: 1.0)
ALPHA_KEY = "lipschitz_norm_alpha"
#: inputs some models pass that change the scores in ways the normalisation does not bound
REFUSED_INPUTS = ("position_bias", "softcap", "sinks", "s_aux")


def register_lipschitz_attention() -> None:
    """Register `lipschitz_attention_forward` and its masks under `ATTENTION_NAME`.

    The mask function is ``transformers``' ``sdpa_mask``: boolean masks, ``True`` where a query
    may attend (under a name without a mask function the models drop the padding mask). It
    may skip the mask of a causal model without padding, which the attention function then
    builds from ``is_causal``. Registering again changes nothing.

    Raises:
        ImportError: where ``transformers`` is not installed, naming the extra to install.
    """
    _require_transformers()
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(ATTENTION_NAME, lipschitz_attention_forward)
    AttentionMaskInterface.register(ATTENTION_NAME, sdpa_mask)


def lipschitz_attention_forward(
    module: nn.Module,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attention_mask: Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    is_causal: bool | None = None,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    r"""Attention with LipschitzNorm of its scores, called by a ``transformers`` model.

    Per head and query $i$, over the keys $j$ the mask leaves to it,
    $\mathrm{out}_i = \sum_j \operatorname{softmax}_j(s_{ij}) \, v_j$ with
    $s_{ij} = \alpha \, q_i^\top k_j / (\max\{uv, uw, vw\} + \epsilon)$ (Eq. 19, see
    [`DenseLipschitzNorm`][lipnorm_exp.nn.dense_lipschitz_norm.DenseLipschitzNorm]; $\alpha$ from
    ``module.config``'s `ALPHA_KEY`, 1 where it has none), or
    with ``alpha`` ``None`` the model's own $s_{ij} = \text{scaling} \cdot q_i^\top k_j$
    plus the mask. Grouped key and value heads are repeated to the query heads. With no mask
    and a causal module (``is_causal``, else ``module.is_causal``), query $i$ attends to
    keys $j \le i$, as SDPA's ``is_causal``. A query whose keys are all masked gets a zero
    output.

    Args:
        module (nn.Module): the calling attention module (its ``config`` and ``training``).
        query (Tensor): $(N, H, L, d)$.
        key (Tensor): $(N, H_{kv}, S, d)$, $H$ a multiple of $H_{kv}$.
        value (Tensor): $(N, H_{kv}, S, d_v)$.
        attention_mask (Tensor, optional): broadcastable to $(N, H, L, S)$; boolean
            (``True``: attended) or additive float (``torch.finfo(dtype).min`` or
            $-\infty$: not attended).
        dropout (float, optional): dropout probability of the attention weights.
        scaling (float, optional): the scores' scale without the norm (default
            $1/\sqrt{d}$); the normalised scores take none.
        is_causal (bool, optional): overrides ``module.is_causal``.
        **kwargs: the model's other inputs; those of `REFUSED_INPUTS` must be ``None``.

    Returns:
        tuple[Tensor, Tensor]: the output $(N, L, H, d_v)$ and the attention weights
        $(N, H, L, S)$.

    Raises:
        ValueError: for an input of `REFUSED_INPUTS` that is not ``None``.
    """
    for name in REFUSED_INPUTS:
        if kwargs.get(name) is not None:
            raise ValueError(
                f"lipschitz_attention_forward: {type(module).__name__} passes {name}, which "
                f"LipschitzNorm does not bound; allowed: {name}=None (use another "
                "attn_implementation for this model)"
            )
    groups = getattr(module, "num_key_value_groups", 1)
    key = key.repeat_interleave(groups, dim=1) if groups > 1 else key
    value = value.repeat_interleave(groups, dim=1) if groups > 1 else value
    causal = getattr(module, "is_causal", False) if is_causal is None else is_causal
    mask = _additive_mask(attention_mask, causal, query, key)
    alpha = getattr(module.config, ALPHA_KEY, 1.0)
    if alpha is None:
        scale = query.size(-1) ** -0.5 if scaling is None else scaling
        logits = (query @ key.transpose(-2, -1)) * scale
        logits = logits if mask is None else logits + mask
    else:
        logits = DenseLipschitzNorm(alpha)(query, key, value, mask)
    weights = _softmax(logits, mask is not None).to(value.dtype)
    weights = copy_dropout.dropout(weights, dropout, module.training)
    return (weights @ value).transpose(1, 2).contiguous(), weights


def _additive_mask(
    attention_mask: Tensor | None, causal: bool, query: Tensor, key: Tensor
) -> Tensor | None:
    r"""The additive float mask ($-\infty$: not attended) of a ``transformers`` mask.

    Boolean masks mark the attended keys; float masks are additive, with
    ``torch.finfo(dtype).min`` (``transformers``' eager masks) read as $-\infty$, so that
    the norm's maxima leave those keys out. Without a mask, a causal module over more than one
    query gets the causal mask (query $i$ attends to keys $j \le i$).
    """
    if attention_mask is None:
        if not causal or query.size(-2) == 1:
            return None
        rows = torch.arange(query.size(-2), device=query.device)
        cols = torch.arange(key.size(-2), device=query.device)
        attention_mask = rows[:, None] >= cols[None, :]
    if attention_mask.dtype == torch.bool:
        return _additive(~attention_mask, query.dtype)
    lowest = torch.finfo(attention_mask.dtype).min
    return attention_mask.masked_fill(attention_mask == lowest, float("-inf")).to(query.dtype)


def huggingface_models(model: nn.Module) -> list["PreTrainedModel"]:
    """The outermost ``transformers`` ``PreTrainedModel`` instances in ``model`` (or itself).

    Without ``transformers`` imported there is none, and nothing is imported to look.
    """
    modeling_utils = sys.modules.get("transformers.modeling_utils")
    if modeling_utils is None:
        return []
    pretrained = modeling_utils.PreTrainedModel
    found: list[PreTrainedModel] = []

    def visit(module: nn.Module) -> None:
        if isinstance(module, pretrained):
            found.append(module)
            return
        for child in module.children():
            visit(child)

    visit(model)
    return found


def use_lipschitz_attention(model: nn.Module, alpha: float | None) -> Counter:
    """Switch every ``transformers`` model in ``model`` to `lipschitz_attention_forward`.

    Registers it
    ([`register_lipschitz_attention`][lipnorm_exp.nn.huggingface.register_lipschitz_attention]),
    writes ``alpha`` into every config the models' modules hold (`ALPHA_KEY`; ``None``: unnormalised
    scores) and sets their attention implementation to `ATTENTION_NAME`
    (``set_attn_implementation``, sub-models included). Weights, device, dtype and training mode are
    unchanged.

    Args:
        model (nn.Module): any module; changed in place.
        alpha (float or None): the bound of the normalised scores, or ``None``.

    Returns:
        Counter: the number of models switched per class name (empty where there is none).

    Raises:
        ValueError: for a model (or a model inside it) that does not take attention functions
            (its attention does not go through ``transformers``' ``AttentionInterface``),
            naming its class.
    """
    models = huggingface_models(model)
    if not models:
        return Counter()
    register_lipschitz_attention()
    for found in models:
        previous = found.config._attn_implementation
        for module in found.modules():
            config = getattr(module, "config", None)
            if config is not None and hasattr(config, "_attn_implementation"):
                setattr(config, ALPHA_KEY, alpha)
        found.set_attn_implementation(ATTENTION_NAME)
        refused = [
            type(sub).__name__
            for sub in found.modules()
            if hasattr(sub, "set_attn_implementation")
            # a module with set_attn_implementation is a PreTrainedModel
            and cast("PreTrainedModel", sub).config._attn_implementation != ATTENTION_NAME
        ]
        if refused:
            found.set_attn_implementation(previous)
            raise ValueError(
                f"lipschitz_normalize: {refused[0]} does not take attention functions (its "
                "attention does not go through transformers' AttentionInterface), so "
                "LipschitzNorm cannot reach it"
            )
    return Counter(type(found).__name__ for found in models)


def _require_transformers() -> None:
    """Raise an `ImportError` naming the extra where ``transformers`` is missing."""
    try:
        import transformers  # noqa: F401
    except ImportError as error:
        raise ImportError(
            "LipschitzNorm for Hugging Face models needs transformers: "
            "pip install 'lipnorm_exp[hf]'"
        ) from error
