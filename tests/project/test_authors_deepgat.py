"""``scripts/authors_deepgat.py``: its refusals, and a short run of the authors' own code.

The run needs a clone of https://github.com/gdasoulas/LipschitzNorm at the script's commit, named
by ``$LIPNORM_AUTHORS_CHECKOUT`` (skipped without one), and Cora's raw files (in
``$LIPNORM_RAW_DIRS`` or downloadable).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "authors_deepgat.py"
COMMIT = "25ddec3c8daf28ec45eddff4ae0420ef239c8426"
CHECKOUT = os.environ.get("LIPNORM_AUTHORS_CHECKOUT")


def _run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _refused_in_one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    return done.stderr


def test_a_missing_checkout_is_refused_with_the_clone_command(tmp_path):
    absent = tmp_path / "LipschitzNorm"
    line = _refused_in_one_line(_run("--checkout", str(absent)))
    assert f"--checkout={absent}" in line
    assert f"git clone https://github.com/gdasoulas/LipschitzNorm {absent}" in line
    assert f"checkout {COMMIT}" in line


def test_a_checkout_at_another_commit_is_refused(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "deepgat.py").write_text("")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "other"], check=True)
    other = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    line = _refused_in_one_line(_run("--checkout", str(tmp_path)))
    assert f"at {other}, not {COMMIT}" in line


@pytest.mark.parametrize(
    ("option", "value"), [("--heads", "0"), ("--seeds", "0,x"), ("--norm", "maxnorm")]
)
def test_bad_options_are_refused_in_one_line(tmp_path, option, value):
    line = _refused_in_one_line(_run("--checkout", str(tmp_path), option, value))
    assert option in line and value in line


@pytest.mark.parametrize("data_dir", [None, "elsewhere"])
def test_their_data_defaults_to_a_runs_data_folder(tmp_path, data_dir):
    """Without ``--datadir``: ``authors/`` in ``paths.data_dir``, as the config resolves it."""
    env = {key: value for key, value in os.environ.items() if key != "LIPNORM_DATA_DIR"}
    if data_dir is not None:
        env["LIPNORM_DATA_DIR"] = str(tmp_path / data_dir)
    code = "import authors_deepgat; print(authors_deepgat.run_data_dir())"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": os.pathsep.join([str(REPO / "scripts"), str(REPO)])},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    expected = tmp_path / data_dir if data_dir is not None else tmp_path / "data"
    assert Path(done.stdout.strip()) == expected


needs_checkout = pytest.mark.skipif(
    CHECKOUT is None, reason="LIPNORM_AUTHORS_CHECKOUT names no clone of the authors' repository"
)


@needs_checkout
def test_a_checkout_with_changed_files_is_refused(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(CHECKOUT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", COMMIT], check=True)
    with (clone / "models" / "deepgat.py").open("a") as file:
        file.write("\n")
    line = _refused_in_one_line(_run("--checkout", str(clone)))
    assert "tracked files changed (models/deepgat.py)" in line


@needs_checkout
@pytest.mark.slow
def test_runs_their_model_and_reports_each_seed(tmp_path):
    args = ["--checkout", str(CHECKOUT), "--layers", "2", "--heads", "2", "--hidden", "8"]
    args += ["--epochs", "3", "--seeds", "0,1", "--norm", "lipschitznorm"]
    args += ["--datadir", str(tmp_path / "data"), "--out", str(tmp_path / "out")]
    name = "authors_deepgat_cora_lipschitznorm_L2_2x8_e3"
    done = _run(*args)
    assert done.returncode == 0, done.stderr[-3000:]
    seeds = [json.loads((tmp_path / "out" / f"{name}_seed{k}.json").read_text()) for k in (0, 1)]
    assert seeds[0]["setting"]["authors_commit"] == COMMIT
    assert seeds[0]["sources"]["lr"].startswith("their README")
    assert seeds[0]["setting"]["lr"] == 0.005  # the README example's, not their parser's 0.01
    for stored in seeds:
        result = stored["result"]
        # their test(): the final model, evaluated as the last epoch's row was
        assert result["final_test"] == pytest.approx(100 * result["history"][-1]["acc_test"])
        assert len(result["history"]) == 3
        best = max(result["history"], key=lambda row: (row["acc_val"], -row["epoch"]))
        assert result["test_at_best_val"] == pytest.approx(100 * best["acc_test"])
    assert seeds[0]["result"]["history"] != seeds[1]["result"]["history"]
    summary = (tmp_path / "out" / f"{name}.md").read_text()
    assert "final-epoch test accuracy (their rule)" in summary and "seeds 0, 1;" in summary

    # seed 0 again, with its file gone: the same history bit for bit; seed 1 is taken as stored
    (tmp_path / "out" / f"{name}_seed0.json").unlink()
    again = _run(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    redone = json.loads((tmp_path / "out" / f"{name}_seed0.json").read_text())
    assert redone["result"]["history"] == seeds[0]["result"]["history"]
    assert (tmp_path / "out" / f"{name}_seed1.json").read_text() == json.dumps(
        seeds[1], indent=1
    ) + "\n"
    assert again.stdout.count("seed 1: final test") == 1
