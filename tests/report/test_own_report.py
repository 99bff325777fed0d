"""A report of one's own runs: its first line (printed, and the scorecard's) says what the records
cover and why the paper's lines are not run; the folder it makes is ignored by git; the records
read into pandas by ``lipnorm_exp.report.load_records``."""

import json
import subprocess

import pandas as pd
from conftest import REPO

from lipnorm_exp.report import load_records
from lipnorm_exp.report.command import main
from lipnorm_exp.report.coverage import coverage, scored_presets
from lipnorm_exp.report.scorecard import MARKDOWN

RUNS = REPO / "results" / "runs"


def committed(scale: str, tag: str | None, count: int) -> list[dict]:
    """``count`` committed records of ``scale`` tagged ``tag`` alone (``None``: untagged)."""
    found = []
    for path in sorted(RUNS.glob("*.json")):
        record = json.loads(path.read_text())
        tags = record["config"].get("tags") or []
        if record["config"]["scale"] == scale and tags == ([tag] if tag else []):
            found.append(record)
            if len(found) == count:
                break
    assert len(found) == count
    return found


def folder_of(records: list[dict], folder) -> None:
    folder.mkdir()
    for record in records:
        (folder / f"{record['run_id']}.json").write_text(json.dumps(record))


def first_paragraph(scorecard: str) -> str:
    """The scorecard's first paragraph after its title, its wrapped lines joined."""
    title, first = scorecard.split("\n\n")[:2]
    assert title == "# Reproduction scorecard"
    return " ".join(first.splitlines())


def test_a_report_of_quick_runs_says_first_what_they_are_and_why_no_line_is_run(tmp_path, capsys):
    records = committed("quick", "residual", 2) + committed("quick", None, 1)
    folder_of(records, tmp_path / "runs")
    out = tmp_path / "my_report"
    assert main(["--runs", str(tmp_path / "runs"), "--out", str(out), "--only", "scorecard"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    protocol = records[2]["config"]["protocol"]["name"]
    assert first.startswith("3 records (3 finished), by scale, protocol and tag: ")
    assert "scale quick, protocol standard: residual (2)" in first
    assert f"scale quick, protocol {protocol}: " in first and "untagged (1)" in first
    assert first.endswith(
        "The scorecard scores a preset's finished runs at scale paper under its paper protocol "
        "(lipnorm-exp +experiment=<preset> scale=paper): these records hold none, so every "
        "line is not run."
    )
    scorecard = (out / MARKDOWN).read_text()
    assert first_paragraph(scorecard) == first
    assert "0 reproduced" in scorecard and " 0 not run" not in scorecard


def test_the_first_line_names_the_presets_without_paper_runs(tmp_path):
    folder_of(committed("paper", "gcnii", 3), tmp_path / "runs")
    line = coverage(load_records(tmp_path / "runs"))
    others = [preset for preset in scored_presets() if preset != "gcnii"]
    assert line.endswith(
        f"these records hold none of {', '.join(others)}, whose lines are not run."
    )
    assert "scale paper, protocol published: gcnii (3)" in line


def test_the_report_folder_it_creates_is_ignored_by_git_and_results_is_not(tmp_path, monkeypatch):
    """``git status`` in a fresh repository shows the runs and results/, never my_report/."""
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q", "."], check=True)
    folder_of(committed("quick", "residual", 1), tmp_path / "runs")
    for out in ("my_report", "results"):
        assert main(["--runs", "runs", "--out", out, "--only", "scorecard"]) == 0
        assert (tmp_path / out / MARKDOWN).is_file()
    assert (tmp_path / "my_report" / ".gitignore").read_text().endswith("\n*\n")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    shown = sorted(line.split()[-1] for line in status.stdout.splitlines())
    assert [path.split("/")[0] for path in shown] == ["results", "results", "runs"], shown


def test_a_report_into_results_or_an_existing_folder_writes_no_gitignore(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder_of(committed("quick", "residual", 1), tmp_path / "runs")
    (tmp_path / "mine").mkdir()
    for out in ("results", "mine"):
        assert main(["--runs", "runs", "--out", out, "--only", "scorecard"]) == 0
        assert (tmp_path / out / MARKDOWN).is_file()
        assert not (tmp_path / out / ".gitignore").exists()


def test_load_records_gives_one_row_per_record_for_pandas(tmp_path):
    records = committed("quick", "residual", 3)
    folder_of(records, tmp_path / "runs")
    frame = load_records(tmp_path / "runs")
    assert isinstance(frame, pd.DataFrame) and len(frame) == 3
    by_id = frame.set_index("run_id")
    for record in records:
        row = by_id.loc[record["run_id"]]
        assert row["test_acc_at_best_val"] == record["summary"]["test_acc_at_best_val"]
        assert row["depth"] == record["config"]["model"]["depth"]
        assert row["dataset"] == record["config"]["dataset"]["name"]
        assert len(row["history"]) == len(record["history"])
    mean = frame.groupby(["label", "depth"])["test_acc_at_best_val"].mean()
    assert mean.notna().all()


def test_a_report_of_runs_of_no_preset_names_no_folder_it_does_not_make(tmp_path, capsys):
    (record,) = committed("quick", None, 1)
    folder_of([record], tmp_path / "runs")
    out = tmp_path / "my_report"
    assert main(["--runs", str(tmp_path / "runs"), "--out", str(out)]) == 0
    protocol = record["config"]["protocol"]["name"]
    printed = capsys.readouterr().out
    assert f"scale quick, protocol {protocol}: no run of a preset, nothing written" in printed
    assert str(out / "quick") not in printed and not (out / "quick").exists()
    assert (out / MARKDOWN).is_file()  # the scorecard, every line not run
