r"""TREES: Alon & Yahav's Tree-NeighborsMatch (paper §7.2), stored compactly, expanded per batch.

For depth $d$ a tree is the complete binary tree with $L = 2^d$ leaves and
$2L - 1$ nodes in heap order (node 0 is the root, the children of node $i$ are
$2i + 1$ and $2i + 2$, leaf $k$ is node $L - 1 + k$). Edges point from
child to parent, so messages flow towards the root, and every node has a self-loop. With a
target key $t$ and a permutation $\pi$ of $0..L-1$, the features are

$$
x_{\text{leaf } k} = e_k \,\|\, e_{\pi(k)}, \qquad
x_{\text{root}} = e_t \,\|\, \mathbf{0}, \qquad x_{\text{other}} = \mathbf{0},
\qquad y = \pi(t)
$$

($e_k$ one-hot in $\mathbb{R}^L$), so a model must carry the value of the leaf whose
key matches the root's all the way up; there are $L$ classes. A dataset holds distinct
$(t, \pi)$ pairs, at most $L \cdot L!$ of them (96 for $d = 2$), drawn with the
dataset's own seed ``dataset.seed`` (not the run's seed: every run sees the same trees) and
cached under ``<data_dir>/TREES/depth<d>_n<count>_seed<seed>/``.

Dense features would be $2L$ wide on $2L - 1$ nodes (about 16 MB a tree at
$d = 10$), so the cache keeps per node only the key and value indices (``-1`` for none,
``int16``) and `expand_batch` builds, for one batch at a time, ``x`` as a sparse COO tensor
(at most two non-zeros a node; a model's input ``Linear`` multiplies it as it is: at $d = 10$
building and multiplying a batch of 64 trees takes 0.07 s on one CPU thread against 3.7 s for the
dense matrix it stands for), the edges, per-node labels and the root masks.
"""

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import NamedTuple

import torch
from omegaconf import DictConfig
from torch_geometric.data import Data, InMemoryDataset

from lipnorm_exp.data import SPLITS
from lipnorm_exp.data.prepare import AtomicSave, load_prepared
from lipnorm_exp.data.task import Task

__all__ = [
    "BatchShape",
    "TreeBatches",
    "TreeNeighborsMatch",
    "TreesStamp",
    "compact_tree",
    "expand_batch",
    "draw_trees",
    "load_trees",
    "num_distinct_trees",
    "split_codes",
    "tree_edge_index",
]


def num_distinct_trees(depth: int) -> int:
    r"""Number of distinct (target key, permutation) pairs, $2^d \cdot (2^d)!$."""
    leaves = 2**depth
    return leaves * math.factorial(leaves)


def draw_trees(depth: int, count: int, seed: int) -> list[tuple[int, torch.Tensor]]:
    """Draw ``count`` distinct ``(target key, values)`` pairs, uniformly and in random order.

    Where ``count`` is at least half of all pairs they are enumerated and a seeded random
    subset is taken; otherwise pairs are drawn and repeats rejected. The result depends only on
    the arguments.

    Args:
        depth (int): tree depth $d$.
        count (int): number of trees, at most `num_distinct_trees`.
        seed (int): seed of the `torch.Generator`.

    Returns:
        list: pairs ``(t, values)`` with ``values`` a permutation of $0..2^d-1$ (long).
    """
    leaves = 2**depth
    generator = torch.Generator().manual_seed(seed)
    total = num_distinct_trees(depth)
    if 2 * count >= total:
        every = list(itertools.product(range(leaves), itertools.permutations(range(leaves))))
        chosen = torch.randperm(total, generator=generator)[:count].tolist()
        return [(every[i][0], torch.tensor(every[i][1])) for i in chosen]
    seen: set[tuple[int, bytes]] = set()
    trees: list[tuple[int, torch.Tensor]] = []
    while len(trees) < count:
        key = int(torch.randint(leaves, (1,), generator=generator))
        values = torch.randperm(leaves, generator=generator)
        identity = (key, values.numpy().tobytes())
        if identity not in seen:
            seen.add(identity)
            trees.append((key, values))
    return trees


def tree_edge_index(depth: int) -> torch.Tensor:
    """Edges of one tree: child → parent for every non-root node, then a self-loop per node.

    Returns:
        Tensor: ``(2, 2 * (2^(d+1) - 1) - 1)`` long, row 0 the sources, row 1 the targets.
    """
    nodes = torch.arange(2 ** (depth + 1) - 1)
    children = nodes[1:]
    to_parent = torch.stack([children, (children - 1) // 2])
    return torch.cat([to_parent, torch.stack([nodes, nodes])], dim=1)


def compact_tree(depth: int, key: int, values: torch.Tensor) -> Data:
    r"""One tree as stored: per-node key and value indices (``-1`` for none), and its label.

    Args:
        depth (int): tree depth $d$.
        key (int): the target key $t$ the root carries.
        values (Tensor): the leaves' values $\pi(0), \dots, \pi(2^d - 1)$.
    """
    leaves = 2**depth
    node_key = torch.full((2 * leaves - 1,), -1, dtype=torch.int16)
    node_value = torch.full_like(node_key, -1)
    node_key[0] = key
    node_key[leaves - 1 :] = torch.arange(leaves)
    node_value[leaves - 1 :] = values
    return Data(
        node_key=node_key,
        node_value=node_value,
        label=values[key].view(1),
        num_nodes=2 * leaves - 1,
    )


class TreeNeighborsMatch(AtomicSave, InMemoryDataset):
    r"""Distinct TREES of one depth, generated once and cached in compact form.

    Graph ``i`` holds ``node_key`` and ``node_value`` (``int16`` per node, ``-1`` for none),
    and ``label`` (the class $\pi(t)$); `TreeBatches`
    turns batches of them into model input. Trees come in random order, so a split by position
    is random. The cache is saved whole or not at all (`
    AtomicSave`).

    Args:
        data_dir (str): data root; the cache is ``<data_dir>/TREES/depth<d>_n<count>_seed<seed>``.
        depth (int): tree depth $d \ge 1$.
        num_trees (int): trees wanted; ``min(num_trees, num_distinct_trees(depth))`` are made.
        seed (int): seed of the draw. (default: ``0``)
    """

    def __init__(self, data_dir: str, depth: int, num_trees: int, seed: int = 0):
        self.depth = depth
        self.count = min(num_trees, num_distinct_trees(depth))
        self.seed = seed
        super().__init__(self.folder(data_dir, depth, num_trees, seed), log=False)
        self.load(self.processed_paths[0])

    @staticmethod
    def folder(data_dir: str, depth: int, num_trees: int, seed: int) -> str:
        """Where the trees of these arguments are cached (``processed/`` below it)."""
        count = min(num_trees, num_distinct_trees(depth))
        return f"{data_dir}/TREES/depth{depth}_n{count}_seed{seed}"

    @property
    def processed_file_names(self) -> str:
        """The one cache file."""
        return "trees.pt"

    def process(self) -> None:
        """Draw the trees and save them compactly, stamped with its draw: `TreesStamp`."""
        pairs = draw_trees(self.depth, self.count, self.seed)
        trees = [compact_tree(self.depth, key, values) for key, values in pairs]
        for tree in trees:
            tree[TreesStamp.KEY] = torch.tensor([[self.depth, self.count, self.seed]])
        self.save(trees, self.processed_paths[0])


@dataclass(frozen=True)
class TreesStamp:
    """What a TREES cache must hold: the draw of ``count`` trees of depth ``depth`` with ``seed``.

    Every tree of a cache carries the arguments of the draw that made it (`KEY`); a cache
    made by another draw (another ``dataset.seed`` placed in this folder), of another shape, or
    made before the stamp is prepared again with a warning
    (`load_prepared`, a `Stamp`).
    """

    #: the attribute of each tree holding ``[[depth, count, seed]]``
    KEY = "draw"

    depth: int
    count: int
    seed: int

    def mismatch(self, dataset: Sequence[Data]) -> str | None:
        """How ``dataset`` differs from this draw's trees, or None."""
        nodes = 2 ** (self.depth + 1) - 1
        held = dataset[0].num_nodes if len(dataset) else 0
        if len(dataset) != self.count or held != nodes:
            return (
                f"it holds {len(dataset)} trees of {held} nodes, not {self.count} of {nodes} "
                f"(depth {self.depth})"
            )
        draw = dataset[0].get(self.KEY)
        if draw is None:
            return "its trees do not say which draw made them (depth, count, seed)"
        depth, count, seed = (int(value) for value in draw.view(-1))
        if (depth, count, seed) != (self.depth, self.count, self.seed):
            return (
                f"it holds the draw of dataset.seed={seed} ({count} trees of depth {depth}), "
                f"not of dataset.seed={self.seed} ({self.count} of depth {self.depth})"
            )
        return None


def split_codes(count: int, train_fraction: float) -> torch.Tensor:
    """Split code per tree by position: ``round(f·n)`` train (0), then val (1) and test (2).

    The trees after the training ones are halved; where they are odd, test gets the extra one.
    """
    train = round(train_fraction * count)
    val = (count - train) // 2
    return torch.cat(
        [torch.zeros(train), torch.ones(val), torch.full((count - train - val,), 2.0)]
    ).long()


class BatchShape(NamedTuple):
    """What a batch of ``count`` trees of one depth holds whatever its trees: its graph.

    ``edge_index`` (child → parent and self-loops, tree after tree), ``batch`` (the tree of each
    node) and ``roots`` (the index of each tree's root). Made once per tree count by
    `TreeBatches.shape` and shared by every batch of that many trees, so that a layer that
    keeps what it derived from an ``edge_index`` tensor (its checks, its self-loops, its CSR
    message structure) derives it once per run instead of once per batch.
    """

    edge_index: torch.Tensor
    batch: torch.Tensor
    roots: torch.Tensor

    @classmethod
    def of(cls, count: int, depth: int) -> "BatchShape":
        """The graph of ``count`` trees of depth ``depth``."""
        size = 2 ** (depth + 1) - 1
        roots = torch.arange(count) * size
        edge_index = (tree_edge_index(depth).unsqueeze(1) + roots.view(1, -1, 1)).view(2, -1)
        return cls(edge_index, torch.arange(count).repeat_interleave(size), roots)


def expand_batch(
    node_key: torch.Tensor,
    node_value: torch.Tensor,
    label: torch.Tensor,
    tree_split: torch.Tensor,
    shape: BatchShape | None = None,
) -> Data:
    """Expand a batch of compact trees of one depth into the graph a model reads.

    Args:
        node_key (Tensor): $(B, 2^{d+1} - 1)$ the trees' per-node keys (``-1`` for none).
        node_value (Tensor): $(B, 2^{d+1} - 1)$ their per-node values (``-1`` for none).
        label (Tensor): $(B)$ their labels.
        tree_split (Tensor): $(B)$ their split codes (`split_codes`).
        shape (BatchShape | None): the graph of $B$ trees of this depth, where it is kept
            (default: made here).

    Returns:
        Data: ``x`` $(N, 2^{d+1})$ the one-hot features of the module docstring as a
        sparse COO tensor, ``edge_index`` (child → parent and self-loops), ``y`` $(N)$ the
        tree's label on every node, ``batch`` $(N)$ the tree of each node, and
        ``train_mask``, ``val_mask``, ``test_mask`` $(N)$ true only at the root of a tree
        of that split.
    """
    count, size = node_key.shape
    leaves = (size + 1) // 2
    if shape is None:
        shape = BatchShape.of(count, leaves.bit_length() - 1)
    nodes = torch.arange(count * size)
    rows, columns = [], []
    for column, offset in ((node_key.reshape(-1), 0), (node_value.reshape(-1), leaves)):
        present = column >= 0
        rows.append(nodes[present])
        columns.append(column[present].long() + offset)
    indices = torch.stack([torch.cat(rows), torch.cat(columns)])
    x = torch.sparse_coo_tensor(
        indices, torch.ones(indices.size(1)), (count * size, 2 * leaves), check_invariants=False
    ).coalesce()
    is_root = torch.zeros(count * size, dtype=torch.bool)
    is_root[shape.roots] = True
    node_split = tree_split[shape.batch]
    masks = {f"{name}_mask": is_root & (node_split == code) for code, name in enumerate(SPLITS)}
    return Data(x=x, edge_index=shape.edge_index, y=label[shape.batch], batch=shape.batch, **masks)


class TreeBatches:
    """Re-iterable model-ready batches of some trees of a `TreeNeighborsMatch`.

    The trees share one shape, so a batch is a slice of the stored per-node tables expanded by
    `expand_batch` (no per-tree collation). One iteration makes ``passes`` passes over the
    trees, so that an epoch of the trainer can be Alon & Yahav's evaluation period (100 passes
    between two evaluations); a shuffled pass draws its order with torch's global RNG.

    Args:
        trees (TreeNeighborsMatch): the whole dataset.
        indices (Tensor): the trees to iterate over.
        split (Tensor): split code of every tree of the dataset.
        batch_size (int): trees per batch.
        shuffle (bool): reshuffle every pass.
        passes (int): passes over the trees per iteration. (default: ``1``)
    """

    def __init__(
        self,
        trees: TreeNeighborsMatch,
        indices: torch.Tensor,
        split: torch.Tensor,
        batch_size: int,
        shuffle: bool,
        passes: int = 1,
    ):
        size = 2 ** (trees.depth + 1) - 1
        self.node_key = trees._data.node_key.view(-1, size)[indices]
        self.node_value = trees._data.node_value.view(-1, size)[indices]
        self.label = trees._data.label[indices]
        self.tree_split = split[indices]
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.passes = passes
        self.depth = trees.depth
        self._shapes: dict[int, BatchShape] = {}

    def shape(self, count: int) -> BatchShape:
        """The graph of a batch of ``count`` trees, made once and shared by every such batch."""
        if count not in self._shapes:
            self._shapes[count] = BatchShape.of(count, self.depth)
        return self._shapes[count]

    def __len__(self) -> int:
        return self.passes * math.ceil(self.label.numel() / self.batch_size)

    def __iter__(self) -> Iterator[Data]:
        for _ in range(self.passes):
            count = self.label.numel()
            order = torch.randperm(count) if self.shuffle else torch.arange(count)
            for chunk in order.split(self.batch_size):
                yield expand_batch(
                    self.node_key[chunk],
                    self.node_value[chunk],
                    self.label[chunk],
                    self.tree_split[chunk],
                    self.shape(chunk.numel()),
                )


def load_trees(dataset: DictConfig, paths: DictConfig, seed: int) -> Task:
    r"""TREES of depth ``dataset.depth``, mini-batched, accuracy at the roots.

    The trees depend on ``dataset.seed`` only, never on the run's ``seed``, which
    reaches the batches through torch's global RNG (training batches are reshuffled each epoch).

    Args:
        dataset (DictConfig): ``depth`` ($d$), ``num_trees``, ``train_fraction`` (the
            rest is halved into val and test), ``batch_size``, ``passes_per_epoch`` (passes over
            the training trees per epoch) and ``seed``, as ``configs/dataset/trees.yaml`` and
            `lipnorm_exp.config.schema.Trees` say. ``download`` is ignored.
        paths (DictConfig): ``data_dir``, where the trees are cached.
        seed (int): the run's seed; unused here.

    Returns:
        Task: training batches over the training trees (shuffled), evaluation batches over all
        trees in order; $2^{d+1}$ features, $2^d$ classes.
    """
    depth, batch_size = dataset.depth, dataset.batch_size
    arguments = (paths.data_dir, depth, dataset.num_trees, dataset.seed)
    processed = Path(TreeNeighborsMatch.folder(*arguments)) / "processed"
    count = min(dataset.num_trees, num_distinct_trees(depth))
    stamp = TreesStamp(depth, count, dataset.seed)
    trees = load_prepared(partial(TreeNeighborsMatch, *arguments), processed, stamp=stamp)
    split = split_codes(len(trees), dataset.train_fraction)
    train = (split == 0).nonzero().view(-1)
    passes = dataset.passes_per_epoch
    return Task(
        dataset.name,
        TreeBatches(trees, train, split, batch_size, shuffle=True, passes=passes),
        TreeBatches(trees, torch.arange(len(trees)), split, batch_size, shuffle=False),
        num_features=2 ** (depth + 1),
        num_outputs=2**depth,
    )
