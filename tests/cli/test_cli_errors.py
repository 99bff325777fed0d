"""The command line's one-line errors end to end: bad values, wrong types, unknown keys and
options, Hydra's own refusals, launcher arguments, absent data and an unwritable results
folder, each through ``python -m lipnorm_exp`` in a subprocess writing under ``tmp_path``. The
cases start at once in one fixture; the message of each kind of Hydra refusal is checked
in-process.
"""

import json
import subprocess

import pytest
from cli_helpers import (
    ERROR_PREFIX,
    REPO,
    TINY,
    cli,
    command,
    environment,
    records,
    start,
    tally_line,
)
from conftest import CONFIGS
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from lipnorm_exp.cli.errors import EXIT_USER_ERROR
from lipnorm_exp.cli.hydra_refusals import GRAMMAR, HydraRefusals, refusal_line
from lipnorm_exp.config.launcher import check_launcher
from lipnorm_exp.util.errors import ConfigError

pytestmark = pytest.mark.slow

MODEL_OPTIONS = sorted(path.stem for path in (REPO / "configs" / "model").glob("*.yaml"))


#: command lines that must fail, by name (``{empty}``: a folder with no data)
ERROR_CASES = {
    "depth": ("model.depth=0",),
    "lip_on_gcn": ("model=gcn", "norm=lip"),
    "unread_key": ("model=gcn", "norm=none", "+model.message_path=csr"),
    "unread_key_searched": ("--multirun", "model=gin", "norm=none", "+search=supplementary"),
    "no_data": ("paths.raw_dirs=[]", "paths.data_dir={empty}", "dataset.download=false"),
    "unknown_option": ("model=foo",),
    "in_a_multirun": ("--multirun", "model.depth=0,1", "model.hidden=8"),
    "unwritable_results": ("paths.results_dir=/proc/lipnorm_runs", "paths.data_dir={empty}/d"),
    "preset_scale": ("+experiment=residual", "scale=huge"),
    "unknown_key_in_a_sweep": ("--multirun", "+foo=1", "seed=0,1"),
    "grid_key_swept": ("+experiment=trees", "grid.quick.seeds=range(3)"),
    "grammar": ("seed=range(2",),
    "n_jobs": ("--multirun", "hydra/launcher=joblib", "hydra.launcher.n_jobs=0", "seed=0,1"),
}
#: a wrong type and an unknown key through the real CLI: case name → (override, the key its one
#: line must name). Each path from the command line to its one line runs here once; every message
#: of the validation (ranges, booleans, choices, rules, numbers that are not finite) is checked
#: in-process by tests/config/test_config.py, each kind of Hydra refusal by the last tests below
WRONG_TYPES = {
    "depth_abc": ("model.depth=abc", "model.depth"),
    "unknown_key": ("+foo=1", "foo"),
}
ERROR_CASES.update({name: (override,) for name, (override, _) in WRONG_TYPES.items()})


@pytest.fixture(scope="module")
def error_runs(tmp_path_factory, data_dir):
    """Every case of :data:`ERROR_CASES` started at once (each CLI start is mostly imports)."""
    root = tmp_path_factory.mktemp("errors")
    (root / "empty").mkdir()
    processes = {}
    for name, overrides in ERROR_CASES.items():
        filled = [override.format(empty=root / "empty") for override in overrides]
        processes[name] = start(command(root / name, data_dir, "train.epochs=2", *filled))
    try:
        results = {name: process.communicate(timeout=300) for name, process in processes.items()}
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
    return root, {name: (processes[name].returncode, *results[name]) for name in processes}


@pytest.mark.parametrize(
    "case, key",
    [
        ("depth", "model.depth"),
        ("lip_on_gcn", "norm=lip"),
        ("unread_key", "+model.message_path=csr: model.name=gcn does not read model.message_path"),
    ],
)
def test_a_bad_value_ends_a_run_with_one_line_naming_the_key(error_runs, case, key):
    root, results = error_runs
    code, _, stderr = results[case]
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(ERROR_PREFIX)
    assert key in lines[0]
    assert not (root / case / "runs").exists()


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_a_wrong_type_or_unknown_key_ends_in_one_line_without_a_traceback(error_runs, case):
    root, results = error_runs
    code, stdout, stderr = results[case]
    override, key = WRONG_TYPES[case]
    assert code == 2
    assert "Traceback" not in stdout + stderr
    (line,) = stderr.strip().splitlines()
    assert line.startswith(f"{ERROR_PREFIX}{key}")
    assert override.split("=", 1)[1] in line  # the value
    assert "must be" in line or "allowed: " in line  # what is allowed
    assert not (root / case / "runs").exists() and not (root / case / "logs").exists()


@pytest.mark.parametrize(
    ("case", "line"),
    [
        ("preset_scale", "scale must be quick or paper, got huge"),
        ("unknown_key_in_a_sweep", "foo=1 is not a key of the config; allowed: ablation, "),
        ("unread_key_searched", "++model.heads=1: model.name=gin does not read model.heads"),
        (
            "grid_key_swept",
            "grid.quick.seeds=range(3) sweeps over the grid key grid.quick.seeds instead of "
            "setting it; quote the value to set the preset's axis: \"grid.quick.seeds='range(3)'\"",
        ),
    ],
)
def test_a_value_wrong_for_every_job_stops_a_sweep_before_its_first_job(error_runs, case, line):
    root, results = error_runs
    code, stdout, stderr = results[case]
    assert code == 2 and "Traceback" not in stdout + stderr
    assert stderr.strip().splitlines()[-1].startswith(f"{ERROR_PREFIX}{line}")
    assert not (root / case / "logs").exists()


def test_an_unwritable_results_folder_fails_before_any_data_is_read(error_runs):
    root, results = error_runs
    code, _, stderr = results["unwritable_results"]
    assert code == 2
    (line,) = stderr.strip().splitlines()
    assert line.startswith(f"{ERROR_PREFIX}paths.results_dir=/proc/lipnorm_runs is not a writable")
    assert not (root / "empty" / "d").exists()


def test_hydra_full_error_shows_the_traceback(tmp_path, data_dir):
    args = command(tmp_path, data_dir, "model.depth=abc")
    out = subprocess.run(
        args, cwd=REPO, env=environment(HYDRA_FULL_ERROR="1"), capture_output=True, text=True
    )
    assert out.returncode != 0
    assert "Traceback" in out.stderr and "ConfigError: model.depth must be" in out.stderr


def test_absent_data_ends_a_run_with_one_line_naming_the_folder(error_runs):
    root, results = error_runs
    code, _, stderr = results["no_data"]
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(ERROR_PREFIX)
    assert str(root / "empty" / "Planetoid" / "Cora" / "raw") in lines[0]
    assert "ind.cora.graph" in lines[0]


def test_runs_that_fail_leave_no_empty_log_and_no_lock_file(error_runs):
    """Absent data, bad values, a sweep with a failed job: Hydra's log file is made at its first
    line, and every lock file (a run's, a dataset's) is removed as its holder lets it go."""
    root, results = error_runs
    assert results["no_data"][0] == 2
    assert not list((root / "no_data").rglob("*.log"))  # the run logged nothing
    assert [path for path in root.rglob("*.log") if not path.stat().st_size] == []
    assert list(root.rglob("*.lock")) == []


@pytest.mark.parametrize(
    ("case", "line"),
    [
        (
            "unknown_option",
            f"model=foo is not an option of model; allowed: {', '.join(MODEL_OPTIONS)}",
        ),
        ("grammar", "seed=range(2 is not an override Hydra can read (no viable alternative at "),
        ("n_jobs", "hydra.launcher.n_jobs must be an integer >= 1 (worker processes) or <= -1"),
    ],
)
def test_hydras_own_refusals_and_launcher_arguments_end_in_one_line(error_runs, case, line):
    root, results = error_runs
    code, stdout, stderr = results[case]
    assert code == 2 and "Traceback" not in stdout + stderr and "+model" not in stderr
    (printed,) = stderr.strip().splitlines()
    assert printed.startswith(f"{ERROR_PREFIX}{line}")
    assert not (root / case / "runs").exists() and not (root / case / "logs").exists()


@pytest.mark.parametrize(
    ("overrides", "line"),
    [
        (
            ("hydra/launcher=submitit_slurm", "hydra.launcher.cpus_per_task=0"),
            "hydra.launcher.cpus_per_task must be an integer >= 1 (or null: the cluster's "
            "default), got 0",
        ),
        (
            ("hydra/launcher=submitit_local", "hydra.launcher.timeout_min=0"),
            "hydra.launcher.timeout_min must be an integer >= 1, got 0",
        ),
        (
            ("hydra/launcher=submitit_slurm", "hydra.launcher.gpus_per_node=-1"),
            "hydra.launcher.gpus_per_node must be an integer >= 0 (or null: none), got -1",
        ),
    ],
)
@pytest.mark.filterwarnings(r"ignore:\s*'hydra/launcher/submitit_slurm' is validated:UserWarning")
def test_the_submitit_launchers_sizes_are_checked_before_a_sweep(overrides, line):
    """What the command line prints for them (the ``n_jobs`` case above goes through it)."""
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        config = compose("config", overrides=list(overrides), return_hydra_config=True)
    with pytest.raises(ConfigError) as refused:
        check_launcher(config.hydra.launcher)
    assert str(refused.value) == line
    key = overrides[1].split("=")[0].removeprefix("hydra.launcher.")
    check_launcher(OmegaConf.merge(config.hydra.launcher, {key: 2}))


def hydra_error(*overrides: str) -> Exception:
    """What Hydra raises composing the config with ``overrides``."""
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        try:
            compose("config", overrides=list(overrides))
        except Exception as error:
            return error
    raise AssertionError(f"{overrides} composed")


@pytest.mark.parametrize(
    ("overrides", "line"),
    [
        (("=3",), "=3 names no key; allowed: key=value, e.g. model.depth=3"),
        (("train.lrr=1",), "train.lrr=1 is not a key of the config; did you mean train.lr?"),
        (("foo=bar",), "foo=bar is not a key of the config; see --cfg job for the keys"),
        (
            ("dataset=trees", "dataset.feature_layout=sparse"),
            "dataset.feature_layout=sparse is not a key of the chosen dataset; only "
            "dataset=citeseer, cora, pubmed read it: choose one of them, or leave the key out",
        ),
        (
            ("model=ggnn", "model.message_path=csr"),
            "model.message_path=csr is not a key of the chosen model; only model=gat, gatv2, gt "
            "read it",
        ),
        (("+experiment=nope",), "experiment=nope is not an option of experiment; allowed: abl"),
        (("train.lr=interval(0,1)",), "train.lr=interval(0,1) is a sweep; allowed: one value, "),
        (
            ("paths.data_dir=/tmp/é",),
            "paths.data_dir=/tmp/é is not an override Hydra can read (LexerNoViableAltException: "
            "paths.data_dir=/tmp/é); allowed: key=value, a value with spaces, brackets or "
            f"non-ASCII characters quoted as key='value' ({GRAMMAR})",
        ),
    ],
)
def test_each_kind_of_hydra_refusal_is_one_line_naming_the_override(overrides, line):
    found = refusal_line(hydra_error(*overrides), overrides)
    assert found is not None and found.startswith(line) and "\n" not in found


def test_a_sweep_the_sweeper_cannot_expand_is_refused_in_its_own_line(tmp_path, data_dir):
    """The project's sweeper expands a sweep before any job; a refusal there is one line."""
    sweep = ["--multirun", "train.lr=interval(0,1)", f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    done = cli(command(tmp_path, data_dir, *sweep))
    line = f"{ERROR_PREFIX}train.lr=interval(0,1): the basic sweeper takes lists and ranges only"
    assert (done.returncode, done.stderr.strip()) == (EXIT_USER_ERROR, line), done.stderr
    assert not (tmp_path / "sweep").exists()
    assert refusal_line(ConfigError("a refusal"), []) == "a refusal"


def test_errors_after_the_task_started_or_with_full_errors_are_left_to_hydra(monkeypatch):
    error = hydra_error("model.depht=3")
    assert isinstance(error, ConfigCompositionException)

    def raise_it():
        raise error

    refusals = HydraRefusals(["model.depht=3"])
    with pytest.raises(SystemExit) as stopped:
        refusals.report(raise_it)
    assert stopped.value.code == EXIT_USER_ERROR
    assert refusal_line(RuntimeError("a bug"), []) is None
    monkeypatch.setenv("HYDRA_FULL_ERROR", "1")
    with pytest.raises(ConfigCompositionException):
        refusals.report(raise_it)
    monkeypatch.delenv("HYDRA_FULL_ERROR")
    refusals.start_task()
    with pytest.raises(ConfigCompositionException):
        refusals.report(raise_it)


def test_a_bad_value_in_a_multirun_fails_that_job_only(error_runs):
    root, results = error_runs
    code, stdout, stderr = results["in_a_multirun"]
    assert code == 1
    assert f"{ERROR_PREFIX}model.depth must be an integer >= 1, got 0" in stderr.splitlines()
    assert "Traceback" not in stdout + stderr
    assert tally_line(completed=1, failed=1) in stdout + stderr
    found = records(root / "in_a_multirun")
    assert len(found) == 1
    assert [record["config"]["model"]["depth"] for record in found.values()] == [1]


def test_the_slurm_launcher_without_slurm_is_refused_in_one_line_from_any_folder(
    tmp_path, data_dir
):
    """Run from a folder outside the checkout, on a machine whose PATH has no sbatch or srun."""
    elsewhere = tmp_path / "login_node"
    elsewhere.mkdir()
    done = subprocess.run(
        command(tmp_path, data_dir, "--multirun", "seed=0,1", "hydra/launcher=submitit_slurm"),
        cwd=elsewhere,
        env=environment(PATH=str(tmp_path / "no_programs")),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == EXIT_USER_ERROR, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"{ERROR_PREFIX}hydra/launcher=submitit_slurm needs SLURM, and sbatch and srun cannot be "
        "found on this machine's PATH; run the sweep where SLURM is (a cluster's login node), "
        "or use hydra/launcher=basic or joblib here"
    )
    assert "Traceback" not in done.stderr and not (tmp_path / "runs").exists()


def test_a_record_of_newer_code_is_neither_reused_nor_replaced(tmp_path, data_dir):
    """A record naming a schema or numerics version this code does not have (a newer checkout's)
    is refused in one line on relaunch, with ``rerun_stale`` and ``force`` too; it stays as it is.
    A record whose ``machine`` is not an object fails the store's checks: set aside, run again."""
    args = command(tmp_path, data_dir, *TINY)
    assert cli(args).returncode == 0
    ((rid, made),) = records(tmp_path).items()
    path = tmp_path / "runs" / f"{rid}.json"
    for key, value, named in (
        ("schema_version", 99, "schema_version 99 (this code reads 1 to "),
        ("numerics", 99, "numerics 99 (this code computes 1 to "),
    ):
        path.write_text(json.dumps({**made, key: value}, indent=1))
        before = path.read_bytes()
        for extra in ((), ("rerun_stale=true",), ("force=true",)):
            out = cli([*args, *extra])
            assert out.returncode == EXIT_USER_ERROR and "Traceback" not in out.stderr, extra
            (line,) = out.stderr.strip().splitlines()
            assert line.startswith(f"{ERROR_PREFIX}{path} was made by newer code ({named}")
            assert line.endswith("install the newer lipnorm_exp, or give another paths.results_dir")
            assert path.read_bytes() == before
    path.write_text(json.dumps({**made, "machine": "a laptop"}, indent=1))
    again = cli(args)
    assert again.returncode == 0, again.stderr
    assert f"{path.name}: machine is 'a laptop', not an object" in again.stdout + again.stderr
    assert isinstance(records(tmp_path)[rid]["machine"], dict)
