"""What the attention models (GAT, GATv2, GT) share: head widths and the LipschitzNorm seam."""

from omegaconf import DictConfig
from torch import nn

from lipnorm_exp.models.base import DepthwiseGNN


class AttentionGNN(DepthwiseGNN):
    """A :class:`DepthwiseGNN` whose graph layers are multi-head attention layers.

    ``model.hidden`` is the layer width, as for every model: concatenated heads
    (``model.concat=true``) have ``hidden / heads`` channels each, averaged heads
    ``hidden`` each. ``model.head_channels``, when set, gives the channels of one head
    instead and the width follows from it (``heads × head_channels`` concatenated, as the
    authors' ``--hidden_dim``). With ``norm=lip`` every layer normalises its scores with
    :attr:`lip_norm_class`. Each layer is a :attr:`layer_class` built by :meth:`make_conv`;
    a model adds its own layer options through :meth:`layer_options`.
    """

    attention = True
    #: the attention layer (set by each model)
    layer_class: type[nn.Module]
    #: the LipschitzNorm module for this layer's score (set by each model)
    lip_norm_class: type[nn.Module]

    @staticmethod
    def head_channels(model: DictConfig) -> int:
        """Channels of one head."""
        if model.head_channels is not None:
            return model.head_channels
        return model.hidden // model.heads if model.concat else model.hidden

    @staticmethod
    def width(model: DictConfig) -> int:
        if model.head_channels is None:
            return model.hidden
        return model.heads * model.head_channels if model.concat else model.head_channels

    @classmethod
    def score_norm(cls, norm: DictConfig) -> nn.Module | None:
        """The attention-score normalisation of one layer, or ``None``."""
        if norm.name != "lip":
            return None
        return cls.lip_norm_class(alpha=norm.alpha, eps=norm.eps, variant=norm.variant)

    def layer_options(self, model: DictConfig) -> dict:
        """Keyword arguments of :attr:`layer_class` beyond those every attention layer takes."""
        return {}

    def make_conv(
        self, model: DictConfig, norm: DictConfig, index: int, in_channels: int
    ) -> nn.Module:
        return self.layer_class(
            in_channels,
            self.head_channels(model),
            heads=model.heads,
            concat=model.concat,
            dropout=model.attn_dropout,
            norm=self.score_norm(norm),
            **self.layer_options(model),
        )
