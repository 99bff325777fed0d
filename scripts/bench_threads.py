"""The README's run (``make run``) under the thread policy against torch's default, whole runs.

Each arm (:data:`ARMS`) is the command ``make run`` starts, a fresh process training the
default config (a 10-layer GAT-Lip on Cora) for ``--epochs`` epochs into a temporary folder;
the arms run in turn, ``--rounds`` times, on the machine as it is (its load is in the file).
An arm's seconds per epoch are the median of its record's epoch times (``time_s``; the first
epoch left out) over its runs; its CPU seconds the process's (user + system, start-up
included), from ``resource.getrusage(RUSAGE_CHILDREN)``; its threads the record's
``machine.threads``; its departure the first epoch at which a loss of its first run's history
(training, validation, test) is not the one-thread arm's of the same round, bit for bit: a
thread count is part of a run's arithmetic. Writes <out>/threads.md and <out>/threads.csv.

    python scripts/bench_threads.py                      # about 10 minutes on a busy 2-core CPU
    python scripts/bench_threads.py --smoke --out /tmp/bench   # a minute: does it still run?
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
from bench_environment import environment, header, write_results

from lipnorm_exp.util.openmp import WAIT_POLICY

#: arm -> (the command after the interpreter, environment changes): the new default as
#: ``make run`` starts it; torch's default before ``train.threads`` (one thread per core,
#: libgomp's own wait: the app started without the console's passive wait); two threads with
#: the passive wait; one thread
ARMS = {
    "new default (train.threads=auto)": (["-m", "lipnorm_exp"], {}),
    "before: 2 threads, libgomp's wait": (
        ["-c", "from lipnorm_exp.cli.app import console; console()", "train.threads=2"],
        {},
    ),
    "2 threads, passive wait": (["-m", "lipnorm_exp", "train.threads=2"], {}),
    "1 thread (OMP_NUM_THREADS=1)": (
        ["-m", "lipnorm_exp", "train.threads=1"],
        {"OMP_NUM_THREADS": "1"},
    ),
}
ONE_THREAD = "1 thread (OMP_NUM_THREADS=1)"
NEW_DEFAULT = "new default (train.threads=auto)"
#: the history's columns compared with the one-thread arm's (`departure`)
LOSSES = ("train_step_loss", "train_loss", "val_loss", "test_loss")
BEFORE = "before: 2 threads, libgomp's wait"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=10, help="epochs per run")
    parser.add_argument("--rounds", type=int, default=2, help="runs per arm, the arms in turn")
    parser.add_argument("--out", type=Path, default=Path("results/bench"))
    parser.add_argument("--smoke", action="store_true", help="2 epochs, 1 round")
    args = parser.parse_args(argv)
    if args.smoke:
        args.epochs, args.rounds = 2, 1
    return args


def one_run(arm: str, epochs: int, folder: Path) -> dict:
    """One run of ``arm``: its epoch seconds, its process's CPU seconds, threads and load."""
    command, changes = ARMS[arm]
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", WAIT_POLICY[0])}
    overrides = [
        f"train.epochs={epochs}",
        f"paths.data_dir={folder / 'data'}",
        f"paths.results_dir={folder / 'runs'}",
        f"paths.log_dir={folder / 'logs'}",
        "train.progress=false",
        "force=true",
    ]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, *command, *overrides],
        env={**env, **changes},
        capture_output=True,
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr[-3000:]
    [path] = (folder / "runs").glob("*.json")
    record = json.loads(path.read_text())
    path.unlink()
    return {
        "arm": arm,
        "losses": [[row[key] for key in LOSSES] for row in record["history"]],
        "epoch s": statistics.median(row["time_s"] for row in record["history"][1:]),
        "process cpu s": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        "threads": record["machine"]["threads"],
        "load": load,
    }


def departure(losses: list[list[float]], one_thread: list[list[float]]) -> str:
    """The first epoch whose ``losses`` differ from ``one_thread``'s, or ``none``."""
    for epoch, (ours, theirs) in enumerate(zip(losses, one_thread, strict=True), start=1):
        if ours != theirs:
            return str(epoch)
    return "none"


def main(argv=None) -> None:
    args = parse_args(argv)
    env = environment("cpu", epochs=args.epochs, rounds=args.rounds)
    print("\n".join(f"{key}: {value}" for key, value in env.items()), flush=True)
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-threads-") as folder:
        for _ in range(args.rounds):
            for arm in ARMS:
                runs.append(one_run(arm, args.epochs, Path(folder)))
                print(f"  {runs[-1]}", flush=True)
    first_round = {run["arm"]: run.pop("losses") for run in runs[: len(ARMS)]}
    for run in runs[len(ARMS) :]:
        del run["losses"]
    frame = pd.DataFrame(runs).groupby("arm", sort=False).median().reset_index()
    frame["departs at epoch"] = [
        departure(first_round[arm], first_round[ONE_THREAD]) for arm in frame["arm"]
    ]
    seconds = frame.set_index("arm")["epoch s"]
    frame["x 1 thread"] = frame["epoch s"] / seconds[ONE_THREAD]
    lines = header("Threads: the README's run against torch's default", env)
    lines += [
        "",
        "`python -m lipnorm_exp train.epochs=<epochs>` (the default config: a 10-layer GAT-Lip "
        "on Cora, as `make run` trains it), one fresh process per run, the arms in turn. "
        "`epoch s`: median over the arm's runs of each record's median epoch time (the first "
        "epoch left out); `process cpu s`: the process's user + system CPU, start-up included; "
        "`threads`: the record's `machine.threads`; `load`: the 1-minute load average as the "
        "run started. Medians over the rounds. `departs at epoch`: the first epoch at which a "
        "loss of the arm's first run (training, validation or test) is not the one-thread run's "
        "of the same round bit for bit (`none`: equal throughout).",
        "",
        f"Before / new default: **{seconds[BEFORE] / seconds[NEW_DEFAULT]:.2f}x**; "
        f"new default / 1 thread: **{seconds[NEW_DEFAULT] / seconds[ONE_THREAD]:.2f}x**.",
    ]
    write_results(args.out, "threads", frame, lines)


if __name__ == "__main__":
    main()
