"""The report: records → each preset's tables and figures, with the runs behind every number."""

import errno
import io
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import CONFIGS
from matplotlib.figure import Figure
from matplotlib.image import imread
from omegaconf import OmegaConf

from lipnorm_exp.config import build_model
from lipnorm_exp.models import MODELS
from lipnorm_exp.records import RERUN_SUFFIX, run_id, schema
from lipnorm_exp.records.heatmap import BLANK_CELLS
from lipnorm_exp.records.labels import model_label
from lipnorm_exp.report import aggregate, grids, published_numbers, verdicts
from lipnorm_exp.report.aggregate import (
    MISSING,
    HyperSetting,
    hyper_settings,
    preset_runs,
    report_groups,
    select,
    usable_runs,
)
from lipnorm_exp.report.command import main
from lipnorm_exp.report.figures import APART_OFFSET
from lipnorm_exp.report.frame import load_records, record_row, records_frame
from lipnorm_exp.report.grids import paper_budget, preset_grid
from lipnorm_exp.report.paper_presets import PRESETS, owned_figures, owned_tables
from lipnorm_exp.report.table_files import csv_text, latex
from lipnorm_exp.report.tables import build_table, compact
from lipnorm_exp.report.trees import batch_sizes_text, departures, notes, trees_table
from lipnorm_exp.report.used_runs import provenance_line
from lipnorm_exp.util.atomic import temp_path

TABLE1, TABLE2, TABLE3 = (spec for preset in PRESETS for spec in preset.paper_tables)
DRAW = {spec.name: spec.draw for _, spec in owned_figures()}
#: the paper's budget of Table 1's preset (its YAML's ``grid.paper``)
BUDGET = paper_budget("missing_vector")
ATTENTION = ("gat", "gt", "gatv2")
MODEL_DEFAULTS = {
    "gcn": {"hidden": 64, "dropout": 0.5},
    "gcnii": {"alpha": 0.1, "theta": 0.5},
    "gin": {"train_eps": False, "batch_norm": True},
    "gt": {"beta": True},
}


def make_record(
    *,
    tags=("missing_vector",),
    seed=0,
    scale="paper",
    protocol="standard",
    dataset="cora",
    missing_rate=0.0,
    model="gat",
    depth=2,
    norm="none",
    residual=False,
    lr=0.005,
    dropout=0.6,
    epochs=10,
    heads=8,
    val=0.5,
    test=0.5,
    train=1.0,
    status="completed",
    tree_depth=None,
    history=None,
    ablation=None,
    machine=None,
):
    """A record in the trainer's format (``val=None``: a run without a best epoch)."""
    norm_cfg = {"name": norm}
    if norm == "lip":
        norm_cfg.update(alpha=1.0, eps=1e-12, variant="paper")
    dataset_cfg = {"name": dataset, "missing_rate": missing_rate, "download": True}
    dataset_cfg["normalize_features"] = protocol != "published"  # as the protocols compose
    model_cfg = {"name": model, "depth": depth, "hidden": 64, "dropout": dropout}
    model_cfg.update(activation="elu", input_width=None, last_activation=True, post_layernorm=False)
    model_cfg.update(MODEL_DEFAULTS.get(model, {}), residual=residual)
    if model in ATTENTION:
        model_cfg.update(heads=heads, concat=True, attn_dropout=0.0, head_channels=None)
    if tree_depth is not None:
        dataset_cfg = {"name": dataset, "depth": tree_depth, "num_trees": 100, "download": False}
        model_cfg.update(hidden=32, dropout=0.0)
    config = {
        "seed": seed,
        "scale": scale,
        "force": False,
        "tags": list(tags),
        "protocol": {"name": protocol},
        "dataset": dataset_cfg,
        "model": model_cfg,
        "norm": norm_cfg,
        "train": {
            "epochs": epochs,
            "lr": lr,
            "weight_decay": 5e-4,
            "patience": 0,
            "track_gradients": history is not None,
            "progress": False,
        },
        "paths": {"results_dir": f"runs/{seed}"},
    }
    if ablation is not None:
        config["ablation"] = dict(zip(("name", "factor"), ablation, strict=True))
    history = history or [{"epoch": e, "train_loss": 1.0, "train_acc": 0.5} for e in range(1, 11)]
    if status == "diverged":
        history = history[:6]
    summary = schema.Summary(
        metric="accuracy",
        best_epoch=None if val is None else 5,
        best_val_acc=val,
        test_acc_at_best_val=test,
        train_acc_at_best_val=None if val is None else train,
        best_train_acc=None if val is None else train,
        final_train_acc=train,
        epochs_run=len(history),
        diverged_at_epoch=len(history) + 1 if status == "diverged" else None,
    )
    return schema.Record(
        run_id=run_id(config),
        status=status,
        error={"diverged": "loss is nan", "failed": "boom"}.get(status),
        config=config,
        summary=None if status == "failed" else summary,
        history=history,
        device="cpu",
        finished_at="2024-01-01T00:01:00",
        **({} if machine is None else {schema.MACHINE: machine}),
    )


def write_records(folder: Path, records: list[dict]) -> Path:
    """One JSON file per record, spread over two nested sweep folders."""
    for i, record in enumerate(records):
        path = folder / f"sweep{i % 2}" / str(i % 3) / f"{record['run_id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record))
    return folder


def seeds(values, **kwargs):
    """Records of one setting, seed k getting the k-th (val, test) pair."""
    return [make_record(seed=k, val=v, test=t, **kwargs) for k, (v, t) in enumerate(values)]


def gradient_history(depth, growth, accuracy=0.1):
    return [
        {
            "epoch": e,
            "train_acc": accuracy * e,
            "grad_attn": [growth ** (e + layer / depth) for layer in range(depth)],
            "grad_layer": [1.0] * depth,
        }
        for e in range(1, 6)
    ]


def ids(records):
    return {record["run_id"] for record in records}


# (val, test) per seed
GAT_D2 = [(0.80, 0.81), (0.78, 0.83), (0.79, 0.82)]
GAT_D2_LR = [(0.70, 0.90), (0.72, 0.91), (0.71, 0.92)]  # better test, worse validation
GAT_D5 = [(0.76, 0.70), (0.77, 0.71), (0.75, 0.72)]
LIP_D2 = [(0.75, 0.70), (0.76, 0.71), (0.74, 0.72)]
LIP_D5 = [(0.81, 0.831), (0.82, 0.836), (0.80, 0.826)]
GAT100_D4 = [(0.60, 0.66), (0.62, 0.64), (0.40, 0.35)]  # the last seed diverged
LIP100_D11 = [(0.70, 0.75), (0.71, 0.76)]
CORA100 = {"missing_rate": 1.0}
BOTH_PRESETS = ("missing_vector", "pubmed_depth")
MACHINE = {"device": "cuda:0 NVIDIA H100", "cpus": 16, "processor": "x86_64"}

RECORDS = {
    "gat_d2": seeds(GAT_D2, depth=2),
    "gat_d2_lr": seeds(GAT_D2_LR, depth=2, lr=0.01),
    "gat_d5": seeds(GAT_D5, depth=5),
    "lip_d2": seeds(LIP_D2, depth=2, norm="lip"),
    "lip_d5": seeds(LIP_D5, depth=5, norm="lip", machine=MACHINE),
    "gat100_d4": [
        *seeds(GAT100_D4[:2], depth=4, **CORA100),
        make_record(seed=2, depth=4, val=0.40, test=0.35, status="diverged", **CORA100),
    ],
    "gat100_d10": [
        make_record(seed=k, depth=10, val=None, test=None, status="diverged", **CORA100)
        for k in range(3)
    ],
    "lip100_d11": [
        *seeds(LIP100_D11, depth=11, norm="lip", **CORA100),
        make_record(seed=2, depth=11, norm="lip", status="failed", **CORA100),
    ],
    # beyond the paper grid's depths (1..20): not the preset's, however good
    "lip100_d30": [make_record(depth=30, norm="lip", val=0.99, test=0.99, **CORA100)],
    # another scale
    "quick": [make_record(depth=2, val=0.99, test=0.10, scale="quick")],
    # another protocol
    "published": [make_record(depth=2, heads=4, val=0.6, test=0.61, protocol="published")],
    # a run that two presets share
    "pubmed_gat": [
        make_record(tags=BOTH_PRESETS, dataset="pubmed", depth=d, val=0.5, test=t, **CORA100)
        for d, t in ((2, 0.44), (6, 0.48))
    ],
    "pubmed_lip": [
        make_record(tags=("pubmed_depth",), dataset="pubmed", depth=2, norm="lip", **CORA100)
    ],
    "gradients": [
        make_record(
            tags=("gradients",),
            depth=20,
            norm=norm,
            val=0.3,
            test=0.3,
            history=gradient_history(20, growth),
        )
        for norm, growth in (("none", 10.0), ("lip", 1.01))
    ],
    "trees": [
        record
        for tree_depth in (2, 3)
        for norm in ("none", "lip")
        for record in seeds(
            [(0.5, 0.5)] * 2,
            tags=("trees",),
            dataset="trees",
            depth=tree_depth + 1,
            tree_depth=tree_depth,
            norm=norm,
            train=0.9 / tree_depth,
        )
    ],
    "depth": [
        make_record(tags=("depth",), scale="quick", model=model, depth=d, norm=norm, test=t)
        for model, norm, d, t in (
            ("gat", "none", 2, 0.7),
            ("gat", "none", 10, 0.3),
            ("gt", "lip", 2, 0.72),  # GT-Lip has no record at depth 10
        )
    ],
    # ad-hoc runs: no preset's tag, better scores than any preset run of their cell
    "untagged": [
        make_record(tags=(), depth=3, val=0.99, test=0.99),
        make_record(tags=("by_hand",), depth=2, norm="lip", lr=0.02, val=0.99, test=0.99),
    ],
}
STRAY = make_record(tags=(), depth=2, lr=0.05, val=0.999, test=0.999)


def all_records():
    return [record for records in RECORDS.values() for record in records]


def cell(values, depth=None, diverged=0):
    tests = [100 * t for _, t in values]
    text = f"{statistics.mean(tests):.1f}"
    if len(tests) > 1:
        text += f" ± {statistics.stdev(tests):.1f}"
    if depth is not None:
        text += f" ({depth})"
    return text + (f" †{diverged}" if diverged else "")


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory):
    return write_records(tmp_path_factory.mktemp("records") / "runs", all_records())


@pytest.fixture(scope="module")
def frame(runs_dir):
    return load_records(runs_dir)


@pytest.fixture(scope="module")
def usable(frame):
    return usable_runs(frame, "paper", "standard")


@pytest.fixture(scope="module")
def report_dir(runs_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    assert main(["--runs", str(runs_dir), "--out", str(out)]) == 0
    return out


def of_preset(usable, preset, scale="paper", protocol="standard"):
    return preset_runs(usable, preset, scale, protocol)


def by_model(display):
    return display.set_index("model")


@pytest.mark.parametrize(
    "model, norm, residual, expected",
    [
        ("gat", {"name": "none"}, False, "GAT"),
        ("gat", {"name": "lip", "variant": "paper"}, True, "GAT-Lip-res"),
        ("gat", {"name": "lip", "variant": "published"}, False, "GAT-Lip(pub)"),
        ("gt", {"name": "pairnorm", "scale_individually": True}, False, "GT-PN-SI"),
        ("gatv2", {"name": "pairnorm", "scale_individually": False}, False, "GATv2-PN"),
        ("gcnii", {"name": "layernorm"}, False, "GCNII-LN"),
    ],
)
def test_model_label(model, norm, residual, expected):
    assert model_label({"model": {"name": model, "residual": residual}, "norm": norm}) == expected


def test_a_model_is_labelled_by_its_class_and_an_unknown_name_by_itself(monkeypatch):
    monkeypatch.setattr(MODELS.get("ggnn"), "label", "GatedGNN")
    assert model_label({"model": {"name": "ggnn"}, "norm": {"name": "none"}}) == "GatedGNN"
    assert model_label({"model": {"name": "mine"}, "norm": {"name": "lip"}}) == "mine-Lip"
    assert all(MODELS.get(name).label for name in MODELS)


def test_a_residual_inside_alon_yahavs_block_is_not_marked():
    model = {"name": "gcn", "residual": True, "post_layernorm": True}
    assert model_label({"model": model, "norm": {"name": "pairnorm"}}) == "GCN-PN"


def test_load_records_flattens_and_skips_non_records(tmp_path):
    record = make_record(depth=7, val=0.6, test=0.5, machine=MACHINE)
    write_records(tmp_path, [record, record])  # one run copied into two folders
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    with pytest.warns(UserWarning, match="not a run record"):
        frame = load_records(tmp_path)
    assert len(frame) == 1
    row = frame.iloc[0]
    facts = (row["label"], row["depth"], row["lr"], row[schema.BEST_VAL_ACC])
    assert facts == ("GAT", 7, 0.005, 0.6)
    assert (row["protocol"], row["tags"]) == ("standard", ["missing_vector"])
    assert row["machine"] == "cuda:0 NVIDIA H100, 16 CPUs (x86_64)"
    assert isinstance(row["history"], list) and row["config"] == record["config"]
    assert "seed" not in json.loads(row["setting"])
    older = {key: value for key, value in record.items() if key != "machine"}
    assert record_row(older)["machine"] == "cpu"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"protocol": "../../../x"}, "protocol '../../../x' is not one of alon_yahav, authors,"),
        ({"scale": "../grid"}, "scale '../grid' is not one of quick, paper; left out"),
    ],
)
def test_a_record_naming_a_protocol_or_scale_the_configs_lack_is_left_out(tmp_path, change, said):
    """A record consistent with itself, made by hand or by another checkout, whose grid cannot
    be composed: the report warns, leaves it out and reports the rest."""
    runs = write_records(tmp_path / "runs", [make_record(seed=1), make_record(**change)])
    with pytest.warns(UserWarning, match=re.escape(said)):
        frame = load_records(runs)
    assert frame["seed"].tolist() == [1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["--runs", str(runs), "--out", str(tmp_path / "report")]) == 0


def test_a_run_repeated_with_gradient_tracking_is_another_setting():
    plain = make_record(val=0.8, test=0.8)
    tracked = make_record(val=0.6, test=0.6, history=gradient_history(2, 1.0))
    runs = usable_runs(records_frame([record_row(plain), record_row(tracked)]), "paper", "standard")
    assert runs["setting"].nunique() == 2
    chosen = select(runs)
    assert chosen.n == 1 and chosen.mean == pytest.approx(80.0)


def test_settings_compete_on_their_shared_seeds_and_a_screen_never_outranks_them():
    def runs_of(*records):
        frame = records_frame([record_row(record) for record in records])
        return usable_runs(frame, "paper", "standard")

    def at(depth, seed, val):
        return make_record(depth=depth, seed=seed, val=val, test=val)

    screened = [at(2, 0, 0.70), at(2, 1, 0.72), at(2, 2, 0.74), at(6, 0, 0.90)]
    chosen = select(runs_of(*screened))  # depth 6's one seed beats the 3-seed mean: a screen
    assert (int(chosen.setting["depth"]), chosen.n) == (2, 3)
    assert chosen.mean == pytest.approx(72.0)
    # three seeds each, the same ones: depth 6 wins on their mean
    confirmed = select(runs_of(*screened, at(6, 1, 0.60), at(6, 2, 0.80)))
    assert (int(confirmed.setting["depth"]), confirmed.n) == (6, 3)
    # equal counts, other seeds: compared on the seed they share (seed 0: 0.70 against 0.65)
    shifted = [at(2, 0, 0.70), at(2, 1, 0.60), at(6, 0, 0.65), at(6, 5, 0.99)]
    assert int(select(runs_of(*shifted)).setting["depth"]) == 2


def test_seeds_from_100_report_the_setting_the_seeds_below_chose_and_never_choose():
    def runs_of(*records):
        frame = records_frame([record_row(record) for record in records])
        return usable_runs(frame, "paper", "standard")

    def at(depth, seed, val, test=None):
        return make_record(depth=depth, seed=seed, val=val, test=val if test is None else test)

    choosing = [at(2, 0, 0.80), at(2, 1, 0.82), at(2, 2, 0.84), at(6, 0, 0.70), at(6, 1, 0.72),
                at(6, 2, 0.74)]  # fmt: skip
    # depth 6's reporting seeds score higher on validation: they do not choose
    reporting = [at(6, 100 + k, 0.95) for k in range(5)]
    few = select(runs_of(*choosing, *[at(2, 100 + k, 0.5, 0.60 + k / 100) for k in range(4)]))
    assert int(few.setting["depth"]) == 2 and few.seeds == (0, 1, 2) and not few.held_out
    assert few.selected_on == (0, 1, 2) and few.on_choosing_seeds
    held = [at(2, 100 + k, 0.5, 0.60 + k / 100) for k in range(5)]
    chosen = select(runs_of(*choosing, *reporting, *held))
    assert int(chosen.setting["depth"]) == 2 and chosen.held_out and not chosen.on_choosing_seeds
    assert chosen.seeds == (100, 101, 102, 103, 104) and chosen.selected_on == (0, 1, 2)
    assert chosen.mean == pytest.approx(62.0)
    # Student's t: 2.776 x the sample std of 60..64 (1.58) / sqrt(5)
    assert chosen.ci95 == pytest.approx(2.776 * 1.5811 / 5**0.5, abs=1e-3)
    far = published_numbers.PaperValue(80.0, 1.0)  # 18 points from 62: no edge in reach
    assert verdicts.provisional(chosen, far) == ""
    assert "which chose its setting" in verdicts.provisional(few, far)
    # 62.0 lies 0.5 points (0.71 of its SE) inside 60 ± 2.5: more seeds could flip it
    edge = verdicts.provisional(chosen, published_numbers.PaperValue(60.0, 2.5))
    assert edge.startswith("provisional: its mean lies 0.71 standard errors inside")
    numbers = aggregate.cell_numbers(chosen)
    assert (numbers["seeds"], numbers["selected_on"], numbers["held_out"]) == (
        "100–104",
        "0–2",
        True,
    )

    # reporting seeds that diverged stay the reporting seeds': counted, never swapped for the
    # choosing seeds' numbers
    def lost(seed):
        return make_record(depth=2, seed=seed, val=None, test=None, status="diverged")

    part = select(runs_of(*choosing, *reporting, *held[:3], lost(103), lost(104)))
    assert part.held_out and part.seeds == (100, 101, 102, 103, 104)
    assert (part.n, part.n_diverged, part.mean) == (3, 2, pytest.approx(61.0))
    gone = select(runs_of(*choosing, *reporting, *[lost(100 + k) for k in range(5)]))
    assert gone.held_out and gone.n == 0 and gone.text() == "†5"
    one = select(runs_of(at(2, 0, 0.8), at(2, 1, 0.8)))  # one setting: nothing was chosen
    assert one.selected_on == () and not one.on_choosing_seeds
    assert verdicts.provisional(one, far) == "provisional: over 2 seeds, fewer than 5"


def test_a_differing_number_also_gives_ours_at_the_papers_depth_and_the_presets_values():
    records = [make_record(depth=d, seed=k, val=v, test=t) for d, k, v, t in (
        (2, 0, 0.60, 0.58), (2, 1, 0.62, 0.60), (8, 0, 0.75, 0.74), (8, 1, 0.77, 0.76)
    )]  # fmt: skip
    runs = usable_runs(records_frame([record_row(r) for r in records]), "paper", "standard")
    chosen = select(runs)
    assert int(chosen.setting["depth"]) == 8
    assert "at the paper's depth 2: 59.0 ± 1.4 n=2" in verdicts.departures(
        chosen.runs, runs, 2, BUDGET
    )
    assert "the paper's depth 5 not run (ran 2, 8)" in verdicts.departures(
        chosen.runs, runs, 5, BUDGET
    )
    assert "paper's depth" not in verdicts.departures(chosen.runs, runs, 8, BUDGET)
    # epochs short of the paper's: whether a seed was still improving (best epoch 5 of 10: no)
    expected = "10 of the paper's 1000 epochs (none improved in the second half of its run: best"
    assert expected in verdicts.departures(chosen.runs, runs, 2, BUDGET)
    records[-1][schema.SUMMARY][schema.BEST_EPOCH] = 8
    runs = usable_runs(records_frame([record_row(r) for r in records]), "paper", "standard")
    rising = "10 of the paper's 1000 epochs (still improving: best epochs 5, 8)"
    assert rising in verdicts.departures(select(runs).runs, runs, 2, BUDGET)
    searched = [make_record(lr=lr, seed=k, val=v, test=v) for lr, k, v in (
        (0.005, 0, 0.30), (0.005, 1, 0.34), (0.001, 0, 0.70), (0.001, 1, 0.72)
    )]  # fmt: skip
    runs = usable_runs(records_frame([record_row(r) for r in searched]), "paper", "standard")
    own = HyperSetting("lr 0.005", True, runs[runs["lr"] == 0.005], ("lr",))
    other = HyperSetting("lr 0.001", False, runs[runs["lr"] == 0.001], ("lr",))
    chosen = select(runs)
    assert chosen.setting["lr"] == 0.001
    expected = "at the preset's values (lr 0.005; 10 epochs): 32.0 ± 2.8 n=2"
    assert expected in verdicts.departures(chosen.runs, runs, None, BUDGET, [own, other])
    at_own = verdicts.departures(select(own.runs).runs, runs, None, BUDGET, [own, other])
    assert "preset's values" not in at_own and "other settings" not in at_own
    # a number over reporting seeds names what the seeds that chose its setting gave
    fresh = [make_record(lr=0.001, seed=k, val=0.7, test=0.6) for k in (100, 101)]
    runs = usable_runs(
        records_frame([record_row(r) for r in searched + fresh]), "paper", "standard"
    )
    chosen = select(runs)  # two reporting seeds are too few: seeds 0-1 report
    assert set(chosen.runs["seed"]) == {0, 1}
    reported = runs[runs["seed"] >= 100]
    expected = (
        "over seeds 100, 101, which chose nothing; the seeds 0, 1 that chose its setting gave"
    )
    assert f"{expected} 71.0 ± 1.4 n=2" in verdicts.departures(reported, runs, None, BUDGET)
    assert "which chose nothing" not in verdicts.departures(chosen.runs, runs, None, BUDGET)
    # the preset's values run at several depths: the depth their number stands at is named
    deep = [make_record(lr=0.005, depth=6, seed=k, val=0.5, test=0.4) for k in (0, 1)]
    runs = usable_runs(records_frame([record_row(r) for r in searched + deep]), "paper", "standard")
    own = HyperSetting("lr 0.005", True, runs[runs["lr"] == 0.005], ("lr",))
    other = HyperSetting("lr 0.001", False, runs[runs["lr"] == 0.001], ("lr",))
    expected = (
        "at the preset's values (lr 0.005; 10 epochs; 6 layers, the depth best on validation "
        "of 2, 6): 40.0 ± 0.0 n=2"
    )
    assert expected in verdicts.departures(select(runs).runs, runs, None, BUDGET, [own, other])
    # at the paper's depth, the setting chosen there is named where it is not the preset's
    deeper = [make_record(depth=8, seed=k, val=0.9, test=0.8) for k in (0, 1)]
    runs = usable_runs(
        records_frame([record_row(r) for r in [*searched, *deeper]]), "paper", "standard"
    )
    own = HyperSetting("lr 0.005", True, runs[runs["lr"] == 0.005], ("lr",))
    other = HyperSetting("lr 0.001", False, runs[runs["lr"] == 0.001], ("lr",))
    chosen = select(runs)
    assert (int(chosen.setting["depth"]), chosen.setting["lr"]) == (8, 0.005)
    named = "at the paper's depth 2: 71.0 ± 1.4 n=2 at lr 0.001"
    assert named in verdicts.departures(chosen.runs, runs, 2, BUDGET, [own, other])
    unnamed = verdicts.departures(chosen.runs, runs[runs["lr"] == 0.005], 2, BUDGET, [own])
    assert "at the paper's depth 2: 32.0 ± 2.8 n=2" in unnamed and " at lr" not in unnamed
    # a screen on fewer seeds is counted, never compared
    screens = [make_record(lr=lr, dropout=0.0, seed=0, val=0.9, test=0.9) for lr in (0.01, 0.1)]
    usable = usable_runs(
        records_frame([record_row(r) for r in [*searched, *screens]]), "paper", "standard"
    )
    runs, grid = preset_runs(usable, "missing_vector", "paper", "standard")
    settings = hyper_settings(runs, grid)
    chosen = select(runs)
    assert chosen.setting["lr"] == 0.001 and chosen.n == 2
    expected = "2 other settings of dropout, lr run on seed 0: fewer than the 2 seeds reported"
    assert expected in verdicts.departures(chosen.runs, runs, None, BUDGET, settings)


def test_groups_and_usable_runs(frame, usable):
    assert report_groups(frame) == [
        ("paper", "published"),
        ("paper", "standard"),
        ("quick", "standard"),
    ]
    assert report_groups(frame, "quick") == [("quick", "standard")]
    assert set(usable["scale"]) == {"paper"} and set(usable["protocol"]) == {"standard"}
    assert "failed" not in set(usable["status"])
    never_evaluated = usable[(usable["status"] == "diverged") & (usable["depth"] == 10)]
    assert len(never_evaluated) == 3 and never_evaluated[schema.BEST_VAL_ACC].isna().all()


def test_grids_come_from_the_presets_composed_by_hydra():
    table1 = preset_grid("missing_vector", "quick", "standard")
    assert table1.datasets == ("cora",) and table1.missing_rates("cora") == (0.0, 1.0)
    assert table1.labels == ("GCN", "GGNN", "GAT", "GAT-PN", "GAT-Lip")
    assert table1.values["model.depth"] == (2, 5, 10)
    assert set(table1.search_keys) == {"train.lr", "model.hidden", "model.heads", "model.dropout"}
    table2 = preset_grid("gcnii", "paper", "published")
    assert [(d, table2.missing_rates(d)) for d in table2.datasets] == [
        ("cora", (1.0,)),
        ("pubmed", (1.0,)),
        ("ogbn_arxiv", (0.0,)),
    ]
    assert table2.labels == ("GAT-Lip", "GCNII") and "seed" not in table2.values
    trees = preset_grid("trees", "paper", "standard")
    assert trees.datasets == ("trees",) and trees.values["dataset.depth"] == tuple(range(2, 11))
    assert compact(table1.values["model.depth"]) == "2, 5, 10"
    assert compact(tuple(range(1, 21))) == "1–20"


def test_a_preset_takes_its_tagged_runs_inside_its_grid(usable):
    runs, grid = of_preset(usable, "missing_vector")
    tagged_ids = ids(
        record
        for name, records in RECORDS.items()
        if name not in ("quick", "published", "lip100_d30")
        for record in records
        if "missing_vector" in record["config"]["tags"] and record["status"] != "failed"
    )
    assert set(runs["run_id"]) == tagged_ids
    assert not ids(RECORDS["untagged"]) & set(runs["run_id"])
    assert grid.off_defaults(runs) == ("train.lr",)
    assert grid.off_defaults(runs[runs["lr"] == 0.005]) == ()
    assert preset_runs(usable, "ablation", "paper", "standard") is None


def test_a_key_no_search_sweeps_is_named_where_a_run_sets_it_apart():
    records = [make_record(seed=seed, val=0.5 + seed / 10) for seed in (0, 1)]
    for seed in (0, 1):
        record = make_record(seed=seed, lr=0.01, val=0.8)
        record["config"]["train"]["conv_weight_decay"] = 0.01  # GCNII's own setup, say
        record["run_id"] = run_id(record["config"])
        records.append(record)
    frame = usable_runs(records_frame([record_row(r) for r in records]), "paper", "standard")
    runs, grid = preset_runs(frame, "missing_vector", "paper", "standard")
    assert grid.off_defaults(runs) == ("train.conv_weight_decay", "train.lr")
    assert "train.conv_weight_decay" not in grid.search_keys
    settings = hyper_settings(runs, grid)
    assert [s.title for s in settings] == [
        "conv_weight_decay null, lr 0.005 (the preset's values)",
        "conv_weight_decay 0.01, lr 0.01",
    ]
    assert select(runs).setting["lr"] == 0.01


def test_setting_scores_rank_by_mean_validation_without_diverged_runs_then_depth():
    """`setting_scores`: a setting's score is its mean validation over the runs that did not
    diverge (one diverged seed does not pull it down; all diverged: last); equal scores go to
    the shallower; `select` picks the first row. The scores are exact in binary: ties are ties."""

    def at(depth, seed, val, status="completed"):
        return make_record(depth=depth, seed=seed, val=val, test=val, status=status)

    records = [at(2, 0, 0.5), at(2, 1, 0.75), at(4, 0, 0.625), at(4, 1, 0.125, "diverged"),
               at(6, 0, 0.625), at(6, 1, 0.625), at(8, 0, 0.99, "diverged"),
               at(8, 1, 0.99, "diverged")]  # fmt: skip
    runs = usable_runs(records_frame([record_row(r) for r in records]), "paper", "standard")
    scores = aggregate.setting_scores(runs)
    assert scores["depth"].tolist() == [2, 4, 6, 8]
    assert scores[aggregate.SCORE].tolist()[:3] == [0.625, 0.625, 0.625]
    assert math.isnan(scores[aggregate.SCORE].iloc[3])
    assert int(select(runs).setting["depth"]) == 2


def test_settings_that_tie_go_to_the_longer_trained_one():
    """A run trained longer on the same seed is at least as good on validation: a tie then
    means the extra epochs found nothing better, and the number reported says the longer run."""
    records = [
        make_record(seed=seed, epochs=epochs, val=0.7, test=test)
        for seed in (0, 1)
        for epochs, test in ((300, 0.61), (1000, 0.62), (100, 0.6))
    ]
    frame = usable_runs(records_frame([record_row(r) for r in records]), "paper", "standard")
    runs, _ = preset_runs(frame, "missing_vector", "paper", "standard")
    chosen = select(runs)
    assert chosen.setting["epochs"] == 1000 and chosen.mean == pytest.approx(62.0)


def test_table1_cells(usable):
    table = build_table(*of_preset(usable, "missing_vector"), TABLE1)
    display = by_model(table.display)
    assert display.loc["GAT", "Cora 0%"] == cell(GAT_D2, depth=2)  # not the untagged 99%
    assert display.loc["GAT-Lip", "Cora 0%"] == cell(LIP_D5, depth=5)
    assert display.loc["GAT", "Cora 100%"] == cell(GAT100_D4[:2], depth=4, diverged=1)
    assert display.loc["GAT-Lip", "Cora 100%"] == cell(LIP100_D11, depth=11)  # not depth 30
    assert display.loc["GAT", "PubMed 100%"] == cell([(0.5, 0.44)], depth=2)  # tie: shallower
    assert display.loc["GAT", "CiteSeer 0%"] == MISSING
    assert display.loc["GAT-Lip", "Cora 0% paper"] == str(
        published_numbers.TABLE1["GAT-Lip"]["cora", 0.0]
    )
    assert display.loc["GAT-Lip", "Cora 0% paper"] == "83.1 ± 0.5 (5)"
    assert list(display.index) == ["GCN", "GGNN", "GAT", "GAT-PN", "GAT-Lip"]
    cells = table.cells.set_index(["model", "column"])
    chosen = cells.loc[("GAT", "Cora 0%")]
    assert (chosen["lr"], chosen["depth"], chosen["n"]) == (0.005, 2, 3)
    gat100 = cells.loc[("GAT", "Cora 100%")]
    assert (gat100["n_diverged"], gat100["cell_diverged"], gat100["cell_runs"]) == (1, 4, 6)
    # the depths its runs have, not the grid's 1–20 (nor the depth 30 the grid leaves out)
    assert "depth chosen on validation among the depths run, 2, 4–6, 10, 11;" in table.notes


def test_table3_fixed_depth_columns_from_the_grid():
    runs = [
        *seeds([(0.7, 0.76), (0.7, 0.78)], tags=("residual",), depth=15, residual=True),
        *seeds([(0.6, 0.60), (0.6, 0.64)], tags=("residual",), depth=15, residual=True, lr=0.01),
        *seeds([(0.2, 0.20)], tags=("residual",), depth=30, dataset="pubmed", norm="lip"),
        *seeds([(0.9, 0.90)], tags=("residual",), depth=20),  # not a depth of the grid
    ]
    usable = usable_runs(records_frame([record_row(r) for r in runs]), "paper", "standard")
    table = build_table(*of_preset(usable, "residual"), TABLE3)
    display = by_model(table.display)
    assert [c for c in display.columns if not c.endswith((" paper", " val", " params"))] == [
        "Cora 15 layers",
        "Cora 30 layers",
        "PubMed 15 layers",
        "PubMed 30 layers",
    ]
    assert display.loc["GAT-res", "Cora 15 layers"] == cell([(0.7, 0.76), (0.7, 0.78)])
    assert display.loc["GAT-Lip", "PubMed 30 layers"] == cell([(0.2, 0.20)])
    assert display.loc["GAT", "Cora 15 layers"] == MISSING
    assert display.loc["GAT", "Cora 15 layers paper"] == "38.2 ± 1.7"
    assert "hyper-parameters off the preset's values: train.lr" in table.provenance
    assert preset_runs(usable, "gcnii", "paper", "standard") is None


def read_table(report_dir, name, scale="paper", protocol="standard", suffix="csv"):
    return report_dir / scale / protocol / "tables" / f"{name}.{suffix}"


def test_runs_csv_lists_exactly_the_records_behind_each_cell(report_dir):
    used = pd.read_csv(read_table(report_dir, "table1_missing_vector", suffix="runs.csv"))
    assert list(used.columns) == ["row", "column", "run_id", "seed", "status"]
    by_cell = used.groupby(["row", "column"])["run_id"].apply(set)
    assert by_cell["GAT", "Cora 0%"] == ids(RECORDS["gat_d2"])
    assert by_cell["GAT-Lip", "Cora 0%"] == ids(RECORDS["lip_d5"])
    assert by_cell["GAT", "Cora 100%"] == ids(RECORDS["gat100_d4"])
    assert by_cell["GAT-Lip", "Cora 100%"] == ids(RECORDS["lip100_d11"][:2])
    assert by_cell["GAT", "PubMed 100%"] == {RECORDS["pubmed_gat"][0]["run_id"]}
    cells = pd.read_csv(read_table(report_dir, "table1_missing_vector"))
    seeds_shown = cells["n"] + cells["n_diverged"]
    assert seeds_shown.sum() == len(used) and len(by_cell) == (seeds_shown > 0).sum()
    gat = used[(used["row"] == "GAT") & (used["column"] == "Cora 100%")]
    assert gat["seed"].tolist() == [0, 1, 2] and gat["status"].tolist()[-1] == "diverged"


def test_every_run_listed_is_a_record_tagged_with_the_tables_preset(report_dir, frame):
    tags = dict(zip(frame["run_id"], frame["tags"], strict=True))
    for preset, spec in owned_tables():
        for path in report_dir.glob(f"*/*/tables/{spec.name}.runs.csv"):
            listed = pd.read_csv(path)["run_id"]
            assert len(listed) and all(preset in tags[rid] for rid in listed), path


def test_every_table_names_its_protocol_and_provenance(report_dir):
    tables = sorted(report_dir.glob("*/*/tables/table*_*.md"))
    assert len(tables) == 3  # Table 1 in each folder; no runs of Tables 2 and 3
    for path in tables:
        scale, protocol = path.parts[-4], path.parts[-3]
        text = path.read_text()
        assert f"scale {scale}, protocol {protocol}; 10 epochs; seeds per cell:" in text
        assert "machine:" in text and path.with_suffix(".runs.csv").exists()
        assert f"protocol {protocol}" in path.with_suffix(".tex").read_text()
    table1 = read_table(report_dir, "table1_missing_vector", suffix="md").read_text()
    assert "seeds per cell: 1–3;" in table1
    assert "machine: cpu; cuda:0 NVIDIA H100, 16 CPUs (x86_64)." in table1
    assert "hyper-parameters off the preset's values: train.lr" in table1
    published = read_table(report_dir, "table1_missing_vector", "paper", "published", "md")
    assert "no hyper-parameter search" in published.read_text()
    assert cell([(0.6, 0.61)], depth=2) in published.read_text()


def test_a_stray_record_leaves_every_table_byte_identical(runs_dir, report_dir, tmp_path):
    runs = shutil.copytree(runs_dir, tmp_path / "runs")
    (runs / f"{STRAY['run_id']}.json").write_text(json.dumps(STRAY))
    assert main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--only", "tables"]) == 0
    before = sorted(path.relative_to(report_dir) for path in report_dir.glob("*/*/tables/*"))
    out = tmp_path / "out"
    # a folder the report creates holds its .gitignore beside the tables
    assert (out / ".gitignore").read_text().splitlines()[-1] == "*"
    after = sorted(path.relative_to(out) for path in out.rglob("*.*") if path.name != ".gitignore")
    assert before == after
    for name in before:
        assert (report_dir / name).read_bytes() == (tmp_path / "out" / name).read_bytes(), name


def test_regenerating_gives_the_same_bytes(runs_dir, report_dir, tmp_path):
    assert main(["--runs", str(runs_dir), "--out", str(tmp_path)]) == 0
    first = sorted(path.relative_to(report_dir) for path in report_dir.rglob("*.*"))
    again = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*.*"))
    assert first == again
    assert {path.suffix for path in first} == {".md", ".tex", ".csv", ".png", ".pdf"}
    assert any(path.name.endswith(".runs.csv") for path in first)
    for name in first:
        assert (report_dir / name).read_bytes() == (tmp_path / name).read_bytes(), name


def is_png(path):
    image = imread(path)
    return image.ndim == 3 and image.shape[2] in (3, 4) and image.shape[0] > 100


def test_figures_are_written_per_preset_with_footers(report_dir, capsys):
    figures = report_dir / "paper" / "standard" / "figures"
    drawn = {"fig2_gradients", "fig3_train_acc", "fig4_pubmed_depth", "fig5_trees"}
    assert {path.name.split(".")[0] for path in figures.iterdir()} == drawn
    assert all(is_png(figures / f"{name}.png") for name in drawn)
    assert all((figures / f"{name}.pdf").read_bytes().startswith(b"%PDF") for name in drawn)
    fig4 = pd.read_csv(figures / "fig4_pubmed_depth.runs.csv")
    assert set(fig4["run_id"]) == ids(RECORDS["pubmed_gat"] + RECORDS["pubmed_lip"])
    assert (report_dir / "quick" / "standard" / "figures" / "fig6_depth.png").exists()


def test_fig2_uses_log_scale_one_seed_and_a_colour_scale_per_model(usable):
    drawn = DRAW["fig2_gradients"](*of_preset(usable, "gradients"))
    images = {ax.get_title().split(",")[0]: ax.images[0] for ax in drawn.figure.axes if ax.images}
    assert set(images) == {"GAT", "GAT-Lip"}
    assert all(type(image.norm).__name__ == "LogNorm" for image in images.values())
    assert images["GAT"].norm.vmax == pytest.approx(10.0 ** (5 + 19 / 20))
    assert images["GAT-Lip"].norm.vmax == pytest.approx(1.01 ** (5 + 19 / 20))
    assert images["GAT"].get_array().shape == (20, 5)
    assert len(colour_bars(drawn.figure)) == 2
    assert BLANK_CELLS not in drawn.figure.get_suptitle()  # no blank cell to explain
    one_setting = "dropout 0.6, heads 8, hidden 64, lr 0.005"
    assert [(c.row, c.column, c.selection.n) for c in drawn.cells] == [
        ("GAT", f"{one_setting}, 20 layers", 1),
        ("GAT-Lip", f"{one_setting}, 20 layers", 1),
    ]


def colour_bars(figure):
    return [ax for ax in figure.axes if ax.get_label() == "<colorbar>"]


PROTOCOL_SETTING = {"dropout": 0.6, "lr": 0.005}
SELECTED_SETTING = {"dropout": 0.0, "lr": 0.001}


def gradient_records(depths_by_norm, accuracy, growth, zero=False, **setting):
    """``gradients`` records of one setting: seeds 0 and 1 per norm and depth listed."""
    records = []
    for norm, depths in depths_by_norm.items():
        for depth in depths:
            history = gradient_history(depth, growth[norm], accuracy)
            if zero:
                history[0]["grad_attn"][0] = 0.0
            records += [
                make_record(
                    tags=("gradients",),
                    depth=depth,
                    norm=norm,
                    seed=seed,
                    history=history,
                    **setting,
                )  # fmt: skip
                for seed in (0, 1)
            ]
    return records


@pytest.fixture(scope="module")
def two_settings():
    """The ``gradients`` preset at the protocol's setting (both models at 20 and 30 layers) and at
    the searched one, of which only some records exist (GAT at 20 and 30, GAT-Lip at 20)."""
    growth = {"none": 10.0, "lip": 1.01}
    protocol = gradient_records(
        {"none": (20, 30), "lip": (20, 30)}, 0.02, growth, zero=True, **PROTOCOL_SETTING
    )
    selected = gradient_records(
        {"none": (20, 30), "lip": (20,)}, 0.15, {"none": 1.5, "lip": 1.02}, **SELECTED_SETTING
    )
    frame = records_frame([record_row(record) for record in protocol + selected])
    return of_preset(usable_runs(frame, "paper", "standard"), "gradients")


def panels(subfigure):
    """``{title: axes}`` of a row of panels, and its title."""
    (title,) = [text.get_text() for text in subfigure.texts]
    return {ax.get_title(): ax for ax in subfigure.axes if ax.get_label() != "<colorbar>"}, title


def test_fig3_draws_each_setting_apart_under_its_dropout_and_lr(two_settings):
    figure = DRAW["fig3_train_acc"](*two_settings).figure
    protocol, selected = (panels(row) for row in figure.subfigs)
    assert protocol[1] == "dropout 0.6, lr 0.005 (the preset's values)"
    assert selected[1] == "dropout 0, lr 0.001"
    assert set(protocol[0]) == {"GAT", "GAT-Lip"}
    assert set(selected[0]) == {"GAT", "GAT-Lip (30 layers: no records)"}
    for (axes, _), accuracy in ((protocol, 0.02), (selected, 0.15)):
        for ax in axes.values():
            for line in ax.get_lines():  # one line per depth, all of this setting's records
                assert np.allclose(line.get_ydata(), [100 * accuracy * e for e in range(1, 6)])
    lines = {
        title: [line.get_label() for line in ax.get_lines()] for title, ax in selected[0].items()
    }
    assert lines == {  # every seed of the setting, a line each
        "GAT": [f"{d} layers, seed {k}" for d in (20, 30) for k in (0, 1)],
        "GAT-Lip (30 layers: no records)": ["20 layers, seed 0", "20 layers, seed 1"],
    }
    (legend,) = figure.legends
    assert [text.get_text() for text in legend.get_texts()] == ["20 layers", "30 layers"]
    assert all(ax.get_legend() is None for ax in figure.axes)


def test_fig2_draws_each_setting_apart_with_a_colour_scale_per_model_and_blank_cells_named(
    two_settings,
):
    drawn = DRAW["fig2_gradients"](*two_settings)
    protocol, selected = (panels(row) for row in drawn.figure.subfigs)
    assert protocol[1] == "dropout 0.6, lr 0.005 (the preset's values)"
    assert set(protocol[0]) == {
        f"{label}, {depth} layers (seed 0)" for label in ("GAT", "GAT-Lip") for depth in (20, 30)
    }
    assert set(selected[0]) == {  # only panels with a run: GAT-Lip has none at 30 layers
        "GAT, 20 layers (seed 0)",
        "GAT, 30 layers (seed 0)",
        "GAT-Lip, 20 layers (seed 0)",
    }
    assert all(ax.images for ax in drawn.figure.axes if ax.get_label() != "<colorbar>")
    assert drawn.notes == ("Not drawn (no records): GAT-Lip at dropout 0, lr 0.001 (30 layers).",)
    gat_lip = protocol[0]["GAT-Lip, 30 layers (seed 0)"].images[0]
    assert gat_lip.norm.vmax == pytest.approx(1.01 ** (5 + 29 / 30))  # its own scale, not GAT's
    assert selected[0]["GAT, 30 layers (seed 0)"].images[0].norm.vmax == pytest.approx(
        1.5 ** (5 + 29 / 30)
    )
    assert len(colour_bars(drawn.figure)) == 4  # a model × a setting
    assert BLANK_CELLS in drawn.figure.get_suptitle()  # the protocol's records have a zero
    assert [cell.column for cell in drawn.cells if cell.row == "GAT-Lip"] == [
        "dropout 0.6, lr 0.005, 20 layers",
        "dropout 0.6, lr 0.005, 30 layers",
        "dropout 0, lr 0.001, 20 layers",
    ]


def test_the_footer_of_a_figure_of_settings_drawn_apart_says_so(two_settings):
    spec = next(spec for _, spec in owned_figures() if spec.name == "fig3_train_acc")
    cells = spec.draw(*two_settings).cells
    runs, grid = two_settings
    footer = provenance_line(grid, runs, cells, spec.unit, spec.settings_apart)
    assert (
        "model.dropout, train.lr (a search or values set by hand; each setting is drawn apart)"
        in footer
    )
    assert "best mean validation accuracy" in provenance_line(grid, runs, cells, spec.unit)


def test_fig5_draws_ours_beside_alon_yahav_and_the_papers_depth_10(usable):
    drawn = DRAW["fig5_trees"](*of_preset(usable, "trees"))
    figure = drawn.figure
    ax, paper_ax = figure.axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert np.allclose(lines["GAT-Lip"].get_ydata(), [45.0, 30.0])
    reference = lines["Alon & Yahav GAT"]
    assert list(reference.get_xdata()) == [2, 3]  # only over the depths with records
    assert list(reference.get_ydata()) == [
        published_numbers.ALON_YAHAV_TRAIN_ACC["GAT"][d] for d in (2, 3)
    ]
    assert reference.get_color() == lines["GAT"].get_color()
    assert ax.get_xlim()[1] < 4  # the axis stops where the records do
    stars = {c.get_label(): c.get_offsets()[0] for c in paper_ax.collections if c.get_label()}
    assert list(stars[f"paper GAT-Lip (depth {published_numbers.TREES_DEPTH})"]) == [10, 68.3]
    # a model without records is not drawn, as a point or in the legend, and the footer names it
    assert not any("no records" in line.get_label() for line in ax.get_lines())
    (absent,) = [note for note in drawn.notes if note.startswith("Not drawn (no records): ")]
    named = absent.removeprefix("Not drawn (no records): ").removesuffix(".").split(", ")
    assert {"GCN", "GAT-PN"} <= set(named)
    assert drawn.notes[0].startswith("Lines: mean over each point's seeds; bands: ± 1 sample std")
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["2", "3"]
    (legend,) = figure.legends  # beside the panels, not over the data
    assert ax.get_legend() is None and paper_ax.get_legend() is None
    entries = [text.get_text() for text in legend.get_texts()]
    assert "GAT-Lip" in entries and not any("another budget" in entry for entry in entries)


def test_fig5_joins_one_budget_per_line_and_draws_another_budget_apart_labelled():
    runs = [
        make_record(
            tags=("trees",),
            dataset="trees",
            tree_depth=d,
            depth=d + 1,
            norm=norm,
            seed=seed,
            epochs=epochs,
            train=train,
        )  # fmt: skip
        for norm, d, epochs, train in (
            ("none", 2, 10, 0.6),
            ("none", 3, 10, 0.3),
            ("none", 3, 80, 0.95),  # eight times the budget
            ("lip", 2, 10, 0.7),
            ("lip", 3, 10, 0.4),
        )
        for seed in (0, 1)
    ]
    frame = records_frame([record_row(record) for record in runs])
    drawn = DRAW["fig5_trees"](*of_preset(usable_runs(frame, "paper", "standard"), "trees"))
    ax = drawn.figure.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert np.allclose(lines["GAT"].get_ydata(), [60.0, 30.0])  # not 95: another budget
    assert np.allclose(lines["GAT-Lip"].get_ydata(), [70.0, 40.0])
    (apart,) = [line for line in ax.get_lines() if line.get_markerfacecolor() == "none"]
    assert (apart.get_xdata()[0], apart.get_ydata()[0]) == (
        pytest.approx(3 + APART_OFFSET),
        pytest.approx(95.0),
    )
    assert apart.get_color() == lines["GAT"].get_color()
    assert [(text.get_text(), text.xy[1]) for text in ax.texts] == [
        ("80 passes", pytest.approx(95.0))
    ]
    assert ax.get_title() == "lines: runs of at most 10 passes"
    (legend,) = drawn.figure.legends
    assert "best at another budget than 10 passes" in [
        text.get_text() for text in legend.get_texts()
    ]
    assert ("GAT", "80 passes, tree depth 3") in [(cell.row, cell.column) for cell in drawn.cells]


def test_fig5_labels_a_point_trained_on_another_batch_size_than_its_protocols(usable):
    runs, grid = of_preset(usable, "trees")
    runs = runs.copy()
    table = {"d2": 64, "d3": 64, "default": 1024}
    chosen = (runs["label"] == "GAT-Lip") & (runs["tree_depth"] == 3)
    runs["config"] = [
        {
            **config,
            "protocol": {"name": "alon_yahav", "batch_size_per_depth": table},
            "dataset": {**config["dataset"], "batch_size": 256 if hit else table["d3"]},
        }
        for config, hit in zip(runs["config"], chosen, strict=True)
    ]
    ax = DRAW["fig5_trees"](runs, grid).figure.axes[0]
    ((text, xy),) = [(note.get_text(), note.xy) for note in ax.texts]
    (gat_lip,) = [line for line in ax.get_lines() if line.get_label() == "GAT-Lip"]
    assert text == "batch 256" and xy == (gat_lip.get_xdata()[1], pytest.approx(30.0))


def test_trees_table_gives_fig5s_numbers_beside_alon_yahav_and_the_paper(usable, report_dir):
    table = trees_table(*of_preset(usable, "trees"))
    rows = by_model(table.display)
    assert (
        rows.loc["GAT-Lip", "d = 2"] == "45.0 ± 0.0"
        and rows.loc["GAT-Lip", "d = 3"] == "30.0 ± 0.0"
    )
    assert rows.loc["GAT-Lip", "d = 3 passes"] == "10"  # 10 epochs of one pass
    assert rows.loc["GAT", "d = 2 A&Y"] == "100" and rows.loc["GAT-Lip", "d = 2 A&Y"] == "–"
    assert rows.loc["GAT-Lip", f"paper d = {published_numbers.TREES_DEPTH}"] == "68.3"
    assert rows.loc["GCN", "d = 2"] == "–"
    written = pd.read_csv(read_table(report_dir, "fig5_trees"))
    assert set(written["tree_depth"]) == {2, 3} and written["passes"].max() == 10
    behind = pd.read_csv(read_table(report_dir, "fig5_trees", suffix="runs.csv"))
    assert len(behind) == 2 * 2 * 2  # two labels × two depths × two seeds


def test_the_trees_note_gives_the_batch_sizes_of_the_runs_protocol():
    table = {"d2": 64, "d3": 64, "d4": 1024, "d5": 1024, "d6": 1024, "default": 2048}
    assert batch_sizes_text(table) == "64 at d ≤ 3, 1024 at d = 4–6, 2048 at d ≥ 7"
    assert batch_sizes_text({"d2": 8, "d3": 16, "default": 32}) == (
        "8 at d ≤ 2, 16 at d = 3, 32 at d ≥ 4"
    )
    protocol = {"name": "alon_yahav", "batch_size_per_depth": table}
    runs = pd.DataFrame({"config": [{"protocol": {"name": "standard"}}, {"protocol": protocol}]})
    assert "protocol's (64 at d ≤ 3, 1024 at d = 4–6, 2048 at d ≥ 7);" in notes(runs)
    assert "protocol's;" in notes(runs.iloc[:1])


def test_a_trees_cell_names_a_batch_size_or_alpha_its_protocol_and_the_paper_do_not_set():
    table = {"d3": 64, "d4": 1024, "default": 2048}
    rows = (
        (4, 1024, {"name": "alon_yahav", "batch_size_per_depth": table}, {"name": "none"}),
        (4, 256, {"name": "alon_yahav", "batch_size_per_depth": table}, {"name": "none"}),
        (7, 64, {"name": "alon_yahav", "batch_size_per_depth": table}, {"name": "none"}),
        (4, 256, {"name": "standard"}, {"name": "none"}),  # no table: nothing to differ from
        (4, 1024, {"name": "standard"}, {"name": "lip", "alpha": 1.0}),
        (4, 1024, {"name": "standard"}, {"name": "lip", "alpha": 4.0}),
        (4, 1024, {"name": "standard"}, {"name": "pairnorm", "alpha": 4.0}),  # not LipschitzNorm's
    )
    runs = pd.DataFrame(
        {
            "config": [
                {
                    "dataset": {"depth": depth, "batch_size": size},
                    "protocol": protocol,
                    "norm": norm,
                }
                for depth, size, protocol, norm in rows
            ]
        }
    )
    assert departures(runs.iloc[:4]) == "batch 64, 256"
    assert departures(runs.iloc[[0, 3, 4, 6]]) == ""
    assert departures(runs) == "batch 64, 256, α = 4"
    assert departures(runs.iloc[[5]]) == "α = 4"


def test_fig6_marks_a_missing_point_instead_of_joining_across_it(frame):
    quick = usable_runs(frame, "quick", "standard")
    drawn = DRAW["fig6_depth"](*of_preset(quick, "depth", "quick"))
    ax = drawn.figure.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    gt_lip = lines["GT-Lip"]
    # the depths run, evenly spaced and labelled: a categorical axis
    assert list(np.rint(gt_lip.get_xdata())) == [0, 1]  # each label a little apart (a dodge)
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["2", "10"]
    assert np.isfinite(gt_lip.get_ydata()[0]) and np.isnan(gt_lip.get_ydata()[1])
    assert not any(line.get_marker() == "x" for line in ax.get_lines())
    assert "No records (line broken): GAT at 2; GT-Lip at 10." in drawn.notes


def test_diverged_runs_are_never_averaged_and_a_cell_of_only_diverged_runs_has_no_number(
    usable,
):
    gat100 = usable[(usable["label"] == "GAT") & (usable["missing_rate"] == 1.0)]
    only_diverged = select(gat100[gat100["depth"] == 10])
    assert only_diverged.text(show_depth=True) == "†3" and np.isnan(only_diverged.mean)
    mixed = select(gat100[gat100["depth"] == 4])
    assert (mixed.n, mixed.n_diverged) == (2, 1)
    assert mixed.mean == pytest.approx(100 * statistics.mean(t for _, t in GAT100_D4[:2]))


def test_a_figure_point_of_only_diverged_runs_reads_a_dagger_not_zero():
    runs = [
        make_record(tags=("depth",), scale="quick", depth=2, test=0.7),
        *(
            make_record(tags=("depth",), scale="quick", depth=10, seed=k, status="diverged")
            for k in range(2)
        ),
    ]
    quick = usable_runs(records_frame([record_row(r) for r in runs]), "quick", "standard")
    ax = DRAW["fig6_depth"](*of_preset(quick, "depth", "quick")).figure.axes[0]
    (gat,) = [line for line in ax.get_lines() if line.get_label() == "GAT (†2)"]
    assert list(np.rint(gat.get_xdata())) == [0, 1] and np.isnan(gat.get_ydata()[1])
    assert [(text.get_text(), round(text.xy[0])) for text in ax.texts] == [("†2", 1)]  # depth 10


def test_interrupted_runs_and_files_set_aside_are_never_results(tmp_path, capsys):
    completed = make_record(depth=2, val=0.5, test=0.5)
    interrupted = make_record(depth=3, status="interrupted", val=0.99, test=0.99)
    runs = write_records(tmp_path / "runs", [completed, interrupted])
    name = f"{completed['run_id']}.json"
    (runs / f"{name}.broken-20240101T000000000000Z").write_bytes(b"\x00\xff" * 64)
    (runs / f"{name}{RERUN_SUFFIX}").write_text(json.dumps({**completed, "status": "failed"}))
    (runs / "folder.json").mkdir()
    wrong = make_record(depth=4, val=0.5, test=7.5)
    (runs / f"{wrong['run_id']}.json").write_text(json.dumps(wrong))
    with pytest.warns(UserWarning) as caught:
        frame = load_records(runs)
    messages = " ".join(str(warning.message) for warning in caught)
    assert "folder.json: not a run record (not readable as JSON" in messages
    assert "summary.test_acc_at_best_val is 7.5, not a number in [0, 1]; set aside" in messages
    assert frame.attrs["set_aside"] == 1 and wrong["run_id"] not in set(frame["run_id"])
    assert sorted(frame["status"]) == ["completed", "interrupted"]
    assert usable_runs(frame, "paper", "standard")["run_id"].tolist() == [completed["run_id"]]
    (runs / f"{wrong['run_id']}.json").write_text(json.dumps(wrong))  # broken again
    with pytest.warns(UserWarning):
        assert main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--only", "tables"]) == 0
    out = capsys.readouterr().out
    assert "0 failed ignored, 1 interrupted ignored, 1 broken set aside (their runs are " in out
    assert len(list(runs.glob(f"{wrong['run_id']}.json.broken-*"))) == 2
    summary = pd.read_csv(tmp_path / "out" / "paper" / "standard" / "tables" / "summary.csv")
    assert summary[["completed", "diverged", "failed", "interrupted", "total"]].values.tolist() == [
        [1, 0, 0, 1, 2]
    ]
    table = pd.read_csv(
        tmp_path / "out" / "paper" / "standard" / "tables" / "table1_missing_vector.csv"
    )
    assert table.dropna(subset=["mean"])["mean"].tolist() == [50.0]


def test_cli_layout_summary_and_skips(runs_dir, tmp_path, capsys):
    assert main(["--runs", str(runs_dir), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1 failed ignored" in out
    assert "table3_residual: no runs of preset residual, skipped" in out
    assert "ablation: no runs of preset ablation, skipped" in out
    tables = tmp_path / "paper" / "standard" / "tables"
    for suffix in ("md", "tex", "csv", "runs.csv"):
        assert f"wrote {tables / f'table1_missing_vector.{suffix}'}" in out
    assert r"$\pm$" in (tables / "table1_missing_vector.tex").read_text()
    summary = pd.read_csv(tables / "summary.csv").set_index(["preset", "dataset", "label"])
    assert summary.loc[("missing_vector", "cora", "GAT-Lip"), "failed"] == 1
    assert summary.loc[("pubmed_depth", "pubmed", "GAT"), "total"] == 2  # shared runs count
    assert summary.loc[("missing_vector", "pubmed", "GAT"), "total"] == 2  # in both presets
    assert "by_hand" not in set(summary.index.get_level_values("preset"))
    assert not list(tmp_path.glob("*/tables")) and not list(tmp_path.rglob("ablation.*"))
    quick = pd.read_csv(tmp_path / "quick" / "standard" / "tables" / "table1_missing_vector.csv")
    assert quick.dropna(subset=["mean"])["model"].tolist() == ["GAT"]


def test_cli_subprocess_only_tables(runs_dir, tmp_path):
    args = ["--runs", str(runs_dir), "--out", str(tmp_path), "--only", "tables", "--scale", "quick"]
    result = subprocess.run(
        [sys.executable, "-m", "lipnorm_exp.report", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "scale quick, protocol standard:" in result.stdout
    assert not (tmp_path / "paper").exists()
    assert not (tmp_path / "quick" / "standard" / "figures").exists()
    cells = pd.read_csv(tmp_path / "quick" / "standard" / "tables" / "table1_missing_vector.csv")
    assert cells.dropna(subset=["mean"])["model"].tolist() == ["GAT"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--runs", "{tmp}/none"], "--runs {tmp}/none is not a folder; give the folder"),
        (["--runs", "{tmp}/empty"], "--runs {tmp}/empty holds no run records"),
        (["--runs", "{tmp}/file.json"], "--runs {tmp}/file.json is not a folder"),
        (["--runs", "{runs}", "--scale", "huge"], "--scale huge has no records; scales with"),
        (["--runs", "{runs}", "--out", "{tmp}/file.json"], "--out {tmp}/file.json is a file"),
        (["--runs", "{runs}", "--out", "/proc/report"], "--out=/proc/report is not a writable"),
    ],
)
def test_cli_refuses_what_it_cannot_report_in_one_line(
    tmp_path, capsys, runs_dir, arguments, message
):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.json").write_text("{}")
    fill = {"tmp": tmp_path, "runs": runs_dir}
    code = main([*(argument.format(**fill) for argument in arguments), "--only", "tables"])
    assert code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"lipnorm_exp.report: error: {message.format(**fill)}")
    assert not (tmp_path / "results").exists()


def test_a_stop_while_writing_leaves_every_file_whole_and_says_so_in_one_line(
    runs_dir, report_dir, tmp_path, capsys, monkeypatch
):
    out = tmp_path / "out"
    figures = out / "paper" / "standard" / "figures"
    shutil.copytree(report_dir / "paper" / "standard" / "figures", figures)
    before = {path.name: path.read_bytes() for path in figures.iterdir()}
    real = Figure.savefig

    def stop_halfway(figure, target, **kwargs):
        real(figure, target, **kwargs)
        Path(target).write_bytes(Path(target).read_bytes()[:10])  # a half-written file
        raise KeyboardInterrupt

    monkeypatch.setattr(Figure, "savefig", stop_halfway)
    assert main(["--runs", str(runs_dir), "--out", str(out), "--only", "figures"]) == 130
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("lipnorm_exp.report: interrupted (Ctrl-C); every file written is")
    assert {path.name: path.read_bytes() for path in figures.iterdir()} == before


def test_a_full_disk_ends_the_report_in_one_line_naming_the_folder(
    runs_dir, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "out"
    real_write = Path.write_bytes

    def full_under_out(path, data):
        if out in path.parents and path.name.endswith(".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(path, data)

    monkeypatch.setattr(Path, "write_bytes", full_under_out)
    assert main(["--runs", str(runs_dir), "--out", str(out), "--only", "tables"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert re.fullmatch(
        rf"lipnorm_exp\.report: error: no space left on the device of {re.escape(str(out))}\S* "
        r"to write \S+ \([0-9]+ kB needed\); free space there and run the command again",
        line,
    )
    assert list(out.rglob(".*.tmp")) == []


def test_the_report_removes_what_a_killed_report_left_in_its_folders(runs_dir, tmp_path):
    left = tmp_path / "out" / "quick" / "standard" / "tables"
    left.mkdir(parents=True)
    temp_path(left / "table1.csv", pid=999999999).write_text("half")  # its writer is gone
    assert main(["--runs", str(runs_dir), "--out", str(tmp_path / "out"), "--only", "tables"]) == 0
    assert list((tmp_path / "out").rglob(".*.tmp")) == []


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (["--only", "nothing"], "argument --only: invalid choice: 'nothing'"),
        (["--out", ""], "argument --out: '' is not a folder (a non-empty path)"),
        (["--runs", " "], "argument --runs: ' ' is not a folder (a non-empty path)"),
    ],
)
def test_the_report_command_refuses_a_bad_argument_in_one_line(capsys, arguments, says):
    with pytest.raises(SystemExit) as stopped:
        main(arguments)
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"lipnorm_exp.report: error: {says}")


ABLATION_PRESET = """\
# @package _global_
tags: [ablation]
train:
  epochs: ${grid.${scale}.epochs}
  track_gradients: true
grid:
  quick:
    protocol: standard
    epochs: 10
    datasets: cora
    missing_rates: 0.0
    ablations: none,heads_2
    methods: gat,gat_lip
    depths: 10
    seeds: 0,1
hydra:
  mode: MULTIRUN
  sweeper:
    params:
      protocol: ${grid.${scale}.protocol}
      dataset: ${grid.${scale}.datasets}
      dataset.missing_rate: ${grid.${scale}.missing_rates}
      +ablation: ${grid.${scale}.ablations}
      +method: ${grid.${scale}.methods}
      model.depth: ${grid.${scale}.depths}
      seed: ${grid.${scale}.seeds}
"""
ABLATIONS = {
    "none": ("the protocol as it is", ""),
    "heads_2": ("2 heads", "model:\n  heads: 2\n"),
}


@pytest.fixture
def ablation_configs(tmp_path, monkeypatch):
    """The package's configs with a small ``ablation`` preset and group in place of its own."""
    configs = shutil.copytree(CONFIGS, tmp_path / "configs")
    (configs / "experiment" / "ablation.yaml").write_text(ABLATION_PRESET)
    shutil.rmtree(configs / "ablation", ignore_errors=True)
    (configs / "ablation").mkdir()
    for name, (factor, change) in ABLATIONS.items():
        text = f"# @package _global_\nablation:\n  name: {name}\n  factor: {factor}\n{change}"
        (configs / "ablation" / f"{name}.yaml").write_text(text)
    monkeypatch.setattr(grids, "CONFIGS_DIR", configs)
    return configs


def ablation_record(name, norm, seed, test, heads=8, tracked=True):
    return make_record(
        tags=("ablation",),
        scale="quick",
        seed=seed,
        depth=10,
        norm=norm,
        heads=heads,
        val=test,
        test=test,
        train=0.5 + seed / 10,
        ablation=(name, ABLATIONS[name][0]),
        history=gradient_history(10, 2.0 + seed) if tracked else None,
    )


def test_ablation_table_one_row_per_ablation_one_column_group_per_model(ablation_configs, tmp_path):
    records = [
        *(ablation_record("none", "none", seed, 0.6 + seed / 10) for seed in (0, 1)),
        ablation_record("none", "lip", 0, 0.8, tracked=False),
        ablation_record("heads_2", "none", 0, 0.5, heads=2),
        make_record(scale="quick", depth=10, val=0.9, test=0.9),  # Table 1's, not an ablation
    ]
    runs = write_records(tmp_path / "runs", records)
    assert main(["--runs", str(runs), "--out", str(tmp_path / "out"), "--only", "tables"]) == 0
    tables = tmp_path / "out" / "quick" / "standard" / "tables"
    display = pd.read_csv(tables / "ablation.csv")
    assert len(display) == 2 * 2  # two ablations × two model labels
    row = display.set_index(["ablation", "model"])
    assert row.loc[("none", "GAT"), "mean"] == pytest.approx(65.0)
    assert row.loc[("none", "GAT"), "n"] == 2
    assert row.loc[("none", "GAT"), schema.FINAL_TRAIN_ACC] == pytest.approx(55.0)
    assert row.loc[("none", "GAT"), "max_grad_attn"] == pytest.approx(3.0 ** (5 + 9 / 10))
    assert np.isnan(row.loc[("none", "GAT-Lip"), "max_grad_attn"])
    assert row.loc[("heads_2", "GAT-Lip"), "n"] == 0
    assert set(row["factor"]) == {"the protocol as it is", "2 heads"}
    markdown = (tables / "ablation.md").read_text()
    header = markdown.splitlines()[2]
    for column in ("ablation", "factor", "GAT test", "GAT final train", "GAT-Lip max attn grad"):
        assert f" {column} " in header
    assert "2 heads" in markdown and MISSING in markdown
    assert "no hyper-parameter search" in markdown  # heads=2 is the ablation's, not a search
    used = pd.read_csv(tables / "ablation.runs.csv")
    assert set(used["run_id"]) == ids(records[:4])


def final_epoch_runs(last_tests, last_vals, stop_after=None, **protocol):
    """Table 1 records of one setting (Cora 0%, depth 2), 10 epochs each, seed k ending on the
    k-th (test, val) accuracies; ``stop_after``: the last seed stopped early after that epoch;
    ``protocol``: ``protocol.reported_epoch`` and ``protocol.std_ddof``."""
    records = []
    for k, (test, val) in enumerate(zip(last_tests, last_vals, strict=True)):
        history = [
            {"epoch": e, "train_loss": 1.0, "train_acc": 0.5, "val_acc": 0.5, "test_acc": 0.5}
            for e in range(1, 11)
        ]
        history[-1].update(val_acc=val, test_acc=test)
        if stop_after and k == len(last_tests) - 1:
            history = history[:stop_after]
        record = make_record(seed=k, val=0.6 + k / 100, test=0.8 - k / 100, history=history)
        record["config"]["protocol"].update(protocol)
        records.append(record)
    return usable_runs(records_frame([record_row(r) for r in records]), "paper", "standard")


LAST_TESTS, LAST_VALS = (0.70, 0.74, 0.81), (0.55, 0.58, 0.62)


def test_the_final_epoch_number_is_the_mean_over_the_seeds_last_history_rows():
    chosen = select(final_epoch_runs(LAST_TESTS, LAST_VALS))
    tests = [100 * t for t in LAST_TESTS]
    assert chosen.final.mean == pytest.approx(statistics.mean(tests))
    assert chosen.final.std == pytest.approx(statistics.stdev(tests))  # ddof 1 where unsaid
    best = [80.0, 79.0, 78.0]  # test_acc_at_best_val of the seeds: still the number reported
    assert (chosen.mean, chosen.std) == (
        pytest.approx(statistics.mean(best)),
        pytest.approx(statistics.stdev(best)),
    )
    table = build_table(
        *of_preset(final_epoch_runs(LAST_TESTS, LAST_VALS), "missing_vector"), TABLE1
    )
    row = by_model(table.display).loc["GAT"]
    assert row["Cora 0% final"] == f"{statistics.mean(tests):.1f} ± {statistics.stdev(tests):.1f}"
    config = table.used[0].selection.setting["config"]
    model = build_model(
        OmegaConf.create(config["model"]), OmegaConf.create(config["norm"]), 1433, 7
    )
    assert row["Cora 0% val"] == "61.0 ± 1.0"  # Cora: 1433 features, 7 classes
    assert row["Cora 0% params"] == f"{sum(p.numel() for p in model.parameters()) / 1e3:.0f}k"
    assert "best-validation epoch, mean ± sample std" in table.caption


def test_the_protocols_reported_epoch_and_ddof_make_the_number_reported():
    runs = final_epoch_runs(LAST_TESTS, LAST_VALS, reported_epoch="final", std_ddof=0)
    chosen = select(runs)
    tests, vals = [100 * t for t in LAST_TESTS], [100 * v for v in LAST_VALS]
    assert chosen.mean == pytest.approx(statistics.mean(tests))
    assert chosen.std == pytest.approx(statistics.pstdev(tests))  # np.std's ddof 0
    assert chosen.validation.mean == pytest.approx(statistics.mean(vals))
    assert chosen.other.mean == pytest.approx(79.0)  # the best validation epoch's, beside it
    assert chosen.other_title == "best val"
    table = build_table(*of_preset(runs, "missing_vector"), TABLE1)
    assert "last epoch, mean ± std (ddof 0)" in table.caption
    assert by_model(table.display).loc["GAT", "Cora 0% best val"] == "79.0 ± 0.8"
    cells = table.cells.set_index(["model", "column"]).loc[("GAT", "Cora 0%")]
    assert (cells["reported_epoch"], cells["std_ddof"]) == ("final", 0)
    assert cells["mean"] == round(statistics.mean(tests), 2)


def test_one_seed_has_no_std_under_either_convention():
    for ddof in (0, 1):
        runs = final_epoch_runs(
            LAST_TESTS[:1], LAST_VALS[:1], reported_epoch="final", std_ddof=ddof
        )
        chosen = select(runs)
        assert chosen.mean == pytest.approx(70.0) and math.isnan(chosen.std)
        row = by_model(build_table(*of_preset(runs, "missing_vector"), TABLE1).display).loc["GAT"]
        assert row["Cora 0%"].startswith("70.0 (2)")  # no "± 0.0": one value has no spread


def test_a_run_stopped_early_has_no_final_epoch_number():
    runs = final_epoch_runs(LAST_TESTS, LAST_VALS, stop_after=6)
    assert runs["final_test_acc"].isna().tolist() == [False, False, True]
    chosen = select(runs)
    assert math.isnan(chosen.final.mean) and chosen.n == 3  # never a mean over 2 of 3 seeds
    table = build_table(*of_preset(runs, "missing_vector"), TABLE1)
    # no cell has a final-epoch number: the table has no such column, its notes say when it does
    assert not any(column.endswith(" final") for column in table.display.columns)
    assert "where every seed trained its full budget" in table.notes


def test_the_tex_is_booktabs_with_grouped_headers_and_the_seeds_in_a_note(usable):
    table = build_table(*of_preset(usable, "missing_vector"), TABLE1)
    tex = latex(table)
    tabular = tex[tex.index(r"\begin{tabular}") : tex.index(r"\end{tabular}")]
    parts = tex.count(r"\begin{tabular}")  # split between groups to fit a page
    assert 1 < parts <= tex.count(r"\multicolumn{4}{c}")  # whole groups, each once
    assert [r"\toprule", r"\midrule", r"\bottomrule"] * parts == [
        line for line in tex.splitlines() if line in (r"\toprule", r"\midrule", r"\bottomrule")
    ]
    align = tabular[len(r"\begin{tabular}{") : tabular.index("}\n")]
    assert align[0] == "l" and set(align[1:]) == {"r"}  # the numbers right-aligned
    assert r" & \multicolumn{4}{c}{Cora 0\%} \\" in tabular
    assert r"\cmidrule(lr){2-5}" in tabular and r"\multicolumn{4}{c}{Cora 100\%}" in tex
    assert "n=" not in tex
    caption = tex[tex.index(r"\caption{") :].splitlines()[0]
    assert "Preset" not in caption and "seeds per cell" in tex[tex.index(r"\end{tabular}") :]


def test_the_csv_holds_counts_as_integers_and_numbers_rounded(usable):
    table = build_table(*of_preset(usable, "missing_vector"), TABLE1)
    text = csv_text(table.cells)
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    for column in ("depth", "n", "hidden", "heads", "epochs", "params", "paper_depth"):
        assert frame[column].str.fullmatch(r"\d*").all(), column  # 2, not 2.0; empty: no cell
    for column in ("mean", "std", "val_mean", "final_mean"):
        assert frame[column].str.fullmatch(r"(\d+(\.\d{1,2})?)?").all(), column
    assert (frame["params"] != "").any()
