"""A run's threads: ``train.threads`` applied for the run, named by its record, then restored."""

import os
import subprocess
import sys

import pytest
import torch

from lipnorm_exp.config import validate
from lipnorm_exp.training.launch import run
from lipnorm_exp.training.threads import process_threads, run_threads, threads_of
from lipnorm_exp.util.errors import ConfigError
from lipnorm_exp.util.openmp import WAIT_POLICY, passive_wait

SMALL = ("model.depth=2", "model.hidden=8", "model.heads=2")


def test_auto_gives_small_graphs_one_thread_and_large_ones_the_process_threads():
    for dataset in ("cora", "citeseer", "pubmed", "trees", "ogbn_proteins"):
        assert threads_of("auto", dataset) == 1, dataset
    assert threads_of("auto", "ogbn_arxiv") == process_threads()
    assert threads_of(3, "cora") == 3


@pytest.mark.parametrize("threads", ["auto", 2])
def test_a_run_computes_on_its_threads_and_its_record_names_them(make_cfg, threads):
    before = torch.get_num_threads()
    [record] = run(make_cfg(*SMALL, f"train.threads={threads}"))
    assert record["status"] == "completed"
    assert record["machine"]["threads"] == (1 if threads == "auto" else threads)
    assert torch.get_num_threads() == before


def test_run_threads_restores_the_threads_after_an_error(make_cfg):
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError), run_threads(make_cfg("train.threads=3")) as threads:
        assert threads == torch.get_num_threads() == 3
        raise RuntimeError
    assert torch.get_num_threads() == before


def test_train_threads_is_checked(make_cfg):
    for bad in ("0", "many"):
        with pytest.raises(ConfigError, match="train.threads"):
            validate(make_cfg(f"train.threads={bad}"))


def test_the_passive_wait_keeps_a_policy_the_user_set(monkeypatch):
    name, passive = WAIT_POLICY
    monkeypatch.delenv(name, raising=False)
    passive_wait()
    assert os.environ[name] == passive
    monkeypatch.setenv(name, "ACTIVE")
    passive_wait()
    assert os.environ[name] == "ACTIVE"


def test_the_command_sets_the_passive_wait_before_torch_is_imported():
    # the console entry point, stopped where it would import the app
    code = (
        "import os, sys\n"
        "import lipnorm_exp.cli.console as console\n"
        "console.run_entry_point = lambda *args: print("
        "os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)\n"
        "console.lipnorm_exp()\n"
    )
    env = {key: value for key, value in os.environ.items() if key != WAIT_POLICY[0]}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["PASSIVE", "False"]


def test_auto_in_a_joblib_worker_takes_its_share_of_the_cores_at_most():
    joblib = pytest.importorskip("joblib")

    def arxiv_threads():
        from lipnorm_exp.training.threads import threads_of

        return threads_of("auto", "ogbn_arxiv")

    workers = 2
    threads = joblib.Parallel(n_jobs=workers)(joblib.delayed(arxiv_threads)() for _ in range(2))
    assert threads == [max(1, os.cpu_count() // workers)] * 2
