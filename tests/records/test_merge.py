"""``lipnorm-exp-merge``: records of real runs made in other folders merged into one folder.

Each source record meets the folder's record of its run: copied where there is none, tags
added where the result is the same, a finished record replacing an unfinished one, an
unfinished one never merged, and two different finished results a conflict that writes nothing
unless ``--prefer`` decides it.
"""

import errno
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import environment
from conftest import CONFIGS, compose_config
from hydra import compose, initialize_config_dir

import lipnorm_exp.records.merge as merge_module
import lipnorm_exp.records.store as store
from lipnorm_exp.records import (
    EPOCH_TIME_KEY,
    INTERRUPTED,
    RUNS_FOLDER,
    add_tags,
    record_path,
    schema,
    write_record,
)
from lipnorm_exp.records.merge import ERROR_PREFIX, apply_merge, main, plan_merge
from lipnorm_exp.training.launch import run
from lipnorm_exp.util.atomic import temp_path

TINY = ("model.depth=1", "model.hidden=8", "model.heads=1", "train.epochs=3")


def train(folder: Path, data_dir: Path, *overrides: str) -> str:
    """One real run whose record goes to ``folder/runs``; returns its run id."""
    cfg = compose_config(folder, [*TINY, f"paths.data_dir={data_dir}", *overrides])
    [record] = run(cfg)
    return record["run_id"]


@pytest.fixture(scope="module")
def made(tmp_path_factory, data_dir) -> dict:
    """Run ``x`` (seed 0) made in two folders under two tags, run ``y`` (seed 1) in the second."""
    here, there = tmp_path_factory.mktemp("here"), tmp_path_factory.mktemp("there")
    x = train(here, data_dir, "tags=[made_here]")
    assert train(there, data_dir, "tags=[made_there]") == x
    y = train(there, data_dir, "seed=1", "tags=[made_there]")
    return {"here": here / "runs", "there": there / "runs", "x": x, "y": y}


@pytest.fixture
def folders(made, tmp_path) -> tuple[Path, Path]:
    """Copies of the two folders of records: (the folder merged into, the source)."""
    into, source = tmp_path / "into", tmp_path / "source"
    shutil.copytree(made["here"], into)
    shutil.copytree(made["there"], source)
    return into, source


def read(folder: Path, rid: str) -> dict:
    return json.loads(record_path(folder, rid).read_text())


def edit(folder: Path, rid: str, **changes) -> dict:
    """Change the stored record of ``rid`` (``test``: its result, as another machine's would)."""
    record = read(folder, rid)
    if "test" in changes:
        record["summary"][schema.TEST_ACC_AT_BEST_VAL] = changes.pop("test")
        record["history"][-1]["test_acc"] = record["summary"][schema.TEST_ACC_AT_BEST_VAL]
    record.update(changes)
    record_path(folder, rid).write_text(json.dumps(record, indent=1))
    return record


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_the_runs_were_made_twice_with_their_own_times_and_one_result(made):
    here, there = read(made["here"], made["x"]), read(made["there"], made["x"])
    assert [row[EPOCH_TIME_KEY] for row in here["history"]] != [
        row[EPOCH_TIME_KEY] for row in there["history"]
    ]
    assert here["summary"] == there["summary"]


def test_records_new_to_the_folder_are_copied_and_the_source_is_left_as_it_was(
    made, tmp_path, capsys
):
    source = tmp_path / "source"
    shutil.copytree(made["there"], source)
    before = contents(source)
    assert main([str(source), "--into", str(tmp_path / "new")]) == 0
    assert f"merged 2 records into {tmp_path / 'new'}: 2 new" in capsys.readouterr().out
    for rid in (made["x"], made["y"]):
        assert read(tmp_path / "new", rid) == read(source, rid)
    assert contents(source) == before


def test_a_full_disk_ends_the_merge_in_one_line_naming_the_folder(
    made, tmp_path, monkeypatch, capsys
):
    def no_space(descriptor):
        raise OSError(errno.ENOSPC, "No space left on device")

    into = tmp_path / "new"
    monkeypatch.setattr(store.os, "fsync", no_space)
    assert main([str(made["there"]), "--into", str(into)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"{ERROR_PREFIX}no space left on the device of {into} to write ")
    assert line.endswith(" kB needed); free space there and run the command again")
    assert list(into.glob("*.json")) == list(into.glob(".*.tmp")) == []


def test_a_merge_removes_what_a_killed_writer_left_in_the_folder(made, tmp_path):
    into = tmp_path / "into"
    into.mkdir()
    dead = temp_path(into / f"{made['x']}.json", pid=999999999)  # its writer is gone
    dead.write_text("{")
    assert main([str(made["there"]), "--into", str(into)]) == 0
    assert list(into.glob(".*.tmp")) == []


def test_the_same_run_made_elsewhere_only_adds_its_tags_and_a_second_merge_does_nothing(
    folders, made, capsys
):
    into, source = folders
    kept = read(into, made["x"])
    assert main([str(source), "--into", str(into)]) == 0
    assert "2 records into" in capsys.readouterr().out
    merged = read(into, made["x"])
    assert merged["config"]["tags"] == ["made_here", "made_there"]
    assert merged["history"] == kept["history"]  # the folder's own times stay
    assert {**merged, "config": kept["config"]} == kept
    assert read(into, made["y"]) == read(source, made["y"])
    before = contents(into)
    assert main([str(source), "--into", str(into)]) == 0
    assert ": 2 same" in capsys.readouterr().out
    assert contents(into) == before


def test_two_different_finished_results_stop_the_merge_before_anything_is_written(
    folders, made, capsys
):
    into, source = folders
    edit(source, made["x"], test=0.123, finished_at="2099-01-01T00:00:00+00:00")
    before = contents(into)
    assert main([str(source), "--into", str(into)]) == 1
    out, err = capsys.readouterr()
    assert f"conflict {made['x']} (" in out and "source: completed, test 12.3% on cpu" in out
    assert err.count("\n") == 1 and err.startswith(ERROR_PREFIX) and "--prefer" in err
    assert contents(into) == before  # not even the new run y


@pytest.mark.parametrize(
    ("prefer", "winner"), [("target", "into"), ("source", "source"), ("newer", "source")]
)
def test_prefer_decides_a_conflict_and_the_kept_record_names_every_tag(
    folders, made, prefer, winner
):
    into, source = folders
    edit(source, made["x"], test=0.123, finished_at="2099-01-01T00:00:00+00:00")
    expected = read(folders[0] if winner == "into" else source, made["x"])
    assert main([str(source), "--into", str(into), "--prefer", prefer]) == 0
    merged = read(into, made["x"])
    assert merged["summary"] == expected["summary"]
    assert sorted(merged["config"]["tags"]) == ["made_here", "made_there"]
    assert read(into, made["y"]) == read(source, made["y"])


def test_prefer_newer_keeps_the_folders_record_when_it_finished_later(folders, made):
    into, source = folders
    edit(source, made["x"], test=0.123, finished_at="2000-01-01T00:00:00+00:00")
    kept = read(into, made["x"])["summary"]
    assert main([str(source), "--into", str(into), "--prefer", "newer"]) == 0
    assert read(into, made["x"])["summary"] == kept


def test_prefer_newer_never_puts_an_unversioned_record_over_a_versioned_one(folders, made, capsys):
    into, source = folders
    # finished later, but made before numerics were versioned: the folder's record is newer
    edit(source, made["x"], test=0.123, numerics=None, finished_at="2099-01-01T00:00:00+00:00")
    kept = read(into, made["x"])
    assert kept["numerics"] is not None
    assert main([str(source), "--into", str(into), "--prefer", "newer"]) == 0
    assert read(into, made["x"])["summary"] == kept["summary"]
    line = next(line for line in capsys.readouterr().out.splitlines() if made["x"] in line)
    assert f"numerics {kept['numerics']}" in line and "unversioned numerics" in line


def test_an_unfinished_record_is_never_merged_and_a_finished_one_replaces_one(
    folders, made, tmp_path, capsys
):
    into, source = folders
    edit(source, made["y"], status=INTERRUPTED)
    edit(into, made["x"], status=INTERRUPTED, test=0.5)
    assert main([str(source), "--into", str(into)]) == 0
    assert ": 1 replace, 1 unfinished" in capsys.readouterr().out
    assert not record_path(into, made["y"]).exists()
    replaced = read(into, made["x"])
    assert replaced["summary"] == read(source, made["x"])["summary"]
    assert replaced["status"] == "completed"
    assert replaced["config"]["tags"] == ["made_there", "made_here"]
    edit(source, made["x"], status=INTERRUPTED)
    assert main([str(source), "--into", str(tmp_path / "empty")]) == 0
    assert not list((tmp_path / "empty").glob("*.json"))


def test_a_broken_record_in_the_folder_is_set_aside_and_a_broken_source_file_passed_over(
    folders, made, capsys
):
    into, source = folders
    record_path(into, made["x"]).write_text("{ not json")
    record_path(source, made["y"]).write_text("[1, 2]")
    with pytest.warns(UserWarning, match=f"{made['y']}.json: not a run record"):
        assert main([str(source), "--into", str(into)]) == 0
    assert ": 1 new" in capsys.readouterr().out
    assert read(into, made["x"]) == read(source, made["x"])
    assert [p.read_text() for p in into.glob(f"{made['x']}.json.broken-*")] == ["{ not json"]
    assert record_path(source, made["y"]).read_text() == "[1, 2]"
    assert not record_path(into, made["y"]).exists()


def test_tags_a_sweep_adds_between_the_plan_and_the_writing_are_kept(folders, made):
    into, source = folders
    steps = plan_merge([source], into)
    add_tags(into, read(into, made["x"]), ["added_meanwhile"])
    apply_merge(steps, into)
    assert read(into, made["x"])["config"]["tags"] == ["made_here", "made_there", "added_meanwhile"]


def test_two_merges_of_one_plan_write_each_record_once_and_say_what_they_wrote(
    made, tmp_path, capsys, monkeypatch
):
    """Two merges planned before either wrote: the second finds the records there already."""
    into = tmp_path / "into"
    stale = plan_merge([made["there"]], into)  # both merges plan: 2 new
    assert main([str(made["there"]), "--into", str(into)]) == 0
    assert f"wrote 2 records into {into}\n" in capsys.readouterr().out
    monkeypatch.setattr(merge_module, "plan_merge", lambda *args: stale)
    before = {path.name: path.read_bytes() for path in into.glob("*.json")}
    assert main([str(made["there"]), "--into", str(into)]) == 0
    out = capsys.readouterr().out
    assert ": 2 new" in out  # what its plan said
    assert f"wrote 0 records into {into}; 2 held already (written since the plan" in out
    assert {path.name: path.read_bytes() for path in into.glob("*.json")} == before


def test_ctrl_c_leaves_every_record_whole_and_a_second_merge_finishes(
    made, tmp_path, monkeypatch, capsys
):
    written = []

    def write_then_stop(folder, record):
        if written:
            raise KeyboardInterrupt
        written.append(record["run_id"])
        return write_record(folder, record)

    monkeypatch.setattr(merge_module, "write_record", write_then_stop)
    into = tmp_path / "into"
    assert main([str(made["there"]), "--into", str(into)]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "interrupted (Ctrl-C)" in err
    assert [p.name for p in into.glob("*.json")] == [f"{written[0]}.json"]
    assert read(into, written[0]) == read(made["there"], written[0])
    monkeypatch.undo()
    assert main([str(made["there"]), "--into", str(into)]) == 0
    assert ": 1 new, 1 same" in capsys.readouterr().out


def test_sources_merge_in_order_and_a_dry_run_writes_nothing(folders, made, tmp_path, capsys):
    into, source = folders
    other = tmp_path / "other"
    shutil.copytree(source, other)
    edit(other, made["x"], test=0.123)
    target = tmp_path / "target"
    assert main([str(source), str(other), "--into", str(target), "--dry-run"]) == 1
    assert "source: completed, test 12.3%" in capsys.readouterr().out
    assert not target.exists()
    assert main([str(source), str(source), "--into", str(target), "--dry-run"]) == 0
    assert "would merge 4 records into" in capsys.readouterr().out
    assert not target.exists()


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (["missing"], "source missing is not a folder; give folders of run records"),
        (["into"], "source into is the folder --into names; give another folder"),
        (["source", "--into", "file"], "--into file is a file, not a folder; give a folder"),
        (["source", "--prefer", "mine"], "argument --prefer: invalid choice: 'mine'"),
        ([], "the following arguments are required: sources"),
        (["source", "--into", ""], "argument --into: '' is not a folder (a non-empty path)"),
        (["source", ""], "argument sources: '' is not a folder (a non-empty path)"),
    ],
)
def test_the_command_refuses_a_bad_argument_in_one_line(tmp_path, arguments, says):
    for folder in ("source", "into"):
        (tmp_path / folder).mkdir()
    (tmp_path / "file").write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "lipnorm_exp.records.merge", "--into", "into", *arguments],
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(ERROR_PREFIX) and says in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_the_default_folder_is_the_one_runs_write_their_records_to(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LIPNORM_RESULTS_DIR", raising=False)
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        cfg = compose("config")
    assert Path(cfg.paths.results_dir).resolve() == (tmp_path / RUNS_FOLDER).resolve()
