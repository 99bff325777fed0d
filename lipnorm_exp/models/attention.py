"""What the attention models (GAT, GATv2, GT) share: head widths and the LipschitzNorm seam."""

from typing import Any

from torch import nn

from lipnorm_exp.models.base import DepthwiseGNN
from lipnorm_exp.models.norms import normalisation


class AttentionGNN(DepthwiseGNN):
    """A `DepthwiseGNN` whose graph layers are multi-head attention layers.

    ``hidden`` is the layer width, as for every model: concatenated heads (``concat=True``)
    have ``hidden / heads`` channels each, averaged heads ``hidden`` each. ``head_channels``,
    when set, gives the channels of one head instead and the width follows from it
    (``heads × head_channels`` concatenated, as the authors' ``--hidden_dim``). With a score
    normalisation (``norm="lip"``) every layer normalises its scores with the module that the
    normalisation builds for the layer's ``score_contract`` (`score_norm`). Each layer is a
    `layer_class` built by `make_conv`; a model adds its own layer options through
    `layer_options`.

    Args:
        in_channels (int): input feature width.
        out_channels (int): output width.
        heads (int): attention heads.
        concat (bool): concatenate the heads (else average them).
        head_channels (int | None): channels of one head (``None``: from ``hidden``).
        attn_dropout (float): dropout on the attention weights.
        message_path (str): how the layers sum their weighted messages (``"auto"``, ``"gather"``,
            ``"csr"``; see `AttentionLayer`).
        **options: the keyword arguments of `DepthwiseGNN` (``hidden``, ``norm``, ...).
    """

    attention = True
    #: the attention layer (set by each model)
    layer_class: type[nn.Module]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        *,
        heads: int,
        concat: bool,
        head_channels: int | None,
        attn_dropout: float,
        message_path: str = "auto",
        **options: Any,
    ):
        # read by layer_width() and make_conv(), which DepthwiseGNN.__init__ calls
        self.heads = heads
        self.concat = concat
        self.attn_dropout = attn_dropout
        self.message_path = message_path
        if head_channels is None:
            head_channels = options["hidden"] // heads if concat else options["hidden"]
        self.head_channels = head_channels
        super().__init__(in_channels, out_channels, **options)

    def layer_width(self) -> int:
        return self.heads * self.head_channels if self.concat else self.head_channels

    def score_norm(self) -> nn.Module | None:
        """The attention-score normalisation of one layer, or ``None`` for a node norm."""
        return normalisation(self.norm, **self.norm_options).score_module(self)

    def layer_options(self) -> dict[str, Any]:
        """Keyword arguments of `layer_class` beyond those every attention layer takes."""
        return {}

    def make_conv(self, index: int, in_channels: int, width: int) -> nn.Module:
        return self.layer_class(
            in_channels,
            self.head_channels,
            heads=self.heads,
            concat=self.concat,
            dropout=self.attn_dropout,
            norm=self.score_norm(),
            message_path=self.message_path,
            **self.layer_options(),
        )
