import math
from pathlib import Path

import pytest
import torch
from conftest import compose_config
from omegaconf import OmegaConf
from test_planetoid import Planted

from lipnorm_exp.config import build_model, validate
from lipnorm_exp.data import load_task, trees
from lipnorm_exp.data.trees import (
    TreeNeighborsMatch,
    draw_trees,
    expand_batch,
    num_distinct_trees,
    split_codes,
    tree_edge_index,
)
from lipnorm_exp.util.errors import ConfigError


def trees_cfg(depth: int, **overrides):
    """``configs/dataset/trees.yaml`` as composed; by default 5000 trees, 16 a batch, one pass."""
    keys = {"depth": depth, "num_trees": 5000, "batch_size": 16, "passes_per_epoch": 1, **overrides}
    changes = [f"dataset.{key}={value}" for key, value in keys.items()]
    return compose_config(Path("unused"), ["dataset=trees", *changes]).dataset


@pytest.fixture
def paths(tmp_path):
    return OmegaConf.create({"data_dir": str(tmp_path)})


def dense_trees(depth: int, count: int, seed: int = 0):
    """``count`` trees of a fresh draw, expanded one by one (all in the training split)."""
    pairs = draw_trees(depth, count, seed)
    compact = [trees.compact_tree(depth, key, values) for key, values in pairs]
    train = torch.zeros(1, dtype=torch.long)
    return [
        expand_batch(tree.node_key.view(1, -1), tree.node_value.view(1, -1), tree.label, train)
        for tree in compact
    ]


@pytest.mark.parametrize("depth", [1, 2, 3, 5])
def test_edges_point_from_child_to_parent(depth):
    nodes = 2 ** (depth + 1) - 1
    source, target = tree_edge_index(depth)
    assert source.numel() == (nodes - 1) + nodes
    loops = source == target
    assert torch.equal(source[loops].sort().values, torch.arange(nodes))
    out_degree = torch.bincount(source[~loops], minlength=nodes)
    assert out_degree[0] == 0 and (out_degree[1:] == 1).all()
    assert torch.equal(target[~loops], (source[~loops] - 1) // 2)
    in_degree = torch.bincount(target[~loops], minlength=nodes)
    leaves = 2**depth
    assert (in_degree[: leaves - 1] == 2).all() and (in_degree[leaves - 1 :] == 0).all()


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_one_hot_layout_and_label(depth):
    leaves = 2**depth
    for data in dense_trees(depth, 6):
        assert data.x.is_sparse and data.x.shape == (2 * leaves - 1, 2 * leaves)
        x = data.x.to_dense()
        keys, values = x[:, :leaves], x[:, leaves:]
        leaf = slice(leaves - 1, None)
        assert torch.equal(keys[leaf], torch.eye(leaves))
        assert torch.equal(values[leaf].sum(dim=0), torch.ones(leaves))  # a permutation
        assert torch.equal(values[leaf].sum(dim=1), torch.ones(leaves))
        assert keys[0].sum() == 1 and values[0].sum() == 0
        assert (x[1 : leaves - 1] == 0).all()
        target_leaf = (keys[leaf] == keys[0]).all(dim=1).nonzero().item()
        label = values[leaf][target_leaf].argmax()
        assert (data.y == label).all()
        assert data.train_mask.nonzero().view(-1).tolist() == [0]
        assert not data.val_mask.any() and not data.test_mask.any()


def test_draw_is_deterministic_per_seed():
    first, again, other = draw_trees(3, 50, 0), draw_trees(3, 50, 0), draw_trees(3, 50, 1)
    assert all(a[0] == b[0] and torch.equal(a[1], b[1]) for a, b in zip(first, again, strict=True))
    assert any(
        a[0] != b[0] or not torch.equal(a[1], b[1]) for a, b in zip(first, other, strict=True)
    )


@pytest.mark.parametrize(("depth", "count"), [(2, 96), (2, 40), (3, 2000)])
def test_trees_are_distinct(depth, count):
    pairs = draw_trees(depth, count, seed=0)
    assert len(pairs) == count
    assert len({(key, tuple(values.tolist())) for key, values in pairs}) == count
    leaves = 2**depth
    for key, values in pairs:
        assert 0 <= key < leaves
        assert torch.equal(values.sort().values, torch.arange(leaves))


@pytest.mark.parametrize(("depth", "count"), [(1, 4), (2, 96), (3, 5000)])
def test_dataset_size(depth, count, paths):
    assert num_distinct_trees(depth) == 2**depth * math.factorial(2**depth)
    task = load_task(trees_cfg(depth), paths, seed=0)
    batches = list(task.eval_batches)
    assert sum(batch.num_nodes for batch in batches) == count * (2 ** (depth + 1) - 1)
    masks = ("train_mask", "val_mask", "test_mask")
    assert sum(int(batch[mask].sum()) for batch in batches for mask in masks) == count
    assert (task.num_features, task.num_outputs) == (2 ** (depth + 1), 2**depth)


def test_splits_by_root(paths):
    task = load_task(trees_cfg(2, train_fraction=0.75), paths, seed=0)
    expected = {"train": 72, "val": 12, "test": 12}
    for split, count in expected.items():
        assert sum(int(b[f"{split}_mask"].sum()) for b in task.eval_batches) == count
    train_roots = 0
    for batch in task.train_batches:
        roots = batch.batch.bincount().cumsum(0) - batch.batch.bincount()
        assert torch.equal(batch.train_mask.nonzero().view(-1), roots)
        assert not batch.val_mask.any() and not batch.test_mask.any()
        train_roots += roots.numel()
    assert train_roots == 72
    for batch in task.eval_batches:
        masks = torch.stack([batch.train_mask, batch.val_mask, batch.test_mask])
        assert (masks.sum(dim=0) <= 1).all()


def test_split_codes():
    assert split_codes(10, 0.8).tolist() == [0] * 8 + [1, 2]
    assert split_codes(96, 0.8).bincount().tolist() == [77, 9, 10]


def test_cache_is_reused(paths, monkeypatch):
    first = TreeNeighborsMatch(paths.data_dir, depth=2, num_trees=5000, seed=3)
    cache = first.processed_paths[0]
    assert cache.endswith("TREES/depth2_n96_seed3/processed/trees.pt")

    def regenerate(*args):
        raise AssertionError("trees regenerated instead of read from the cache")

    monkeypatch.setattr(trees, "draw_trees", regenerate)
    second = TreeNeighborsMatch(paths.data_dir, depth=2, num_trees=5000, seed=3)
    assert torch.equal(first._data.node_value, second._data.node_value)
    with pytest.raises(AssertionError, match="regenerated"):
        TreeNeighborsMatch(paths.data_dir, depth=2, num_trees=5000, seed=4)


def test_a_cache_of_other_trees_in_the_folder_is_prepared_again(paths, caplog):
    depth3 = TreeNeighborsMatch(paths.data_dir, depth=3, num_trees=200, seed=0).processed_paths[0]
    depth2 = Path(TreeNeighborsMatch.folder(paths.data_dir, 2, 5000, 0)) / "processed"
    depth2.mkdir(parents=True)
    Path(depth2 / "trees.pt").write_bytes(Path(depth3).read_bytes())  # depth 3's in depth 2's
    with caplog.at_level("WARNING", logger="lipnorm_exp.data.prepare"):
        task = load_task(trees_cfg(2), paths, 0)
    why = "it holds 200 trees of 15 nodes, not 96 of 7 (depth 2); preparing it again"
    assert why in caplog.text
    roots = (b.train_mask | b.val_mask | b.test_mask for b in task.eval_batches)
    assert sum(int(mask.sum()) for mask in roots) == 96
    caplog.clear()
    with caplog.at_level("WARNING", logger="lipnorm_exp.data.prepare"):
        load_task(trees_cfg(2), paths, 0)  # the cache prepared again is taken as it is
    assert caplog.text == ""


def test_a_planted_cache_is_never_run_and_the_trees_are_drawn_again(paths, tmp_path, caplog):
    marker = tmp_path / "ran"
    processed = Path(TreeNeighborsMatch.folder(paths.data_dir, 2, 5000, 0)) / "processed"
    processed.mkdir(parents=True)
    torch.save((Planted(marker), {}, None), processed / "trees.pt")
    with caplog.at_level("WARNING", logger="lipnorm_exp.data.prepare"):
        load_task(trees_cfg(2), paths, 0)
    assert not marker.exists()
    assert "it holds objects other than tensors and plain data" in caplog.text
    fresh = TreeNeighborsMatch(str(Path(paths.data_dir) / "fresh"), depth=2, num_trees=5000)
    rebuilt = TreeNeighborsMatch(paths.data_dir, depth=2, num_trees=5000)
    assert torch.equal(rebuilt._data.node_value, fresh._data.node_value)


def test_a_cache_of_another_seed_in_the_folder_is_prepared_again(paths, caplog):
    """Seed 1's trees placed in seed 0's folder never train a run of dataset.seed=0."""
    seed1 = TreeNeighborsMatch(paths.data_dir, depth=3, num_trees=200, seed=1)
    seed0 = Path(TreeNeighborsMatch.folder(paths.data_dir, 3, 200, 0)) / "processed"
    seed0.mkdir(parents=True)
    (seed0 / "trees.pt").write_bytes(Path(seed1.processed_paths[0]).read_bytes())
    with caplog.at_level("WARNING", logger="lipnorm_exp.data.prepare"):
        load_task(trees_cfg(3, num_trees=200, seed=0), paths, 0)
    why = (
        "it holds the draw of dataset.seed=1 (200 trees of depth 3), not of dataset.seed=0 "
        "(200 of depth 3); preparing it again"
    )
    assert why in caplog.text
    fresh = TreeNeighborsMatch(str(Path(paths.data_dir) / "fresh"), depth=3, num_trees=200, seed=0)
    rebuilt = TreeNeighborsMatch(paths.data_dir, depth=3, num_trees=200, seed=0)
    assert torch.equal(rebuilt._data.node_value, fresh._data.node_value)
    assert not torch.equal(rebuilt._data.node_value, seed1._data.node_value)


def test_trees_follow_dataset_seed_not_run_seed(tmp_path):
    def labels(folder: str, run_seed: int, data_seed: int) -> torch.Tensor:
        cfg = trees_cfg(3, num_trees=300, seed=data_seed)
        task = load_task(cfg, OmegaConf.create({"data_dir": str(tmp_path / folder)}), run_seed)
        return torch.cat(
            [batch.y[batch.batch.bincount().cumsum(0) - 1] for batch in task.eval_batches]
        )

    reference = labels("a", run_seed=0, data_seed=0)
    assert torch.equal(labels("b", run_seed=1, data_seed=0), reference)
    assert not torch.equal(labels("c", run_seed=0, data_seed=1), reference)


def test_only_batches_are_expanded(paths):
    depth, batch_size = 4, 16
    task = load_task(trees_cfg(depth, num_trees=100, batch_size=batch_size), paths, seed=0)
    stored = TreeNeighborsMatch(paths.data_dir, depth, num_trees=100)
    assert "x" not in stored._data and "edge_index" not in stored._data
    assert stored._data.node_key.dtype == task.eval_batches.node_key.dtype == torch.int16
    nodes = 2 ** (depth + 1) - 1
    sizes = [batch.x.shape for batch in task.eval_batches]
    assert sizes == [(batch_size * nodes, 2 ** (depth + 1))] * 6 + [(4 * nodes, 2 ** (depth + 1))]
    batch = next(iter(task.eval_batches))
    tree_of = batch.batch
    assert torch.equal(tree_of[batch.edge_index[0]], tree_of[batch.edge_index[1]])


def test_batches_of_one_tree_count_share_one_graph_and_equal_a_fresh_expansion(paths):
    """The graph of a batch is made once per tree count (the last, smaller batch has its own)."""
    depth, batch_size = 3, 16
    task = load_task(trees_cfg(depth, num_trees=100, batch_size=batch_size), paths, seed=0)
    batches = list(task.eval_batches) + list(task.eval_batches)
    full = [batch for batch in batches if batch.num_nodes == batches[0].num_nodes]
    assert len({id(batch.edge_index) for batch in full}) == 1
    assert len({id(batch.edge_index) for batch in batches}) == 2
    source = task.eval_batches
    for start, batch in zip(range(0, 100, batch_size), batches, strict=False):
        rows = slice(start, start + batch_size)
        fresh = expand_batch(
            source.node_key[rows], source.node_value[rows], source.label[rows],
            source.tree_split[rows],
        )  # fmt: skip
        for key in ("edge_index", "batch", "y", "train_mask", "val_mask", "test_mask"):
            assert torch.equal(batch[key], fresh[key]), key
        assert torch.equal(batch.x.to_dense(), fresh.x.to_dense())


def test_models_read_sparse_batches_as_their_dense_matrices(make_cfg, paths):
    cfg = make_cfg("dataset=trees", "dataset.depth=3", "+method=gat_lip")
    task = load_task(trees_cfg(3, num_trees=40), paths, seed=0)
    batch = next(iter(task.train_batches))
    torch.manual_seed(0)
    model = build_model(cfg.model, cfg.norm, task.num_features, task.num_outputs)

    def forward_backward(x):
        model.zero_grad()
        out = model(x, batch.edge_index, batch.batch)
        out[batch.train_mask].logsumexp(dim=-1).sum().backward()
        return out.detach(), [p.grad.clone() for p in model.parameters()]

    assert batch.x.is_sparse
    sparse_out, sparse_grads = forward_backward(batch.x)
    dense_out, dense_grads = forward_backward(batch.x.to_dense())
    assert torch.allclose(sparse_out, dense_out, atol=1e-6)
    for sparse_grad, dense_grad in zip(sparse_grads, dense_grads, strict=True):
        assert torch.allclose(sparse_grad, dense_grad, atol=1e-6)


def test_invalid_depth(make_cfg):
    with pytest.raises(ConfigError, match=r"dataset\.depth must be an integer in \[1, 14\], got 0"):
        validate(make_cfg("dataset=trees", "dataset.depth=0"))
