"""Gradient tracking, the Fig. 2 heat map from trainer records, and the Lipschitz estimate."""

import json
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from omegaconf import OmegaConf
from small_models import make
from torch.autograd.functional import jacobian
from torch_geometric.data import Data

from lipnorm_exp.data.task import Task
from lipnorm_exp.nn import GATLayer
from lipnorm_exp.records.heatmap import draw_gradient_heatmap
from lipnorm_exp.report.aggregate import preset_runs, usable_runs
from lipnorm_exp.report.figures import fig2_gradients
from lipnorm_exp.report.frame import load_records
from lipnorm_exp.training.alone import Alone
from lipnorm_exp.training.epoch import train_epoch
from lipnorm_exp.training.launch import run
from lipnorm_exp.training.lipschitz_estimate import layer_lipschitz, spectral_norm
from lipnorm_exp.training.state import NullTracker, RunState, make_optimizer

CPU = torch.device("cpu")
#: the attention parameters of each model's graph layer, written out independently
ATTENTION = {
    "gat": ("att_src", "att_dst"),
    "gatv2": ("att",),
    "gt": ("lin_query.weight", "lin_query.bias", "lin_key.weight", "lin_key.bias"),
    "gcn": (),
}
CASES = [(m, n) for m in ("gat", "gatv2", "gt") for n in ("lip", "none")] + [("gcn", "none")]


def graph(seed: int, nodes: int = 12, features: int = 5, classes: int = 3) -> Data:
    """A random directed graph with node features, labels and a half-and-half split."""
    g = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, nodes, (2, 3 * nodes), generator=g)
    data = Data(
        x=torch.randn(nodes, features, generator=g),
        edge_index=edge_index[:, edge_index[0] != edge_index[1]],
        y=torch.randint(0, classes, (nodes,), generator=g),
    )
    data.train_mask = torch.arange(nodes) % 2 == 0
    data.val_mask = data.test_mask = ~data.train_mask
    return data


def tiny_model(name: str, norm: str, depth: int = 3):
    return make(name, norm, depth)


def hand_norms(model, parameter_names) -> torch.Tensor:
    """Per layer [‖grad of the named parameters‖, ‖grad of all the layer's parameters‖]."""
    rows = []
    for conv in model.convs:
        named = dict(conv.named_parameters())
        attention = [named[name].grad.flatten() for name in parameter_names]
        every = [p.grad.flatten() for p in named.values() if p.grad is not None]
        rows.append([torch.cat(attention).norm() if attention else 0.0, torch.cat(every).norm()])
    return torch.tensor(rows)


@pytest.mark.parametrize("name, norm", CASES)
def test_tracked_norms_are_the_step_mean_of_direct_gradient_norms(name, norm):
    """Two training batches: the epoch's value is the mean of the two steps' norms, each
    computed here from the parameters' ``.grad`` by name."""
    batches = [graph(1), graph(2)]
    task = Task(name="tiny", train_batches=batches, eval_batches=batches, num_features=5,
                num_outputs=3)  # fmt: skip
    torch.manual_seed(0)
    tracked = tiny_model(name, norm)
    by_hand = tiny_model(name, norm)
    by_hand.load_state_dict(tracked.state_dict())

    _, got = train_epoch(tracked, torch.optim.Adam(tracked.parameters(), lr=0.01), task, CPU, True)

    optimizer, steps = torch.optim.Adam(by_hand.parameters(), lr=0.01), []
    for batch in batches:
        optimizer.zero_grad()
        out = by_hand(batch.x, batch.edge_index)
        F.cross_entropy(out[batch.train_mask], batch.y[batch.train_mask]).backward()
        steps.append(hand_norms(by_hand, ATTENTION[name]))
        optimizer.step()
    want = torch.stack(steps).mean(dim=0)

    assert got.shape == (3, 2)
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-8)
    assert not torch.allclose(steps[0], steps[1])  # the mean is over two different steps
    if name == "gcn":  # no attention parameters: the attention column is all zeros
        assert torch.equal(got[:, 0], torch.zeros(3)) and (got[:, 1] > 0).all()
    else:
        assert (got[:, 0] > 0).all() and (got[:, 1] > got[:, 0]).all()


def test_untracked_epochs_return_no_norms():
    task = Task.full_batch("tiny", graph(1), 3)
    model = tiny_model("gat", "lip")
    _, norms = train_epoch(model, torch.optim.Adam(model.parameters()), task, CPU, False)
    assert norms is None


@pytest.mark.parametrize("name, norm", CASES)
def test_history_has_one_value_per_layer_and_epoch(name, norm):
    torch.manual_seed(0)
    train = OmegaConf.create(
        {"epochs": 3, "lr": 0.01, "weight_decay": 5e-4, "conv_weight_decay": None, "patience": 0,
         "progress": False, "track_gradients": True, "estimate_lipschitz": False,
         "lipschitz_every": 1, "scheduler": "none", "patience_metric": "val_acc"}
    )  # fmt: skip
    model = tiny_model(name, norm, depth=4)
    state = RunState(make_optimizer(model, train), train, NullTracker())
    run_alone = SimpleNamespace(model=model, task=Task.full_batch("tiny", graph(3), 3), state=state)
    for epoch in (1, 2, 3):
        [outcome] = Alone(CPU).epoch([run_alone])
        state.end_epoch(epoch, outcome.loss, outcome.metrics, outcome.grads)
    history = state.history
    assert [row["epoch"] for row in history] == [1, 2, 3]
    for row in history:
        assert len(row["grad_attn"]) == len(row["grad_layer"]) == 4
        assert all(np.isfinite(row["grad_attn"])) and all(np.isfinite(row["grad_layer"]))
        assert (np.array(row["grad_attn"]) == 0).all() == (name == "gcn")
        assert "lipschitz" not in row


def test_fig2_heatmaps_from_trainer_records(make_cfg, tmp_path):
    """Real 20-layer GAT and GAT-Lip records on Cora → Fig. 2's two panels hold their norms."""
    records = {}
    for norm in ("none", "lip"):
        cfg = make_cfg("model.depth=20", "model.hidden=8", "model.heads=1", "model.dropout=0.0",
                       f"norm={norm}", "train.epochs=3", "train.track_gradients=true",
                       "tags=[gradients]")  # fmt: skip
        [records[norm]] = run(cfg)
    usable = usable_runs(load_records(tmp_path / "runs"), "quick", "standard")
    fig = fig2_gradients(*preset_runs(usable, "gradients", "quick", "standard")).figure
    panels = {ax.get_title().split(",")[0]: ax for ax in fig.axes if ax.images}
    assert set(panels) == {"GAT", "GAT-Lip"}
    for label, norm in (("GAT", "none"), ("GAT-Lip", "lip")):
        image = panels[label].images[0]
        want = np.array([row["grad_attn"] for row in records[norm]["history"]]).T
        assert type(image.norm).__name__ == "LogNorm"
        assert image.get_array().shape == (20, 3)
        assert np.allclose(image.get_array(), want)

    history = json.loads(next((tmp_path / "runs").rglob("*.json")).read_text())["history"]
    fig.clear()
    one = draw_gradient_heatmap(fig.add_subplot(), history)  # own colour scale by default
    values = np.array([row["grad_attn"] for row in history])
    assert one.norm.vmin == pytest.approx(values.min()) and one.norm.vmax == pytest.approx(
        values.max()
    )


# ---- empirical Lipschitz estimate ------------------------------------------------------------


def exact_spectral_norm(fn, x) -> float:
    out = fn(x)
    matrix = jacobian(fn, x).reshape(out.numel(), x.numel())
    return torch.linalg.matrix_norm(matrix, ord=2).item()


@pytest.mark.parametrize("norm", ["lip", "none"])
def test_spectral_norm_matches_the_exact_jacobian_of_a_tiny_gat_layer(norm):
    torch.manual_seed(0)
    layer = GATLayer(4, 3, heads=2, norm=norm).double()
    data = graph(4, nodes=6, features=4)
    x = 3 * data.x.double()
    fn = lambda h: layer(h, data.edge_index)  # noqa: E731
    exact = exact_spectral_norm(fn, x)
    assert spectral_norm(fn, x, iterations=300) == pytest.approx(exact, rel=1e-6)
    few = spectral_norm(fn, x, iterations=2)
    assert 0.5 * exact < few <= exact * (1 + 1e-9)  # power iteration approaches from below


@pytest.mark.parametrize("name", ["gat", "gt", "gcn"])
def test_layer_lipschitz_is_each_layers_jacobian_norm_at_its_input(name):
    torch.manual_seed(0)
    model = tiny_model(name, "lip" if name != "gcn" else "none").double().train()
    data = graph(5)
    data.x = data.x.double()
    rng = torch.get_rng_state()
    got = layer_lipschitz(model, data, iterations=100)
    assert torch.equal(torch.get_rng_state(), rng) and model.training
    model.eval()
    h, want = model.input(data.x), []
    for conv, norm in zip(model.convs, model.norms, strict=True):
        want.append(exact_spectral_norm(lambda z, conv=conv: conv(z, data.edge_index), h))
        h = F.elu(norm(conv(h, data.edge_index), None))
    assert got == pytest.approx(want, rel=1e-5)


def test_training_records_estimates_at_epoch_1_and_every_nth_without_changing_training(make_cfg):
    small = ("model.depth=2", "model.hidden=8", "model.heads=2", "train.epochs=4")
    [with_estimate] = run(
        make_cfg(*small, "train.estimate_lipschitz=true", "train.lipschitz_every=2")
    )
    [plain] = run(make_cfg(*small))
    estimated = {row["epoch"]: row.get("lipschitz") for row in with_estimate["history"]}
    assert [epoch for epoch, value in estimated.items() if value] == [1, 2, 4]
    assert all(len(estimated[e]) == 2 and min(estimated[e]) > 0 for e in (1, 2, 4))
    losses = [[row["train_loss"] for row in r["history"]] for r in (with_estimate, plain)]
    assert losses[0] == losses[1]  # dropout draws are untouched by the estimate
