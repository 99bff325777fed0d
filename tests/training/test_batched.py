"""Seeds trained together (``seed=[...]``): each run equals the same run trained alone."""

import pytest
import torch
import torch.nn.functional as F
from cli_helpers import cli, command, records
from torch.func import vmap

from lipnorm_exp.config.resolvers import seed_groups
from lipnorm_exp.nn.copy_dropout import RandomStream, copy_streams, dropout
from lipnorm_exp.records import schema
from lipnorm_exp.records.schema import BATCHED
from lipnorm_exp.sweeps.progress import runs_of_job
from lipnorm_exp.training.launch import launch_records, run
from lipnorm_exp.util.errors import ConfigError

BATCHED_KEY = BATCHED

SMALL = ("model.depth=2", "model.hidden=16", "train.epochs=3")
#: what is compared between a run trained alone and in a batch: every epoch's numbers
COMPARED = ("train_step_loss", "train_loss", "val_loss", "val_acc", "test_acc")


def assert_same_history(together: dict, alone: dict) -> None:
    assert together["run_id"] == alone["run_id"]
    assert len(together["history"]) == len(alone["history"])
    for mine, theirs in zip(together["history"], alone["history"], strict=True):
        for key in COMPARED:
            assert mine[key] == pytest.approx(theirs[key], abs=2e-5), (mine["epoch"], key)


@pytest.mark.parametrize(
    "overrides",
    [
        ("model=gat", "norm=lip", "model.dropout=0.5"),  # feature and attention dropout
        ("model=gt", "norm=lip", "model.dropout=0.5", "dataset.missing_rate=0.5"),
        ("model=gin", "norm=none", "model.batch_norm=true"),  # BatchNorm's running statistics
        ("model=gcn", "norm=pairnorm", "train.scheduler=plateau", "train.scheduler_patience=0"),
    ],
    ids=["gat-lip", "gt-lip-missing", "gin-batchnorm", "gcn-pairnorm-plateau"],
)
def test_runs_trained_together_equal_runs_trained_alone(make_cfg, overrides):
    together = run(make_cfg(*SMALL, *overrides, "seed=[0,1,2]"))
    alone = [
        run(make_cfg(*SMALL, *overrides, f"seed={seed}", "force=true"))[0] for seed in range(3)
    ]
    for mine, theirs, seed in zip(together, alone, range(3), strict=True):
        assert mine["config"]["seed"] == seed
        assert mine[BATCHED_KEY] == {"seeds": [0, 1, 2]}
        assert BATCHED_KEY not in theirs
        assert_same_history(mine, theirs)
    assert (
        together[0]["history"][0]["train_step_loss"] != together[1]["history"][0]["train_step_loss"]
    )


def test_each_run_stops_on_its_own_plateau(make_cfg):
    stopping = ("train.epochs=60", "train.patience=3", "train.lr=0.05", "model.dropout=0.6")
    together = run(make_cfg(*SMALL, *stopping, "seed=[0,1,2,3]"))
    alone = [run(make_cfg(*SMALL, *stopping, f"seed={seed}", "force=true"))[0] for seed in range(4)]
    for mine, theirs in zip(together, alone, strict=True):
        assert_same_history(mine, theirs)
    assert len({record["summary"][schema.EPOCHS_RUN] for record in together}) > 1


def test_a_diverging_copy_leaves_the_others_as_they_are(make_cfg, monkeypatch):
    """Copy 1's output weight is made infinite: it diverges, copy 0 trains as alone."""
    import lipnorm_exp.training.member as member

    real = member.build_model

    def broken_second(model, norm, *sizes):
        built = real(model, norm, *sizes)
        if torch.initial_seed() == 1:
            with torch.no_grad():
                built.output.weight.fill_(float("inf"))
        return built

    monkeypatch.setattr(member, "build_model", broken_second)
    first, second = run(make_cfg(*SMALL, "seed=[0,1]"))
    [alone] = run(make_cfg(*SMALL, "seed=0", "force=true"))
    assert second["status"] == "diverged"
    assert second["summary"][schema.DIVERGED_AT_EPOCH] == 1
    assert first["status"] == "completed"
    assert_same_history(first, alone)


def test_finished_seeds_are_skipped(make_cfg):
    [alone] = run(make_cfg(*SMALL, "seed=1"))
    (first, trained), (second, reused) = launch_records(make_cfg(*SMALL, "seed=[0,1]"))
    assert reused and not trained and second["run_id"] == alone["run_id"]
    assert BATCHED_KEY not in second
    assert first[BATCHED_KEY] == {"seeds": [0]}  # trained with the seeds that were left


def test_mini_batch_tasks_are_refused(make_cfg):
    cfg = make_cfg("dataset=trees", "dataset.depth=2", "dataset.num_trees=64", "seed=[0,1]")
    with pytest.raises(ConfigError, match=r"dataset.name=trees trains in batches"):
        run(cfg)


@pytest.mark.parametrize("seeds", ["[]", "[0,0]"])
def test_seed_lists_must_hold_distinct_seeds(make_cfg, seeds):
    with pytest.raises(ConfigError, match=r"list of distinct seeds"):
        run(make_cfg(f"seed={seeds}"))


def test_copy_dropout_draws_each_copys_masks_from_its_own_stream():
    """Under vmap, copy k's mask is the one ``F.dropout`` draws after ``manual_seed(k)``."""
    x = torch.randn(3, 50, 8)
    streams = []
    for seed in range(3):
        torch.manual_seed(seed)
        streams.append(RandomStream(torch.device("cpu")))
    with copy_streams(streams):
        together = vmap(lambda each: dropout(each, 0.5, True), randomness="same")(x)
        twice = vmap(lambda each: dropout(each, 0.5, True), randomness="same")(x)
    for seed in range(3):
        torch.manual_seed(seed)
        first = F.dropout(x[seed], 0.5, True)
        second = F.dropout(x[seed], 0.5, True)
        assert torch.equal(together[seed], first)
        assert torch.equal(twice[seed], second)  # each stream moves on as the run's would
    assert not torch.equal(together[0] == 0, together[1] == 0)
    assert torch.equal(dropout(x, 0.5, False), x)


def test_seed_groups_cut_a_presets_seed_axis():
    assert seed_groups("range(5)", 1) == "range(5)"
    assert seed_groups("range(5)", 2) == "[0,1],[2,3],[4]"
    assert seed_groups("0,1,2", 3) == "[0,1,2]"
    assert seed_groups(7, 4) == "[7]"
    with pytest.raises(ConfigError, match="seeds_per_job must be an integer >= 1, got 0"):
        seed_groups("range(5)", 0)
    assert runs_of_job(["model=gat", "seed=[0,1,2]"]) == 3
    assert runs_of_job(["model=gat", "seed=4"]) == 1


def test_cli_trains_a_seed_list_together(tmp_path, data_dir):
    out = cli(command(tmp_path, data_dir, "model.depth=1", "train.epochs=2", "seed=[3,4]"))
    assert out.returncode == 0, out.stderr
    made = records(tmp_path)
    assert sorted(r["config"]["seed"] for r in made.values()) == [3, 4]
    assert all(r[BATCHED_KEY] == {"seeds": [3, 4]} for r in made.values())
