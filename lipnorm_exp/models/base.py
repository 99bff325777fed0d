"""The depth-wise GNN every model shares."""

from collections.abc import Mapping

import torch
from torch import nn

from lipnorm_exp.models import ACTIVATIONS
from lipnorm_exp.models.norms import node_norm
from lipnorm_exp.nn.copy_dropout import dropout
from lipnorm_exp.nn.sparse_input import linear


class DepthwiseGNN(nn.Module):
    r"""Input Linear → ``depth`` graph layers → output Linear (paper §7, supplementary §7).

    Each graph layer sees dropout on its input and is followed by the node
    normalisation (PairNorm, LayerNorm or none), the optional residual and the activation
    $\sigma$ (``model.activation``):

    $$
    h^{(0)} = W_{in} x, \qquad
    h^{(l)} = \sigma\big(
        \mathrm{norm}(\mathrm{conv}_l(\mathrm{drop}(h^{(l-1)}))) \,[+\, P_l h^{(l-1)}]
    \big), \qquad
    y = W_{out} h^{(L)}
    $$

    The default block is the paper's (ELU). ``model.post_layernorm=true`` gives Alon & Yahav's
    block (the TREES protocol), the activation inside the residual and a LayerNorm after it:
    $h^{(l)} = \mathrm{LN}\big([P_l h^{(l-1)} +]\, \sigma(\mathrm{norm}(\mathrm{conv}_l
    (\mathrm{drop}(h^{(l-1)}))))\big)$.

    The input Linear maps to ``model.input_width`` (default: the layer width), as sparse-dense
    products where the features are a sparse matrix (`lipnorm_exp.nn.sparse_input.linear`,
    ``dataset.feature_layout``); the first
    graph layer maps that width to the layer width and every later one keeps it. ``P_l`` is
    the identity, except around a first layer that widens, where it is a bias-free Linear
    (as in PyG's ``GATConv(residual=True)``). ``model.last_activation=false`` leaves out the
    activation after the last graph layer (the authors' DeepGAT). A subclass is one model: it says
    how to build a graph layer (`make_conv`) and which of its parameters are attention
    parameters; the configs a model refuses are rules of `lipnorm_exp.config.rules`.

    Args:
        in_channels (int): input feature width.
        out_channels (int): output width (classes or tasks).
        depth (int): number of graph layers.
        hidden (int): layer width (attention models: see `AttentionGNN`).
        dropout (float): feature dropout before each graph layer.
        residual (bool): residual connection around each graph layer.
        input_width (int | None): width of the input Linear's output (``None``: the layer width).
        activation (str): after each graph layer: ``elu``, ``relu`` or ``none``.
        last_activation (bool): the activation after the last graph layer too.
        post_layernorm (bool): LayerNorm after the residual sum of each layer.
        norm (str): the normalisation's name (``none``, ``lip``, ``pairnorm``, ``layernorm``).
        norm_options (Mapping[str, float | bool | str]): its keyword arguments (``lip``:
            ``alpha``, ``eps``, ``variant``; ``pairnorm``: ``scale``, ``scale_individually``;
            ``layernorm``: ``affine``).

    Building a model from the ``model`` and ``norm`` config groups is
    `lipnorm_exp.config.build_model`'s job.
    """

    #: the paper's name of the model, for tables, legends and run names
    #: (`lipnorm_exp.records.labels.model_label` adds the normalisation and ``-res``)
    label: str = ""
    #: whether ``norm=lip`` applies (the layers compute attention scores)
    attention: bool = False
    #: names of the attention parameters inside one graph layer (for gradient tracking)
    attention_parameter_names: tuple[str, ...] = ()

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        *,
        depth: int,
        hidden: int,
        dropout: float,
        residual: bool,
        input_width: int | None,
        activation: str,
        last_activation: bool,
        post_layernorm: bool,
        norm: str,
        norm_options: Mapping[str, float | bool | str],
    ):
        super().__init__()
        self.depth = depth
        self.hidden = hidden
        self.dropout = dropout
        self.residual = residual
        self.last_activation = last_activation
        self.activation = getattr(nn, ACTIVATIONS[activation])()
        self.norm = norm
        self.norm_options = dict(norm_options)
        width = self.layer_width()
        first = input_width or width
        self.input = nn.Linear(in_channels, first)
        self.convs = nn.ModuleList(
            self.make_conv(i, first if i == 0 else width, width) for i in range(depth)
        )
        self.norms = nn.ModuleList(node_norm(norm, width, **norm_options) for _ in range(depth))
        widens = self.residual and first != width
        self.input_residual = nn.Linear(first, width, bias=False) if widens else None
        self.post_norms = nn.ModuleList(
            nn.LayerNorm(width) for _ in range(depth if post_layernorm else 0)
        )
        self.output = nn.Linear(width, out_channels)
        self.reset_parameters()

    def layer_width(self) -> int:
        """Feature width between graph layers."""
        return self.hidden

    def make_conv(self, index: int, in_channels: int, width: int) -> nn.Module:
        """Build graph layer ``index`` (0-based) mapping ``in_channels`` to ``width`` channels."""
        raise NotImplementedError

    def conv_forward(
        self, conv: nn.Module, x: torch.Tensor, x0: torch.Tensor, edge_index: torch.Tensor
    ) -> torch.Tensor:
        """Apply one graph layer; ``x0`` is the output of the input Linear (used by GCNII)."""
        return conv(x, edge_index)

    def reset_parameters(self) -> None:
        """Re-initialise every weight."""
        modules = [self.input, *self.convs, *self.norms, *self.post_norms, self.input_residual]
        for module in [*modules, self.output]:
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()

    def forward(
        self, x: torch.Tensor, edge_index: torch.Tensor, batch: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Node outputs ``[N, out_channels]``; ``batch`` assigns nodes to graphs (PairNorm)."""
        x = x0 = linear(x, self.input)
        for index, (conv, norm) in enumerate(zip(self.convs, self.norms, strict=True)):
            h = dropout(x, self.dropout, self.training)
            h = norm(self.conv_forward(conv, h, x0, edge_index), batch)
            activate = self.last_activation or index < self.depth - 1
            if self.post_norms:  # Alon & Yahav's block: LN(x + σ(h))
                h = self.activation(h) if activate else h
                x = self.post_norms[index](self.add_residual(index, h, x))
            else:  # σ(h + x)
                h = self.add_residual(index, h, x)
                x = self.activation(h) if activate else h
        return self.output(x)

    def add_residual(self, index: int, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``h`` plus the residual ``P_l x`` of graph layer ``index`` (``h`` without one)."""
        if not self.residual:
            return h
        return h + (self.input_residual(x) if index == 0 and self.input_residual else x)

    def layer_parameters(self) -> list[tuple[list[nn.Parameter], list[nn.Parameter]]]:
        """Per graph layer: (its attention parameters, all its parameters)."""
        groups = []
        for conv in self.convs:
            named = dict(conv.named_parameters())
            attention = [
                p for n, p in named.items() if n.split(".")[0] in self.attention_parameter_names
            ]
            groups.append((attention, list(named.values())))
        return groups

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(depth={self.depth}, conv={self.convs[0]}, "
            f"norm={type(self.norms[0]).__name__}, residual={self.residual})"
        )
