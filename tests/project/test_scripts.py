"""Every script under ``scripts/`` runs at HEAD: each in its smoke mode, as a user would start it.

A benchmark or a reproduction script that no longer runs behind a committed result is found
here, not by its next reader. The Python scripts run with ``--smoke`` (a few epochs on Cora);
the reproduction scripts' command lines are checked key by key against the composed config of
their preset (:func:`test_reproduction_scripts_name_only_existing_keys`).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
#: the Python scripts that are commands (bench_environment.py and the other authors_*.py are
#: modules they import; authors_deepgat.py needs a clone of the authors' code:
#: test_authors_deepgat.py)
COMMANDS = sorted(path.name for path in SCRIPTS.glob("*.py") if "__main__" in path.read_text())


def _run(args: list[str], cwd: Path, data_dir: Path | None = None) -> subprocess.CompletedProcess:
    # the checkout's package first, as the scripts run from it, whatever else is installed; a
    # script that trains as a user's run does prepares its data in ``data_dir``, not the checkout
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": os.pathsep.join([str(REPO), str(SCRIPTS)]),
        **({"LIPNORM_DATA_DIR": str(data_dir)} if data_dir else {}),
    }
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_every_python_script_is_a_known_command():
    assert COMMANDS == [
        "authors_deepgat.py",
        "bench_allocator.py",
        "bench_checkpoint.py",
        "bench_cli.py",
        "bench_huggingface.py",
        "bench_layers.py",
        "bench_pubmed.py",
        "bench_reproduce.py",
        "bench_sweep.py",
        "bench_threads.py",
        "calibrate_chaos.py",
        "calibrate_verify.py",
        "epoch_budget.py",
        "pubmed_chosen.py",
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["bench_layers.py"],
        ["bench_layers.py", "--messages"],
        ["bench_reproduce.py"],
        ["bench_pubmed.py"],
        ["bench_checkpoint.py"],
        ["bench_sweep.py"],
        ["bench_threads.py"],
        ["bench_allocator.py"],
        ["bench_huggingface.py"],
        ["bench_cli.py"],
        ["calibrate_verify.py"],
    ],
    ids=" ".join,
)
def test_benchmark_runs_in_its_smoke_mode(command, tmp_path, tmp_path_factory, planetoid_raw):
    script, *options = command
    if script == "bench_pubmed.py":
        planetoid_raw("pubmed")  # skipped, with the loader's reason, where PubMed cannot be had
    args = [str(SCRIPTS / script), *options, "--smoke", "--out", str(tmp_path)]
    done = _run(args, cwd=REPO, data_dir=tmp_path_factory.mktemp("data"))
    assert done.returncode == 0, done.stderr[-3000:]
    written = sorted(path.suffix for path in tmp_path.iterdir())
    assert written == [".csv", ".md"], written
    assert all(path.stat().st_size > 0 for path in tmp_path.iterdir())


#: bad arguments of the scripts, each refused in one line before any work: (script, arguments,
#: what the line says)
BAD_ARGUMENTS = [
    ("calibrate_verify.py", ["--out", "/etc/hostname/o"], "--out: folder /etc/hostname/o lies "),
    ("calibrate_verify.py", ["--runs", "{missing}"], "--runs: '{missing}' is not a folder"),
    ("calibrate_verify.py", ["--runs", "{empty}", "--smoke"], "--runs: {empty} holds no record"),
    ("pubmed_chosen.py", ["0.5", "gcn"], "cell method: '0.5 gcn' is no table cell of "),
    ("pubmed_chosen.py", ["1.0", "gcn", "--runs", "{missing}"], "--runs: '{missing}' is not a"),
    (
        "pubmed_chosen.py",
        ["--all", "1.0"],
        "cell method: give a cell and its method (e.g. 1.0 gcn)",
    ),
    (
        "pubmed_chosen.py",
        ["1.0"],
        "cell method: give a cell and its method (e.g. 1.0 gcn), or --all",
    ),
    ("authors_deepgat.py", ["--seeds", "0,0"], "--seeds: '0,0' gives seed 0 twice"),
    ("authors_deepgat.py", ["--seeds", "-1"], "--seeds: '-1' is not integers >= 0"),
    ("authors_deepgat.py", ["--lr", "nan"], "--lr: 'nan' is not a finite number > 0"),
    ("authors_deepgat.py", ["--out", "/etc/hostname"], "--out: folder /etc/hostname is a file"),
    ("bench_pubmed.py", ["--epochs", "0"], "--epochs: '0' is not an integer >= 1"),
    ("bench_pubmed.py", ["--runs", "{missing}"], "--runs: '{missing}' is not a folder"),
    ("bench_reproduce.py", ["--epochs", "0"], "--epochs: '0' is not an integer >= 1"),
    ("bench_reproduce.py", ["--warmup", "-1"], "--warmup: '-1' is not an integer >= 0"),
    ("bench_reproduce.py", ["--repeats", "3"], "--repeats: 3 is not an integer >= 20"),
    ("bench_reproduce.py", ["--runs", "{missing}"], "--runs: '{missing}' is not a folder"),
    ("bench_reproduce.py", ["--out", "/etc/hostname"], "--out: folder /etc/hostname is a file"),
]


@pytest.mark.parametrize(("script", "arguments", "says"), BAD_ARGUMENTS)
def test_a_scripts_bad_argument_is_refused_in_one_line_before_any_work(
    script, arguments, says, tmp_path
):
    folders = {"missing": str(tmp_path / "missing"), "empty": str(tmp_path)}
    arguments = [argument.format(**folders) for argument in arguments]
    if script == "authors_deepgat.py":
        arguments = ["--checkout", str(tmp_path), *arguments]
    done = _run([str(SCRIPTS / script), *arguments], cwd=REPO)
    assert done.returncode == 2 and done.stdout == "", done.stderr[-3000:]
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"{script}: error: argument {says.format(**folders)}"), line


def test_epoch_budget_runs_on_the_committed_records():
    done = _run(
        [str(SCRIPTS / "epoch_budget.py"), "--preset", "gradients", "--budgets", "25,50"],
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    header = next(line for line in done.stdout.splitlines() if line.startswith("| label"))
    assert "≤ 25 epochs" in header and "≤ 50 epochs" in header and "last epoch" in header
    assert "| GAT-Lip " in done.stdout


def _run_script(
    script: Path, tmp_path: Path, chosen: str = "echo 2; exit 0", at_once: int = 1, then: str = ""
):
    """Run the script as written (its variables, arrays and loops expanded by bash), by default
    one sweep at a time (``SWEEPS_AT_ONCE=1``: the calls in the script's order), with a
    ``python`` on ``PATH`` that writes down its arguments, one record a call in one write, then
    runs ``then``; for ``pubmed_chosen.py`` (a cell's chosen candidate) it runs ``chosen``
    (by default: depth 2).

    Returns the finished process and the arguments of every ``python -m lipnorm_exp`` call.
    """
    log, stub = tmp_path / "calls", tmp_path / "bin" / "python"
    stub.parent.mkdir(parents=True)
    stub.write_text(
        f'#!/bin/sh\ncase "$1" in *pubmed_chosen.py) {chosen};; esac\n'
        f"call=$(printf '%s\\037' \"$@\")\nprintf '%s\\036' \"$call\" >> {log}\n{then}\n"
    )
    stub.chmod(0o755)
    path = f"{stub.parent}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "SWEEPS_AT_ONCE": str(at_once)}
    done = subprocess.run(
        ["bash", str(script)], env=env, check=True, capture_output=True, text=True, timeout=60
    )
    calls = [call.split("\037")[:-1] for call in log.read_text().split("\036")[:-1]]
    return done, [call[2:] for call in calls if call[:2] == ["-m", "lipnorm_exp"]]


def _commands(script: Path, tmp_path: Path) -> list[list[str]]:
    """The arguments of every ``python -m lipnorm_exp`` call the script makes (`_run_script`)."""
    return _run_script(script, tmp_path)[1]


def _first_job(arguments: list[str]) -> list[str]:
    """The overrides of a command line's first job: each swept key at its first value."""
    parser = OverridesParser.create()
    first = []
    for override in parser.parse_overrides(arguments):
        value = next(override.sweep_string_iterator()) if override.is_sweep_override() else None
        text = override.input_line
        first.append(text if value is None else f"{text.split('=', 1)[0]}={value}")
    return first


@pytest.mark.parametrize("script", ["reproduce_cpu.sh", "reproduce_gpu.sh", "reproduce_pubmed.sh"])
def test_reproduction_scripts_compose(script, tmp_path):
    """Every command line of a reproduction script composes: a renamed key or group fails here."""
    commands = _commands(SCRIPTS / script, tmp_path)
    assert len(commands) >= 5
    refused = []
    with initialize_config_dir(str(REPO / "configs"), version_base="1.3"):
        for arguments in commands:
            try:
                compose("config", overrides=_first_job(arguments))
            except Exception as error:  # noqa: BLE001 - every refusal is reported below
                refused.append(f"{' '.join(arguments)}: {error}")
    assert refused == []


def _value(command: str, key: str) -> str:
    return command.split(f"{key}=")[1].split()[0]


def test_reproduce_pubmed_runs_each_table1_cells_reporting_seeds(tmp_path):
    """Each Table 1 PubMed cell (rate, method) has a ``report`` line, after its candidates."""
    calls = _commands(SCRIPTS / "reproduce_pubmed.sh", tmp_path)
    commands = [" ".join(arguments) for arguments in calls]
    reporting = [
        c
        for c in commands
        if "grid.paper.seeds='100,101,102,103,104'" in c and "+experiment=missing_vector" in c
    ]
    rate, method = "grid.paper.missing_rates", "grid.paper.methods"
    cells = {(_value(c, rate), _value(c, method)) for c in reporting}
    methods = ("gcn", "ggnn", "gat", "gat_pn", "gat_lip")
    assert cells == {(r, m) for r in ("0.0", "1.0") for m in methods}
    for r, m in cells:
        positions = [i for i, c in enumerate(commands) if f"{rate}={r} {method}={m} " in c]
        last_candidate = max(i for i in positions if "'0,1,2'" in commands[i])
        assert positions[-1] > last_candidate and "'100," in commands[positions[-1]]


def test_reproduce_pubmed_leaves_unchosen_reports_for_the_next_launch(tmp_path):
    """Where a cell's selecting seeds have not all finished (``pubmed_chosen.py`` refuses) and
    no sweep is running to finish them, its reporting sweep is left for the next launch with a
    line naming it, and every other sweep still runs."""
    done, calls = _run_script(SCRIPTS / "reproduce_pubmed.sh", tmp_path, chosen="exit 1")
    _, all_calls = _run_script(SCRIPTS / "reproduce_pubmed.sh", tmp_path / "chosen")
    reporting_seeds = "100,101,102,103,104'"  # Table 1's and 3's reports; Table 2's add 0-2
    commands = [" ".join(arguments) for arguments in calls]
    every = [" ".join(arguments) for arguments in all_calls]
    reports = [c for c in every if reporting_seeds in c]
    assert len(reports) == 14 and commands == [c for c in every if c not in reports]
    waiting = [line for line in done.stderr.splitlines() if "wait for the next launch" in line]
    assert "reproduce_pubmed.sh: 1.0 gat_lip's reporting seeds wait for the next launch" in waiting
    assert len(waiting) == len(reports)


def test_reproduce_pubmed_runs_the_next_sweeps_while_a_report_waits_for_its_candidates(tmp_path):
    """Two sweeps at a time: GCN 0%'s first candidate runs until the campaign's last sweep has
    started (it reads a FIFO that the last one writes), and GCN 0%'s reporting sweep, which
    waits for it, holds up none of the sweeps after it; it starts once its candidate ends."""
    fifo, released = tmp_path / "fifo", tmp_path / "released"
    os.mkfifo(fifo)
    first = "missing_rates=0.0 grid.paper.methods=gcn grid.paper.depths=2 grid.paper.seeds='0,1,2'"
    then = (
        f'case "$*" in *"{first}") cat {fifo} > /dev/null; touch {released};;\n'
        f"  *\"grid.paper.seeds='3,4'\"*) echo > {fifo};;\nesac"
    )
    chosen = f'[ "$2 $3" = "0.0 gcn" ] && [ ! -e {released} ] && exit 3; echo 2; exit 0'
    _, calls = _run_script(
        SCRIPTS / "reproduce_pubmed.sh", tmp_path / "run", chosen, at_once=2, then=then
    )
    commands = [" ".join(arguments) for arguments in calls]
    last = next(i for i, c in enumerate(commands) if "grid.paper.seeds='3,4'" in c)
    [report] = [
        i
        for i, c in enumerate(commands)
        if "grid.paper.missing_rates=0.0 grid.paper.methods=gcn " in c and "'100," in c
    ]
    assert report > last and len(commands) == len(
        _commands(SCRIPTS / "reproduce_pubmed.sh", tmp_path)
    )


def test_reproduce_pubmed_reports_table2_at_the_chosen_candidate(tmp_path):
    """Table 2's two PubMed lines: GCNII's reporting sweep after its three candidates' selecting
    seeds, GAT-Lip's after Table 1's GAT-Lip 100% reporting sweep, each at the chosen depth with
    the selecting and reporting seeds (the chosen candidate's seeds 0-2 tagged, not trained)."""
    calls = _commands(SCRIPTS / "reproduce_pubmed.sh", tmp_path)
    commands = [" ".join(arguments) for arguments in calls]
    table2 = [i for i, c in enumerate(commands) if "+experiment=gcnii" in c]
    both = "grid.paper.seeds='0,1,2,100,101,102,103,104'"
    gcnii = [i for i in table2 if _value(commands[i], "grid.paper.methods") == "gcnii"]
    assert [_value(commands[i], "grid.paper.seeds") for i in gcnii] == ["'0,1,2'"] * 3 + [
        both.split("=")[1]
    ]
    [gat_lip] = [i for i in table2 if _value(commands[i], "grid.paper.methods") == "gat_lip"]
    table1_reporting = next(
        i
        for i, c in enumerate(commands)
        if "grid.paper.missing_rates=1.0 grid.paper.methods=gat_lip " in c and "'100," in c
    )
    assert gat_lip > table1_reporting and both in commands[gat_lip]
    assert "grid.paper.depths=2" in commands[gat_lip]  # the chooser's answer


def test_reproduce_pubmed_reports_table3s_15_layer_cells_with_several_candidates(tmp_path):
    """Table 3 on PubMed at 15 layers: each method over seeds 0-4 at the protocol's values, GAT
    and GAT-Lip also at Cora's selected setting; those two reported over seeds 100-104 at the
    chosen one, after their candidates; 30 layers at the protocol's values only."""
    calls = _commands(SCRIPTS / "reproduce_pubmed.sh", tmp_path)
    commands = [" ".join(arguments) for arguments in calls]
    table3 = [(i, c) for i, c in enumerate(commands) if "+experiment=residual" in c]
    at_15 = [(i, c) for i, c in table3 if "grid.paper.depths=15" in c]
    selecting = [(i, c) for i, c in at_15 if "'0,1,2,3,4'" in c]
    methods = sorted(_value(c, "grid.paper.methods") for _, c in selecting)
    assert methods == ["gat", "gat", "gat_lip", "gat_lip", "gat_lip_res", "gat_res"]
    assert sum("train.lr=0.001" in c and "model.dropout=0.0" in c for _, c in selecting) == 2
    reporting = [(i, c) for i, c in table3 if "'100,101,102,103,104'" in c]  # the stub's depth
    assert sorted(_value(c, "grid.paper.methods") for _, c in reporting) == ["gat", "gat_lip"]
    assert min(i for i, _ in reporting) > max(i for i, _ in selecting)
    [at_30] = [c for _, c in table3 if "grid.paper.depths=30" in c]
    assert "'0,1,2,3,4'" in at_30 and "train.lr" not in at_30


def test_pubmed_chosen_composes_table2s_candidates_to_the_committed_runs(monkeypatch):
    """Table 2's GCNII candidates at 8 layers compose to the run ids of the committed PubMed
    GCNII records of seeds 0-2 (the sweep's own runs); Table 2's GAT-Lip cell shares Table 1's
    GAT-Lip 100% selecting runs."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from pubmed_chosen import candidate_runs

    gcnii = candidate_runs("table2", "gcnii")
    assert len(gcnii) == 9
    at_8 = [rid for rid, row in gcnii.items() if row == ("8",)]
    records = [json.loads((REPO / "results" / "runs" / f"{rid}.json").read_text()) for rid in at_8]
    assert sorted(r["config"]["seed"] for r in records) == [0, 1, 2]
    assert {(r["config"]["model"]["name"], r["config"]["model"]["depth"]) for r in records} == {
        ("gcnii", 8)
    }
    assert all(
        "gcnii" in r["config"]["tags"] and r["config"]["dataset"]["name"] == "pubmed"
        for r in records
    )
    assert candidate_runs("table2", "gat_lip") == candidate_runs("1.0", "gat_lip")


def test_bench_pubmed_finds_a_cells_records_by_their_setting(monkeypatch):
    """``bench_pubmed.recorded_seconds`` of Table 1's GCN PubMed 0% candidate at width 128: its
    committed records of seeds 0-2 and 100-104 (one setting), each epoch's mean wall seconds;
    the width-64 candidate's records are not among them."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from bench_pubmed import recorded_seconds
    from bench_reproduce import recorded_epochs
    from pubmed_plan import LINES

    [gcn] = [line for line in LINES if line.name == "Table 1 GCN PubMed 0%"]
    [wide] = [cell for cell in gcn.candidates if "model.hidden=128" in cell]
    runs = REPO / "results" / "runs"
    expected = sorted(
        record["timing"]["epoch_s_mean"]
        for record in map(json.loads, (path.read_text() for path in runs.glob("*.json")))
        if record["config"]["dataset"]["name"] == "pubmed"
        and record["config"]["model"]["name"] == "gcn"
        and record["config"]["model"]["hidden"] == 128
        and record["config"]["dataset"]["missing_rate"] == 0.0
    )
    found = recorded_seconds(recorded_epochs(runs), [wide])[wide]
    assert len(found) == 8 and sorted(found) == expected


def test_pubmed_chosen_picks_the_committed_gcn_0_cells_width(tmp_path, monkeypatch):
    """``pubmed_chosen.py 0.0 gcn`` on the committed records of its six selecting runs: the
    width 128 (validation 79.2 against 78.9); without one of them, exit 3 naming it."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from pubmed_chosen import candidate_runs

    runs = tmp_path / "runs"
    runs.mkdir()
    selecting = list(candidate_runs("0.0", "gcn"))
    assert len(selecting) == 6
    for rid in selecting:
        (runs / f"{rid}.json").write_bytes((REPO / "results" / "runs" / f"{rid}.json").read_bytes())
    command = [str(SCRIPTS / "pubmed_chosen.py"), "0.0", "gcn", "--runs", str(runs)]
    done = _run(command, cwd=REPO)
    assert (done.returncode, done.stdout) == (0, "2 model.hidden=128\n"), done.stderr[-2000:]
    (runs / f"{selecting[-1]}.json").unlink()
    done = _run(command, cwd=REPO)
    assert done.returncode == 3 and done.stdout == ""
    assert f"run {selecting[-1]} (2 model.hidden=128) has no finished record" in done.stderr
    from pubmed_chosen import cell_candidates  # --all's rows: no choice while one run is missing

    rows = cell_candidates("0.0", "gcn", runs)
    assert rows[["candidate", "selecting runs", "chosen"]].values.tolist() == [
        ["2", "3/3", ""],
        ["2 model.hidden=128", "2/3", ""],
    ]


def test_results_readme_states_each_pubmed_cells_choice(monkeypatch):
    """Each PubMed table cell whose candidates' selecting runs have all finished (committed
    records) is chosen in results/README.md with the mean validation accuracies of
    ``pubmed_chosen.py --all``: ``(<chosen> against <the others>)``."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from pubmed_chosen import cell_candidates, own_cells

    text = " ".join((REPO / "results" / "README.md").read_text().split())
    stated = []
    for cell, method in own_cells():  # a shared cell's choice is stated with the cell it shares
        rows = cell_candidates(cell, method, REPO / "results" / "runs")
        if not rows["chosen"].any():
            continue
        chosen = rows.loc[rows["chosen"] == "chosen", "validation"].item()
        others = [f"{value:.1f}" for value in rows.loc[rows["chosen"] == "", "validation"]]
        stated.append(f"{chosen:.1f} against {' and '.join(others)})")
    assert len(stated) >= 4
    assert [words for words in stated if words not in text] == []


def test_a_recorded_command_names_no_folder_outside_the_checkout(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    from bench_environment import portable_argument

    assert portable_argument("/elsewhere/clones/LipschitzNorm") == "<LipschitzNorm>"
    assert portable_argument("--out=/tmp/calibration") == "--out=<calibration>"
    assert portable_argument(str(REPO / "scripts" / "bench_layers.py")) == "scripts/bench_layers.py"
    assert portable_argument(f"--runs={REPO}/results/runs") == "--runs=results/runs"
    for kept in ("results/paper/authors", "--layers", "15", "--seeds=0,1", "model.hidden=16"):
        assert portable_argument(kept) == kept
