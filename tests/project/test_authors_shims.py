"""The plain-torch stand-ins for torch_scatter/torch_sparse (``scripts/authors_shims.py``).

Each reduction against values worked out by hand, against PyG's own ``utils.scatter`` (which
implements torch_scatter's semantics independently) on random inputs, and the gradient of
``max``/``min`` routed as torch_scatter routes it: to the first of equal extremes only.
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch_geometric.utils import scatter as pyg_scatter

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
_spec = importlib.util.spec_from_file_location("authors_shims", SCRIPTS / "authors_shims.py")
assert _spec is not None and _spec.loader is not None
shims = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shims)

# rows 0 and 2 receive values; row 1 none (and, with dim_size=4, row 3 none)
SRC = torch.tensor([[1.0, 2.0], [3.0, -1.0], [-3.0, 5.0], [0.0, 7.0]])
INDEX = torch.tensor([0, 0, 2, 0])


def test_sum_by_hand_with_empty_rows():
    out = shims.scatter(SRC, INDEX, dim=0, dim_size=4, reduce="sum")
    assert torch.equal(out, torch.tensor([[4.0, 8.0], [0.0, 0.0], [-3.0, 5.0], [0.0, 0.0]]))
    assert torch.equal(shims.scatter(SRC, INDEX, dim=0, reduce="add"), out[:3])


def test_mean_by_hand_empty_row_is_zero():
    out = shims.scatter(SRC, INDEX, dim=0, reduce="mean")
    expected = torch.tensor([[4.0 / 3, 8.0 / 3], [0.0, 0.0], [-3.0, 5.0]])
    assert torch.allclose(out, expected)
    assert torch.equal(shims.scatter_mean(SRC, INDEX, dim=0), out)


def test_max_and_min_by_hand_keep_negative_extremes():
    # row 2 holds only -3 in column 0: its max is -3, not the 0 of an empty row
    assert torch.equal(
        shims.scatter(SRC, INDEX, dim=0, reduce="max"),
        torch.tensor([[3.0, 7.0], [0.0, 0.0], [-3.0, 5.0]]),
    )
    assert torch.equal(
        shims.scatter(SRC, INDEX, dim=0, reduce="min"),
        torch.tensor([[0.0, -1.0], [0.0, 0.0], [-3.0, 5.0]]),
    )


def test_default_dim_is_the_last():
    src = torch.tensor([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]])
    out = shims.scatter(src, torch.tensor([1, 0, 1]))
    assert torch.equal(out, torch.tensor([[2.0, 5.0], [16.0, 40.0]]))


def test_empty_index_gives_no_rows():
    out = shims.scatter(torch.zeros(0, 3), torch.zeros(0, dtype=torch.long), dim=0, reduce="max")
    assert out.shape == (0, 3)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min"])
def test_agrees_with_pyg_scatter(reduce):
    generator = torch.Generator().manual_seed(0)
    src = torch.randn(50, 3, 4, generator=generator)
    index = torch.randint(0, 12, (50,), generator=generator)
    for dim_size in (None, 15):
        ours = shims.scatter(src, index, dim=0, dim_size=dim_size, reduce=reduce)
        size = int(index.max()) + 1 if dim_size is None else dim_size
        theirs = pyg_scatter(src, index, dim=0, dim_size=size, reduce=reduce)
        assert torch.allclose(ours, theirs, atol=1e-6)


@pytest.mark.parametrize(("reduce", "tied"), [("max", 5.0), ("min", -5.0)])
def test_gradient_goes_to_the_first_tied_extreme(reduce, tied):
    src = torch.tensor([1.0, tied, tied, 2.0, tied], requires_grad=True)
    index = torch.tensor([0, 0, 0, 1, 1])
    out = shims.scatter(src, index, dim=0, reduce=reduce)
    assert out.tolist() == [tied, tied]
    (out * torch.tensor([10.0, 100.0])).sum().backward()
    assert src.grad is not None
    assert src.grad.tolist() == [0.0, 10.0, 0.0, 0.0, 100.0]


def test_gradients_of_sum_and_mean():
    src = SRC.clone().requires_grad_(True)
    shims.scatter(src, INDEX, dim=0, reduce="mean").sum().backward()
    assert src.grad is not None
    assert torch.allclose(src.grad[:, 0], torch.tensor([1 / 3, 1 / 3, 1.0, 1 / 3]))


def test_unsupported_reduction_and_set_diag_refuse():
    with pytest.raises(ValueError, match="mul"):
        shims.scatter(SRC, INDEX, dim=0, reduce="mul")
    with pytest.raises(NotImplementedError, match="SparseTensor"):
        shims.set_diag(None)


@pytest.mark.slow
def test_install_registers_stand_ins_only_for_absent_packages():
    """In a fresh process, so that this one's modules stay as they are."""
    code = (
        "import authors_shims, torch_geometric.typing as t\n"
        "used = authors_shims.install()\n"
        "import torch_scatter, torch_sparse\n"
        "print(used['torch_scatter'], used['torch_sparse'], t.WITH_TORCH_SCATTER,"
        " torch_scatter.scatter is authors_shims.scatter, authors_shims.install() == used)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    scatter_used, sparse_used, pyg_sees_scatter, is_ours, again = done.stdout.split()
    real_scatter = importlib.util.find_spec("torch_scatter") is not None
    assert (scatter_used == "stand-in") is not real_scatter
    assert (sparse_used == "stand-in") is (importlib.util.find_spec("torch_sparse") is None)
    assert pyg_sees_scatter == str(real_scatter)
    assert is_ours == str(not real_scatter)
    assert again == "True"
