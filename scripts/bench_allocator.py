"""What keeping freed memory in glibc's heap would gain, per cell kind: `SETTINGS` or not.

By default glibc gives a freed block above its mmap threshold (128 KiB at first, raised as
mmapped blocks are freed) back to the kernel and trims the top of its heap, and the next epoch
faults the same pages in again; with blocks up to 32 MiB served from the heap (the largest
threshold glibc allows on 64-bit machines) and the heap trimmed only above twice that, an epoch
reuses its memory. Only the buffers' addresses change, not the arithmetic.

Each cell (:data:`CELLS`: Table 1 cells on Cora and CiteSeer, the README's run, TREES cells) is
built and trained as a run is (``bench_reproduce.trainee``: config, ``load_task``,
``build_model``, ``make_optimizer``; ``train_epoch`` then ``evaluate``) in a fresh process, with
the project's setting (``with``: `SETTINGS`, set before the cell is built) or glibc's defaults
(``without``), the two in turn, ``--pairs`` times. Each process trains one untimed epoch, then
times ``--epochs`` epochs: CPU time of the training thread (``time.thread_time``; torch on one
thread), wall time and the process's minor page faults; their medians are its row. Processes,
not epochs alternating in one: once ``mallopt`` has been called glibc no longer raises its own
threshold as mmapped blocks are freed, so no setting made in a process gives back glibc's
default behaviour, and a heap grown under one setting serves the next epoch's under the other.
Writes <out>/allocator.md and <out>/allocator.csv.

    OMP_NUM_THREADS=1 python scripts/bench_allocator.py                  # about 15 minutes
    python scripts/bench_allocator.py --smoke --out /tmp/bench           # a minute
"""

import argparse
import ctypes
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
from bench_environment import environment, header, write_results
from bench_reproduce import CPU, Trainee, trainee

from lipnorm_exp.training.epoch import NonFiniteError, evaluate, train_epoch

#: ``mallopt`` parameters (glibc's ``malloc.h``) and the values of ``with``
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
SETTINGS = {M_MMAP_THRESHOLD: 32 * 2**20, M_TRIM_THRESHOLD: 64 * 2**20, M_TOP_PAD: 32 * 2**20}
#: cell kind -> the overrides of a run of it (TREES: scripts/reproduce_cpu.sh's sizes at d = 4,
#: one pass of its epoch's ten timed, as bench_reproduce samples it)
CELLS = {
    "Cora, Table 1 GAT-Lip 20 layers": (
        "+experiment=missing_vector", "scale=paper", "dataset=cora", "+method=gat_lip",
        "model.depth=20", "dataset.missing_rate=0.0",
    ),
    "Cora, make run (GAT-Lip 10 layers)": (),
    "CiteSeer, Table 1 GAT 2 layers": (
        "+experiment=missing_vector", "scale=paper", "dataset=citeseer", "+method=gat",
        "model.depth=2", "dataset.missing_rate=0.0",
    ),
    "CiteSeer, Table 1 GGNN 20 layers": (
        "+experiment=missing_vector", "scale=paper", "dataset=citeseer", "+method=ggnn",
        "model.depth=20", "dataset.missing_rate=0.0",
    ),
    "TREES d = 4, GGNN": (
        "+experiment=trees", "scale=paper", "dataset.depth=4", "+method=ggnn",
        "dataset.num_trees=5000", "dataset.passes_per_epoch=10",
    ),
    "TREES d = 4, GAT-Lip": (
        "+experiment=trees", "scale=paper", "dataset.depth=4", "+method=gat_lip",
        "dataset.num_trees=5000", "dataset.passes_per_epoch=10",
    ),
}  # fmt: skip
SMOKE_CELLS = ("Cora, make run (GAT-Lip 10 layers)",)
SETTINGS_TIMED = ("with", "without")
MEASURES = ("cpu s", "wall s", "faults")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=6, help="timed epochs per process")
    parser.add_argument("--pairs", type=int, default=3, help="processes per setting and cell")
    parser.add_argument("--out", type=Path, default=Path("results/bench"))
    parser.add_argument("--smoke", action="store_true", help="one cell, 1 epoch, 1 pair")
    parser.add_argument(
        "--child", nargs=3, metavar=("CELL", "SETTING", "DATA"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.epochs, args.pairs = 1, 1
    return args


def timed_epoch(run: Trainee) -> dict[str, float]:
    """CPU and wall seconds and minor page faults of one epoch (training, then evaluation)."""
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    cpu, wall = time.thread_time(), time.perf_counter()
    try:
        train_epoch(run.model, run.optimizer, run.task, CPU, run.track_gradients)
        evaluate(run.model, run.task, CPU)
    except NonFiniteError:  # a diverging model: its epoch's work still counts
        pass
    return {
        "cpu s": time.thread_time() - cpu,
        "wall s": time.perf_counter() - wall,
        "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults,
    }


def set_malloc(settings: dict[int, int]) -> bool:
    """``mallopt(parameter, value)`` for each of ``settings`` (glibc); whether it took them all."""
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return all([mallopt(parameter, value) == 1 for parameter, value in settings.items()])


def child(cell: str, setting: str, data_dir: str, epochs: int) -> None:
    """This process: one cell at one setting; prints its medians as JSON."""
    torch.set_num_threads(1)
    if setting == "with":
        assert set_malloc(SETTINGS), "glibc refused the setting"
    run = trainee(CELLS[cell], "v2", data_dir)
    timed_epoch(run)
    measured = [timed_epoch(run) for _ in range(epochs)]
    print(json.dumps({key: statistics.median(e[key] for e in measured) for key in MEASURES}))


def in_child(cell: str, setting: str, data_dir: str, epochs: int) -> dict[str, float]:
    command = [sys.executable, __file__, "--epochs", str(epochs), "--child", cell, setting]
    done = subprocess.run([*command, data_dir], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def time_cell(cell: str, pairs: int, epochs: int, data_dir: str) -> dict:
    """Medians over ``pairs`` processes per setting, started in turn."""
    rows: dict[str, list[dict]] = {setting: [] for setting in SETTINGS_TIMED}
    for _ in range(pairs):
        for setting in SETTINGS_TIMED:
            rows[setting].append(in_child(cell, setting, data_dir, epochs))
    row: dict = {"cell": cell}
    for setting, measured in rows.items():
        for key in MEASURES:
            row[f"{key} {setting}"] = statistics.median(process[key] for process in measured)
    row["cpu without/with"] = row["cpu s without"] / row["cpu s with"]
    row["wall without/with"] = row["wall s without"] / row["wall s with"]
    print(f"  {cell}: CPU without/with {row['cpu without/with']:.3f}", flush=True)
    return row


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.child:
        child(*args.child, args.epochs)
        return
    env = environment(CPU, epochs_per_process=args.epochs, pairs=args.pairs)
    print("\n".join(f"{key}: {value}" for key, value in env.items()), flush=True)
    names = SMOKE_CELLS if args.smoke else tuple(CELLS)
    with tempfile.TemporaryDirectory(prefix="bench-data-") as data_dir:
        rows = [time_cell(name, args.pairs, args.epochs, data_dir) for name in names]
    frame = pd.DataFrame(rows)
    lines = header("glibc's allocator keeping freed memory: runs with and without", env)
    lines += [
        "",
        f"`with`: mallopt {SETTINGS} (M_MMAP_THRESHOLD: -3, M_TRIM_THRESHOLD: -1, M_TOP_PAD: -2); "
        "`without`: glibc's defaults (a threshold of 128 KiB "
        "that glibc raises itself as mmapped blocks are freed). Each cell trains in a fresh "
        "process per setting, the two in turn, `pairs` times; each process times "
        "`epochs_per_process` epochs after one untimed epoch. Columns: the medians over the "
        "processes of each one's median epoch. CPU: `time.thread_time` of the training thread "
        "(torch on one thread); faults: the process's minor page faults per epoch. TREES: one "
        "pass of the epoch's ten (bench_reproduce's sample). Ratios above 1: `with` is faster.",
    ]
    write_results(args.out, "allocator", frame, lines)


if __name__ == "__main__":
    main()
