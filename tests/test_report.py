import hashlib
import json
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread

from lipnorm_exp.report import paper
from lipnorm_exp.report.__main__ import main
from lipnorm_exp.report.aggregate import MISSING, report_scales, usable_runs
from lipnorm_exp.report.figures import FIGURES, write_figures
from lipnorm_exp.report.labels import model_label
from lipnorm_exp.report.records import load_records, record_row, records_frame
from lipnorm_exp.report.tables import TABLES, build_table

TABLE1, TABLE2, TABLE3 = TABLES


def make_record(
    *,
    seed=0,
    scale="paper",
    dataset="cora",
    missing_rate=0.0,
    model="gat",
    depth=2,
    norm="none",
    residual=False,
    lr=0.005,
    val=0.5,
    test=0.5,
    train=1.0,
    status="completed",
    tree_depth=None,
    history=None,
):
    """A record in the trainer's format (``val=None``: a run without a best epoch)."""
    norm_cfg = {"name": norm}
    if norm == "lip":
        norm_cfg.update(alpha=1.0, eps=1e-12, variant="paper")
    dataset_cfg = {"name": dataset, "missing_rate": missing_rate, "download": True}
    if tree_depth is not None:
        dataset_cfg.update(depth=tree_depth, num_trees=100)
    config = {
        "seed": seed,
        "scale": scale,
        "force": False,
        "tags": ["fixture"],
        "dataset": dataset_cfg,
        "model": {
            "name": model,
            "depth": depth,
            "hidden": 8,
            "heads": 8,
            "concat": True,
            "dropout": 0.6,
            "attn_dropout": 0.0,
            "residual": residual,
        },
        "norm": norm_cfg,
        "train": {
            "epochs": 10,
            "lr": lr,
            "weight_decay": 5e-4,
            "patience": 0,
            "track_gradients": history is not None,
            "progress": False,
        },
        "paths": {"results_dir": f"runs/{seed}"},
    }
    run_id = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
    summary = {
        "metric": "accuracy",
        "best_epoch": None if val is None else 5,
        "best_val_acc": val,
        "test_acc_at_best_val": test,
        "train_acc_at_best_val": None if val is None else train,
        "best_train_acc": None if val is None else train,
        "final_train_acc": train,
        "epochs_run": 10,
        "diverged_at_epoch": 7 if status == "diverged" else None,
    }
    return {
        "run_id": run_id,
        "status": status,
        "error": {"diverged": "loss is nan", "failed": "boom"}.get(status),
        "config": config,
        "summary": None if status == "failed" else summary,
        "history": history or [{"epoch": 1, "train_loss": 1.0, "train_acc": 0.5}],
        "timing": {"total_s": 1.0, "setup_s": 0.1, "epoch_s_mean": 0.01},
        "versions": {"python": "3.11", "torch": "2.13.0", "lipnorm_exp": "0.1.0"},
        "git_commit": None,
        "device": "cpu",
        "started_at": "2024-01-01T00:00:00",
        "finished_at": "2024-01-01T00:01:00",
    }


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


def gradient_history(depth, growth):
    return [
        {
            "epoch": e,
            "train_acc": 0.1 * e,
            "grad_attn": [growth ** (e + layer / depth) for layer in range(depth)],
            "grad_layer": [1.0] * depth,
        }
        for e in range(1, 6)
    ]


# (val, test) per seed
GAT_D2 = [(0.80, 0.81), (0.78, 0.83), (0.79, 0.82)]
GAT_D2_LR = [(0.70, 0.90), (0.72, 0.91), (0.71, 0.92)]  # better test, worse validation
GAT_D5 = [(0.76, 0.70), (0.77, 0.71), (0.75, 0.72)]
LIP_D2 = [(0.75, 0.70), (0.76, 0.71), (0.74, 0.72)]
LIP_D5 = [(0.81, 0.831), (0.82, 0.836), (0.80, 0.826)]
GAT100_D4 = [(0.60, 0.66), (0.62, 0.64), (0.40, 0.35)]  # the last seed diverged
LIP100_D11 = [(0.70, 0.75), (0.71, 0.76)]


def fixture_records():
    cora100 = {"missing_rate": 1.0}
    records = [
        *seeds(GAT_D2, depth=2),
        *seeds(GAT_D2_LR, depth=2, lr=0.01),
        *seeds(GAT_D5, depth=5),
        *seeds(LIP_D2, depth=2, norm="lip"),
        *seeds(LIP_D5, depth=5, norm="lip"),
        *seeds(GAT100_D4[:2], depth=4, **cora100),
        make_record(seed=2, depth=4, val=0.40, test=0.35, status="diverged", **cora100),
        *[
            make_record(seed=k, depth=10, val=None, test=None, status="diverged", **cora100)
            for k in range(3)
        ],
        *seeds(LIP100_D11, depth=11, norm="lip", **cora100),
        make_record(seed=2, depth=11, norm="lip", status="failed", **cora100),
        make_record(depth=30, norm="lip", val=0.99, test=0.99, **cora100),  # beyond Table 1's grid
        make_record(depth=3, val=0.99, test=0.10, scale="quick"),  # another scale
        make_record(dataset="pubmed", model="gcn", depth=2, val=0.5, test=0.44, **cora100),
    ]
    for norm, growth in (("none", 10.0), ("lip", 1.01)):
        records.append(
            make_record(
                depth=20, norm=norm, val=0.3, test=0.3, history=gradient_history(20, growth)
            )
        )
    for tree_depth in (2, 3):
        for norm in ("none", "lip"):
            records += seeds(
                [(0.5, 0.5)] * 2,
                dataset="trees",
                depth=tree_depth + 1,
                tree_depth=tree_depth,
                norm=norm,
                train=0.9 / tree_depth,
            )
    return records


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
    return write_records(tmp_path_factory.mktemp("records") / "runs", fixture_records())


@pytest.fixture(scope="module")
def frame(runs_dir):
    return load_records(runs_dir)


@pytest.fixture(scope="module")
def usable(frame):
    return usable_runs(frame, "paper")


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


def test_load_records_flattens_and_skips_non_records(tmp_path):
    record = make_record(depth=7, val=0.6, test=0.5)
    write_records(tmp_path, [record, record])  # one run copied into two folders
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    with pytest.warns(UserWarning, match="not a run record"):
        frame = load_records(tmp_path)
    assert len(frame) == 1
    row = frame.iloc[0]
    assert (row["label"], row["depth"], row["lr"], row["best_val_acc"]) == ("GAT", 7, 0.005, 0.6)
    assert isinstance(row["history"], list) and "seed" not in json.loads(row["setting"])


def test_scale_choice_and_usable_runs(frame, usable):
    assert report_scales(frame) == ["paper", "quick"]
    assert report_scales(frame, "quick") == ["quick"]
    assert report_scales(frame[frame["scale"] == "quick"]) == ["quick"]
    assert set(usable["scale"]) == {"paper"} and "failed" not in set(usable["status"])
    never_evaluated = usable[(usable["status"] == "diverged") & (usable["depth"] == 10)]
    assert len(never_evaluated) == 3 and (never_evaluated["best_val_acc"] == 0).all()


def test_table1_cells(usable):
    display, cells = build_table(usable, TABLE1)
    assert display.loc["GAT", "Cora 0%"] == cell(GAT_D2, depth=2)
    assert display.loc["GAT-Lip", "Cora 0%"] == cell(LIP_D5, depth=5)
    assert display.loc["GAT", "Cora 100%"] == cell(GAT100_D4, depth=4, diverged=1)
    assert display.loc["GAT-Lip", "Cora 100%"] == cell(LIP100_D11, depth=11)  # not depth 30
    assert display.loc["GCN", "PubMed 100%"] == cell([(0.5, 0.44)], depth=2)
    assert display.loc["GAT", "CiteSeer 0%"] == MISSING
    assert display.loc["GAT-Lip", "Cora 0% paper"] == str(paper.TABLE1["GAT-Lip"]["cora", 0.0])
    assert display.loc["GAT-Lip", "Cora 0% paper"] == "83.1 ± 0.5 (5)"
    assert list(display.index[:5]) == ["GCN", "GGNN", "GAT", "GAT-PN", "GAT-Lip"]
    chosen = cells.set_index(["model", "column"]).loc[("GAT", "Cora 0%")]
    assert (chosen["lr"], chosen["depth"], chosen["n"]) == (0.005, 2, 3)
    gat100 = cells.set_index(["model", "column"]).loc[("GAT", "Cora 100%")]
    assert (gat100["n_diverged"], gat100["cell_diverged"], gat100["cell_runs"]) == (1, 4, 6)


def test_tables_never_mix_scales(frame):
    display, _ = build_table(usable_runs(frame, "quick"), TABLE1)
    assert display.loc["GAT", "Cora 0%"] == "10.0 (3)"
    assert display.loc["GAT-Lip", "Cora 0%"] == MISSING


def test_table3_fixed_depth_and_skips():
    runs = [
        *seeds([(0.7, 0.76), (0.7, 0.78)], depth=15, residual=True),
        *seeds([(0.6, 0.60), (0.6, 0.64)], depth=15, residual=True, lr=0.01),
        *seeds([(0.2, 0.20)], depth=30, dataset="pubmed", norm="lip"),
        *seeds([(0.9, 0.90)], depth=15, missing_rate=1.0),  # another setting: not Table 3's
    ]
    usable = usable_runs(records_frame([record_row(r) for r in runs]), "paper")
    display, _ = build_table(usable, TABLE3)
    assert display.loc["GAT-res", "Cora 15 layers"] == cell([(0.7, 0.76), (0.7, 0.78)])
    assert display.loc["GAT-Lip", "PubMed 30 layers"] == cell([(0.2, 0.20)])
    assert display.loc["GAT", "Cora 15 layers"] == MISSING
    assert display.loc["GAT", "Cora 15 layers paper"] == "38.2 ± 1.7"
    assert build_table(usable, TABLE2) is None


def is_png(path):
    image = imread(path)
    return image.ndim == 3 and image.shape[2] in (3, 4) and image.shape[0] > 100


def test_figures_written_or_skipped(usable, tmp_path, capsys):
    written = write_figures(usable, tmp_path)
    out = capsys.readouterr().out
    drawn = {"fig2_gradients", "fig3_train_acc", "fig5_trees", "fig6_depth"}
    assert {path.stem for path in written} == drawn
    assert all(is_png(tmp_path / f"{name}.png") for name in drawn)
    assert all((tmp_path / f"{name}.pdf").read_bytes().startswith(b"%PDF") for name in drawn)
    assert "fig4_pubmed_depth: no records, skipped" in out
    assert not (tmp_path / "fig4_pubmed_depth.png").exists()
    assert all(FIGURES[name](usable.iloc[:0]) is None for name in FIGURES)


def test_fig2_uses_log_scale_and_one_seed(usable):
    fig = FIGURES["fig2_gradients"](usable)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 2
    assert type(images[0].norm).__name__ == "LogNorm"
    assert images[0].norm.vmax == pytest.approx(10.0 ** (5 + 19 / 20))
    assert images[0].get_array().shape == (20, 5)


def test_fig5_marks_paper_depth10(usable):
    ax = FIGURES["fig5_trees"](usable).axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert np.allclose(lines["GAT-Lip"].get_ydata(), [45.0, 30.0])
    marked = [c.get_offsets()[0].tolist() for c in ax.collections if "paper" in c.get_label()]
    assert [paper.TREES_DEPTH, paper.TREES_TRAIN_ACC["GAT-Lip"]] in marked


def test_cli_end_to_end(runs_dir, tmp_path, capsys):
    assert main(["--runs", str(runs_dir), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1 failed ignored" in out and "table3_residual: no records, skipped" in out
    paper_dir = tmp_path / "paper"
    for suffix in ("md", "tex", "csv"):
        assert f"wrote {paper_dir / 'tables' / f'table1_missing_vector.{suffix}'}" in out
    markdown = (paper_dir / "tables" / "table1_missing_vector.md").read_text()
    assert cell(LIP_D5, depth=5) in markdown and "Cora 0% paper" in markdown
    assert r"$\pm$" in (paper_dir / "tables" / "table1_missing_vector.tex").read_text()
    csv = pd.read_csv(paper_dir / "tables" / "table2_gcnii.csv")
    assert set(csv["model"]) == {"GCNII", "GAT-Lip"}
    summary = pd.read_csv(paper_dir / "tables" / "summary.csv")
    assert set(summary["scale"]) == {"paper"} and summary["failed"].sum() == 1
    assert is_png(paper_dir / "figures" / "fig6_depth.png")
    quick = pd.read_csv(tmp_path / "quick" / "tables" / "table1_missing_vector.csv")
    assert quick.dropna(subset=["mean"])["model"].tolist() == ["GAT"]


def test_cli_subprocess_only_tables(runs_dir, tmp_path):
    args = ["--runs", str(runs_dir), "--out", str(tmp_path), "--only", "tables", "--scale", "quick"]
    result = subprocess.run(
        [sys.executable, "-m", "lipnorm_exp.report", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "scale quick:" in result.stdout
    assert not (tmp_path / "paper").exists() and not (tmp_path / "quick" / "figures").exists()
    cells = pd.read_csv(tmp_path / "quick" / "tables" / "table1_missing_vector.csv")
    assert cells.dropna(subset=["mean"])["model"].tolist() == ["GAT"]


def test_cli_without_records_skips_everything(tmp_path, capsys):
    assert main(["--runs", str(tmp_path / "none"), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "table1_missing_vector: no records, skipped" in out and "wrote" not in out
    assert not (tmp_path / "out").exists()
