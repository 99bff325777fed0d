"""Resumable runs: a run stopped part-way (a stop request, an error, a kill) and launched again
writes the record of a run never stopped, on CPU bit for bit, timings aside.

In-process runs are stopped by a ``KeyboardInterrupt`` raised at the start of a chosen epoch
(what Ctrl-C and SIGTERM raise, :mod:`lipnorm_exp.util.stopping`); the command-line runs are stopped
by real signals (``tests/training/kill_points.py``).
"""

import errno
import json
import logging
import re
import shutil
import signal
from pathlib import Path

import pytest
import torch
from cli_helpers import cli, command, records

import lipnorm_exp.training.alone as alone
import lipnorm_exp.training.together as together
from lipnorm_exp.records import (
    COMPLETED,
    FAILED,
    INTERRUPTED,
    SET_ASIDE,
    record_path,
    run_id,
    schema,
    store,
)
from lipnorm_exp.training.checkpoint import (
    CHECKPOINT_DIR,
    Checkpoint,
    checkpoint_path,
    decode,
    encode,
    random_state,
)
from lipnorm_exp.training.launch import launch_records, run
from lipnorm_exp.util.errors import DiskFullError

SMALL = ("model.depth=3", "model.hidden=16", "model.heads=2", "model.attn_dropout=0.3")
#: a schedule and an early stop whose state must survive the stop, over 24 epochs at most
STATEFUL = (
    *SMALL,
    "train.epochs=24",
    "train.lr=0.02",
    "train.scheduler=plateau",
    "train.scheduler_patience=2",
    "train.patience=12",
    "train.checkpoint_every=4",
)
CASES = {
    "cora": STATEFUL,
    "cora_missing_vectors_tracked": (
        *STATEFUL,
        "dataset.missing_rate=0.5",
        "train.track_gradients=true",
        "train.estimate_lipschitz=true",
        "train.lipschitz_every=6",
    ),
    # mini-batches reshuffled from torch's global generator every pass
    "trees": (
        "dataset=trees",
        "dataset.depth=2",
        "dataset.passes_per_epoch=3",
        "train.epochs=12",
        "train.checkpoint_every=4",
    ),
    # copies with their own dropout streams (lipnorm_exp.training.together)
    "seeds_together": (*STATEFUL, "seed=[0,1]"),
}


def stop_at_epoch(monkeypatch, epoch: int, error: type[BaseException] = KeyboardInterrupt):
    """Raise ``error`` at the start of training epoch ``epoch`` (of a run or of seeds together)."""
    calls = []

    def stopping(real):
        def start_epoch(*args, **kwargs):
            calls.append(1)
            if len(calls) == epoch:
                raise error("stopped by the test")
            return real(*args, **kwargs)

        return start_epoch

    monkeypatch.setattr(alone, "train_epoch", stopping(alone.train_epoch))
    monkeypatch.setattr(together.Together, "_train_step", stopping(together.Together._train_step))


def without_timings(record: dict) -> dict:
    """What must not change when a run is stopped and resumed: its outcome, summary and rows."""
    rows = [
        {key: value for key, value in row.items() if key != "time_s"} for row in record["history"]
    ]
    return {
        "run_id": record["run_id"],
        "status": record["status"],
        "summary": record["summary"],
        "history": rows,
    }


@pytest.mark.parametrize("case", CASES)
def test_a_run_stopped_part_way_resumes_to_the_record_of_a_run_never_stopped(
    make_cfg, tmp_path, monkeypatch, case
):
    overrides = CASES[case]
    straight = run(make_cfg(*overrides, f"paths.results_dir={tmp_path / 'straight'}"))

    with monkeypatch.context() as patch:
        stop_at_epoch(patch, 7)
        with pytest.raises(KeyboardInterrupt):
            run(make_cfg(*overrides))
    stopped = records_in(tmp_path / "runs")
    for record in stopped:
        assert record["status"] == INTERRUPTED
        assert record["stopped_after_epoch"] == len(record["history"]) == 6
        assert record["resumes_after_epoch"] == 6  # written on the stop, not only at epoch 4
        assert checkpoint_path(tmp_path / "runs", record["run_id"]).exists()

    resumed = run(make_cfg(*overrides))
    assert [without_timings(r) for r in resumed] == [without_timings(r) for r in straight]
    for record in resumed:
        assert record["status"] == COMPLETED and record["resumed_at"] == [6]
        assert record["timing"]["total_s"] > record["timing"]["setup_s"]
        assert not checkpoint_path(tmp_path / "runs", record["run_id"]).exists()
    assert "resumed_at" not in straight[0]


def records_in(folder) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]


def test_a_run_stopped_twice_lists_both_resumptions(make_cfg, tmp_path, monkeypatch):
    [straight] = run(make_cfg(*STATEFUL, f"paths.results_dir={tmp_path / 'straight'}"))
    for stop in (4, 6):  # after 3 epochs, then after 3 + 5
        with monkeypatch.context() as patch:
            stop_at_epoch(patch, stop)
            with pytest.raises(KeyboardInterrupt):
                run(make_cfg(*STATEFUL))
    [resumed] = run(make_cfg(*STATEFUL))
    assert without_timings(resumed) == without_timings(straight)
    assert resumed["resumed_at"] == [3, 8]


def test_a_failed_run_keeps_its_epochs_and_resumes(make_cfg, tmp_path, monkeypatch):
    [straight] = run(make_cfg(*STATEFUL, f"paths.results_dir={tmp_path / 'straight'}"))
    with monkeypatch.context() as patch:
        stop_at_epoch(patch, 5, error=MemoryError)
        with pytest.raises(MemoryError):
            run(make_cfg(*STATEFUL))
    (failed,) = records_in(tmp_path / "runs")
    assert failed["status"] == FAILED and failed["error"] == "MemoryError: stopped by the test"
    assert failed["stopped_after_epoch"] == failed["resumes_after_epoch"] == 4
    assert without_timings(run(make_cfg(*STATEFUL))[0]) == without_timings(straight)


def no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_record_that_finds_the_disk_full_ends_in_one_line_and_the_run_resumes(
    make_cfg, tmp_path, monkeypatch
):
    [straight] = run(make_cfg(*STATEFUL, f"paths.results_dir={tmp_path / 'straight'}"))
    cfg = make_cfg(*STATEFUL)
    rid, runs = run_id(cfg), tmp_path / "runs"
    with monkeypatch.context() as patch:
        patch.setattr(store.os, "fsync", no_space)  # a record's write, once trained to the end
        with pytest.raises(DiskFullError) as full:
            run(cfg)
    # the last checkpoint (train.checkpoint_every=4) before the last epoch, which ends the run
    last = (len(straight["history"]) - 1) // 4 * 4
    assert re.fullmatch(
        rf"no space left on the device of {re.escape(str(runs))} to write {rid}\.json "
        rf"\([0-9]+ kB needed\); free space there and run the command again; run {rid} "
        rf"resumes after epoch {last}",
        str(full.value),
    )
    assert not record_path(runs, rid).exists() and list(runs.glob(".*.tmp")) == []
    [resumed] = run(cfg)  # on a freed disk
    assert without_timings(resumed) == without_timings(straight)
    assert resumed["resumed_at"] == [last]


def test_a_checkpoint_that_finds_the_disk_full_keeps_the_last_one_and_the_run_resumes(
    make_cfg, tmp_path, monkeypatch
):
    [straight] = run(make_cfg(*STATEFUL, f"paths.results_dir={tmp_path / 'straight'}"))
    cfg = make_cfg(*STATEFUL)
    rid, runs = run_id(cfg), tmp_path / "runs"
    written: list[Path] = []
    real_write = Path.write_bytes

    def full_at_the_second_checkpoint(path, data):
        if CHECKPOINT_DIR in path.parts:
            written.append(path)
            if len(written) >= 2:  # full from then on
                no_space()
        return real_write(path, data)

    with monkeypatch.context() as patch:
        patch.setattr(Path, "write_bytes", full_at_the_second_checkpoint)
        with pytest.raises(
            DiskFullError, match=f"to write {rid}.pt .*; run {rid} resumes after epoch 4$"
        ):
            run(cfg)
    (failed,) = records_in(runs)  # the record, smaller, found room
    assert failed["status"] == FAILED and failed["resumes_after_epoch"] == 4
    assert len(failed["history"]) == 8
    [resumed] = run(cfg)
    assert without_timings(resumed) == without_timings(straight)
    assert resumed["resumed_at"] == [4]


def interrupted_checkpoint(make_cfg, monkeypatch, *overrides) -> tuple[str, object]:
    """Stop a run after 4 epochs; its run id and checkpoint path."""
    cfg = make_cfg(*STATEFUL, *overrides)
    with monkeypatch.context() as patch:
        stop_at_epoch(patch, 5)
        with pytest.raises(KeyboardInterrupt):
            run(cfg)
    rid = run_id(cfg)
    return rid, checkpoint_path(cfg.paths.results_dir, rid)


@pytest.mark.parametrize(
    "damage",
    ["another_run", "random_bytes", "half_written", "old_layout", "flipped_byte", "no_resumed_at"],
)
def test_a_checkpoint_of_another_run_or_unreadable_is_set_aside_and_never_loaded(
    make_cfg, tmp_path, monkeypatch, caplog, damage
):
    [straight] = run(make_cfg(*STATEFUL, f"paths.results_dir={tmp_path / 'straight'}"))
    other, other_path = interrupted_checkpoint(make_cfg, monkeypatch, "seed=1")
    rid, path = interrupted_checkpoint(make_cfg, monkeypatch)
    if damage == "another_run":
        shutil.copyfile(other_path, path)
    elif damage == "random_bytes":
        path.write_bytes(torch.randint(0, 256, (5000,), dtype=torch.uint8).numpy().tobytes())
    elif damage == "half_written":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "flipped_byte":  # a weight changed on disk: a different run would follow
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x01
        path.write_bytes(bytes(data))
    elif damage == "no_resumed_at":  # a whole file, its checksum right, a part of it missing
        saved = decode(path.read_bytes())
        path.write_bytes(encode({k: v for k, v in saved.items() if k != "resumed_at"}))
    else:
        path.write_bytes(encode({**decode(path.read_bytes()), "format": 0}))

    with caplog.at_level(logging.WARNING, logger="lipnorm_exp.training.checkpoint"):
        [again] = run(make_cfg(*STATEFUL))
    assert without_timings(again) == without_timings(straight)
    assert "resumed_at" not in again  # started over
    (warning,) = [r.getMessage() for r in caplog.records if "set aside" in r.getMessage()]
    assert warning.startswith(f"{path}: ") and "the run starts over" in warning
    if damage == "another_run":
        assert f"the checkpoint of run {other}, not of {rid}" in warning
    if damage == "flipped_byte":
        assert "do not match their SHA-256 checksum" in warning
    if damage == "no_resumed_at":
        assert "a checkpoint without its resumed_at" in warning
    (aside,) = path.parent.glob(f"{path.name}{SET_ASIDE}*")
    assert aside.stat().st_size > 0 and not path.exists()


def test_force_starts_over_and_a_skipped_run_drops_a_checkpoint_left_behind(make_cfg, monkeypatch):
    rid, path = interrupted_checkpoint(make_cfg, monkeypatch)
    [forced] = run(make_cfg(*STATEFUL, "force=true"))
    assert "resumed_at" not in forced and forced["status"] == COMPLETED
    assert not path.exists()

    # a kill between the final record and the checkpoint's removal leaves both behind
    left_behind = Checkpoint(path.parents[2], rid, every=1, clock=0.0).path
    left_behind.parent.mkdir(parents=True, exist_ok=True)
    left_behind.write_bytes(b"left behind")
    [(_, reused)] = launch_records(make_cfg(*STATEFUL))
    assert reused and not path.exists()


def test_checkpoint_every_0_keeps_no_checkpoint(make_cfg, tmp_path, monkeypatch):
    _, path = interrupted_checkpoint(make_cfg, monkeypatch, "train.checkpoint_every=0")
    (stopped,) = records_in(tmp_path / "runs")
    assert stopped["stopped_after_epoch"] == 4 and stopped["resumes_after_epoch"] is None
    assert not path.parent.exists() or not any(path.parent.iterdir())
    [again] = run(make_cfg(*STATEFUL, "train.checkpoint_every=0"))
    assert "resumed_at" not in again and again["summary"][schema.EPOCHS_RUN] > 4


def test_the_random_state_holds_only_what_a_weights_only_load_reads(tmp_path):
    generator = torch.Generator().manual_seed(3)
    saved = random_state([generator])
    torch.save(saved, tmp_path / "state.pt")
    loaded = torch.load(tmp_path / "state.pt", weights_only=True)
    assert torch.equal(loaded["torch"], torch.get_rng_state())
    assert torch.equal(loaded["generators"][0], generator.get_state())


#: a command-line run short enough to stop part-way and resume
KILLED_RUN = ("model.depth=2", "model.hidden=8", "train.epochs=14", "train.checkpoint_every=3")


@pytest.fixture(scope="module")
def straight_run(tmp_path_factory, data_dir) -> Path:
    """The results folder of :data:`KILLED_RUN` run through the CLI without a stop."""
    folder = tmp_path_factory.mktemp("straight")
    straight = cli(command(folder, data_dir, *KILLED_RUN))
    assert straight.returncode == 0, straight.stderr
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SIGKILL", "SIGTERM"])
def test_a_killed_command_line_run_resumes_to_the_record_of_a_run_never_stopped(
    tmp_path, data_dir, straight_run, name
):
    point = ("tests/training/kill_points.py", "epoch_9", name)
    stopped = cli(command(tmp_path, data_dir, *KILLED_RUN, script=point))
    if name == "SIGKILL":  # nothing ran after the kill: the checkpoint of epoch 6 is all there is
        assert stopped.returncode == -signal.SIGKILL and records(tmp_path) == {}
        resumed_after = 6
    else:  # stopped as Ctrl-C, in one line: the record and the checkpoint say epoch 8
        assert stopped.returncode == 130 and "Traceback" not in stopped.stderr, stopped.stderr
        assert "interrupted (stopped by SIGTERM)" in stopped.stderr
        ((_, record),) = records(tmp_path).items()
        assert record["status"] == INTERRUPTED and record["error"] == "stopped by SIGTERM"
        assert record["resumes_after_epoch"] == 8
        resumed_after = 8
    assert len(list((tmp_path / "runs" / CHECKPOINT_DIR).glob("*.pt"))) == 1

    again = cli(command(tmp_path, data_dir, *KILLED_RUN))
    assert again.returncode == 0, again.stderr
    assert "skip run" not in again.stdout + again.stderr
    assert f"resumed after epoch {resumed_after}" in again.stdout + again.stderr
    ((_, resumed),) = records(tmp_path).items()
    ((_, expected),) = records(straight_run).items()
    assert without_timings(resumed) == without_timings(expected)
    assert resumed["resumed_at"] == [resumed_after]
    assert not any((tmp_path / "runs" / CHECKPOINT_DIR).iterdir())
