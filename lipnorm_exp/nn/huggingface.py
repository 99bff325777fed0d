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

import re
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
    "attention_modules",
    "causal_sdpa_mask",
    "check_coverage",
    "register_lipschitz_attention",
    "use_lipschitz_attention",
]

#: the name of the attention function in ``transformers``' ``AttentionInterface``
ATTENTION_NAME = "lipschitz_norm"
#: the config attribute that holds $\alpha$ (``None``: the scores are not normalised;
#: absent, as after ``from_pretrained(..., attn_implementation="lipschitz_norm")``: 1.0)
ALPHA_KEY = "lipschitz_norm_alpha"
#: an additive mask entry at or below this is read as "not attended" in the norm's maxima: the
#: key's softmax weight is then below $e^{-50 + 2\alpha}$ of another key's (Swin's -100)
NEGLIGIBLE_MASK = -50.0
#: what marks, in an attention class's source, that it calls the attention function
INTERFACE_MARK = "ALL_ATTENTION_FUNCTIONS"
#: the class names of modules that compute attention: ``Attention``, or ``Attn`` other than in
#: the speech models' ``AttnAdapterLayer`` (a feed-forward adapter beside attention)
ATTENTION_CLASS = re.compile(r"attention|attn(?!adapter)", re.IGNORECASE)


def register_lipschitz_attention() -> None:
    """Register `lipschitz_attention_forward` and its masks under `ATTENTION_NAME`.

    The mask function is ``transformers``' ``sdpa_mask``: boolean masks, ``True`` where a query
    may attend (under a name without a mask function the models drop the padding mask), the
    causal mask built for models without SDPA (`causal_sdpa_mask`). Registering again
    changes nothing.

    Raises:
        ImportError: where ``transformers`` is not installed, naming the extra to install.
    """
    _require_transformers()
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(ATTENTION_NAME, lipschitz_attention_forward)
    AttentionMaskInterface.register(ATTENTION_NAME, causal_sdpa_mask)


def causal_sdpa_mask(*args: Any, **kwargs: Any) -> Tensor | None:
    """``transformers``' ``sdpa_mask``, building the causal mask for models without SDPA.

    ``sdpa_mask`` returns no mask for a causal model without padding, leaving causality to
    the attention module's ``is_causal``, as SDPA does (so a model's own SDPA outputs are
    kept, PaliGemma's included). A model that takes no SDPA builds its masks for eager
    attention and need not mark its modules causal (NLLB-MoE's decoder self-attention
    holds ``is_causal=False``): for its config the mask is always built.
    """
    from transformers.masking_utils import sdpa_mask

    if not _takes_sdpa(kwargs.get("config")):
        kwargs = {**kwargs, "allow_is_causal_skip": False}
    return sdpa_mask(*args, **kwargs)


def _takes_sdpa(config: Any) -> bool:
    """Whether the model class of ``config`` takes SDPA (unknown configs: yes)."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    try:
        mapped: Any = MODEL_MAPPING[type(config)]
    except (KeyError, ValueError):
        return True
    model_class = mapped[0] if isinstance(mapped, tuple | list) else mapped
    return bool(getattr(model_class, "_supports_sdpa", True))


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
    plus the mask. With the norm, an additive mask entry at or below `NEGLIGIBLE_MASK`
    counts as masked (Swin's -100 between sub-windows). Grouped key and value heads are
    repeated to the query heads. With no mask
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
        **kwargs: the model's other inputs; ``position_bias`` (added to the scores, T5),
            ``softcap`` ($c \tanh(s/c)$, Gemma-2) and ``s_aux`` or ``sinks`` (one more
            logit per head whose weight is dropped, GPT-OSS) act on the scores, normalised or
            not, as in the model's own attention.

    Returns:
        tuple[Tensor, Tensor]: the output $(N, L, H, d_v)$ and the attention weights
        $(N, H, L, S)$.
    """
    groups = getattr(module, "num_key_value_groups", 1)
    key = key.repeat_interleave(groups, dim=1) if groups > 1 else key
    value = value.repeat_interleave(groups, dim=1) if groups > 1 else value
    causal = getattr(module, "is_causal", False) if is_causal is None else is_causal
    mask = _additive_mask(attention_mask, causal, query, key)
    alpha = getattr(module.config, ALPHA_KEY, 1.0)
    if alpha is None:
        scale = query.size(-1) ** -0.5 if scaling is None else scaling
        logits = (query @ key.transpose(-2, -1)) * scale
    else:
        if mask is not None:  # a key the softmax all but ignores is left out of the maxima
            mask = mask.masked_fill(mask <= NEGLIGIBLE_MASK, float("-inf"))
        reach = None if mask is None else torch.where(mask == float("-inf"), mask, 0.0)
        logits = DenseLipschitzNorm(alpha)(query, key, value, reach)
    logits = _model_terms(logits, kwargs)
    logits = logits if mask is None else logits + mask
    sinks = kwargs.get("s_aux", kwargs.get("sinks"))
    if sinks is not None:  # one more logit per head, whose weight is dropped
        column = sinks.reshape(1, -1, 1, 1).expand(*logits.shape[:-1], 1).to(logits.dtype)
        weights = torch.cat([logits, column], dim=-1).softmax(dim=-1)[..., :-1]
        weights = weights.to(value.dtype)
        weights = copy_dropout.dropout(weights, dropout, module.training)
        return (weights @ value).transpose(1, 2).contiguous(), weights
    weights = _softmax(logits, mask is not None).to(value.dtype)
    weights = copy_dropout.dropout(weights, dropout, module.training)
    return (weights @ value).transpose(1, 2).contiguous(), weights


def _model_terms(logits: Tensor, kwargs: dict[str, Any]) -> Tensor:
    r"""The model's own functions of the scores, applied before the mask.

    ``position_bias`` $b_{ij}$ is added (T5), then the soft-cap $c \tanh(s/c)$
    (Gemma-2).
    """
    bias = kwargs.get("position_bias")
    logits = logits if bias is None else logits + bias
    cap = kwargs.get("softcap")
    return logits if cap is None else cap * torch.tanh(logits / cap)


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


def use_lipschitz_attention(
    model: nn.Module, alpha: float | None, strict: bool = True
) -> tuple[Counter, list[str]]:
    """Switch every ``transformers`` model in ``model`` to `lipschitz_attention_forward`.

    A model with no attention module (Mamba, FNet, ResNet) is refused, or with
    ``strict=False`` left as it is and named in what is returned. Every other model is checked
    (`check_coverage`); only if all pass is any changed.
    Each model then gets its own copy of its configs (two models that shared a config no
    longer share the attention implementation or ``alpha``), ``alpha`` in every one
    (`ALPHA_KEY`; ``None``: unnormalised scores) and `ATTENTION_NAME` as attention
    implementation (``set_attn_implementation``, sub-models included). Weights, device, dtype
    and training mode are unchanged.

    Args:
        model (nn.Module): any module; changed in place.
        alpha (float or None): the bound of the normalised scores, or ``None``.
        strict (bool, optional): refuse a model with no attention module (else leave it).

    Returns:
        tuple[Counter, list[str]]: the number of models switched per class name (empty where
        there is none), and the class names of the models left without attention.

    Raises:
        ValueError: from `check_coverage`, before anything is changed.
    """
    models = huggingface_models(model)
    if not models:
        return Counter(), []
    register_lipschitz_attention()
    without = [] if strict else [found for found in models if not _has_attention(found)]
    models = [found for found in models if found not in without]
    for found in models:
        check_coverage(found)
    for found in models:
        _own_configs(found)
        for module in found.modules():
            config = getattr(module, "config", None)
            if config is not None and hasattr(config, "_attn_implementation"):
                setattr(config, ALPHA_KEY, alpha)
        found.set_attn_implementation(ATTENTION_NAME)
    return Counter(type(found).__name__ for found in models), [type(m).__name__ for m in without]


def attention_modules(model: nn.Module) -> list[nn.Module]:
    """The modules of ``model`` that compute attention themselves.

    Those whose class name `ATTENTION_CLASS` matches (``...Attention``, and the ``...AttnBlock``
    of image tokenizers such as Chameleon's and Janus's VQ-VAE, which compute a softmax of
    query-key products without ``Attention`` in their name) and that hold no such module
    (``BertAttention`` holds ``BertSelfAttention``, which computes it), other than
    ``torch.nn.MultiheadAttention`` and the library's layers, which
    [`lipschitz_normalize`][lipnorm_exp.nn.lipschitz_normalize] swaps.
    """
    from lipnorm_exp.nn.multihead_attention import LipschitzMultiheadAttention

    def named(module: nn.Module) -> bool:
        return bool(ATTENTION_CLASS.search(type(module).__name__))

    swapped = (nn.MultiheadAttention, LipschitzMultiheadAttention)
    return [
        module
        for module in model.modules()
        if named(module)
        and not isinstance(module, swapped)
        and not any(named(sub) for sub in list(module.modules())[1:])
    ]


def check_coverage(model: "PreTrainedModel") -> None:
    """Refuse, in one line naming the class, a model that LipschitzNorm would not fully reach.

    A model takes attention functions when its own ``set_attn_implementation`` accepts
    `ATTENTION_NAME` (tried, then undone) and every class of `attention_modules`
    calls the function its config names (its source reads `INTERFACE_MARK`) and holds
    no module computing attention sinks from the input (Inkling2's ``sink_proj``: a logit
    per query that no norm bounds, where GPT-OSS's sinks are parameters). A model with no
    attention module at all (Mamba, FNet, ResNet) is refused too.

    Raises:
        ValueError: naming the model or the attention class that does not call the function.
    """
    import inspect

    name = type(model).__name__
    if not _has_attention(model):
        raise ValueError(
            f"lipschitz_normalize: {name} has no attention module to normalise "
            "(strict=False: a warning instead)"
        )
    for module in attention_modules(model):
        cls = type(module)
        if INTERFACE_MARK not in inspect.getsource(cls):
            raise ValueError(
                f"lipschitz_normalize: {cls.__name__} (in {name}) computes its attention "
                "without transformers' AttentionInterface, so LipschitzNorm cannot reach it"
            )
        sinks = [child for child, _ in module.named_children() if "sink" in child.lower()]
        if sinks:
            raise ValueError(
                f"lipschitz_normalize: {cls.__name__} (in {name}) computes its attention sinks "
                f"from the input ({sinks[0]}), logits that LipschitzNorm does not bound"
            )
    previous = {id(sub): sub.config._attn_implementation for sub in _pretrained(model)}
    try:
        model.set_attn_implementation(ATTENTION_NAME)
        refused = [
            type(sub).__name__
            for sub in _pretrained(model)
            if sub.config._attn_implementation != ATTENTION_NAME
        ]
    except (ValueError, ImportError) as error:  # transformers' own refusal, several lines
        refused = [f"{name} ({str(error).splitlines()[0][:120]})"]
    finally:
        for sub in _pretrained(model):
            if sub.config._attn_implementation != previous[id(sub)]:
                try:
                    sub.set_attn_implementation(previous[id(sub)])
                except (ValueError, ImportError):  # a value it held, but refuses to be set to
                    sub.config._attn_implementation = previous[id(sub)]
    if refused:
        raise ValueError(
            f"lipschitz_normalize: {refused[0]} does not take attention functions (its "
            "attention does not go through transformers' AttentionInterface), so "
            "LipschitzNorm cannot reach it"
        )


def _has_attention(model: nn.Module) -> bool:
    """Whether ``model`` holds an attention module (`attention_modules` or an MHA)."""
    holds_mha = any(isinstance(m, nn.MultiheadAttention) for m in model.modules())
    return holds_mha or bool(attention_modules(model))


def _pretrained(model: nn.Module) -> list["PreTrainedModel"]:
    """``model``'s modules that are ``PreTrainedModel`` (those with ``set_attn_implementation``)."""
    return [
        cast("PreTrainedModel", sub)
        for sub in model.modules()
        if hasattr(sub, "set_attn_implementation")
    ]


def _own_configs(model: nn.Module) -> None:
    """Give ``model``'s modules a copy of the configs they hold, shared within the model only."""
    import copy

    model_config = cast("PreTrainedModel", model).config
    memo: dict[int, Any] = {}
    copy.deepcopy(model_config, memo)
    for module in model.modules():
        config = getattr(module, "config", None)
        if config is not None and id(config) in memo:
            module.config = memo[id(config)]


def _require_transformers() -> None:
    """Raise an `ImportError` naming the extra where ``transformers`` is missing."""
    try:
        import transformers  # noqa: F401
    except ImportError as error:
        raise ImportError(
            "LipschitzNorm for Hugging Face models needs transformers: "
            "pip install 'lipnorm_exp[hf]'"
        ) from error
