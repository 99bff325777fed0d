"""Sweeps through ``hydra/launcher=submitit_slurm`` on a SLURM cluster started on this machine.

The cluster (:mod:`slurm_cluster`: munged, MariaDB, slurmdbd, slurmctld, slurmd) is started once
for the module by ``make test-slurm``, which installs its packages where missing; the ordinary
test run skips these tests, saying why (they install packages and start daemons). A narrowed
``residual`` preset (GAT-Lip, 2 layers, Cora) runs as SLURM job arrays: each record names its
job, which ``sacct`` knows; a second launch submits nothing; ``scancel`` part-way loses no
finished record and the next launch finishes the rest from the checkpoints; ``seeds_per_job``
trains several seeds in one job. Two checks of the record and the launcher's config run in the
ordinary test run too.
"""

import os
import subprocess

import pytest
import torch
from cli_helpers import command, environment, records, start, tally_line
from conftest import CONFIGS
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from slurm_cluster import SlurmCluster, cannot_start, slurm_cluster, wait_until

from lipnorm_exp.records import machine
from lipnorm_exp.training.checkpoint import CHECKPOINT_DIR

#: set by ``make test-slurm``: start the cluster, and fail if it cannot start
RUN_ENV = "LIPNORM_SLURM_TESTS"
#: every job of these tests: one CPU and 1 GB, so that two run at once on two cores
SLURM = (
    "hydra/launcher=submitit_slurm",
    "hydra.launcher.cpus_per_task=1",
    "hydra.launcher.mem_gb=1",
    "hydra.launcher.timeout_min=10",
)
#: the residual preset narrowed to GAT-Lip at 2 layers on Cora, tiny and quick
PRESET = (
    "+experiment=residual",
    "grid.quick.methods=gat_lip",
    "grid.quick.depths=2",
    "grid.quick.epochs=2",
    "model.hidden=8",
    "model.heads=1",
)
#: seconds a sweep on the cluster may take (jobs queue behind each other on two cores)
SWEEP_TIMEOUT_S = 600


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> SlurmCluster:
    """The cluster, for the module's tests; its daemons and jobs stopped after the last one."""
    if not os.environ.get(RUN_ENV):
        why = cannot_start() or "this machine can start it"
        pytest.skip(f"starts SLURM daemons: run by make test-slurm ({why})")
    with slurm_cluster(tmp_path_factory.mktemp("slurm")) as running:
        yield running


def sweep(cluster: SlurmCluster, args: list[str]) -> tuple[int, str]:
    """Run the sweep ``args`` on ``cluster``; its exit status and output."""
    process = start(args, env=environment(SLURM_CONF=str(cluster.conf)), stderr=subprocess.STDOUT)
    try:
        out, _ = process.communicate(timeout=SWEEP_TIMEOUT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, out


def job_ids(found: dict[str, dict]) -> list[str]:
    """The SLURM job of each record, in the order of their seeds."""
    ordered = sorted(found.values(), key=lambda record: record["config"]["seed"])
    return [record["machine"]["slurm_job"] for record in ordered]


def test_a_record_names_the_slurm_job_it_ran_in(monkeypatch):
    for name in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"):
        monkeypatch.delenv(name, raising=False)
    assert "slurm_job" not in machine(torch.device("cpu"))
    monkeypatch.setenv("SLURM_JOB_ID", "41")
    assert machine(torch.device("cpu"))["slurm_job"] == "41"
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "40")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    assert machine(torch.device("cpu"))["slurm_job"] == "40_1"


# the CLI silences it (lipnorm_exp.config.launcher); pytest shows every warning again
@pytest.mark.filterwarnings(r"ignore:\s*'hydra/launcher/submitit_slurm' is validated:UserWarning")
def test_the_slurm_launcher_has_the_projects_defaults():
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        overrides = ["hydra/launcher=submitit_slurm"]
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    launcher = OmegaConf.to_container(cfg.hydra.launcher)
    assert launcher["_target_"] == "hydra_plugins.lipnorm_exp_launcher.slurm_launcher.SlurmLauncher"
    assert (launcher["timeout_min"], launcher["cpus_per_task"], launcher["mem_gb"]) == (240, 4, 16)
    assert launcher["partition"] is None and launcher["gpus_per_node"] is None
    assert launcher["submitit_folder"] == "${hydra.sweep.dir}/.submitit/%j"
    assert launcher["qos"] is None  # the plugin's other keys are there to set


def test_a_preset_runs_as_slurm_jobs_and_its_relaunch_submits_none(cluster, tmp_path, data_dir):
    args = command(tmp_path, data_dir, *PRESET, *SLURM, "grid.quick.seeds='range(2)'")
    status, log = sweep(cluster, args)
    assert status == 0, log
    assert tally_line(completed=2) in log
    assert "Warning" not in log
    found = records(tmp_path)
    assert len(found) == 2 and all(r["status"] == "completed" for r in found.values())
    jobs = job_ids(found)
    array = jobs[0].split("_")[0]
    assert jobs == [f"{array}_0", f"{array}_1"]
    assert {job: cluster.ended_state(job) for job in jobs} == dict.fromkeys(jobs, "COMPLETED")
    accounted = cluster.accounted_jobs()
    (sweep_dir,) = (tmp_path / "logs" / "multiruns").iterdir()
    for job in jobs:
        assert (sweep_dir / ".submitit" / job / f"{job}_0_log.out").is_file()

    status, log = sweep(cluster, args)
    assert status == 0, log
    assert "no SLURM job submitted: every run of the sweep has a finished record" in log
    assert tally_line(skipped=2) in log
    assert cluster.accounted_jobs() == accounted


def test_seeds_per_job_trains_the_seeds_in_one_slurm_job(cluster, tmp_path, data_dir):
    seeds = ("grid.quick.seeds='range(2)'", "seeds_per_job=2")
    status, log = sweep(cluster, command(tmp_path, data_dir, *PRESET, *SLURM, *seeds))
    assert status == 0, log
    assert tally_line(completed=2) in log
    found = records(tmp_path)
    assert [r["batched"]["seeds"] for r in found.values()] == [[0, 1], [0, 1]]
    job, again = job_ids(found)
    assert job == again
    assert cluster.ended_state(job) == "COMPLETED"


def test_scancel_part_way_keeps_finished_records_and_the_relaunch_resumes(
    cluster, tmp_path, data_dir
):
    # one job at a time, long enough that the cancel lands while the second one trains
    overrides = (
        "grid.quick.seeds='range(4)'",
        "grid.quick.epochs=400",
        "train.checkpoint_every=10",
    )
    one_at_a_time = ("hydra.launcher.array_parallelism=1",)
    args = command(tmp_path, data_dir, *PRESET, *SLURM, *one_at_a_time, *overrides)
    runs = tmp_path / "runs"
    first = start(args, env=environment(SLURM_CONF=str(cluster.conf)), stderr=subprocess.STDOUT)
    try:
        wait_until(
            lambda: records(tmp_path) and list((runs / CHECKPOINT_DIR).glob("*.pt")),
            "a finished run and the next one's checkpoint",
            timeout=SWEEP_TIMEOUT_S,
        )
        (finished,) = records(tmp_path).values()
        array = finished["machine"]["slurm_job"].split("_")[0]
        cluster.run("scancel", array)
        log, _ = first.communicate(timeout=SWEEP_TIMEOUT_S)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode != 0, log  # its jobs were cancelled
    assert cluster.ended_state(f"{array}_1") == "CANCELLED"
    stopped = {rid: r for rid, r in records(tmp_path).items() if r["status"] != "completed"}
    assert [r["status"] for r in stopped.values()] == ["interrupted"], log
    (stopped_id,) = stopped
    assert stopped[stopped_id]["resumes_after_epoch"] >= 10
    kept = {finished["run_id"]: (runs / f"{finished['run_id']}.json").read_bytes()}

    status, log = sweep(cluster, args)
    assert status == 0, log
    assert tally_line(completed=3, skipped=1) in log
    found = records(tmp_path)
    assert len(found) == 4 and all(r["status"] == "completed" for r in found.values())
    assert {rid: (runs / f"{rid}.json").read_bytes() for rid in kept} == kept
    assert found[stopped_id]["resumed_at"] == [stopped[stopped_id]["resumes_after_epoch"]]
    assert not any((runs / CHECKPOINT_DIR).iterdir())
