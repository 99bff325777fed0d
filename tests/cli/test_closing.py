"""A run's last line names its record and what to compare it with: the paper's number of its
cell, or the scorecard; through ``python -m lipnorm_exp`` and on records. The log line that ends
a run starts a line of its own beside the progress bar."""

import json
import subprocess
import sys

import pytest
from cli_helpers import TINY, cli, command, environment

from lipnorm_exp.cli.closing import closing_line
from lipnorm_exp.report.paper_presets import published_for
from lipnorm_exp.training.finished import LaunchedRecord


def config(model="gat", norm="lip", dataset="cora", rate=0.0, depth=2, residual=False) -> dict:
    """The keys of a run's resolved config that place it in the paper's tables."""
    return {
        "model": {"name": model, "depth": depth, "residual": residual},
        "norm": {"name": norm, "alpha": 1.0, "variant": "paper"},
        "dataset": {"name": dataset, "missing_rate": rate},
    }


def test_a_run_is_placed_in_every_table_whose_cell_it_belongs_to():
    assert published_for(config(rate=1.0)) == [
        "Table 1 (+experiment=missing_vector) GAT-Lip Cora 100%: 75.3 ± 0.9 at depth 11",
        "Table 2 (+experiment=gcnii) GAT-Lip Cora 100%: 75.3 ± 0.9 at depth 11",
    ]
    assert published_for(config(model="gcnii", norm="none", dataset="pubmed", rate=1.0)) == [
        "Table 2 (+experiment=gcnii) GCNII PubMed 100%: 73.9 ± 0.3 at depth 16"
    ]
    assert published_for(config(depth=15, residual=True)) == [
        "Table 3 (+experiment=residual) GAT-Lip-res Cora 15 layers: 80.2 ± 1.1"
    ]
    assert published_for(config(rate=0.5)) == []  # no table has that missing rate
    assert published_for(config(model="gt")) == []  # nor that model


def trained(rid: str, **placed) -> LaunchedRecord:
    """A run trained now (not reused), with what its last line reads of its record."""
    summary = {"metric": "accuracy", "test_acc_at_best_val": 0.8125, "best_epoch": 7}
    record = {"run_id": rid, "status": "completed", "summary": summary, "config": config(**placed)}
    return LaunchedRecord(record, reused=False)


def test_a_run_in_no_cell_is_pointed_to_a_scorecard_of_its_own(tmp_path, monkeypatch):
    """The report of the committed folder (a run's default) goes to my_report, that of any other
    folder beside it: never into the committed results/."""
    monkeypatch.chdir(tmp_path)
    line = closing_line([trained("abc", model="gt")], tmp_path / "results" / "runs")
    assert line == (
        "lipnorm_exp: record results/runs/abc.json (completed, test accuracy 81.2% at the best "
        "validation epoch 7); no cell of the paper's tables: lipnorm-exp-report --runs "
        "results/runs --out my_report --only scorecard compares a folder's preset runs "
        "(+experiment=<name>) with the paper"
    )
    reused = LaunchedRecord(trained("abc", model="gt").record, reused=True)
    assert "(skipped, test accuracy 81.2% at" in closing_line(
        [reused], tmp_path / "results" / "runs"
    )
    elsewhere = closing_line([trained("a", model="gt"), trained("b", model="gt")], tmp_path / "own")
    assert elsewhere.startswith("lipnorm_exp: records own/a.json, own/b.json; no cell")
    assert "lipnorm-exp-report --runs own --out own_report --only scorecard compares" in elsewhere
    outside = closing_line([trained("a", model="gt")], tmp_path.parent / "theirs")
    assert f"--runs {tmp_path.parent / 'theirs'} --out {tmp_path.parent / 'theirs_report'} " in (
        outside
    )


@pytest.mark.slow  # through the CLI
def test_the_last_line_of_a_run_names_its_record_and_the_paper_s_number(tmp_path):
    done = cli(
        [sys.executable, "-m", "lipnorm_exp", "+debug=fdr", "train.progress=false"],
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = (tmp_path / "debug" / "runs").glob("*.json")
    test_acc = json.loads(path.read_text())["summary"]["test_acc_at_best_val"]
    assert done.stderr.splitlines()[-1] == (
        f"lipnorm_exp: record debug/runs/{path.name} (completed, test accuracy {test_acc:.1%} at "
        "the best validation epoch 1); the paper: Table 1 (+experiment=missing_vector) GAT-Lip "
        "Cora 0%: 83.1 ± 0.5 at depth 5"
    )


def on_screen(line: str) -> str:
    """What a terminal shows of ``line``: each carriage return writes from its start again."""
    shown = ""
    for part in line.split("\r"):
        shown = part + shown[len(part) :]
    return shown


@pytest.mark.slow  # through the CLI
def test_the_log_line_that_ends_a_run_starts_a_line_of_its_own_beside_the_bar(tmp_path, data_dir):
    """The progress bar (stderr) and the log (stdout) in one stream, as a terminal shows them."""
    done = subprocess.run(
        command(tmp_path, data_dir, *TINY, "train.progress=true"),
        cwd=tmp_path,
        env=environment(PYTHONUNBUFFERED="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "it/s]" in done.stdout or "s/it]" in done.stdout  # the bar was drawn
    (ended,) = [line for line in done.stdout.split("\n") if " completed: best val " in line]
    assert on_screen(ended).startswith("["), repr(ended)
    assert "[lipnorm_exp.training.member][INFO] - " in on_screen(ended)
