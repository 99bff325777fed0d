"""The command line answers without torch: its help, the config, its refusals, shell completion
and a sweep's plan import neither torch nor torch_geometric, which a run imports as it trains.

Each command runs as a user starts it, under ``python -X importtime``, whose report on stderr
names every module the process imported (scripts/bench_cli.py times the difference).
"""

import re
import subprocess
import sys

import pytest
from cli_helpers import ERROR_PREFIX, TINY, cli, command, environment, records, tally_line
from conftest import REPO

#: what the command line imports only once a run trains
HEAVY = {"torch", "torch_geometric"}
PYTHON = [sys.executable, "-X", "importtime"]


def imported(stderr: str) -> set[str]:
    """The top-level packages that ``-X importtime``'s report on ``stderr`` names."""
    lines = re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", stderr, re.M)
    return {line.group(1).split(".")[0] for line in lines}


def answer(*arguments: str, **env: str) -> subprocess.CompletedProcess:
    """``python -X importtime -m lipnorm_exp <arguments>`` from the checkout."""
    return subprocess.run(
        [*PYTHON, "-m", "lipnorm_exp", *arguments],
        cwd=REPO,
        env=environment(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def refusal(done: subprocess.CompletedProcess) -> str:
    """The last line of stderr that is not ``-X importtime``'s."""
    return [line for line in done.stderr.splitlines() if not line.startswith("import time:")][-1]


def test_the_import_report_names_torch_where_it_is_imported():
    done = subprocess.run([*PYTHON, "-c", "import torch_geometric"], capture_output=True, text=True)
    assert HEAVY <= imported(done.stderr)


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [(["--help"], "Config groups (group=option"), (["--cfg", "job"], "model:")],
)
def test_help_and_the_config_import_no_torch(arguments, shown):
    done = answer(*arguments)
    assert done.returncode == 0, done.stderr[-2000:]
    assert shown in done.stdout
    assert "omegaconf" in imported(done.stderr)
    assert imported(done.stderr) & HEAVY == set()


@pytest.mark.parametrize(
    ("override", "line"),
    [
        ("model=gatt", "model=gatt is not an option of model; allowed: gat, gatv2, gcn, gcnii, "),
        ("train.lrr=0.1", "train.lrr=0.1 is not a key of the config; did you mean train.lr?"),
    ],
)
def test_a_typo_is_refused_in_one_line_without_torch(override, line):
    done = answer(override)
    assert done.returncode == 2
    assert refusal(done).startswith(f"{ERROR_PREFIX}{line}")
    assert imported(done.stderr) & HEAVY == set()


def test_shell_completion_of_a_config_group_imports_no_torch():
    done = answer("-sc", "query=bash", COMP_LINE="lipnorm-exp model=")
    assert done.returncode == 0, done.stderr[-2000:]
    assert {"model=gat", "model=gcn", "model=gt"} <= set(done.stdout.split())
    assert imported(done.stderr) & HEAVY == set()


def test_a_sweeps_plan_reads_its_records_without_torch(tmp_path, data_dir):
    """Every job composed, named and looked up in the records before the SLURM refusal."""
    done = subprocess.run(
        [*PYTHON, *command(tmp_path, data_dir, "--multirun", "seed=0,1")[1:],
         "hydra/launcher=submitit_slurm"],
        cwd=REPO,
        env=environment(PATH=str(tmp_path / "no_programs")),
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert refusal(done).startswith(f"{ERROR_PREFIX}hydra/launcher=submitit_slurm needs SLURM")
    assert {"lipnorm_exp", "hydra_plugins"} <= imported(done.stderr)
    assert imported(done.stderr) & HEAVY == set()


def test_a_relaunched_sweep_skips_its_finished_runs_without_torch(tmp_path, data_dir):
    """The second launch finds both records, tags them and ends without importing torch."""
    sweep = command(tmp_path, data_dir, "--multirun", *TINY, "seed=0,1")
    first = cli(sweep, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    assert len(records(tmp_path)) == 2
    again = cli([*PYTHON, *sweep[1:], "tags=[again]"], timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert tally_line(skipped=2) in again.stdout + again.stderr
    assert all("again" in record["config"]["tags"] for record in records(tmp_path).values())
    assert imported(again.stderr) & HEAVY == set()
