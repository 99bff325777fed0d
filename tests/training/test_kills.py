"""Kills and stops at chosen moments: nothing finished is lost, nothing half-written breaks the
next run (or the next ``lipnorm-exp-verify``), and a stopped sweep stops its workers.

A run is killed at a chosen point by ``tests/training/kill_points.py``, which patches the writer at
that point to write half of its file and then sends the process a signal; sweeps are stopped by
signalling their process from here.
"""

import json
import os
import shutil
import signal
import socket
import sys
import time
from contextlib import suppress
from pathlib import Path

import pandas as pd
import pytest
import torch
from cli_helpers import ERROR_PREFIX, TINY, cli, command, environment, records, start

from lipnorm_exp.records import COMPLETED, INTERRUPTED, RERUN_SUFFIX
from lipnorm_exp.util.stopping import SWEEP_PID_ENV

pytestmark = pytest.mark.slow

KILL_POINTS = ("tests/training/kill_points.py",)
#: the files of a prepared Cora that the next run reads
PROCESSED = "Planetoid/Cora/processed"


def killed_at(point: str, name: str, tmp_path: Path, data_dir: Path, *overrides: str):
    """The command of a run that sends itself signal ``name`` at ``point``."""
    return command(tmp_path, data_dir, *TINY, *overrides, script=(*KILL_POINTS, point, name))


def temporary_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob(".*.tmp"))


def test_a_kill_at_each_step_of_data_preparation_leaves_a_folder_the_next_run_uses(tmp_path):
    """Killed while copying a raw file, then (the next launch) while writing the processed
    ``data.pt``, then while writing ``pre_transform.pt``: each launch carries on from what the
    one before it left, and the last prepares the data whole and trains."""
    data = tmp_path / "data"
    processed = data / PROCESSED
    for point in ("raw_copy", "processed_data", "pre_transform"):
        killed = cli(killed_at(point, "SIGKILL", tmp_path, data), timeout=300)
        assert killed.returncode == -signal.SIGKILL, (point, killed.stderr)
        if point == "pre_transform":  # data.pt is whole, pre_transform.pt half-written
            assert (processed / "data.pt").exists()
            assert (processed / "pre_transform.pt").stat().st_size > 0
            with pytest.raises(Exception):  # noqa: B017 - whatever torch raises on half a file
                torch.load(processed / "pre_transform.pt", weights_only=False)
        else:  # a half-written temporary file where it was being written, the real one absent
            folder = processed if point == "processed_data" else processed.with_name("raw")
            assert {path.parent for path in temporary_files(data)} == {folder}, point
            assert not (processed / "data.pt").exists()

    again = cli(command(tmp_path, data, *TINY), timeout=300)
    assert again.returncode == 0, again.stderr
    assert [r["status"] for r in records(tmp_path).values()] == [COMPLETED]
    assert temporary_files(data) == []
    assert torch.load(processed / "pre_transform.pt", weights_only=False)  # rebuilt whole


def test_a_truncated_raw_file_is_named_in_one_line(tmp_path, data_dir):
    raw = tmp_path / "data" / "Planetoid" / "Cora" / "raw"
    raw.mkdir(parents=True)
    for path in (data_dir / "Planetoid" / "Cora" / "raw").iterdir():
        (raw / path.name).write_bytes(path.read_bytes())
    truncated = raw / "ind.cora.graph"
    truncated.write_bytes(truncated.read_bytes()[:1000])
    out = cli(command(tmp_path, tmp_path / "data", *TINY), timeout=300)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"{ERROR_PREFIX}{truncated} cannot be read (")


def test_ctrl_c_during_a_forced_rerun_keeps_the_completed_record(tmp_path, data_dir):
    first = cli(command(tmp_path, data_dir, *TINY))
    assert first.returncode == 0, first.stderr
    ((rid, completed),) = records(tmp_path).items()
    path = tmp_path / "runs" / f"{rid}.json"
    before = path.read_bytes()

    rerun = cli(killed_at("epoch_2", "SIGINT", tmp_path, data_dir, "force=true"))
    assert rerun.returncode == 130
    assert "Traceback" not in rerun.stderr
    assert rerun.stderr.strip().splitlines()[-1] == "lipnorm_exp: interrupted (Ctrl-C)"
    assert path.read_bytes() == before
    beside = json.loads(path.with_name(path.name + RERUN_SUFFIX).read_text())
    assert beside["status"] == INTERRUPTED and beside["started_at"] != completed["started_at"]


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_a_stop_while_the_final_record_is_written_stops_the_run_after_it(tmp_path, data_dir, name):
    overrides = ("train.checkpoint_every=1",)
    stopped = cli(killed_at("record_write_whole", name, tmp_path, data_dir, *overrides))
    assert stopped.returncode == 130 and "Traceback" not in stopped.stderr
    ((rid, record),) = records(tmp_path).items()
    assert record["status"] == COMPLETED and len(record["history"]) == 2
    assert not (tmp_path / "runs" / ".checkpoints" / f"{rid}.pt").exists()


def test_a_kill_during_the_record_write_leaves_a_temporary_file_the_next_run_removes(
    tmp_path, data_dir
):
    killed = cli(killed_at("record_write", "SIGKILL", tmp_path, data_dir))
    assert killed.returncode == -signal.SIGKILL
    runs = tmp_path / "runs"
    assert records(tmp_path) == {} and len(temporary_files(runs)) == 1
    again = cli(command(tmp_path, data_dir, *TINY))
    assert again.returncode == 0, again.stderr
    assert temporary_files(runs) == [] and len(records(tmp_path)) == 1


def test_a_record_overwritten_with_random_bytes_is_redone_with_a_warning(tmp_path, data_dir):
    assert cli(command(tmp_path, data_dir, *TINY)).returncode == 0
    (path,) = (tmp_path / "runs").glob("*.json")
    path.write_bytes(os.urandom(300))
    again = cli(command(tmp_path, data_dir, *TINY))
    assert again.returncode == 0, again.stderr
    assert f"{path.name}: not readable as JSON" in again.stdout + again.stderr
    assert json.loads(path.read_text())["status"] == COMPLETED
    assert len(list(path.parent.glob(f"{path.name}.broken-*"))) == 1


#: a finding of another run that a findings file held before verify ran
EARLIER_FINDING = "run_id,verdict,verified_at\naaaaaaaaaaaaaaaa,identical,f60c9eb\n"


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory, data_dir) -> Path:
    """A folder holding the completed record of one tiny run (``TINY``), trained once here for
    the tests that verify it: each copies the folder (`shutil.copytree`) and kills its own."""
    folder = tmp_path_factory.mktemp("tiny")
    assert cli(command(folder, data_dir, *TINY)).returncode == 0
    return folder / "runs"


@pytest.mark.parametrize(
    ("point", "name"),
    [
        ("retrain", "SIGKILL"),  # before the re-training
        (
            "epoch_2",
            "SIGINT",
        ),  # during it (started with Ctrl-C ignored, as in a shell's background)
        ("epoch_2", "SIGTERM"),
        ("epoch_2", "SIGKILL"),
        ("findings_write", "SIGKILL"),  # after it, half of the findings written
        ("findings_written", "SIGKILL"),  # after the findings are written
    ],
)
def test_a_verify_killed_at_any_moment_leaves_the_findings_as_they_were_or_whole(
    tmp_path, data_dir, tiny_runs, point, name
):
    shutil.copytree(tiny_runs, tmp_path / "runs")
    ((rid, _),) = records(tmp_path).items()
    out = tmp_path / "results" / "verification.csv"
    out.parent.mkdir()
    out.write_text(EARLIER_FINDING)
    verify = ["verify", "--runs", str(tmp_path / "runs"), "--out", str(out), "--run-id", rid]
    env = environment(LIPNORM_DATA_DIR=str(data_dir))
    ignore_ctrl_c = (
        (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if name == "SIGINT" else None
    )
    killed = cli(
        [sys.executable, *KILL_POINTS, point, name, *verify], env=env, preexec_fn=ignore_ctrl_c
    )
    if name == "SIGKILL":
        assert killed.returncode == -signal.SIGKILL, killed.stderr
    else:
        assert killed.returncode == 130 and "Traceback" not in killed.stderr
        why = {"SIGINT": "Ctrl-C", "SIGTERM": "stopped by SIGTERM"}[name]
        last = killed.stderr.strip().splitlines()[-1]
        assert last == f"lipnorm_exp.verify: interrupted ({why}); findings so far are written"
    found = pd.read_csv(out, dtype={"run_id": str})
    if point == "findings_written":  # the new finding whole, beside the earlier one
        assert found["run_id"].tolist() == sorted(["aaaaaaaaaaaaaaaa", rid])
        assert found.set_index("run_id").loc[rid, "verdict"] == "identical"
    else:
        assert out.read_text() == EARLIER_FINDING
    # the next verify carries on from what the killed one left, and removes its temporary file
    again = cli([sys.executable, "-m", "lipnorm_exp.cli.verify", *verify[1:], "--again"], env=env)
    assert again.returncode == 0, again.stderr
    found = pd.read_csv(out, dtype={"run_id": str})
    assert found["run_id"].tolist() == sorted(["aaaaaaaaaaaaaaaa", rid])
    assert temporary_files(out.parent) == []


def sweep_processes(sweep_pid: int) -> list[int]:
    """Processes other than the sweep's own that carry its id in their environment."""
    marker = f"{SWEEP_PID_ENV}={socket.gethostname()}:{sweep_pid}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == sweep_pid:
            continue
        with suppress(OSError):
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z" and marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found


def wait_for(condition, what: str, timeout: float = 240):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.05)


LAUNCHERS = {
    "joblib": ("hydra/launcher=joblib", "hydra.launcher.n_jobs=2"),
    "submitit_local": ("hydra/launcher=submitit_local", "hydra.launcher.timeout_min=10"),
}


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
@pytest.mark.parametrize(
    ("launcher", "name"),
    [("joblib", "SIGTERM"), ("joblib", "SIGKILL"), ("submitit_local", "SIGKILL")],
)
def test_stopping_a_sweep_stops_its_workers(tmp_path, data_dir, launcher, name):
    overrides = (*LAUNCHERS[launcher], "seed=0,1", *TINY, "train.epochs=100000")
    sweep = start(command(tmp_path, data_dir, "--multirun", *overrides), start_new_session=True)
    try:
        jobs = tmp_path / "logs" / "multiruns"
        wait_for(lambda: len(list(jobs.glob("*/[01]/.hydra"))) >= 1, "a job started")
        workers = sweep_processes(sweep.pid)
        assert workers, "the jobs run in other processes"
        os.kill(sweep.pid, signal.Signals[name])
        stdout, stderr = sweep.communicate(timeout=120)
        wait_for(lambda: not sweep_processes(sweep.pid), "the workers stopped", timeout=60)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(sweep.pid, signal.SIGKILL)
    if name == "SIGTERM":
        assert sweep.returncode == 130
        assert "Traceback" not in stderr
        assert "sweep stopped: 0 completed, " in stdout + stderr
        assert "without an outcome" in stdout + stderr
    assert all(r["status"] != COMPLETED for r in records(tmp_path).values())
