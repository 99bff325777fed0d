"""Sweep throughput: runs per minute of a preset sweep, per n_jobs and seeds per job.

For each K in --n-jobs and S in --seeds-per-job, launches

    python -m lipnorm_exp +experiment=<preset> hydra/launcher=joblib hydra.launcher.n_jobs=K \
        seeds_per_job=S ...

with a fresh temporary results folder (so nothing is skipped as already done), times the
sweep's wall clock (start-up included) and counts the records it wrote. S > 1 trains S seeds
of each configuration together in one process (``seed=[...]``, lipnorm_exp/training/together.py); S
= 1 is one run at a time. Writes <out>/sweep.csv and <out>/sweep.md.

    python scripts/bench_sweep.py --epochs 2 --datasets cora --depths 2 --seeds 0   # minutes
    python scripts/bench_sweep.py --n-jobs 1 --seeds-per-job 1,5 --seeds 'range(5)'
    python scripts/bench_sweep.py --smoke --out /tmp/bench    # does it still run?
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
from bench_environment import environment, header, write_results

from lipnorm_exp.records import FINISHED, iter_records

GRID_KEYS = ("datasets", "methods", "depths", "seeds")  # grid.<scale>.<key> of the presets


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cuda = torch.cuda.is_available()
    parser.add_argument("--n-jobs", default="1,2,4,8" if cuda else "1,2")
    parser.add_argument(
        "--seeds-per-job", default="1", help="seeds trained together per job, e.g. 1,5"
    )
    parser.add_argument("--device", default="cuda" if cuda else "cpu")
    parser.add_argument("--experiment", default="residual", help="preset in configs/experiment")
    parser.add_argument("--scale", default="quick", choices=("quick", "paper"))
    parser.add_argument("--epochs", type=int, default=None, help="train.epochs (preset's if unset)")
    for key in GRID_KEYS:
        parser.add_argument(f"--{key}", default=None, help=f"grid.<scale>.{key}, e.g. 15,30")
    parser.add_argument(
        "--threads-per-job",
        type=int,
        default=None,
        help="OMP_NUM_THREADS of every job (default: CPU cores // K, at least 1)",
    )
    parser.add_argument("--timeout", type=float, default=None, help="seconds per sweep")
    parser.add_argument("--out", default="results/bench")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a check that the script runs: one sweep of one GAT-Lip run, 2 layers, 1 epoch",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.n_jobs, args.seeds_per_job, args.epochs = "1", "1", 1
        args.datasets, args.methods, args.depths, args.seeds = "cora", "gat_lip", "2", "0"
    return args


def overrides(args, n_jobs: int | str, seeds_per_job: int | str, folder: Path) -> list[str]:
    """Command-line overrides of one sweep; grid values are quoted so that a comma-separated
    list reaches the preset's sweeper as one string instead of sweeping the grid key."""
    items = [
        f"+experiment={args.experiment}",
        f"scale={args.scale}",
        "hydra/launcher=joblib",
        f"hydra.launcher.n_jobs={n_jobs}",
        f"seeds_per_job={seeds_per_job}",
        f"paths.results_dir={folder / 'runs'}",
        f"paths.log_dir={folder / 'logs'}",
        f"device={args.device}",
        "train.progress=false",
    ]
    if args.epochs is not None:
        items.append(f"train.epochs={args.epochs}")
    for key in GRID_KEYS:
        value = getattr(args, key)
        if value is not None:
            items.append(f"grid.{args.scale}.{key}='{value}'")
    return items


def count_records(results_dir: Path) -> dict[str, int]:
    """Records by status: finished (completed or diverged) and failed."""
    counts = {"finished": 0, "failed": 0}
    for _, record in iter_records(results_dir):
        counts["finished" if record["status"] in FINISHED else "failed"] += 1
    return counts


def run_sweep(args, n_jobs: int, seeds_per_job: int) -> dict:
    """One sweep at ``n_jobs`` workers: wall clock, records and runs per minute."""
    threads = args.threads_per_job or max(1, (os.cpu_count() or 1) // n_jobs)
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        folder = Path(tmp)
        arguments = overrides(args, n_jobs, seeds_per_job, folder)
        command = [sys.executable, "-m", "lipnorm_exp", *arguments]
        print(" ".join(command), flush=True)
        start = time.perf_counter()
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=args.timeout
        )
        wall = time.perf_counter() - start
        counts = count_records(folder / "runs")
    if done.returncode:
        print(done.stderr[-2000:], file=sys.stderr)
    return {
        "n_jobs": n_jobs,
        "seeds_per_job": seeds_per_job,
        "threads_per_job": threads,
        "returncode": done.returncode,
        "finished": counts["finished"],
        "failed": counts["failed"],
        "wall_s": wall,
        "runs_per_min": 60 * counts["finished"] / wall,
    }


def write_outputs(frame: pd.DataFrame, env: dict, args, out: Path) -> None:
    example = " ".join(overrides(args, "K", "S", Path("<tmp>")))
    lines = header("Sweep throughput (joblib launcher, seeds trained together)", env)
    lines += [
        f"- sweep: `python -m lipnorm_exp {example}`",
        "",
        "`wall_s`: the whole sweep (start-up, data loading, every run); `finished`: records "
        "written as completed or diverged; `seeds_per_job`: seeds trained together in one "
        "process (1: one run at a time); `speedup`: runs per minute over those of the first "
        "row.",
    ]
    write_results(out, "sweep", frame, lines)


def main(argv=None) -> None:
    args = parse_args(argv)
    env = environment(args.device)
    rows = []
    for n_jobs in (int(k) for k in args.n_jobs.split(",")):
        for seeds_per_job in (int(s) for s in args.seeds_per_job.split(",")):
            row = run_sweep(args, n_jobs, seeds_per_job)
            print(
                f"n_jobs={n_jobs}, seeds_per_job={seeds_per_job}: {row['finished']} runs in "
                f"{row['wall_s']:.1f} s = {row['runs_per_min']:.2f} runs/min "
                f"({row['failed']} failed)",
                flush=True,
            )
            rows.append(row)
    frame = pd.DataFrame(rows)
    frame["speedup"] = frame["runs_per_min"] / frame["runs_per_min"].iloc[0]
    out = Path(args.out)
    write_outputs(frame, env, args, out)


if __name__ == "__main__":
    main()
