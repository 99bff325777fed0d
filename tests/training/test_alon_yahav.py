"""TREES under Alon & Yahav's protocol (tech-srl/bottleneck): configs, block, schedule, stopping.

Their ``GraphModel`` is summed key and value embeddings, then per layer ``x ← LN(x + conv(x))``
with no activation; GAT has 4 concatenated heads, GIN's MLP has BatchNorm. Adam at 1e-3 with
``ReduceLROnPlateau(mode="max", threshold_mode="abs", factor=0.5, patience=10)`` on training
accuracy, evaluation every 100 passes, stop after 20 evaluations without a rise > 1e-4 or at 1.
"""

import pytest
import torch
import torch.nn.functional as F
from omegaconf import OmegaConf
from small_models import small_graph

from lipnorm_exp.config import build_model, validate
from lipnorm_exp.data import load_task
from lipnorm_exp.training.launch import run
from lipnorm_exp.training.state import EarlyStopping, make_scheduler


@pytest.mark.parametrize(
    ("depth", "trees", "batch", "passes"),
    [(2, 96, 64, 1000), (3, 8000, 64, 100), (4, 16000, 1024, 100), (9, 32000, 2048, 100)],
)
def test_trees_defaults_to_their_protocol_with_their_sizes_per_depth(
    make_cfg, depth, trees, batch, passes
):
    cfg = make_cfg("dataset=trees", f"dataset.depth={depth}", "model=gat", "norm=none")
    validate(cfg)
    assert cfg.protocol.name == "alon_yahav"
    dataset = cfg.dataset
    assert (dataset.num_trees, dataset.batch_size, dataset.passes_per_epoch) == (
        trees,
        batch,
        passes,
    )
    model, train = cfg.model, cfg.train
    assert (model.depth, model.hidden, model.heads, model.dropout) == (depth + 1, 32, 4, 0.0)
    assert (model.residual, model.post_layernorm, model.activation) == (True, True, "none")
    assert (train.lr, train.weight_decay, train.scheduler) == (0.001, 0.0, "plateau")
    assert (train.scheduler_metric, train.scheduler_factor, train.scheduler_patience) == (
        "train_acc",
        0.5,
        10,
    )
    assert (train.patience, train.patience_metric) == (20, "train_acc")


def test_standard_protocol_keeps_the_earlier_trees_setting(make_cfg):
    cfg = make_cfg("dataset=trees", "model=gat", "norm=none", "protocol=standard")
    assert (cfg.dataset.num_trees, cfg.dataset.batch_size, cfg.dataset.passes_per_epoch) == (
        5000,
        64,
        1,
    )
    assert (cfg.model.heads, cfg.model.activation, cfg.model.post_layernorm) == (8, "elu", False)
    assert make_cfg("model=gin", "norm=none").model.batch_norm is False


def test_their_gin_mlp_has_batch_norm(make_cfg):
    cfg = make_cfg("dataset=trees", "model=gin", "norm=none")
    model = build_model(cfg.model, cfg.norm, 8, 4)
    layers = [type(layer) for layer in model.convs[0].nn]
    assert layers == [torch.nn.Linear, torch.nn.BatchNorm1d, torch.nn.ReLU] * 2


@pytest.mark.parametrize(
    "model, block",
    [
        ("gat", (True, True, "none")),
        ("gcn", (True, True, "relu")),
        ("gin", (True, True, "relu")),
        ("ggnn", (False, False, "none")),
        ("gatv2", (True, True, "none")),
    ],
)
def test_each_model_gets_the_block_of_their_run_script(make_cfg, model, block):
    cfg = make_cfg("dataset=trees", f"model={model}", "norm=none")
    assert (cfg.model.residual, cfg.model.post_layernorm, cfg.model.activation) == block
    overridden = make_cfg("dataset=trees", f"model={model}", "norm=none", "model.activation=elu")
    assert overridden.model.activation == "elu"


def by_hand(make_cfg, model_name, block):
    """A 2-layer TREES model of ``model_name`` and its output computed by ``block``."""
    cfg = make_cfg("dataset=trees", f"model={model_name}", "norm=none", "model.depth=2")
    torch.manual_seed(0)
    model = build_model(cfg.model, cfg.norm, 5, 3).eval()
    x, edge_index, _ = small_graph()
    h = model.input(x)
    for index, conv in enumerate(model.convs):
        h = block(model, index, h, conv(h, edge_index))
    return model(x, edge_index), model.output(h)


def test_their_block_is_layernorm_of_the_residual_sum_with_the_activation_inside(make_cfg):
    def block(model, index, h, out):
        norm = model.post_norms[index]
        return F.layer_norm(h + F.relu(out), (32,), norm.weight, norm.bias)

    ours, expected = by_hand(make_cfg, "gcn", block)
    assert torch.allclose(ours, expected, atol=1e-6)


def test_their_ggnn_is_plain_gated_steps(make_cfg):
    ours, expected = by_hand(make_cfg, "ggnn", lambda model, index, h, out: out)
    assert torch.allclose(ours, expected, atol=1e-6)


def test_training_accuracy_plateau_cuts_the_lr_like_torch_in_max_mode():
    train = OmegaConf.create(
        {"scheduler": "plateau", "scheduler_metric": "train_acc", "scheduler_factor": 0.5,
         "scheduler_patience": 1}
    )  # fmt: skip
    probe = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = make_scheduler(probe, train)
    lrs = []
    for accuracy in (0.5, 0.6, 0.60005, 0.6, 0.7, 0.7, 0.7):  # a rise of 5e-5 is no rise
        scheduler.step(accuracy)
        lrs.append(probe.param_groups[0]["lr"])
    assert lrs == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25]


def test_early_stopping_on_training_accuracy():
    stopping = EarlyStopping(OmegaConf.create({"patience": 2, "patience_metric": "train_acc"}))
    values = [0.5, 0.6, 0.60005, 0.6]  # the last two are no rise (threshold 1e-4)
    stops = [stopping.stop({"epoch": i + 1, "train_acc": v}) for i, v in enumerate(values)]
    assert stops == [False, False, False, True]
    fitted = EarlyStopping(OmegaConf.create({"patience": 20, "patience_metric": "train_acc"}))
    assert fitted.stop({"epoch": 1, "train_acc": 1.0})
    never = EarlyStopping(OmegaConf.create({"patience": 0, "patience_metric": "train_acc"}))
    assert not never.stop({"epoch": 1, "train_acc": 1.0})


def test_a_run_that_fits_every_tree_stops_there(make_cfg):
    cfg = make_cfg(
        "dataset=trees", "dataset.depth=1", "model=gcn", "norm=none",
        "dataset.passes_per_epoch=20", "train.epochs=50", "train.lr=0.01",
    )  # fmt: skip
    history = run(cfg)[0]["history"]
    assert history[-1]["train_acc"] == 1.0
    assert all(row["train_acc"] < 1.0 for row in history[:-1])
    assert len(history) < 50


def test_an_epoch_is_passes_per_epoch_passes_over_the_training_trees(make_cfg):
    cfg = make_cfg("dataset=trees", "dataset.depth=2", "dataset.passes_per_epoch=3")
    task = load_task(cfg.dataset, cfg.paths, seed=0)
    batches = list(task.train_batches)
    assert len(batches) == len(task.train_batches) == 3 * 2  # 77 training trees, 64 per batch
    roots = torch.cat([batch.y[batch.train_mask] for batch in batches])
    assert roots.numel() == 3 * 77


@pytest.mark.parametrize("norm", ["none", "lip"])
def test_every_leaf_reaches_the_root_through_attention_and_no_sooner(make_cfg, norm):
    """With d layers the root reads every leaf (edges point to the parent); with d - 1 none."""
    depth = 3
    cfg = make_cfg(
        "dataset=trees",
        f"dataset.depth={depth}",
        "dataset.num_trees=4",
        "model=gat",
        f"norm={norm}",
    )
    task = load_task(cfg.dataset, cfg.paths, seed=0)
    tree = next(iter(task.eval_batches))
    size = 2 ** (depth + 1) - 1
    x = tree.x.to_dense()[:size].requires_grad_()
    edge_index = tree.edge_index[:, (tree.edge_index < size).all(dim=0)]
    leaves = slice(2**depth - 1, size)
    for layers, reaches in ((depth, True), (depth - 1, False)):
        torch.manual_seed(0)
        model_cfg = OmegaConf.merge(cfg.model, {"depth": layers})
        model = build_model(model_cfg, cfg.norm, task.num_features, task.num_outputs)
        (grad,) = torch.autograd.grad(model(x, edge_index)[0].sum(), x)
        assert bool((grad[leaves].abs().sum(dim=1) > 0).all()) is reaches, layers
