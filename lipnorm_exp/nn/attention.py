"""The seam shared by the attention layers: score → normalise → softmax → aggregate.

Subclasses compute the softmax weights of every edge (raw score, their LipschitzNorm, softmax
over the target's neighbourhood) in ``edge_update``; this base replaces the self-loops, projects
edge features, applies attention dropout, aggregates the weighted messages, merges the heads and
returns the weights. Inputs are those of PyG's attention layers: node features or a bipartite
pair ``(x_src, x_dst)``, an ``edge_index`` ``[2, E]`` or a ``torch.sparse`` adjacency
(transposed, one row per target), and optional edge features.
"""

from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Literal, overload

import torch
from torch import Tensor, nn
from torch.nn import Parameter
from torch_geometric.nn import MessagePassing
from torch_geometric.nn.aggr import SumAggregation
from torch_geometric.nn.dense.linear import Linear
from torch_geometric.typing import OptTensor
from torch_geometric.utils import add_self_loops, is_torch_sparse_tensor, remove_self_loops
from torch_geometric.utils.sparse import set_sparse_value

from lipnorm_exp.nn.arguments import check_channels, check_count, check_edge_index
from lipnorm_exp.nn.copy_dropout import dropout
from lipnorm_exp.nn.csr_messages import (
    CSR_DTYPES,
    MessageStructure,
    message_structure,
    weighted_sum,
)
from lipnorm_exp.nn.last_input import LastInput
from lipnorm_exp.nn.lipschitz_norm import fused_squared_norms
from lipnorm_exp.nn.score_norm import ScoreNorm, norm_label, resolve_norm
from lipnorm_exp.util.variants import MESSAGE_PATHS

__all__ = ["MESSAGE_PATHS", "AttentionLayer"]

#: a layer's ``return_attention_weights`` result: ``(edges, weights)``
AttentionWeights = tuple[Tensor, Tensor]


class AttentionLayer(MessagePassing):
    """Base of `GATLayer`, `GTLayer` and `GATv2Layer` (not used alone).

    Args:
        in_channels (int or tuple): size of each input node feature, or ``(source, target)``
            sizes for a bipartite graph.
        out_channels (int): size of each head's output.
        heads (int): number of attention heads.
        concat (bool): concatenate the heads (``True``) or average them (``False``).
        dropout (float): dropout probability of the attention weights, in ``[0, 1)``.
        add_self_loops (bool): replace the self-loops of the input by one per node.
        edge_dim (int or None): size of the edge features, if any.
        fill_value (float, Tensor or str): edge features of the added self-loops, as in
            ``torch_geometric.utils.add_self_loops`` (``"mean"``: the mean of the node's in-edges).
        norm (str, ScoreNorm or None): ``None``/``"none"``, ``"lip"`` (the LipschitzNorm of
            ``score_contract``) or any object that keeps ``score_contract``
            ([`score_norm`][lipnorm_exp.nn.score_norm]).
        message_path (str): how the weighted messages are summed (`sum_messages`):
            ``"gather"`` (PyG's gather/scatter, as ``GATConv``), ``"csr"`` (sparse-dense
            products, `csr_messages`, wherever they apply) or ``"auto"``
            (``"csr"`` on the CPU, where it is the faster; ``"gather"`` elsewhere).
        **kwargs: ``MessagePassing``'s options, as PyG's layers take them (``aggr``, ``"add"``
            by default; ``flow``).

    Raises:
        ValueError: for a channel count or ``heads`` that is not a positive integer
            (``in_channels`` may be -1, inferred), a dropout outside ``[0, 1)``, an unknown
            ``norm`` string or ``message_path``; in ``forward``, for an ``edge_index`` naming a
            node outside the graph
            (`EdgeIndexError`).
        TypeError: for a ``norm`` object that does not keep ``score_contract``.
    """

    #: the protocol a score normalisation of this layer keeps (set by each layer)
    score_contract: type[ScoreNorm]
    #: Python-side caches (`neighbourhoods`), which a scripted layer does without
    __jit_ignored_attributes__ = ["checked_edges", "loops_added", "message_structures"]

    if TYPE_CHECKING:  # the result of a call (``forward``'s) by ``return_attention_weights``

        @overload
        def __call__(
            self, *inputs: Any, return_attention_weights: Literal[True], **options: Any
        ) -> tuple[Tensor, AttentionWeights]: ...

        @overload
        def __call__(
            self,
            x: Tensor | tuple[Tensor, Tensor | None],
            edge_index: Tensor,
            edge_attr: Tensor | None = None,
            *,
            return_attention_weights: Literal[False] | None = None,
            **options: Any,
        ) -> Tensor: ...

        @overload
        def __call__(
            self, *inputs: Any, **options: Any
        ) -> Tensor | tuple[Tensor, AttentionWeights]: ...

        def __call__(self, *inputs: Any, **options: Any) -> Any:
            """What ``forward`` returns: ``out``, or ``(out, (edges, alpha))`` when asked for."""

    def __init__(
        self,
        in_channels: int | tuple[int, int],
        out_channels: int,
        *,
        heads: int,
        concat: bool,
        dropout: float,
        add_self_loops: bool,
        edge_dim: int | None,
        fill_value: float | Tensor | str,
        norm: str | ScoreNorm | None,
        message_path: str = "auto",
        **kwargs,
    ):
        kwargs.setdefault("aggr", "add")
        super().__init__(node_dim=0, **kwargs)
        name = type(self).__name__
        check_channels(name, "in_channels", in_channels)
        check_channels(name, "out_channels", out_channels, lazy=False)
        check_count(name, "heads", heads)
        if edge_dim is not None:
            check_channels(name, "edge_dim", edge_dim, lazy=False)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"{name}: dropout must be in [0, 1), got {dropout}")
        if message_path not in MESSAGE_PATHS:
            allowed = ", ".join(MESSAGE_PATHS)
            raise ValueError(f"{name}: message_path must be one of {allowed}, got {message_path!r}")
        self.layer_name = name
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.heads = heads
        self.concat = concat
        self.dropout = dropout
        self.add_self_loops = add_self_loops
        self.edge_dim = edge_dim
        self.fill_value = fill_value
        self.norm = resolve_norm(name, norm, self.score_contract)
        self.message_path = message_path
        # the last edge_index found within its graph, and its self-loops replaced
        self.checked_edges = LastInput()
        self.loops_added = LastInput()
        # the CSR structure of the last edges aggregated along (see message_structure)
        self.message_structures = LastInput()
        # messages summed per target (see appended_loops)
        self.sums_per_target = (
            isinstance(self.aggr_module, SumAggregation) and self.flow == "source_to_target"
        )

    @property
    def out_width(self) -> int:
        """Width of the layer's output: ``heads * out_channels`` if concatenated."""
        return self.out_channels * (self.heads if self.concat else 1)

    @property
    def in_pair(self) -> tuple[int, int]:
        """``(source, target)`` input sizes."""
        if isinstance(self.in_channels, int):
            return self.in_channels, self.in_channels
        return self.in_channels

    def make_residual_and_bias(self, residual: bool, bias: bool) -> None:
        """``res`` (bias-free Glorot projection of the targets) and ``bias``, as in ``GATConv``."""
        width = self.out_width
        self.res = Linear(self.in_pair[1], width, False, "glorot") if residual else None
        if bias:
            self.bias = Parameter(torch.empty(width))
        else:
            self.register_parameter("bias", None)

    def project(
        self, lin_src: nn.Module, lin_dst: nn.Module, x_src: Tensor, x_dst: Tensor | None
    ) -> tuple[Tensor, Tensor | None]:
        """Per-head projections ``[N, H, C]`` of sources and targets (one, if they coincide)."""
        shape = (-1, self.heads, self.out_channels)
        out_src = lin_src(x_src).view(shape)
        if x_dst is None:
            return out_src, None
        if x_dst is x_src and lin_dst is lin_src:
            return out_src, out_src
        return out_src, lin_dst(x_dst).view(shape)

    def edge_rows(self, edge_attr: Tensor | None) -> Tensor | None:
        """Edge features ``[E, D]`` when the layer reads them (``edge_dim`` set), else ``None``."""
        if edge_attr is None or self.edge_dim is None:
            return None
        return edge_attr.view(-1, 1) if edge_attr.dim() == 1 else edge_attr

    def project_edges(self, edge_attr: Tensor | None) -> Tensor | None:
        """Projected edge features ``[E, H, C]`` (``lin_edge``), or ``None`` (see edge_rows)."""
        edge_attr = self.edge_rows(edge_attr)
        if edge_attr is None or self.lin_edge is None:
            return None
        return self.lin_edge(edge_attr).view(-1, self.heads, self.out_channels)

    def neighbourhoods(
        self, edge_index: Tensor, edge_attr: Tensor | None, size: tuple[int, int]
    ) -> tuple[Tensor, Tensor | None]:
        """The edges that define $N(i)$, with their features, self-loops as asked.

        With ``add_self_loops`` the input's self-loops are replaced by one per node (of the
        ``min(size)`` nodes that are both source and target); their features are set by
        ``fill_value``. Dropping the input's loops has a data-dependent size, so this runs
        outside ``torch.compile``'s graph: a single graph break, the layer's only one. An
        ``edge_index`` naming a node outside ``size`` is refused
        (`check_edge_index`). In Python, a layer called again on
        the same ``edge_index`` tensor, unchanged, checks it and (without edge features)
        replaces its self-loops only the first time (`LastInput`); inside
        ``torch.compile`` the check is left out, and a scripted layer does both at every call.
        """
        if torch.jit.is_scripting():
            check_edge_index(self.layer_name, edge_index, size, self.flow)
        elif not torch.compiler.is_compiling() and self.checked_edges.get(edge_index, size) is None:
            check_edge_index(self.layer_name, edge_index, size, self.flow)
            self.checked_edges.keep(edge_index, size, True)
        if not self.add_self_loops:
            return edge_index, edge_attr
        num_nodes = min(size[0], size[1])
        if torch.jit.is_scripting():
            return self._self_loops_replaced(edge_index, edge_attr, num_nodes)
        else:
            return self._last_self_loops_replaced(edge_index, edge_attr, num_nodes)

    def loops_last(self, edge_index: Tensor, size: tuple[int, int]) -> bool:
        """Whether `neighbourhoods` ends ``edge_index`` with a self-loop per node, in order.

        It appends them to an ``edge_index`` tensor (not to a sparse adjacency) of a graph
        whose sources are its targets: the last ``size[1]`` edges are ``(0, 0), (1, 1), ...``.
        """
        square = size[0] == size[1]
        return self.add_self_loops and square and not is_torch_sparse_tensor(edge_index)

    def appended_loops(self, edge_index: Tensor, size: tuple[int, int]) -> tuple[Tensor, int]:
        """``(others, n)``: the edges before the ``n`` self-loops `neighbourhoods` appended.

        ``n`` is ``size[1]`` where `loops_last` holds, else 0 (``others`` is then
        ``edge_index``). A layer aggregates those self-loops per node (``attend(...,
        loops=...)``) instead of gathering their messages. It does so only where that is a sum
        of the messages (``aggr="add"``, the default) along the default ``flow``, and no
        explainer masks them (PyG's explain API masks every message that ``propagate`` passes,
        self-loops included).
        """
        per_node = self.sums_per_target and self.explain is not True
        loops = size[1] if per_node and self.loops_last(edge_index, size) else 0
        return (edge_index[:, : edge_index.size(1) - loops] if loops else edge_index), loops

    @torch.compiler.disable
    def _last_self_loops_replaced(
        self, edge_index: Tensor, edge_attr: Tensor | None, num_nodes: int
    ) -> tuple[Tensor, Tensor | None]:
        """`_self_loops_replaced`, once for each ``edge_index`` tensor the layer is given."""
        cacheable = edge_attr is None and not is_torch_sparse_tensor(edge_index)
        replaced = self.loops_added.get(edge_index, num_nodes) if cacheable else None
        if replaced is not None:
            return replaced, None
        replaced, edge_attr = self._self_loops_replaced(edge_index, edge_attr, num_nodes)
        if cacheable:
            self.loops_added.keep(edge_index, num_nodes, replaced)
        return replaced, edge_attr

    def _self_loops_replaced(
        self, edge_index: Tensor, edge_attr: Tensor | None, num_nodes: int
    ) -> tuple[Tensor, Tensor | None]:
        """The edges without their self-loops, then one self-loop per node (``fill_value``)."""
        edge_index, edge_attr = remove_self_loops(edge_index, edge_attr)
        return add_self_loops(
            edge_index, edge_attr, fill_value=self.fill_value, num_nodes=num_nodes
        )

    @staticmethod
    def graph_size(
        x_src: Tensor, x_dst: Tensor | None, size: tuple[int, int] | None = None
    ) -> tuple[int, int]:
        """``(sources, targets)``: ``size`` if given, else the rows of the features.

        Without target features there are as many targets as sources (as in PyG).
        """
        if size is not None:
            return size[0], size[1]
        return x_src.size(0), (x_src if x_dst is None else x_dst).size(0)

    @staticmethod
    def edge_pairs(edge_index_j: Tensor, index: Tensor) -> tuple[Tensor, Tensor]:
        """``(source, target)`` of every edge, whatever form the adjacency came in.

        A pair rather than a stacked copy: for an ``edge_index`` input both are views of it, so
        a target index that autograd keeps shares its storage.
        """
        return edge_index_j, index

    def sum_messages(
        self, edge_index: Tensor, alpha: Tensor, value: Tensor, size: tuple[int, int]
    ) -> Tensor:
        """Sum the values ``[N, H, C]`` of the sources of ``edge_index`` with weights ``alpha``.

        With the CSR structure of the edges (`message_structure`), one sparse-dense
        product per pass (`weighted_sum`); else
        `attend`, with the self-loops that `neighbourhoods` appended summed per node.
        """
        if not torch.jit.is_scripting():
            structure = self.message_structure(edge_index, value, size)
            if structure is not None:
                alpha = dropout(alpha, self.dropout, self.training)
                return self.merge_heads(weighted_sum(alpha, value, structure))
        others, loops = self.appended_loops(edge_index, size)
        return self.attend(others, alpha, value, size, loops=value if loops else None)

    @torch.jit.unused
    def message_structure(
        self, edge_index: Tensor, value: Tensor, size: tuple[int, int]
    ) -> MessageStructure | None:
        """The CSR structure for `sum_messages`, or ``None`` where gather/scatter sums.

        The CSR path takes a sum over each target's in-edges (``aggr="add"``, the default
        ``flow``, no explainer, no ``MessagePassing`` hooks), an ``edge_index`` tensor, values
        of 32 or 64 bits, and runs outside ``torch.compile``, ``torch.func`` transforms (such
        as the ``vmap`` of seeds trained together) and TorchScript. ``message_path="auto"``
        takes it on the CPU only. The structure is built once per ``edge_index`` tensor
        (`LastInput`).
        """
        if self.message_path == "gather" or (
            self.message_path == "auto" and value.device.type != "cpu"
        ):
            return None
        hooks = (
            self._propagate_forward_pre_hooks,
            self._propagate_forward_hooks,
            self._message_forward_pre_hooks,
            self._message_forward_hooks,
            self._aggregate_forward_pre_hooks,
            self._aggregate_forward_hooks,
        )
        applies = (
            self.sums_per_target
            and self.explain is not True
            and not any(hooks)
            and value.dtype in CSR_DTYPES
            and not is_torch_sparse_tensor(edge_index)
            and not torch.compiler.is_compiling()
            and not torch._C._are_functorch_transforms_active()
        )
        if not applies:
            return None
        key = (size, self.heads)
        structure = self.message_structures.get(edge_index, key)
        if structure is None:
            structure = message_structure(edge_index, size, self.heads)
            self.message_structures.keep(edge_index, key, structure)
        return structure

    @torch.jit.unused
    def norm_arithmetic(self) -> AbstractContextManager:
        """The arithmetic the norm runs in.

        Autograd's own on the ``gather`` path (the reference, which the records' numerics pin),
        else `fused_squared_norms`, which a traced graph (``torch.compile``) does not take, so it
        is not entered there.
        """
        if self.message_path == "gather" or torch.compiler.is_compiling():
            return nullcontext()
        return fused_squared_norms()

    def merge_heads(self, out: Tensor) -> Tensor:
        """``[N, H, C]`` to ``[N, H C]`` (heads concatenated) or ``[N, C]`` (averaged)."""
        return out.reshape(-1, self.out_width) if self.concat else out.mean(dim=1)

    def attend(
        self,
        edge_index: Tensor,
        alpha: Tensor,
        value: Tensor,
        size: tuple[int, int],
        per_edge: bool = False,
        loops: Tensor | None = None,
    ) -> Tensor:
        """Aggregate ``value`` with weights ``alpha`` ``[E, H]``; merge the heads.

        ``value`` holds the values of the source nodes ``[N, H, C]``, gathered per edge here,
        or with ``per_edge`` those of the edges ``[E, H, C]``, gathered already. ``loops``
        ``[N, H, C]``, if given, are the values of one self-loop per node that ``edge_index``
        leaves out and whose weights are the last ``N`` of ``alpha``: they are added per node.
        """
        alpha = dropout(alpha, self.dropout, self.training)
        loop_messages: Tensor | None = None
        if loops is not None:
            alpha, loop_alpha = alpha.split([alpha.size(0) - loops.size(0), loops.size(0)])
            loop_messages = loop_alpha.unsqueeze(-1) * loops
        x, edge_value = (None, value) if per_edge else (value, None)
        # propagate_type: (x: Tensor | None, alpha: Tensor, edge_value: Tensor | None)
        out = self.propagate(edge_index, x=x, alpha=alpha, edge_value=edge_value, size=size)
        if loop_messages is not None:
            out = out + loop_messages
        return self.merge_heads(out)

    def message(self, x_j: OptTensor, alpha: Tensor, edge_value: OptTensor) -> Tensor:
        """Message of edge ``(j, i)``: its weight times its value, ``x_j`` or ``edge_value``."""
        value = x_j if x_j is not None else edge_value
        assert value is not None, "attend passes the values of the nodes or of the edges"
        return alpha.unsqueeze(-1) * value

    def finish(self, out: Tensor, res: Tensor | None) -> Tensor:
        """Add the residual projection and the bias (GAT, GATv2)."""
        if res is not None:
            out = out + res
        return out if self.bias is None else out + self.bias

    @staticmethod
    def result(
        out: Tensor, edge_index: Tensor, alpha: Tensor, return_attention_weights: bool | None
    ) -> Tensor | tuple[Tensor, AttentionWeights]:
        """``out``, or ``(out, (edges, alpha))`` when attention weights are asked for.

        For a sparse adjacency ``edges`` is that adjacency with the weights as values (as
        ``GATConv`` returns them).
        """
        if return_attention_weights is None or not return_attention_weights:
            return out
        if is_torch_sparse_tensor(edge_index):
            return out, (set_sparse_value(edge_index, alpha), alpha)
        return out, (edge_index, alpha)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.in_channels}, {self.out_channels}, "
            f"heads={self.heads}, norm={norm_label(self.norm, self.score_contract)})"
        )
