"""The command line end to end: multiruns on each launcher, resuming after a kill, a preset,
and the one-line errors. Every test starts ``python -m lipnorm_exp`` in a subprocess with a
tiny model on Cora and its records, logs and data under ``tmp_path``.
"""

import json
import os
import re
import signal
import subprocess
import time
from contextlib import suppress
from pathlib import Path

import pytest
import torch
from cli_helpers import (
    ERROR_PREFIX,
    REPO,
    TINY,
    cli,
    command,
    environment,
    prepared_data,
    records,
    start,
    tally_line,
)
from conftest import compose_config

from lipnorm_exp.lock import folder_lock
from lipnorm_exp.records import run_id
from lipnorm_exp.train import train_run

pytestmark = pytest.mark.slow

MODEL_OPTIONS = sorted(path.stem for path in (REPO / "configs" / "model").glob("*.yaml"))


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """Cora copied in and processed once, shared by the runs of this module."""
    return prepared_data(tmp_path_factory.mktemp("data"))


def assert_completed(found: dict[str, dict], seeds: set[int]) -> None:
    assert {record["config"]["seed"] for record in found.values()} == seeds
    for rid, record in found.items():
        assert record["run_id"] == rid
        assert record["status"] == "completed", record["error"]
        assert record["summary"]["epochs_run"] == record["config"]["train"]["epochs"]


def test_basic_launcher_numbers_the_runs_and_tallies(tmp_path, data_dir):
    out = cli(command(tmp_path, data_dir, "--multirun", "seed=0,1", *TINY))
    assert out.returncode == 0, out.stderr
    log = out.stdout + out.stderr
    assert re.search(r"\[1/2\] run \w+ completed", log)
    assert re.search(r"\[2/2\] run \w+ completed", log)
    assert tally_line(completed=2) in log
    found = records(tmp_path)
    assert len(found) == 2
    assert_completed(found, {0, 1})


def test_joblib_launcher_writes_one_record_per_run(tmp_path, data_dir):
    overrides = ("hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "seed=0,1,2,3")
    out = cli(command(tmp_path, data_dir, "--multirun", *overrides, *TINY))
    assert out.returncode == 0, out.stderr
    assert "Joblib.Parallel(n_jobs=2" in out.stdout + out.stderr
    assert tally_line(completed=4) in out.stdout + out.stderr
    found = records(tmp_path)
    assert len(found) == 4
    assert_completed(found, {0, 1, 2, 3})
    kept = [path for path in (tmp_path / "runs").iterdir() if path.name != ".locks"]
    assert sorted(path.suffix for path in kept) == [".json"] * 4


def test_submitit_local_launcher_runs_each_job_in_its_own_process(tmp_path, data_dir):
    overrides = ("hydra/launcher=submitit_local", "hydra.launcher.timeout_min=2", "seed=0,1")
    out = cli(command(tmp_path, data_dir, "--multirun", *overrides, *TINY))
    assert out.returncode == 0, out.stderr
    assert tally_line(completed=2) in out.stdout + out.stderr
    assert list((tmp_path / "logs").glob("multiruns/*/.submitit/*/*_result.pkl"))
    found = records(tmp_path)
    assert len(found) == 2
    assert_completed(found, {0, 1})


def test_relaunch_after_a_kill_skips_the_finished_runs(tmp_path, data_dir):
    # long enough per run that the kill lands while the first runs are still to come
    args = command(tmp_path, data_dir, "--multirun", "seed=0,1,2,3", *TINY, "train.epochs=100")
    runs = tmp_path / "runs"
    sweep = start(args, start_new_session=True)
    deadline = time.monotonic() + 120
    try:
        while not list(runs.glob("*.json")) and sweep.poll() is None:
            assert time.monotonic() < deadline, "no record within 120 s"
            time.sleep(0.01)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(sweep.pid, signal.SIGKILL)
        _, stderr = sweep.communicate()
    assert sweep.returncode == -signal.SIGKILL, stderr
    before = {
        path.name: (path.stat().st_mtime_ns, json.loads(path.read_text())["started_at"])
        for path in runs.glob("*.json")
    }
    assert 1 <= len(before) < 4, "the sweep was not interrupted: make its runs longer"

    out = cli(args, timeout=600)  # a guard against a hang: 100-epoch runs are slow under load
    assert out.returncode == 0, out.stderr
    log = out.stdout + out.stderr
    assert tally_line(completed=4 - len(before), skipped=len(before)) in log
    assert log.count("skip run") == len(before)
    after = {
        path.name: (path.stat().st_mtime_ns, json.loads(path.read_text())["started_at"])
        for path in runs.glob("*.json")
    }
    assert {name: after[name] for name in before} == before
    found = records(tmp_path)
    assert len(found) == 4
    assert_completed(found, {0, 1, 2, 3})
    assert [path for path in runs.iterdir() if path.suffix != ".json"] == [runs / ".locks"]


def test_a_run_another_process_holds_is_waited_for_then_skipped(tmp_path, data_dir):
    """Two processes given one run: the second waits for the first's record and reuses it."""
    cfg = compose_config(tmp_path, [*TINY, f"paths.data_dir={data_dir}"])
    rid, results_dir = run_id(cfg), Path(cfg.paths.results_dir)
    args = command(tmp_path, data_dir, *TINY)
    with folder_lock(results_dir, f"run-{rid}"):  # this process is "training" the run
        second = start(args, stderr=subprocess.STDOUT)
        log = []
        for line in second.stdout:  # ends at the process's exit if it never waits
            log.append(line)
            if f"run {rid}: another process holds it; waiting" in line:
                break
        assert second.poll() is None, "".join(log)
        first = train_run(cfg, rid, results_dir, torch.device("cpu"), "")
    rest, _ = second.communicate(timeout=300)
    assert second.returncode == 0, rest
    assert f"skip run {rid}: a completed record exists" in rest
    (record,) = records(tmp_path).values()
    assert record["started_at"] == first["started_at"] and record["status"] == "completed"


def test_preset_end_to_end(tmp_path, data_dir):
    overrides = (
        "+experiment=residual",
        "grid.quick.epochs=2",
        "grid.quick.seeds=0",
        "grid.quick.methods='gat,gat_lip_res'",
        "grid.quick.depths=2",
        "model.hidden=8",
        "model.heads=1",
    )
    out = cli(command(tmp_path, data_dir, *overrides))
    assert out.returncode == 0, out.stderr
    assert tally_line(completed=2) in out.stdout + out.stderr
    found = records(tmp_path).values()
    models = [(r["config"]["model"], r["config"]["norm"]["name"]) for r in found]
    methods = sorted((model["name"], norm, model["residual"]) for model, norm in models)
    assert methods == [("gat", "lip", True), ("gat", "none", False)]
    for record in found:
        assert record["status"] == "completed"
        assert record["config"]["tags"] == ["residual"]
        assert record["config"]["model"]["depth"] == 2
        assert record["config"]["train"]["epochs"] == 2


#: command lines that must fail, by name (``{empty}``: a folder with no data)
ERROR_CASES = {
    "missing_rate": ("dataset.missing_rate=1.5",),
    "depth": ("model.depth=0",),
    "lip_on_gcn": ("model=gcn", "norm=lip"),
    "no_data": ("paths.raw_dirs=[]", "paths.data_dir={empty}", "dataset.download=false"),
    "unknown_option": ("model=foo",),
    "in_a_multirun": ("--multirun", "model.depth=0,1", "model.hidden=8"),
    "unwritable_results": ("paths.results_dir=/proc/lipnorm_runs", "paths.data_dir={empty}/d"),
    "preset_scale": ("+experiment=residual", "scale=huge"),
    "unknown_key_in_a_sweep": ("--multirun", "+foo=1", "seed=0,1"),
    "grid_key_swept": ("+experiment=trees", "grid.quick.seeds=range(3)"),
}
#: wrong types and unknown keys through the real CLI: case name → (override, the key its one line
#: must name); one of each kind of check (a type, a boolean, a choice, an unknown key), as
#: tests/test_config.py checks every message of the validation in-process
WRONG_TYPES = {
    "depth_abc": ("model.depth=abc", "model.depth"),
    "residual_no": ("model.residual=no", "model.residual"),
    "unknown_key": ("+foo=1", "foo"),
    "device_tpu": ("device=tpu", "device"),
}
ERROR_CASES.update({name: (override,) for name, (override, _) in WRONG_TYPES.items()})


@pytest.fixture(scope="module")
def error_runs(tmp_path_factory, data_dir):
    """Every case of :data:`ERROR_CASES` started at once (each CLI start is mostly imports)."""
    root = tmp_path_factory.mktemp("errors")
    (root / "empty").mkdir()
    processes = {}
    for name, overrides in ERROR_CASES.items():
        filled = [override.format(empty=root / "empty") for override in overrides]
        processes[name] = start(command(root / name, data_dir, "train.epochs=2", *filled))
    try:
        results = {name: process.communicate(timeout=300) for name, process in processes.items()}
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
    return root, {name: (processes[name].returncode, *results[name]) for name in processes}


@pytest.mark.parametrize(
    "case, key",
    [
        ("missing_rate", "dataset.missing_rate"),
        ("depth", "model.depth"),
        ("lip_on_gcn", "norm=lip"),
    ],
)
def test_a_bad_value_ends_a_run_with_one_line_naming_the_key(error_runs, case, key):
    root, results = error_runs
    code, _, stderr = results[case]
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(ERROR_PREFIX)
    assert key in lines[0]
    assert not (root / case / "runs").exists()


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_a_wrong_type_or_unknown_key_ends_in_one_line_without_a_traceback(error_runs, case):
    root, results = error_runs
    code, stdout, stderr = results[case]
    override, key = WRONG_TYPES[case]
    assert code == 2
    assert "Traceback" not in stdout + stderr
    (line,) = stderr.strip().splitlines()
    assert line.startswith(f"{ERROR_PREFIX}{key}")
    assert override.split("=", 1)[1] in line  # the value
    assert "must be" in line or "allowed: " in line  # what is allowed
    assert not (root / case / "runs").exists() and not (root / case / "logs").exists()


@pytest.mark.parametrize(
    ("case", "line"),
    [
        ("preset_scale", "scale must be quick or paper, got huge"),
        ("unknown_key_in_a_sweep", "foo=1 is not a key of the config; allowed: ablation, "),
        (
            "grid_key_swept",
            "grid.quick.seeds=range(3) sweeps over the grid key grid.quick.seeds instead of "
            "setting it; quote the value to set the preset's axis: \"grid.quick.seeds='range(3)'\"",
        ),
    ],
)
def test_a_value_wrong_for_every_job_stops_a_sweep_before_its_first_job(error_runs, case, line):
    root, results = error_runs
    code, stdout, stderr = results[case]
    assert code == 2 and "Traceback" not in stdout + stderr
    assert stderr.strip().splitlines()[-1].startswith(f"{ERROR_PREFIX}{line}")
    assert not (root / case / "logs").exists()


def test_an_unwritable_results_folder_fails_before_any_data_is_read(error_runs):
    root, results = error_runs
    code, _, stderr = results["unwritable_results"]
    assert code == 2
    (line,) = stderr.strip().splitlines()
    assert line.startswith(f"{ERROR_PREFIX}paths.results_dir=/proc/lipnorm_runs is not a writable")
    assert not (root / "empty" / "d").exists()


def test_hydra_full_error_shows_the_traceback(tmp_path, data_dir):
    args = command(tmp_path, data_dir, "model.depth=abc")
    out = subprocess.run(
        args, cwd=REPO, env=environment(HYDRA_FULL_ERROR="1"), capture_output=True, text=True
    )
    assert out.returncode != 0
    assert "Traceback" in out.stderr and "ConfigError: model.depth must be" in out.stderr


def test_absent_data_ends_a_run_with_one_line_naming_the_folder(error_runs):
    root, results = error_runs
    code, _, stderr = results["no_data"]
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(ERROR_PREFIX)
    assert str(root / "empty" / "Planetoid" / "Cora" / "raw") in lines[0]
    assert "ind.cora.graph" in lines[0]


def test_an_unknown_option_lists_the_allowed_ones(error_runs):
    _, results = error_runs
    code, _, stderr = results["unknown_option"]
    assert code == 1
    assert "Could not find 'model/foo'" in stderr
    allowed = stderr.split("Available options in 'model':", 1)[1].split()
    assert allowed[: len(MODEL_OPTIONS)] == MODEL_OPTIONS


def test_a_bad_value_in_a_multirun_fails_that_job_only(error_runs):
    root, results = error_runs
    code, stdout, stderr = results["in_a_multirun"]
    assert code == 1
    assert f"{ERROR_PREFIX}model.depth must be an integer >= 1, got 0" in stderr.splitlines()
    assert "Traceback" not in stdout + stderr
    assert tally_line(completed=1, failed=1) in stdout + stderr
    found = records(root / "in_a_multirun")
    assert len(found) == 1
    assert [record["config"]["model"]["depth"] for record in found.values()] == [1]
