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
from datetime import datetime, timezone
from pathlib import Path

import pytest
import torch
from cli_helpers import (
    TINY,
    cli,
    command,
    environment,
    records,
    start,
    tally_line,
)
from conftest import compose_config

from lipnorm_exp.records import NUMERICS_VERSION, run_id, schema
from lipnorm_exp.training.checkpoint import CHECKPOINT_DIR
from lipnorm_exp.training.launch import no_tracker, train
from lipnorm_exp.training.member import Member
from lipnorm_exp.util.lock import folder_lock

pytestmark = pytest.mark.slow


def assert_completed(found: dict[str, dict], seeds: set[int]) -> None:
    assert {record["config"]["seed"] for record in found.values()} == seeds
    for rid, record in found.items():
        assert record["run_id"] == rid
        assert record["status"] == "completed", record["error"]
        assert record["summary"][schema.EPOCHS_RUN] == record["config"]["train"]["epochs"]


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
    overrides = ("hydra/launcher=submitit_local", "hydra.launcher.timeout_min=10", "seed=0,1")
    out = cli(command(tmp_path, data_dir, "--multirun", *overrides, *TINY))
    assert out.returncode == 0, out.stderr
    assert tally_line(completed=2) in out.stdout + out.stderr
    assert list((tmp_path / "logs").glob("multiruns/*/.submitit/*/*_result.pkl"))
    found = records(tmp_path)
    assert len(found) == 2
    assert_completed(found, {0, 1})


def test_a_sweep_run_outside_the_checkout_finds_the_projects_sweeper_and_launcher(
    tmp_path, data_dir
):
    """The installed package, run from another folder: there Hydra's scan of ``hydra_plugins``
    does not list the project's plugins, which the CLI registers itself."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {key: value for key, value in environment().items() if key != "PYTHONPATH"}
    args = command(tmp_path, data_dir, "--multirun", "seed=0,1", *TINY)

    def sweep(*extra: str) -> str:
        out = subprocess.run(
            [*args, *extra], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        return out.stdout + out.stderr

    log = sweep()
    assert re.search(r"\[2/2\] run [0-9a-f]{16} completed", log)
    assert tally_line(completed=2) in log
    assert_completed(records(tmp_path), {0, 1})
    log = sweep("hydra/launcher=submitit_slurm")  # every run finished: nothing to submit
    assert "no SLURM job submitted: every run of the sweep has a finished record" in log
    assert tally_line(skipped=2) in log


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
    assert all(f"[{k}/4] " in log for k in (1, 2, 3, 4))  # the basic launcher numbers its runs
    assert re.search(r"\[4/4\] run \w+ completed", log)
    after = {
        path.name: (path.stat().st_mtime_ns, json.loads(path.read_text())["started_at"])
        for path in runs.glob("*.json")
    }
    assert {name: after[name] for name in before} == before
    found = records(tmp_path)
    assert len(found) == 4
    assert_completed(found, {0, 1, 2, 3})
    left = sorted(path.name for path in runs.iterdir() if path.suffix != ".json")
    assert left == [CHECKPOINT_DIR, ".locks"]  # no temporary file; the killed run's checkpoint
    assert not any((runs / CHECKPOINT_DIR).iterdir())  # removed once its record was final


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
        cpu, clock = torch.device("cpu"), time.perf_counter()
        member = Member(cfg, rid, results_dir, cpu, datetime.now(timezone.utc), clock, no_tracker)
        train([member], cpu, together=False)
        first = member.record
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
    assert "have a finished record" not in out.stdout + out.stderr
    found = records(tmp_path).values()
    models = [(r["config"]["model"], r["config"]["norm"]["name"]) for r in found]
    methods = sorted((model["name"], norm, model["residual"]) for model, norm in models)
    assert methods == [("gat", "lip", True), ("gat", "none", False)]
    for record in found:
        assert record["status"] == "completed"
        assert record["config"]["tags"] == ["residual"]
        assert record["config"]["model"]["depth"] == 2
        assert record["config"]["train"]["epochs"] == 2
    again = cli(command(tmp_path, data_dir, *overrides))
    assert again.returncode == 0, again.stderr
    log = again.stdout + again.stderr
    plan = (
        f"2 of the 2 runs have a finished record in {tmp_path / 'runs'} and will be skipped; "
        "to train them anyway: force=true, or another folder (paths.results_dir=<folder>)"
    )
    assert plan in log
    assert log.index(plan) < log.index("Launching 2 jobs")  # said before the first job
    assert tally_line(skipped=2) in log


def test_rerun_stale_trains_again_only_the_records_of_other_numerics(tmp_path, data_dir):
    """A record made by other numerics is kept and skipped by default; ``rerun_stale=true``
    trains that one again, with today's numerics, and skips the current one."""
    args = command(tmp_path, data_dir, "--multirun", "seed=0,1", *TINY)
    assert cli(args).returncode == 0
    found = records(tmp_path)
    old = next(rid for rid, record in found.items() if record["config"]["seed"] == 0)
    path = tmp_path / "runs" / f"{old}.json"
    stale = {**found[old], schema.NUMERICS: None}  # as made before numerics were versioned
    path.write_text(json.dumps(stale, indent=1))

    kept = cli(args)
    log = kept.stdout + kept.stderr
    assert kept.returncode == 0, kept.stderr
    assert tally_line(skipped=2) in log
    other = "1 of the 2 runs have a finished record made by other numerics than their runs"
    assert f"{other} compute today" in log
    assert ": kept; rerun_stale=true trains them again" in log
    assert json.loads(path.read_text())[schema.NUMERICS] is None

    rerun = cli([*args, "rerun_stale=true"])
    log = rerun.stdout + rerun.stderr
    assert rerun.returncode == 0, rerun.stderr
    assert ": rerun_stale=true trains them again" in log
    assert "1 of the 2 runs have a finished record in" in log
    assert f"re-run run {old}: its record was made by other numerics" in log
    assert tally_line(completed=1, skipped=1) in log
    again = records(tmp_path)
    assert set(again) == set(found)
    assert again[old][schema.NUMERICS] == NUMERICS_VERSION
    assert again[old][schema.STARTED_AT] != found[old][schema.STARTED_AT]
    other = next(rid for rid in found if rid != old)
    assert again[other] == found[other]

    # a record of newer numerics is neither stale nor finished: its job refuses it
    newer = {**again[other], schema.NUMERICS: NUMERICS_VERSION + 1}
    (tmp_path / "runs" / f"{other}.json").write_text(json.dumps(newer, indent=1))
    refused = cli([*args, "rerun_stale=true"])
    log = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "Traceback" not in log
    assert (
        f"1 of the 2 runs have a record made by newer code (numerics {NUMERICS_VERSION + 1}" in log
    )
    assert "refused by their jobs, neither reused nor replaced" in log
    assert "made by other numerics" not in log
    assert "1 of the 2 runs have a finished record in" in log  # the current one, skipped
    assert records(tmp_path)[other] == newer
