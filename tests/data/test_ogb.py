import math
import socket
import sys
from functools import partial

import numpy as np
import pytest
import torch
import torch_geometric.typing
from ogb_fixtures import SPECIES, configs, write_arxiv, write_csv, write_proteins
from omegaconf import open_dict
from sklearn.metrics import roc_auc_score
from torch_geometric.data import Data
from torch_geometric.loader import NeighborLoader, RandomNodeLoader
from torch_geometric.utils import is_undirected

import lipnorm_exp.data.download as download
from lipnorm_exp.config import validate
from lipnorm_exp.data import load_task
from lipnorm_exp.data.ogb import _import_ogb, _seed_masks
from lipnorm_exp.records import schema
from lipnorm_exp.training.launch import run
from lipnorm_exp.util.errors import ConfigError, DataNotFoundError

Evaluator = _import_ogb("ogbn-arxiv").Evaluator  # ogb without its update check
MASKS = {"train_mask": "train", "val_mask": "valid", "test_mask": "test"}


def edge_set(edge_index):
    return set(map(tuple, edge_index.t().tolist()))


def assert_masks_match(data, split):
    for mask, part in MASKS.items():
        assert data[mask].dtype == torch.bool
        assert data[mask].nonzero().view(-1).tolist() == sorted(split[part].tolist())


def arxiv_task(graph, tmp_path, seed=0, **dataset):
    return load_task(
        *configs(tmp_path, name="ogbn_arxiv", meta_dict=graph.meta_dict, **dataset), seed
    )


def proteins_task(graph, tmp_path, seed=0, **dataset):
    dataset = {"name": "ogbn_proteins", "meta_dict": graph.meta_dict, "num_parts": 4, **dataset}
    return load_task(*configs(tmp_path, **dataset), seed)


@pytest.fixture
def no_network(monkeypatch):
    attempts = []

    def refuse(address, *args, **kwargs):
        attempts.append(address)
        raise OSError("no network in tests")

    monkeypatch.setattr(socket, "create_connection", refuse)
    yield
    assert attempts == []


@pytest.fixture
def arxiv(tmp_path):
    return write_arxiv(tmp_path / "tiny_arxiv")


@pytest.fixture
def proteins(tmp_path):
    return write_proteins(tmp_path / "tiny_proteins")


@pytest.mark.parametrize("undirected", [True, False])
def test_arxiv_graph_split_and_direction(arxiv, tmp_path, undirected):
    task = arxiv_task(arxiv, tmp_path, to_undirected=undirected)
    (data,) = task.train_batches
    assert list(task.eval_batches) == [data]
    assert (task.num_features, task.num_outputs, task.loss) == (5, 4, "cross_entropy")
    assert torch.allclose(data.x, torch.from_numpy(arxiv.x))
    assert data.y.tolist() == arxiv.y[:, 0].tolist()
    assert_masks_match(data, arxiv.split)
    written = set(map(tuple, arxiv.edges.tolist()))
    if undirected:
        assert is_undirected(data.edge_index)
        assert edge_set(data.edge_index) == written | {(v, u) for u, v in written}
    else:
        assert edge_set(data.edge_index) == written
        assert data.edge_index.size(1) == len(written)


def test_arxiv_metric_is_ogb_accuracy(arxiv, tmp_path):
    task = arxiv_task(arxiv, tmp_path)
    (data,) = task.train_batches
    logits = torch.randn(
        data.num_nodes, task.num_outputs, generator=torch.Generator().manual_seed(1)
    )
    logits[:4] = torch.nn.functional.one_hot(data.y[:4], task.num_outputs) * 10.0
    mask = data.val_mask
    expected = Evaluator("ogbn-arxiv").eval(
        {"y_true": data.y[mask, None], "y_pred": logits[mask].argmax(-1, keepdim=True)}
    )["acc"]
    assert task.metric_name == "accuracy"
    assert task.metric(data.y[mask], logits[mask]) == pytest.approx(expected)
    assert task.metric(data.y, torch.nn.functional.one_hot(data.y, task.num_outputs)) == 1.0
    assert math.isnan(task.metric(data.y[:0], logits[:0]))


def test_loading_leaves_the_socket_timeout_and_torch_safe_globals_as_they_were(arxiv, tmp_path):
    timeout, safe = socket.getdefaulttimeout(), torch.serialization.get_safe_globals()
    arxiv_task(arxiv, tmp_path)  # builds and saves the processed file
    arxiv_task(arxiv, tmp_path)  # reads it back with torch.load
    assert socket.getdefaulttimeout() == timeout
    assert torch.serialization.get_safe_globals() == safe


@pytest.mark.parametrize("rate", [0.5, 1.0])
def test_arxiv_missing_vectors_spare_training_nodes(arxiv, tmp_path, rate):
    (data,) = arxiv_task(arxiv, tmp_path, missing_rate=rate, seed=3).train_batches
    x = torch.from_numpy(arxiv.x)
    unlabelled = ~data.train_mask
    assert torch.allclose(data.x[data.train_mask], x[data.train_mask])
    zeroed = (data.x == 0).all(dim=-1)
    assert int(zeroed.sum()) == round(rate * int(unlabelled.sum()))
    assert not zeroed[data.train_mask].any()
    assert torch.allclose(data.x[~zeroed], x[~zeroed])


def test_standard_name_copied_from_mirror_and_reloaded_without_prompt(tmp_path, no_network):
    graph = write_arxiv(tmp_path / "mirror" / "ogb" / "ogbn_arxiv")
    dataset, paths = configs(tmp_path / "data", [tmp_path / "mirror"], name="ogbn_arxiv")
    first = load_task(dataset, paths, 0)
    folder = tmp_path / "data" / "ogb" / "ogbn_arxiv"
    assert (folder / "raw" / "edge.csv.gz").is_file()
    assert (folder / "RELEASE_v1.txt").is_file()  # ogb would ask on stdin without it
    assert (folder / "processed" / "geometric_data_processed.pt").is_file()
    (data,) = load_task(dataset, paths, 0).train_batches  # from the processed file
    assert first.num_outputs == 40  # ogbn-arxiv's classes, from ogb's master table
    assert torch.equal(data.edge_index, next(iter(first.train_batches)).edge_index)
    assert_masks_match(data, graph.split)


def test_absent_files_raise_one_line_naming_the_folder(tmp_path, no_network):
    dataset, paths = configs(tmp_path, [tmp_path / "no_mirror"], name="ogbn_proteins")
    with pytest.raises(DataNotFoundError) as error:
        load_task(dataset, paths, 0)
    message = str(error.value)
    assert "\n" not in message
    assert str(tmp_path / "ogb" / "ogbn_proteins") in message
    assert "split/species/train.csv.gz" in message


def test_absent_file_of_own_dataset_is_named(arxiv, tmp_path, no_network):
    (arxiv.folder / "raw" / "node_year.csv.gz").unlink()
    with pytest.raises(DataNotFoundError, match="raw/node_year.csv.gz") as error:
        arxiv_task(arxiv, tmp_path, download=True)
    assert str(arxiv.folder) in str(error.value)


def test_unreachable_host_is_reported_and_incomplete_folder_kept(tmp_path, monkeypatch):
    dataset, paths = configs(tmp_path, name="ogbn_arxiv", download=True)
    monkeypatch.setattr(download, "host_reachable", lambda url, timeout=3.0: False)
    with pytest.raises(DataNotFoundError, match="snap.stanford.edu cannot be reached"):
        load_task(dataset, paths, 0)
    graph = write_arxiv(tmp_path / "ogb" / "ogbn_arxiv")
    (graph.folder / "split" / "time" / "test.csv.gz").unlink()
    monkeypatch.setattr(download, "host_reachable", lambda url, timeout=3.0: True)
    with pytest.raises(DataNotFoundError, match="incomplete"):
        load_task(dataset, paths, 0)
    assert (graph.folder / "raw" / "edge.csv.gz").is_file()


def test_missing_ogb_package_is_one_config_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ogb.nodeproppred", None)
    monkeypatch.delitem(sys.modules, "outdated", raising=False)
    with pytest.raises(ConfigError, match=r"needs the ogb package.*lipnorm_exp\[ogb\]"):
        load_task(*configs(tmp_path, name="ogbn_arxiv"), 0)
    assert "outdated" not in sys.modules  # blocked only while ogb is imported


def test_proteins_features_labels_and_masks(proteins, tmp_path):
    task = proteins_task(proteins, tmp_path, eval_batches="full")
    (data,) = task.eval_batches
    species = np.searchsorted(SPECIES, proteins.species)
    edge_sum = np.zeros((len(species), 8))
    for (u, v), feat in zip(proteins.edges, proteins.edge_feat, strict=True):
        edge_sum[u] += feat
        edge_sum[v] += feat
    expected = np.concatenate([np.eye(len(SPECIES))[species], edge_sum], axis=1)
    assert torch.allclose(data.x, torch.tensor(expected, dtype=torch.float32), atol=1e-5)
    assert (task.num_features, task.num_outputs) == (len(SPECIES) + 8, 112)
    assert (task.loss, task.metric_name) == ("bce", "rocauc")
    assert data.y.dtype == torch.float32 and data.y.tolist() == proteins.y.tolist()
    assert is_undirected(data.edge_index) and data.edge_index.size(1) == 2 * len(proteins.edges)
    assert_masks_match(data, proteins.split)


def epoch_order(task, graph):
    """The nodes of one pass over the training batches, found by their 112 random labels."""
    node_of = {tuple(row): node for node, row in enumerate(graph.y.tolist())}
    train = set(graph.split["train"].tolist())
    order = []
    for batch in task.train_batches:
        nodes = [node_of[tuple(row)] for row in batch.y.long().tolist()]
        assert batch.train_mask.tolist() == [n in train for n in nodes]
        assert set(batch.keys()) >= {"x", "edge_index", "y", *MASKS}
        order += nodes
    return order


def test_proteins_training_batches_cover_every_node_once(proteins, tmp_path):
    task = proteins_task(proteins, tmp_path, loader="random_nodes", seed=5)
    assert isinstance(task.train_batches, RandomNodeLoader)
    assert len(task.train_batches) == 4
    epochs = [epoch_order(task, proteins) for _ in range(2)]
    for order in epochs:
        assert sorted(order) == list(range(len(proteins.y)))
    assert epochs[0] != epochs[1]
    again = proteins_task(proteins, tmp_path, loader="random_nodes", seed=5)
    other = proteins_task(proteins, tmp_path, loader="random_nodes", seed=6)
    assert epoch_order(again, proteins) == epochs[0]
    assert epoch_order(other, proteins) != epochs[0]


def test_proteins_batched_evaluation_covers_all_nodes(proteins, tmp_path):
    task = proteins_task(proteins, tmp_path, eval_batches="batched", eval_num_parts=3)
    batches = list(task.eval_batches)
    assert len(batches) == 3
    assert sum(b.num_nodes for b in batches) == len(proteins.y)
    assert sum(int(b.val_mask.sum()) for b in batches) == len(proteins.split["valid"])


def test_proteins_loader_options(proteins, tmp_path, monkeypatch, make_cfg):
    monkeypatch.setattr(torch_geometric.typing, "WITH_PYG_LIB", False)
    proteins_cfg = partial(make_cfg, "dataset=ogbn_proteins")
    with pytest.raises(ConfigError, match="^dataset.loader=neighbor needs pyg-lib; allowed here"):
        validate(proteins_cfg("dataset.loader=neighbor"))
    with pytest.raises(ConfigError, match="^dataset.loader must be one of auto, neighbor, random"):
        validate(proteins_cfg("dataset.loader=cluster"))
    with pytest.raises(ConfigError, match="^dataset.eval_batches must be batched or full, got h"):
        validate(proteins_cfg("dataset.eval_batches=half"))
    assert isinstance(proteins_task(proteins, tmp_path).train_batches, RandomNodeLoader)
    monkeypatch.setattr(torch_geometric.typing, "WITH_PYG_LIB", True)
    loader = proteins_task(proteins, tmp_path, batch_size=4).train_batches
    assert isinstance(loader, NeighborLoader) and loader.transform is _seed_masks


def test_seed_masks_keep_only_the_seed_nodes():
    batch = Data(num_nodes=5, batch_size=2)
    batch.train_mask = torch.tensor([True, True, True, False, False])
    batch.val_mask = torch.tensor([False, False, False, True, False])
    batch.test_mask = torch.tensor([False, False, False, False, True])
    batch = _seed_masks(batch)
    assert batch.train_mask.tolist() == [True, True, False, False, False]
    assert not batch.val_mask.any() and not batch.test_mask.any()


def test_proteins_metric_is_ogb_rocauc(proteins, tmp_path):
    task = proteins_task(proteins, tmp_path, eval_batches="full")
    (data,) = task.eval_batches
    logits = torch.randn(data.num_nodes, 112, generator=torch.Generator().manual_seed(2))
    mask = data.val_mask
    expected = Evaluator("ogbn-proteins").eval({"y_true": data.y[mask], "y_pred": logits[mask]})
    assert task.metric(data.y[mask], logits[mask]) == pytest.approx(expected["rocauc"])
    assert task.metric(data.y, 20 * data.y - 10) == 1.0
    assert math.isnan(task.metric(torch.zeros(3, 112), logits[:3]))


def test_own_dataset_with_other_task_count(tmp_path):
    graph = write_proteins(tmp_path / "three_tasks", num_nodes=30, num_tasks=3, seed=4)
    task = proteins_task(graph, tmp_path, eval_batches="full")
    (data,) = task.eval_batches
    logits = torch.randn(data.num_nodes, 3, generator=torch.Generator().manual_seed(0))
    y, scores = data.y[data.test_mask].numpy(), logits[data.test_mask].numpy()
    expected = np.mean([roc_auc_score(y[:, k], scores[:, k]) for k in range(3)])
    assert task.num_outputs == 3
    assert task.metric(data.y[data.test_mask], logits[data.test_mask]) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("dataset", "writer", "metric"),
    [("ogbn_arxiv", write_arxiv, "accuracy"), ("ogbn_proteins", write_proteins, "rocauc")],
)
def test_the_trainer_runs_ogb_datasets_end_to_end(make_cfg, tmp_path, dataset, writer, metric):
    graph = writer(tmp_path / f"tiny_{dataset}")
    cfg = make_cfg(f"dataset={dataset}", "model.depth=2", "model.hidden=16", "train.epochs=3")
    with open_dict(cfg):
        cfg.dataset.meta_dict = graph.meta_dict
        if dataset == "ogbn_proteins":
            cfg.dataset.num_parts = 3
    [record] = run(cfg)
    assert record["status"] == "completed" and record["summary"][schema.METRIC] == metric
    assert len(record["history"]) == 3
    for row in record["history"]:
        assert math.isfinite(row["train_loss"]) and 0.0 <= row["val_acc"] <= 1.0


def test_a_processed_graph_made_from_other_raw_files_is_prepared_again(arxiv, tmp_path, caplog):
    first = next(iter(arxiv_task(arxiv, tmp_path).train_batches))
    assert torch.equal(first.x, torch.from_numpy(arxiv.x))
    assert "lipnorm_source" not in first  # the stamp stays in the processed file
    new_x = (arxiv.x + 1).round(4)
    write_csv(arxiv.folder / "raw" / "node-feat.csv.gz", new_x)  # newer raw files
    with caplog.at_level("WARNING", logger="lipnorm_exp.data.prepare"):
        again = next(iter(arxiv_task(arxiv, tmp_path).train_batches))
    assert torch.equal(again.x, torch.from_numpy(new_x))
    assert "it was made from other raw files (node-feat.csv.gz)" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="lipnorm_exp.data.prepare"):
        arxiv_task(arxiv, tmp_path)  # the rebuilt folder holds the new stamp
    assert "preparing it again" not in caplog.text
