"""One call that adds LipschitzNorm to an existing model, keeping its trained weights.

:func:`lipschitz_normalize` replaces every PyG ``GATConv``, ``GATv2Conv`` and
``TransformerConv`` and every ``torch.nn.MultiheadAttention`` inside a module by the library's
drop-in (:class:`GATLayer`, :class:`GATv2Layer`, :class:`GTLayer`,
:class:`LipschitzMultiheadAttention`) with the same arguments and state dict, and the
normalisation of the paper's Eq. (17), (15) or (19) on its attention scores.
"""

from collections.abc import Callable

from torch import nn
from torch_geometric.nn import GATConv, GATv2Conv, TransformerConv

from lipnorm_exp.nn.gat_layer import GATLayer
from lipnorm_exp.nn.gatv2_layer import GATv2Layer
from lipnorm_exp.nn.gt_layer import GTLayer
from lipnorm_exp.nn.lipschitz_norm import check_norm_options
from lipnorm_exp.nn.multihead_attention import LipschitzMultiheadAttention
from lipnorm_exp.nn.score_norm import lipschitz_norm

__all__ = ["lipschitz_normalize"]


def lipschitz_normalize(
    model: nn.Module, alpha: float = 1.0, variant: str = "paper", *, norm: str | None = "lip"
) -> nn.Module:
    r"""Replace every attention layer of ``model`` by the library's layer with LipschitzNorm.

    Every ``GATConv``, ``GATv2Conv``, ``TransformerConv`` and ``torch.nn.MultiheadAttention``
    (of exactly these classes, not subclasses) anywhere inside ``model`` is replaced by
    :class:`GATLayer` (Eq. 17), :class:`GATv2Layer` (Eq. 15), :class:`GTLayer` (Eq. 19) or
    :class:`LipschitzMultiheadAttention` (Eq. 19), each with the LipschitzNorm of its
    ``score_contract`` (:data:`~lipnorm_exp.nn.score_norm.LIPSCHITZ_NORMS`), built with the
    same arguments (``MessagePassing``'s ``aggr`` and ``flow`` included) and loaded with its
    state dict, on its device and dtype and in its training mode. Hooks registered on a
    replaced module are not carried over. An ``nn.TransformerEncoder`` whose attention was
    replaced stops turning padded batches into nested tensors (``use_nested_tensor = False``),
    which its layers could no longer take. The analogue of
    ``torch.nn.utils.parametrizations.spectral_norm`` for attention.

    Args:
        model (nn.Module): any module (a PyG ``Sequential``, ``torch_geometric.nn.models.GAT``,
            an ``nn.TransformerEncoder``...), changed in place; or one attention layer.
        alpha (float, optional): the bound :math:`\alpha` of the normalised scores.
            (default: :obj:`1.0`)
        variant (str, optional): ``"paper"`` or ``"published"``, for the GAT and GT norms (see
            :data:`~lipnorm_exp.nn.lipschitz_norm.VARIANTS`). (default: :obj:`"paper"`)
        norm (str or None, optional): ``"lip"``, or ``None`` to swap in the library's layers
            without normalisation (they compute what the replaced layers computed).
            (default: :obj:`"lip"`)

    Returns:
        nn.Module: ``model``, or its replacement when ``model`` is itself an attention layer.

    Raises:
        ValueError: for an ``alpha`` that is not a finite number > 0, an unknown ``variant`` or
            ``norm``.
    """
    check_norm_options("lipschitz_normalize", alpha, None, variant)
    if norm not in ("lip", None):
        raise ValueError(f"lipschitz_normalize: norm must be 'lip' or None, got {norm!r}")

    def replace(module: nn.Module) -> nn.Module:
        build = _BUILDERS.get(type(module))
        if build is None:
            for name, child in module.named_children():
                setattr(module, name, replace(child))
            if isinstance(module, nn.TransformerEncoder) and _holds_ours(module):
                module.use_nested_tensor = False
            return module
        layer = build(
            module,
            lambda cls: (
                None if norm is None else lipschitz_norm(cls.score_contract, alpha, variant=variant)
            ),
        )
        parameter = next(module.parameters())
        layer.to(parameter.device, parameter.dtype)
        layer.load_state_dict(module.state_dict())
        return layer.train(module.training)

    return replace(model)


#: ``norm_for(cls)`` gives the norm of a layer of class ``cls`` (or ``None``)
NormFor = Callable[[type], nn.Module | None]


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


_BUILDERS: dict[type, Callable[[nn.Module, NormFor], nn.Module]] = {
    GATConv: _gat,
    GATv2Conv: _gatv2,
    TransformerConv: _gt,
    nn.MultiheadAttention: _mha,
}


def _holds_ours(encoder: nn.TransformerEncoder) -> bool:
    return any(isinstance(m, LipschitzMultiheadAttention) for m in encoder.modules())
