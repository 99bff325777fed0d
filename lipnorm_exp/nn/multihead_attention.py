import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn import Parameter
from torch.nn.init import constant_, xavier_normal_, xavier_uniform_

from lipnorm_exp.nn.arguments import check_channels, check_count
from lipnorm_exp.nn.copy_dropout import dropout
from lipnorm_exp.nn.score_norm import DenseScoreNorm, ScoreNorm, norm_label, resolve_norm

__all__ = ["LipschitzMultiheadAttention"]


class LipschitzMultiheadAttention(nn.Module):
    r"""Multi-head attention with an optional LipschitzNorm of its scores (paper Eq. 19).

    A drop-in for ``torch.nn.MultiheadAttention``: the same arguments, inputs, outputs and
    parameters (``in_proj_weight`` or ``q_proj_weight``/``k_proj_weight``/``v_proj_weight``,
    ``in_proj_bias``, ``out_proj``, ``bias_k``, ``bias_v``), so its state dict loads, and with
    ``norm=None`` both compute the same function. Per head, with $q_i = W_q x_i$,
    $k_j = W_k y_j$, $v_j = W_v z_j$,

    $$
    \mathrm{head}_i = \sum_j \operatorname{softmax}_j(s_{ij}) \, v_j, \qquad
    s_{ij} = \frac{q_i^\top k_j}{\sqrt{d}} \;\; (\texttt{norm=None}), \qquad
    s_{ij} = \frac{\alpha \, q_i^\top k_j}{\max\{uv, uw, vw\} + \epsilon}
    \;\; (\texttt{norm="lip"}),
    $$

    with $u = \|q_i\|_2$, $v = \max_j \|k_j\|_2$, $w = \max_j \|v_j\|_2$ over
    the keys that query $i$ may attend to (see
    [`DenseLipschitzNorm`][lipnorm_exp.nn.dense_lipschitz_norm.DenseLipschitzNorm]). Masks are
    additive as in ``torch.nn.MultiheadAttention`` (``True`` or $-\infty$: not attended; finite
    float entries are added to the scores). By Theorem 1 the heads' bounds combine into one for the
    layer; each head obeys Corollary 2, $e^{\sqrt{3}} \sqrt{m/n} + 2\sqrt{6}$ for $\alpha = 1$.
    Without biases the attention weights do not change when the inputs are scaled.

    Args:
        embed_dim (int): model width $E$ (queries and output).
        num_heads (int): number of heads $H$; $E$ must be a multiple of it.
        dropout (float, optional): dropout probability of the attention weights.
            (default: `0.0`)
        bias (bool, optional): biases in the input and output projections.
            (default: `True`)
        add_bias_kv (bool, optional): append a learned key and value to every sequence.
            (default: `False`)
        add_zero_attn (bool, optional): append a zero key and value to every head.
            (default: `False`)
        kdim (int, optional): width of the keys' inputs. (default: ``embed_dim``)
        vdim (int, optional): width of the values' inputs. (default: ``embed_dim``)
        batch_first (bool, optional): inputs and outputs are $(N, L, E)$ rather than
            $(L, N, E)$. (default: `False`)
        device (torch.device or str, optional): where the parameters are created.
        dtype (torch.dtype, optional): the parameters' dtype.
        norm (str, DenseScoreNorm or None, optional): ``None`` or ``"none"``, ``"lip"``
            ([`DenseLipschitzNorm`][lipnorm_exp.nn.dense_lipschitz_norm.DenseLipschitzNorm] with
            defaults), or any object that keeps
            [`DenseScoreNorm`][lipnorm_exp.nn.score_norm.DenseScoreNorm]. (default: `None`)

    Shapes:
        - **query** $(L, N, E)$, **key** $(S, N, E_k)$, **value**
          $(S, N, E_v)$ (batch first with ``batch_first``, or without $N$)
        - **key_padding_mask** $(N, S)$ or $(S,)$, boolean or float *(optional)*
        - **attn_mask** $(L, S)$ or $(N H, L, S)$, boolean or float *(optional)*
        - **output** ``(attn_output, attn_weights)``: $(L, N, E)$ and, with
          ``need_weights``, $(N, L, S)$ averaged over heads or $(N, H, L, S)$
          (after dropout, as ``torch.nn.MultiheadAttention`` returns them), else ``None``

    **In PyTorch's Transformer modules.** As ``self_attn`` or ``multihead_attn`` of
    ``nn.TransformerEncoderLayer`` and ``nn.TransformerDecoderLayer`` (alone or inside
    ``nn.TransformerEncoder``, ``nn.TransformerDecoder``, ``nn.Transformer``) the layer is
    always called: its ``_qkv_same_embed_dim`` is ``False``, which turns off the encoder's fused
    inference kernels (``torch._transformer_encoder_layer_fwd`` and the nested-tensor path of
    padded batches), as they compute unnormalised attention from the projection weights
    without calling the attention module. A query whose keys are all masked attends to
    nothing (a zero head output) with ``need_weights=False``, and gets ``NaN`` weights and
    output with ``need_weights=True``, as in ``torch.nn.MultiheadAttention``. The module can
    be scripted with ``torch.jit.script``, and the scripted module saved (``torch.jit.save``).

    Raises:
        ValueError: for a width or head count that is not positive, a width that is not a
            multiple of the heads, a dropout outside ``[0, 1)`` or an unknown ``norm`` string;
            in ``forward``, for nested-tensor inputs, an ``attn_mask`` that is not 2-D or 3-D,
            or ``is_causal`` without ``attn_mask``.
        TypeError: for a ``norm`` object that does not keep
            [`DenseScoreNorm`][lipnorm_exp.nn.score_norm.DenseScoreNorm].
    """

    #: read by ``nn.TransformerEncoderLayer`` and ``nn.TransformerEncoder``: ``False`` keeps
    #: them from their fused kernels, which would compute attention without this module
    _qkv_same_embed_dim = False
    #: the protocol a score normalisation of this module keeps
    score_contract = DenseScoreNorm

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
        *,
        norm: str | ScoreNorm | None = None,
    ):
        super().__init__()
        name = type(self).__name__
        check_channels(name, "embed_dim", embed_dim, lazy=False)
        check_count(name, "num_heads", num_heads)
        for dim_name, dim in (("kdim", kdim), ("vdim", vdim)):
            if dim is not None:
                check_channels(name, dim_name, dim, lazy=False)
        if embed_dim % num_heads:
            raise ValueError(f"{name}: embed_dim={embed_dim} must be a multiple of {num_heads=}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"{name}: dropout must be in [0, 1), got {dropout}")
        factory: dict[str, Any] = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.add_zero_attn = add_zero_attn
        if self.kdim == embed_dim and self.vdim == embed_dim:
            self.in_proj_weight = Parameter(torch.empty(3 * embed_dim, embed_dim, **factory))
            for unused in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(unused, None)
        else:
            self.q_proj_weight = Parameter(torch.empty(embed_dim, embed_dim, **factory))
            self.k_proj_weight = Parameter(torch.empty(embed_dim, self.kdim, **factory))
            self.v_proj_weight = Parameter(torch.empty(embed_dim, self.vdim, **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(torch.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k: Parameter | None = Parameter(torch.empty(1, 1, embed_dim, **factory))
            self.bias_v: Parameter | None = Parameter(torch.empty(1, 1, embed_dim, **factory))
        else:
            self.bias_k = self.bias_v = None
        self.norm = resolve_norm(name, norm, self.score_contract)
        self._init_projections()

    def reset_parameters(self) -> None:
        """Redraw every weight: ``out_proj`` as ``nn.Linear``, the rest as in ``__init__``."""
        self.out_proj.reset_parameters()
        self._init_projections()

    def _init_projections(self) -> None:
        """Xavier input projections, zero biases, as ``torch.nn.MultiheadAttention``."""
        weights = (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        for weight in weights:
            if weight is not None:
                xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            constant_(self.in_proj_bias, 0.0)
            constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None and self.bias_v is not None:
            xavier_normal_(self.bias_k)
            xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from every query to the keys; see the class docstring for shapes.

        ``is_causal`` is, as for ``torch.nn.MultiheadAttention``, a hint that ``attn_mask`` is
        the causal mask; the mask itself must be given.
        """
        if is_causal and attn_mask is None:
            raise ValueError("is_causal needs attn_mask: it only says that attn_mask is causal")
        if query.is_nested or key.is_nested or value.is_nested:
            raise ValueError(
                "LipschitzMultiheadAttention takes padded tensors, not nested tensors: pass a "
                "key_padding_mask (an nn.TransformerEncoder built with this module as self_attn "
                "makes none; one that had it swapped in needs use_nested_tensor = False)"
            )
        batched = query.dim() == 3
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        q, k, v = self._project(query, key, value)
        mask = self._mask(attn_mask, key_padding_mask, q)
        if self.bias_k is not None and self.bias_v is not None:  # one more key and value
            k = torch.cat([k, self.bias_k.expand(k.size(0), 1, -1)], dim=1)
            v = torch.cat([v, self.bias_v.expand(v.size(0), 1, -1)], dim=1)
            mask = None if mask is None else F.pad(mask, (0, 1))
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        if self.add_zero_attn:
            k, v = F.pad(k, (0, 0, 0, 1)), F.pad(v, (0, 0, 0, 1))
            mask = None if mask is None else F.pad(mask, (0, 1))
        if self.norm is None:
            logits = (q * math.sqrt(1.0 / self.head_dim)) @ k.transpose(-2, -1)
            logits = logits if mask is None else logits + mask
        else:
            logits = self.norm(query=q, key=k, value=v, mask=mask)
        weights = _softmax(logits, mask is not None and not need_weights)
        weights = dropout(weights, self.dropout, self.training)
        out = (weights @ v).transpose(1, 2).reshape(q.size(0), -1, self.embed_dim)
        out = self.out_proj(out)
        if not batched:
            out, weights = out.squeeze(0), weights.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        return out, weights.mean(dim=-3) if average_attn_weights else weights

    def _project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Input projections ``(N, L, E)``, ``(N, S, E)``, ``(N, S, E)``."""
        if self.in_proj_weight is not None:
            w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        else:
            w_q, w_k, w_v = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        b_q = b_k = b_v = None
        if self.in_proj_bias is not None:
            b_q, b_k, b_v = self.in_proj_bias.chunk(3)
        return F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)

    def _heads(self, x: Tensor) -> Tensor:
        """``(N, T, E)`` → ``(N, H, T, d)``."""
        return x.view(x.size(0), x.size(1), self.num_heads, self.head_dim).transpose(1, 2)

    def _mask(
        self, attn_mask: Tensor | None, key_padding_mask: Tensor | None, q: Tensor
    ) -> Tensor | None:
        """The additive float mask ``(N or 1, H or 1, L, S)`` of both masks, or ``None``."""
        mask: Tensor | None = None
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise ValueError(f"attn_mask must be 2-D or 3-D, got {attn_mask.dim()}-D")
            mask = _additive(attn_mask, q.dtype)
            if attn_mask.dim() == 2:
                mask = mask[None, None]
            else:
                mask = mask.view(q.size(0), self.num_heads, mask.size(-2), mask.size(-1))
        if key_padding_mask is not None:
            padding = _additive(key_padding_mask, q.dtype)[:, None, None, :]
            mask = padding if mask is None else mask + padding
        return mask

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.embed_dim}, num_heads={self.num_heads}, "
            f"norm={norm_label(self.norm, self.score_contract)})"
        )


def _additive(mask: Tensor, dtype: torch.dtype) -> Tensor:
    r"""A boolean mask (``True``: not attended) as $-\infty$/0; a float mask as is."""
    if mask.dtype == torch.bool:
        return torch.zeros_like(mask, dtype=dtype).masked_fill_(mask, float("-inf"))
    return mask.to(dtype)


def _softmax(logits: Tensor, empty_to_zero: bool) -> Tensor:
    r"""Softmax over the keys, with the rows of queries whose keys are all masked as PyTorch's.

    With ``empty_to_zero`` such a query ($-\infty$ scores only) gets zero weights, as from
    PyTorch's fused attention, else ``NaN``, as from ``torch.nn.MultiheadAttention`` with
    ``need_weights=True``. The zero weights come from a finite row, so that no ``NaN`` enters
    the backward pass.
    """
    if not empty_to_zero:
        return logits.softmax(dim=-1)
    empty = (logits == float("-inf")).all(dim=-1, keepdim=True)
    return logits.masked_fill(empty, 0.0).softmax(dim=-1).masked_fill(empty, 0.0)
