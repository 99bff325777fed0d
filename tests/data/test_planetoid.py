import logging
import pickle
import shutil
import socket
import sys
from pathlib import Path

import pytest
import torch
from cli_helpers import TINY, cli, command, records
from omegaconf import OmegaConf

from lipnorm_exp.data import FULL_GRAPH_NODES, load_task
from lipnorm_exp.data.download import ensure_files, host_reachable
from lipnorm_exp.data.planetoid import PLANETOID_NAMES, raw_file_names
from lipnorm_exp.util.errors import ConfigError, DataError, DataNotFoundError, MissingPackageError

# name: nodes, classes, train, val, test (public split of Kipf & Welling)
SIZES = {
    "cora": (2708, 7, 140, 500, 1000),
    "citeseer": (3327, 6, 120, 500, 1000),
    "pubmed": (19717, 3, 60, 500, 1000),
}


def dataset_cfg(name: str, **overrides):
    """A Planetoid dataset's keys; features dense, so that the tests read them as they are."""
    keys = {
        "name": name,
        "missing_rate": 0.0,
        "normalize_features": True,
        "feature_layout": "dense",
        "download": False,
    }
    return OmegaConf.create({**keys, **overrides})


@pytest.fixture
def mirror(planetoid_raw) -> Path:
    """A folder laid out like ``paths.data_dir`` holding the three datasets' raw files."""
    return [planetoid_raw(name) for name in sorted(SIZES)][0].parents[2]


@pytest.fixture
def paths(tmp_path, mirror):
    return OmegaConf.create(
        {"data_dir": str(tmp_path / "data"), "raw_dirs": [str(tmp_path / "absent"), str(mirror)]}
    )


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("name", sorted(SIZES))
def test_loads_public_split_from_the_raw_files(name, paths):
    task = load_task(dataset_cfg(name), paths, seed=0)
    (data,) = task.train_batches
    nodes, classes, train, val, test = SIZES[name]
    assert data.num_nodes == nodes == FULL_GRAPH_NODES[name]
    assert task.num_outputs == classes == int(data.y.max()) + 1
    assert task.num_features == data.x.size(1)
    counts = [int(data[f"{split}_mask"].sum()) for split in ("train", "val", "test")]
    assert counts == [train, val, test]
    assert torch.equal(data.y[data.train_mask].bincount(), torch.full((classes,), 20))
    assert list(task.eval_batches) == [data]
    copied = Path(paths.data_dir) / "Planetoid" / PLANETOID_NAMES[name] / "raw"
    assert sorted(p.name for p in copied.iterdir()) == sorted(raw_file_names(PLANETOID_NAMES[name]))


@pytest.mark.parametrize("normalize", [True, False])
def test_feature_normalisation(paths, normalize):
    data = load_task(dataset_cfg("citeseer", normalize_features=normalize), paths, seed=0)
    x = data.train_batches[0].x
    row_sums = x.sum(dim=-1)
    zero_rows = row_sums == 0
    assert zero_rows.any()  # CiteSeer has featureless nodes: they must stay zero, not NaN
    assert not torch.isnan(x).any()
    if normalize:
        assert torch.allclose(row_sums[~zero_rows], torch.ones(int((~zero_rows).sum())))
    else:
        assert (row_sums[~zero_rows] > 1).any()


@pytest.mark.parametrize("name", sorted(SIZES))
def test_missing_vectors_after_normalisation(name, paths):
    plain = load_task(dataset_cfg(name), paths, seed=0).train_batches[0]
    data = load_task(dataset_cfg(name, missing_rate=1.0), paths, seed=0).train_batches[0]
    assert not torch.isnan(data.x).any()
    assert torch.equal(data.missing_mask, ~data.train_mask)
    assert (data.x[~data.train_mask] == 0).all()
    assert torch.equal(data.x[data.train_mask], plain.x[plain.train_mask])
    assert torch.allclose(data.x[data.train_mask].sum(dim=-1), torch.ones(SIZES[name][2]))


def test_missing_draw_follows_run_seed(paths):
    masks = [
        load_task(dataset_cfg("cora", missing_rate=0.5), paths, seed=s)
        .train_batches[0]
        .missing_mask
        for s in (0, 0, 1)
    ]
    assert int(masks[0].sum()) == round(0.5 * (2708 - 140))
    assert torch.equal(masks[0], masks[1])
    assert not torch.equal(masks[0], masks[2])


def test_invalid_missing_rate(paths):
    with pytest.raises(ConfigError, match=r"missing_rate must be in \[0, 1\], got 1.5"):
        load_task(dataset_cfg("cora", missing_rate=1.5), paths, seed=0)


def test_missing_files_without_download(tmp_path):
    paths = OmegaConf.create({"data_dir": str(tmp_path), "raw_dirs": [str(tmp_path / "none")]})
    with pytest.raises(DataNotFoundError) as error:
        load_task(dataset_cfg("pubmed"), paths, seed=0)
    message = str(error.value)
    assert "\n" not in message
    assert str(tmp_path / "Planetoid" / "PubMed" / "raw") in message
    assert all(file in message for file in raw_file_names("PubMed"))
    assert f"under paths.raw_dirs=[{tmp_path / 'none'}]" in message
    assert "set paths.raw_dirs=[<a folder holding Planetoid/PubMed/raw>]" in message
    assert "(or the environment variable LIPNORM_RAW_DIRS=<that folder>)" in message
    assert "allow the download (dataset.download=true)" in message


def test_a_missing_package_is_named_with_its_install_not_blamed_on_a_file(paths, monkeypatch):
    for name in [module for module in sys.modules if module.startswith("scipy.")] + ["scipy"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if scipy were not installed
    with pytest.raises(MissingPackageError) as error:
        load_task(dataset_cfg("cora"), paths, seed=0)
    message = str(error.value)
    assert message.endswith("needs the Python package scipy: pip install scipy"), message
    assert "delete" not in message and "\n" not in message
    raw = Path(paths.data_dir) / "Planetoid" / "Cora" / "raw"
    assert sorted(path.name for path in raw.iterdir()) == sorted(raw_file_names("Cora"))
    monkeypatch.undo()  # scipy back: the same files load
    assert load_task(dataset_cfg("cora"), paths, seed=0).num_outputs == SIZES["cora"][1]


@pytest.mark.parametrize("kept", [0, 3])
def test_an_empty_or_partial_raw_folder_is_completed_from_the_mirror(kept, paths, mirror):
    """What a run cut short leaves (a download without a network, a kill) heals on the next."""
    raw = Path(paths.data_dir) / "Planetoid" / "Cora" / "raw"
    raw.mkdir(parents=True)
    files = raw_file_names("Cora")
    for name in files[:kept]:
        shutil.copyfile(mirror / "Planetoid" / "Cora" / "raw" / name, raw / name)
    assert load_task(dataset_cfg("cora"), paths, seed=0).num_outputs == SIZES["cora"][1]
    assert sorted(path.name for path in raw.iterdir()) == sorted(files)


def test_partial_mirror_is_skipped(tmp_path):
    partial, full = tmp_path / "partial" / "set", tmp_path / "full" / "set"
    for folder, files in ((partial, ["a"]), (full, ["a", "sub/b"])):
        for file in files:
            (folder / file).parent.mkdir(parents=True, exist_ok=True)
            (folder / file).write_text(f"{folder.parent.name} {file}")
    target = tmp_path / "data"
    mirrors = [tmp_path / "nowhere", tmp_path / "partial", tmp_path / "full"]
    assert ensure_files("x", target, "set", ["a", "sub/b"], mirrors, download=False)
    assert (target / "set" / "a").read_text() == "full a"
    assert (target / "set" / "sub" / "b").read_text() == "full sub/b"


def test_unreachable_host_fails_fast(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/data"
    with pytest.raises(DataNotFoundError, match="127.0.0.1 cannot be reached") as error:
        ensure_files("x", tmp_path, "set", ["a"], [tmp_path / "m"], url=url, download=True)
    assert f"paths.raw_dirs=[{tmp_path / 'm'}]" in str(error.value)


def test_no_url_means_no_download(tmp_path):
    with pytest.raises(DataNotFoundError, match="there is no download for it"):
        ensure_files("x", tmp_path, "set", ["a"], url=None, download=True)


def test_reachable_host_leaves_download_to_loader(tmp_path):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        url = f"http://127.0.0.1:{server.getsockname()[1]}/data"
        assert host_reachable(url, timeout=1.0)
        assert ensure_files("x", tmp_path, "set", ["a"], url=url, download=True) is False
    assert not host_reachable(f"http://127.0.0.1:{closed_port()}/", timeout=1.0)


def test_processed_tensors_of_another_dataset_are_built_again_with_a_warning(paths, caplog):
    load_task(dataset_cfg("citeseer"), paths, seed=0)
    load_task(dataset_cfg("cora"), paths, seed=0)
    planetoid = Path(paths.data_dir) / "Planetoid"
    shutil.copy(planetoid / "CiteSeer/processed/data.pt", planetoid / "Cora/processed/data.pt")
    with caplog.at_level(logging.WARNING, logger="lipnorm_exp.data.prepare"):
        (data,) = load_task(dataset_cfg("cora"), paths, seed=0).train_batches
    assert data.num_nodes == SIZES["cora"][0] and "lipnorm_source" not in data
    assert f"{planetoid / 'Cora/processed'}: it holds CiteSeer, not Cora; preparing it again" in (
        caplog.text
    )


class Planted:
    """Unpickled, it creates the file ``marker``: what a hostile pickle could run instead."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("planted", ["data.pt", "pre_transform.pt"])
def test_a_planted_processed_file_is_never_run_and_the_dataset_is_prepared_again(
    paths, planted, tmp_path, caplog
):
    (clean,) = load_task(dataset_cfg("cora"), paths, seed=0).train_batches
    processed = Path(paths.data_dir) / "Planetoid/Cora/processed"
    marker = tmp_path / "ran"
    torch.save((Planted(marker), {}, None), processed / planted)
    with caplog.at_level(logging.WARNING, logger="lipnorm_exp.data.prepare"):
        (data,) = load_task(dataset_cfg("cora"), paths, seed=0).train_batches
    assert not marker.exists()
    assert f"{processed} cannot be read (it holds objects other than tensors and plain data" in (
        caplog.text
    )
    for key in ("x", "edge_index", "y", "train_mask", "val_mask", "test_mask"):
        assert torch.equal(data[key], clean[key])
    torch.load(processed / planted, weights_only=True)  # built anew: plain data again


@pytest.mark.parametrize("protocol", [2, 4])  # GLOBAL as the published files, STACK_GLOBAL
@pytest.mark.parametrize("part", ["x", "graph"])
def test_a_planted_raw_pickle_is_refused_unread_in_one_line(paths, tmp_path, protocol, part):
    """PyG unpickles raw files; one that names a callable the published files never name is
    refused before anything reads it, and what it would have run has not run."""
    load_task(dataset_cfg("cora"), paths, seed=0)
    raw = Path(paths.data_dir) / "Planetoid/Cora/raw" / f"ind.cora.{part}"
    shutil.rmtree(Path(paths.data_dir) / "Planetoid/Cora/processed")  # so that PyG reads raw/
    marker = tmp_path / "ran"
    raw.write_bytes(pickle.dumps(Planted(marker), protocol=protocol))
    with pytest.raises(DataError) as error:
        load_task(dataset_cfg("cora"), paths, seed=0)
    assert not marker.exists()
    called = "io.open" if protocol == 2 else "a name built as it loads"
    assert str(error.value) == (
        f"{raw} is not a Planetoid file: its pickle calls {called}, which would run as it is read "
        "(the published files call only NumPy, SciPy and collections constructors); delete it so "
        "that it is copied or downloaded again"
    )
    raw.unlink()  # copied again from the mirror: the run goes on
    assert load_task(dataset_cfg("cora"), paths, seed=0).train_batches[0].num_nodes == 2708


def test_a_foreign_graph_file_is_named_and_its_replacement_rebuilds(paths, mirror, caplog):
    load_task(dataset_cfg("cora"), paths, seed=0)
    graph = Path(paths.data_dir) / "Planetoid/Cora/raw/ind.cora.graph"
    shutil.copy(mirror / "Planetoid/CiteSeer/raw/ind.citeseer.graph", graph)
    with pytest.raises(DataError) as error:
        load_task(dataset_cfg("cora"), paths, seed=0)
    assert str(error.value) == (
        f"{graph} names node 3326 of a graph of 2708 nodes: it is another dataset's graph file, "
        "or damaged; delete it so that it is copied or downloaded again"
    )
    graph.unlink()
    with caplog.at_level(logging.WARNING, logger="lipnorm_exp.data.prepare"):
        (data,) = load_task(dataset_cfg("cora"), paths, seed=0).train_batches
    assert data.num_nodes == SIZES["cora"][0]
    assert "it was made from other raw files (ind.cora.graph); preparing it again" in caplog.text


@pytest.mark.parametrize("name", ["cora", "citeseer"])
def test_sparse_features_are_kept_as_a_csr_matrix_of_the_same_values(paths, name):
    dense = load_task(dataset_cfg(name), paths, seed=0).train_batches[0].x
    for layout in ("auto", "sparse"):
        laid = load_task(dataset_cfg(name, feature_layout=layout), paths, seed=0)
        x = laid.train_batches[0].x
        assert x.layout == torch.sparse_csr and laid.num_features == dense.size(1)
        assert torch.equal(x.to_dense(), dense)
    assert dense.layout == torch.strided


def test_auto_keeps_a_feature_matrix_dense_where_few_entries_are_zero():
    from lipnorm_exp.data.features import AUTO_MAX_DENSITY, laid_out

    x = torch.zeros(10, 10)
    x[:, : int(10 * AUTO_MAX_DENSITY)] = 1.0  # at the limit: sparse
    assert laid_out(x, "auto").layout == torch.sparse_csr
    x[:, : int(10 * AUTO_MAX_DENSITY) + 1] = 1.0  # above it: dense
    assert laid_out(x, "auto").layout == torch.strided
    assert laid_out(x, "sparse").layout == torch.sparse_csr
    assert laid_out(x, "dense") is x


@pytest.mark.slow
def test_a_pubmed_run_trains_from_the_raw_files(tmp_path, planetoid_raw):
    """The paper's third dataset through the real command: PubMed at 100% missing vectors."""
    data_dir = planetoid_raw("pubmed").parents[2]
    arguments = ("dataset=pubmed", "dataset.missing_rate=1.0", "+method=gat_lip", "train.epochs=3")
    done = cli(command(tmp_path, data_dir, *TINY, *arguments), timeout=300)
    assert done.returncode == 0, done.stderr
    (record,) = records(tmp_path).values()
    assert record["status"] == "completed"
    assert record["config"]["dataset"]["name"] == "pubmed"
    assert record["config"]["dataset"]["missing_rate"] == 1.0
    assert [row["epoch"] for row in record["history"]] == [1, 2, 3]
    assert 0.0 <= record["summary"]["test_acc_at_best_val"] <= 1.0
