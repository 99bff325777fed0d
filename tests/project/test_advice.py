"""Every command the project advises for a user's own runs leaves the committed ``results/`` as
it is: a run's closing line, a preset's opening comment and the Makefile's report targets with a
user's ``RUNS``, each followed in a scratch repository holding the checkout's ``results/`` (a
few of its records), its Makefile and its ``.gitignore``."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import environment
from conftest import CONFIGS, REPO

from lipnorm_exp.cli.closing import closing_line
from lipnorm_exp.training.finished import LaunchedRecord

#: the committed records of the quick `gradients` preset (its figures and scorecard lines)
QUICK_GRADIENTS = ("6122b6c6440df6a6", "b8d86486a554aecc")
#: a preset comment's advice after its run: ``then `<command>```
THEN = re.compile(r"then `([^`]+)`")


def git(*arguments: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", *arguments], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def scratch(tmp_path) -> Path:
    """A repository with the checkout's Makefile, .gitignore and results/ (its records but two
    left out) committed, and those two records in the user's own ``runs/``."""
    root = tmp_path / "scratch"
    tracked = git("ls-files", "Makefile", ".gitignore", "results", cwd=REPO).splitlines()
    kept = [path for path in tracked if not path.startswith("results/runs/")]
    for path in [*kept, *(f"results/runs/{rid}.json" for rid in QUICK_GRADIENTS)]:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / path, root / path)
    git("init", "-q", ".", cwd=root)
    git("add", "-A", cwd=root)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "checkout", cwd=root)
    (root / "runs").mkdir()
    for rid in QUICK_GRADIENTS:
        shutil.copy2(REPO / "results" / "runs" / f"{rid}.json", root / "runs")
    return root


def follow(command: str, cwd: Path) -> None:
    """Run ``command`` as a user types it in ``cwd``, the package's commands on the path."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    done = subprocess.run(
        shlex.split(command),
        cwd=cwd,
        env=environment(PATH=path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{command}: {done.stderr[-2000:]}"


def advised_after_a_run(results_dir: Path) -> str:
    """What a run in no cell of the paper's tables advises, its records in ``results_dir``."""
    record = json.loads((REPO / "results" / "runs" / f"{QUICK_GRADIENTS[0]}.json").read_text())
    record["config"]["model"]["name"] = "gt"  # in no cell
    line = closing_line([LaunchedRecord(record, reused=False)], results_dir)
    advised = re.search(r"no cell of the paper's tables: (.+) compares", line)
    assert advised, line
    return advised.group(1)


def advised_by_presets() -> list[str]:
    """The commands the presets' opening comments advise after their runs."""
    comments = (path.read_text() for path in sorted((CONFIGS / "experiment").glob("*.yaml")))
    return [command for text in comments for command in THEN.findall(text)]


@pytest.mark.slow  # the report, several times
@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_following_the_advice_on_ones_own_runs_leaves_the_committed_results_as_they_are(
    scratch, monkeypatch
):
    monkeypatch.chdir(scratch)  # where the user runs, as the closing line shows its paths
    advice = [
        advised_after_a_run(scratch / "runs"),
        advised_after_a_run(scratch / "results" / "runs"),  # a run's default folder
        *advised_by_presets(),
        f"make --no-print-directory report RUNS=runs PYTHON={sys.executable}",
    ]
    assert advised_by_presets()  # the gradients preset's `then ...`
    for command in advice:
        follow(command, scratch)
    assert git("status", "--porcelain", "--untracked-files=all", cwd=scratch) == ""
    # each report went to a folder of the user's own, ignored by git
    assert (scratch / "my_report" / "SCORECARD.md").is_file()
    assert (scratch / "runs_report" / "SCORECARD.md").is_file()
    figures = scratch / "runs_report" / "quick" / "standard" / "figures"
    assert (figures / "fig2_gradients.png").is_file()
