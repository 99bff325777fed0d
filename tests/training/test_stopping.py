"""Stop requests as exceptions, workers that stop with their sweep, the tally of a stopped sweep,
and files written whole."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from lipnorm_exp.records import (
    COMPLETED,
    FAILED,
    INTERRUPTED,
    RERUN_SUFFIX,
    record_path,
    run_id,
    schema,
    write_record,
)
from lipnorm_exp.records.schema import SUMMARY_ACCURACIES
from lipnorm_exp.sweeps.plan import PlannedRun, record_outcomes
from lipnorm_exp.sweeps.progress import (
    ELSEWHERE,
    PROGRESS_FILE,
    SKIPPED,
    noted_skips,
    tally_line,
)
from lipnorm_exp.util.atomic import replacing
from lipnorm_exp.util.processes import process_alive
from lipnorm_exp.util.stopping import (
    SWEEP_PID_ENV,
    WATCH_INTERVAL_S,
    Stopped,
    in_sweep_worker,
    stop_requests,
    sweep_process,
)


def ended_process() -> int:
    """The id of a process that has ended and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_process_is_alive_until_it_ends_even_before_it_is_reaped():
    assert process_alive(os.getpid())
    assert not process_alive(ended_process())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 60
    while Path(f"/proc/{child.pid}").exists() and process_alive(child.pid):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert not process_alive(child.pid)  # a zombie until waited for
    child.wait()


@pytest.mark.parametrize(
    ("value", "worker"),
    [
        (lambda: sweep_process(), False),
        (lambda: f"{socket.gethostname()}:{ended_process()}", True),
        (lambda: f"another-host:{os.getpid() + 1}", False),
        (lambda: "", False),
    ],
    ids=["the_sweep_itself", "a_local_worker", "a_job_elsewhere", "no_sweep"],
)
def test_a_worker_is_a_process_of_a_sweep_on_this_machine_but_not_the_sweep(
    monkeypatch, value, worker
):
    monkeypatch.setenv(SWEEP_PID_ENV, value())
    assert in_sweep_worker() is worker


def test_sigterm_raises_stopped_inside_the_block_and_handlers_come_back():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Stopped, match="^stopped by SIGTERM$"), stop_requests():
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs between two bytecodes
            pass
    assert signal.getsignal(signal.SIGTERM) is before
    assert issubclass(Stopped, KeyboardInterrupt)


def test_a_worker_stops_itself_once_its_sweep_has_ended(monkeypatch):
    monkeypatch.setenv(SWEEP_PID_ENV, f"{socket.gethostname()}:{ended_process()}")
    deadline = time.monotonic() + 20 * WATCH_INTERVAL_S
    with pytest.raises(Stopped, match=r"^stopped: its sweep \(process \d+\) has ended$"):
        with stop_requests():
            while time.monotonic() < deadline:
                time.sleep(0.01)
    assert time.monotonic() < deadline


def _record(name: str, status: str) -> dict:
    """A record of one epoch whose run id is its config's (``name`` tells them apart)."""
    summary = schema.Summary(
        **dict.fromkeys(SUMMARY_ACCURACIES, 0.5),
        metric="accuracy",
        best_epoch=1,
        epochs_run=1,
        diverged_at_epoch=None,
    )
    config = {"dataset": {"name": name}, "model": {"name": "x"}, "norm": {"name": "x"}}
    config["train"] = {}
    history = [{"epoch": 1, "val_acc": 0.5, "test_acc": 0.5}]
    return {"run_id": run_id(config), "status": status, "config": config, "summary": summary,
            "history": history}  # fmt: skip


def test_the_tally_is_read_from_the_records_the_sweep_wrote(tmp_path):
    """A job stopped after its record was written counts as its record says."""
    runs = {name: _record(name, COMPLETED)["run_id"] for name in "abcdef"}
    old = ("a", COMPLETED), ("d", FAILED), ("e", COMPLETED)
    for name, status in old:
        write_record(tmp_path, _record(name, status))
    since = time.time() + 1e-3
    while time.time() < since:
        time.sleep(1e-3)
    for name, status in (("b", COMPLETED), ("c", INTERRUPTED)):
        write_record(tmp_path, _record(name, status))
    rerun = record_path(tmp_path, runs["e"]).with_name(f"{runs['e']}.json{RERUN_SUFFIX}")
    write_record(tmp_path, _record("e", INTERRUPTED), rerun)  # a forced re-run, stopped
    planned = [
        PlannedRun(tmp_path, runs["a"], force=False, finished=True),  # skipped by its job
        PlannedRun(tmp_path, runs["b"], force=False, finished=False),
        PlannedRun(tmp_path, runs["c"], force=False, finished=False),
        PlannedRun(tmp_path, runs["d"], force=False, finished=False),  # an older record only
        PlannedRun(tmp_path, runs["e"], force=True, finished=True),
        PlannedRun(tmp_path, runs["f"], force=False, finished=False),  # refused: no record
    ]
    counts = record_outcomes(planned, since, noted_failures=1)
    assert counts == Counter(skipped=1, completed=1, interrupted=2, failed=1)
    assert tally_line(counts, len(planned)) == (
        "sweep stopped: 1 completed, 0 diverged, 1 skipped, 1 failed, 2 interrupted (of 6); "
        "1 without an outcome"
    )


def test_a_run_a_concurrent_launch_finished_is_counted_as_its_not_as_this_sweep_s(tmp_path):
    """The plan found no record; by the time its job ran, another sweep had trained it."""
    since = time.time()
    write_record(tmp_path, _record("a", COMPLETED))  # written after the plan, by another launch
    write_record(tmp_path, _record("b", COMPLETED))  # trained by this sweep
    runs = [PlannedRun(tmp_path, _record(n, COMPLETED)["run_id"], False, False) for n in "ab"]
    progress = tmp_path / "sweep" / PROGRESS_FILE
    progress.parent.mkdir()
    notes = [{"job": 0, "outcome": SKIPPED, "runs": 1, "run_id": runs[0].run_id},
             {"job": 1, "outcome": COMPLETED, "runs": 1, "run_id": runs[1].run_id}]  # fmt: skip
    progress.write_text("".join(json.dumps(note) + "\n" for note in notes))
    counts = record_outcomes(runs, since, noted_skips=noted_skips(progress.parent))
    assert counts == Counter({COMPLETED: 1, ELSEWHERE: 1})
    assert tally_line(counts, 2) == (
        "sweep finished: 1 completed, 0 diverged, 0 skipped, 0 failed, 0 interrupted, "
        "1 finished by another launch (of 2)"
    )


def test_the_tally_says_whether_the_sweep_finished_and_what_has_no_outcome():
    done = Counter(completed=2, skipped=1)
    assert tally_line(done, 3) == (
        "sweep finished: 2 completed, 0 diverged, 1 skipped, 0 failed, 0 interrupted (of 3)"
    )
    stopped = Counter(completed=1, interrupted=1)
    assert tally_line(stopped, 4) == (
        "sweep stopped: 1 completed, 0 diverged, 0 skipped, 0 failed, 1 interrupted (of 4); "
        "2 without an outcome"
    )


def test_a_file_replaced_whole_or_not_at_all(tmp_path):
    target = tmp_path / "sub" / "file.txt"
    with replacing(target) as temporary:
        temporary.write_text("first")
    with pytest.raises(KeyboardInterrupt), replacing(target) as temporary:
        temporary.write_text("half")
        raise KeyboardInterrupt
    assert target.read_text() == "first"
    assert [path.name for path in target.parent.iterdir()] == ["file.txt"]
