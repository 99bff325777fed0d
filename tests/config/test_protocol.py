"""Protocols: ``protocol=published`` is the authors' scripts' setup, ``standard`` the defaults.

The published protocol is checked key by key against gdasoulas/LipschitzNorm's
``train_deepgat_missing.py`` / ``models/deepgat.py`` (and ``models/deepgt.py`` for GT), and
its model against a forward pass written out by hand. Presets run it at ``scale=paper``.
"""

import pytest
import torch
import torch.nn.functional as F
from conftest import CONFIGS
from omegaconf import OmegaConf
from small_models import small_graph

from lipnorm_exp.config import build_model, validate
from lipnorm_exp.records import run_id
from lipnorm_exp.training.launch import run
from lipnorm_exp.training.state import make_scheduler


def test_standard_protocol_is_the_groups_defaults(make_cfg):
    cfg = make_cfg()
    assert cfg.protocol.name == "standard"
    assert cfg.dataset.normalize_features is True
    assert (cfg.model.hidden, cfg.model.heads, cfg.model.head_channels) == (64, 8, None)
    assert (cfg.model.attn_dropout, cfg.model.input_width, cfg.model.last_activation) == (
        0.0,
        None,
        True,
    )
    assert cfg.train.scheduler == "none"


def test_published_protocol_sets_the_authors_setup(make_cfg):
    cfg = make_cfg("protocol=published")
    validate(cfg)
    assert cfg.protocol.name == "published"
    assert cfg.dataset.normalize_features is False
    model = cfg.model
    assert (model.heads, model.head_channels, model.input_width) == (4, 64, 64)
    assert (model.dropout, model.attn_dropout, model.last_activation) == (0.6, 0.3, False)
    assert (cfg.train.lr, cfg.train.weight_decay) == (0.005, 5e-4)
    published = OmegaConf.load(CONFIGS / "protocol" / "published.yaml")
    assert published.train.epochs == 1000  # the test fixture itself sets 2 epochs
    assert cfg.train.scheduler == "none"


def test_published_protocol_follows_deepgt_for_gt_and_lets_the_command_line_win(make_cfg):
    assert make_cfg("protocol=published", "model=gt").model.dropout == 0.5
    cfg = make_cfg("protocol=published", "model.head_channels=16", "model.heads=8")
    assert (cfg.model.input_width, cfg.model.heads) == (16, 8)
    assert run_id(cfg) != run_id(make_cfg("protocol=published"))


def test_protocol_name_defines_a_run(make_cfg):
    assert run_id(make_cfg()) != run_id(make_cfg("protocol=published"))


def test_published_gat_is_the_authors_deepgat_by_hand(make_cfg):
    """Input Linear to one head's width, layer 1 widens to heads × 64, no ELU at the end."""
    cfg = make_cfg("protocol=published", "model.depth=3", "norm=none")
    model = build_model(cfg.model, cfg.norm, 5, 3).eval()
    assert model.input.out_features == 64
    assert [conv.in_channels for conv in model.convs] == [64, 256, 256]
    assert all(conv.heads == 4 and conv.out_channels == 64 for conv in model.convs)
    assert all(conv.dropout == 0.3 for conv in model.convs)
    x, edge_index, _ = small_graph()
    h = model.input(x)
    for index, conv in enumerate(model.convs):
        h = conv(h, edge_index)
        h = F.elu(h) if index < 2 else h
    torch.testing.assert_close(model(x, edge_index), model.output(h))


def test_last_activation_is_the_only_difference(make_cfg):
    x, edge_index, _ = small_graph()
    cfg = make_cfg("model.depth=2", "norm=none", "model.dropout=0")
    torch.manual_seed(0)
    with_elu = build_model(cfg.model, cfg.norm, 5, 3).eval()
    cfg.model.last_activation = False
    torch.manual_seed(0)
    without = build_model(cfg.model, cfg.norm, 5, 3).eval()
    h = with_elu.convs[1](F.elu(with_elu.convs[0](with_elu.input(x), edge_index)), edge_index)
    torch.testing.assert_close(with_elu(x, edge_index), with_elu.output(F.elu(h)))
    torch.testing.assert_close(without(x, edge_index), with_elu.output(h))


def test_residual_around_a_widening_first_layer_is_projected(make_cfg):
    cfg = make_cfg("protocol=published", "model.depth=2", "model.residual=true", "norm=none")
    model = build_model(cfg.model, cfg.norm, 5, 3).eval()
    assert model.input_residual.in_features == 64 and model.input_residual.out_features == 256
    x, edge_index, _ = small_graph()
    h0 = model.input(x)
    h1 = F.elu(model.convs[0](h0, edge_index) + model.input_residual(h0))
    h2 = model.convs[1](h1, edge_index) + h1
    torch.testing.assert_close(model(x, edge_index), model.output(h2))


def test_head_channels_fix_the_width_of_every_attention_model(make_cfg):
    for name in ("gat", "gatv2", "gt"):
        cfg = make_cfg(f"model={name}", "model.head_channels=3", "model.heads=2")
        model = build_model(cfg.model, cfg.norm, 5, 3)
        assert model.output.in_features == 6, name
        mean = make_cfg(f"model={name}", "model.head_channels=3", "model.concat=false")
        assert build_model(mean.model, mean.norm, 5, 3).output.in_features == 3, name


def test_narrower_input_trains_for_every_model(make_cfg):
    x, edge_index, y = small_graph()
    for name in ("gcn", "ggnn", "gin", "gat", "gt", "gatv2"):
        norm = "lip" if name in ("gat", "gt", "gatv2") else "none"
        cfg = make_cfg(f"model={name}", f"norm={norm}", "model.depth=2", "model.input_width=4")
        validate(cfg)
        model = build_model(cfg.model, cfg.norm, 5, 3)
        loss = F.cross_entropy(model(x, edge_index), y)
        loss.backward()
        assert torch.isfinite(loss) and model.input.out_features == 4, name


def test_plateau_schedule_follows_torch_on_the_recorded_validation_losses(make_cfg, tmp_path):
    cfg = make_cfg(
        "model.depth=1",
        "model.hidden=8",
        "train.epochs=12",
        "train.lr=0.5",
        "train.scheduler=plateau",
        "train.scheduler_patience=0",
        "train.scheduler_factor=0.5",
    )
    history = run(cfg)[0]["history"]
    lrs = [row["lr"] for row in history]
    assert lrs[0] == 0.5 and min(lrs) < 0.5
    probe = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.5)
    scheduler = make_scheduler(probe, OmegaConf.create(cfg.train))
    expected = []
    for row in history:
        expected.append(probe.param_groups[0]["lr"])
        scheduler.step(row["val_loss"])
    assert lrs == expected


def test_authors_protocol_is_the_published_setup_with_their_evaluation_rule(make_cfg):
    """The scripts' ``ReduceLROnPlateau(optimizer)`` (PyTorch's defaults) on the validation loss,
    no early stopping, the final epoch reported, ``np.std``; the rest as ``published``."""
    authors, published = make_cfg("protocol=authors"), make_cfg("protocol=published")
    validate(authors)
    assert (authors.protocol.name, authors.protocol.reported_epoch) == ("authors", "final")
    assert authors.protocol.std_ddof == 0
    torch_defaults = torch.optim.lr_scheduler.ReduceLROnPlateau(
        torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    )
    train = authors.train
    assert (train.scheduler, train.scheduler_metric) == ("plateau", "val_loss")
    assert (train.scheduler_factor, train.scheduler_patience) == (
        torch_defaults.factor,
        torch_defaults.patience,
    )
    assert train.patience == 0
    for group in ("model", "dataset"):
        assert authors[group] == published[group]
    differ = {key for key in published.train if authors.train[key] != published.train[key]}
    assert differ == {"scheduler"}  # published trains without early stopping too


def test_reporting_keys_at_their_first_values_leave_run_ids_as_they_were(make_cfg):
    """``protocol.reported_epoch`` and ``protocol.std_ddof`` came after records were made: at
    ``best_val`` and 1 they are left out of a run's hash; another value names another run."""
    cfg = make_cfg("protocol=published")
    before = OmegaConf.to_container(cfg, resolve=True)
    del before["protocol"]["reported_epoch"], before["protocol"]["std_ddof"]
    assert run_id(cfg) == run_id(before)
    assert run_id(make_cfg("protocol=published", "protocol.reported_epoch=final")) != run_id(cfg)


def test_a_reported_epoch_out_of_its_values_is_refused(make_cfg):
    with pytest.raises(
        ValueError, match="protocol.reported_epoch must be best_val or final, got last"
    ):
        validate(make_cfg("protocol.reported_epoch=last"))
