import pytest
import torch
from torch_geometric.data import Data

from lipnorm_exp.data.missing import MissingVectors
from lipnorm_exp.util.errors import ConfigError

NUM_NODES, NUM_TRAIN = 40, 7


@pytest.fixture
def graph() -> Data:
    x = torch.rand(NUM_NODES, 5, generator=torch.Generator().manual_seed(1)) + 0.1
    train_mask = torch.zeros(NUM_NODES, dtype=torch.bool)
    train_mask[torch.tensor([0, 3, 8, 9, 20, 31, 39])] = True
    return Data(x=x, train_mask=train_mask)


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.25, 0.5, 0.77, 1.0])
def test_count_and_training_nodes_intact(graph, rate):
    out = MissingVectors(rate, seed=3)(graph)
    unlabelled = NUM_NODES - NUM_TRAIN
    assert int(out.missing_mask.sum()) == round(rate * unlabelled)
    assert not (out.missing_mask & graph.train_mask).any()
    zero_rows = (out.x == 0).all(dim=-1)
    assert torch.equal(zero_rows, out.missing_mask)
    kept = ~out.missing_mask
    assert torch.equal(out.x[kept], graph.x[kept])
    assert torch.equal(out.x[graph.train_mask], graph.x[graph.train_mask])


def test_rate_zero_changes_nothing(graph):
    out = MissingVectors(0.0, seed=0)(graph)
    assert torch.equal(out.x, graph.x)
    assert not out.missing_mask.any()


def test_rate_one_zeroes_every_unlabelled_node(graph):
    out = MissingVectors(1.0, seed=0)(graph)
    assert torch.equal(out.missing_mask, ~graph.train_mask)
    assert (out.x[~graph.train_mask] == 0).all()


def test_input_left_unchanged(graph):
    before = graph.x.clone()
    MissingVectors(0.5, seed=0)(graph)
    assert torch.equal(graph.x, before)
    assert "missing_mask" not in graph


def test_deterministic_per_seed(graph):
    first = MissingVectors(0.3, seed=5)(graph).missing_mask
    again = MissingVectors(0.3, seed=5)(graph).missing_mask
    other = MissingVectors(0.3, seed=6)(graph).missing_mask
    assert torch.equal(first, again)
    assert not torch.equal(first, other)
    assert int(other.sum()) == int(first.sum())


def test_draw_covers_all_unlabelled_nodes(graph):
    drawn = torch.stack([MissingVectors(0.1, seed=s)(graph).missing_mask for s in range(200)])
    assert torch.equal(drawn.any(dim=0), ~graph.train_mask)


@pytest.mark.parametrize("rate", [1.5, -0.1, float("nan")])
def test_invalid_rate(rate):
    with pytest.raises(ConfigError, match=r"^dataset\.missing_rate must be in \[0, 1\], got "):
        MissingVectors(rate, seed=0)


def test_invalid_rate_message():
    with pytest.raises(ConfigError) as error:
        MissingVectors(1.5, seed=0)
    assert str(error.value) == "dataset.missing_rate must be in [0, 1], got 1.5"


def test_repr():
    assert repr(MissingVectors(0.5, seed=2)) == "MissingVectors(rate=0.5, seed=2)"
