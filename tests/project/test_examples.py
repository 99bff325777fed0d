"""The standalone scripts of ``examples/``: each trains for a few epochs with ``--smoke`` and
prints PyG's epoch lines, its model built as it says (which layers carry LipschitzNorm), and no
warning; Planetoid's raw files come from ``$LIPNORM_RAW_DIRS`` into an absent, empty or partial
``raw`` folder, and where they cannot come at all the script says so in one line."""

import re
import shutil
import subprocess
import sys

import pytest
from cli_helpers import environment
from conftest import REPO

pytestmark = pytest.mark.slow

EXAMPLES = REPO / "examples"
EPOCH = re.compile(r"^Epoch: (\d{3}), Loss: (\d+\.\d{4}), .*Test: (\d\.\d{4}), Time: ", re.M)


def example(name: str, *arguments: str, tmp_path) -> str:
    """The output of ``examples/<name>`` run with ``arguments``: it exits 0 and warns of nothing."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *arguments],
        cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    return done.stdout


def epochs(output: str) -> list[tuple[int, float, float]]:
    """(epoch, loss, test accuracy) of each epoch line."""
    return [(int(e), float(loss), float(test)) for e, loss, test in EPOCH.findall(output)]


def check_epochs(output: str, count: int) -> None:
    rows = epochs(output)
    assert [epoch for epoch, _, _ in rows] == list(range(1, count + 1))
    assert all(0 < loss < 10 and 0 <= test <= 1 for _, loss, test in rows)


@pytest.mark.parametrize(("norm", "depth"), [("lip", "2"), ("none", "3")])
def test_gat_lip_cora_trains_on_planetoid_from_the_raw_mirror(norm, depth, tmp_path):
    root = tmp_path / "Planetoid"
    output = example(
        "gat_lip_cora.py", "--smoke", "--root", str(root), "--norm", norm, "--depth", depth,
        tmp_path=tmp_path,
    )  # fmt: skip
    check_epochs(output, 3)
    best = re.search(r"^Best Val: (\d\.\d{4}), Test at best Val: (\d\.\d{4})$", output, re.M)
    assert best and 0 <= float(best.group(2)) <= 1
    assert (root / "Cora" / "raw" / "ind.cora.x").is_file()
    assert (root / "Cora" / "processed").is_dir()


@pytest.mark.parametrize("kept", [0, 3])
def test_an_empty_or_partial_raw_folder_is_completed_from_the_raw_mirror(
    kept, tmp_path, planetoid_raw
):
    """A first run cut short (no network, or a download stopped) leaves ``raw`` empty or partial."""
    raw = tmp_path / "Planetoid" / "Cora" / "raw"
    raw.mkdir(parents=True)
    mirror = planetoid_raw("cora")
    files = sorted(path.name for path in mirror.iterdir())
    for name in files[:kept]:
        shutil.copyfile(mirror / name, raw / name)
    output = example(
        "gat_lip_cora.py", "--smoke", "--root", str(tmp_path / "Planetoid"), tmp_path=tmp_path
    )
    check_epochs(output, 3)
    assert sorted(path.name for path in raw.iterdir()) == files


def test_gat_lip_cora_without_raw_files_or_a_download_ends_in_one_line(tmp_path):
    """No mirror, and a download host that refuses: one line naming the folder, exit 2."""
    root = tmp_path / "Planetoid"
    script = (
        "import runpy, sys; from torch_geometric.datasets import Planetoid; "
        "Planetoid.url = 'http://127.0.0.1:9/planetoid'; "
        f"sys.path.insert(0, {str(EXAMPLES)!r}); "
        f"sys.argv = ['gat_lip_cora.py', '--smoke', '--root', {str(root)!r}]; "
        f"runpy.run_path({str(EXAMPLES / 'gat_lip_cora.py')!r}, run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=environment(LIPNORM_RAW_DIRS=""),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        f"gat_lip_cora.py: error: Cora's raw files are not all in {root}/Cora/raw"
    )
    assert "set LIPNORM_RAW_DIRS to a folder holding Planetoid/Cora/raw" in line


def test_gat_lip_cora_refuses_a_depth_below_one(tmp_path):
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "gat_lip_cora.py"), "--depth", "0"],
        cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--depth must be >= 1, got 0" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("model", "swapped"),
    [
        ("gat", "{'GATLayer': 2, 'GATLipschitzNorm': 2}"),
        ("gatv2", "{'GATv2Layer': 2, 'ScoreLipschitzNorm': 2}"),
        ("transformer", "{'GTLayer': 2, 'GTLipschitzNorm': 2}"),
    ],
)
def test_pyg_model_lipschitz_swaps_the_layers_and_trains(model, swapped, tmp_path):
    output = example(
        "pyg_model_lipschitz.py", "--smoke", "--root", str(tmp_path / "Planetoid"),
        "--model", model, tmp_path=tmp_path,
    )  # fmt: skip
    assert f"Layers swapped in: {swapped}\n" in output
    check_epochs(output, 3)


@pytest.mark.parametrize(("norm", "converted"), [("lip", 2), ("none", 0)])
def test_transformer_encoder_converts_its_attention_and_trains(norm, converted, tmp_path):
    output = example("transformer_encoder.py", "--smoke", "--norm", norm, tmp_path=tmp_path)
    assert f"Attention modules with LipschitzNorm: {converted} of 2\n" in output
    check_epochs(output, 2)
