"""How long the command line takes to answer without training: help, config, a typo's refusal.

Times each command of --commands, interleaved, in two ways: ``python -m lipnorm_exp <command>``
as it is, and the same after importing torch and torch_geometric first, which is what the entry
point did before the command line imported them only once a run trains (or, with --baseline
<commit>, ``python -m lipnorm_exp`` of that commit of this repository, its package, configs and
plugins unpacked into a temporary folder).
Each is started once untimed, then --repeats times in a fresh process, alternating which goes
first; the table gives the median wall clock of each and their ratio. Writes <out>/cli.csv and
<out>/cli.md.

    python scripts/bench_cli.py                      # --help, --cfg job and two typos, 7 times
    python scripts/bench_cli.py --baseline 75038f9   # against the code of that commit
    python scripts/bench_cli.py "--commands=--help|train.lrr=0.1" --repeats 3   # '=': a flag
    python scripts/bench_cli.py --machine "2 cores, two training runs beside"   # in the header
    python scripts/bench_cli.py --smoke --out /tmp/bench    # does it still run?
"""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from bench_environment import environment, header, write_results

REPO = Path(__file__).resolve().parents[1]
#: the commands timed by default: help, the composed config, a mistyped option and key
COMMANDS = ("--help", "--cfg job", "model=gatt", "train.lrr=0.1")
#: the entry point with torch and PyG imported first, as it was before they were deferred
TORCH_FIRST = (
    "import runpy, sys, torch, torch_geometric; sys.argv[0] = 'lipnorm_exp'; "
    "runpy.run_module('lipnorm_exp', run_name='__main__', alter_sys=True)"
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", default="|".join(COMMANDS), help="'|'-separated")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--baseline",
        default=None,
        help="a commit whose `python -m lipnorm_exp` is the baseline (default: this checkout, "
        "torch and torch_geometric imported first)",
    )
    parser.add_argument("--machine", default=None, help="what else the machine was doing")
    parser.add_argument("--out", default="results/bench")
    parser.add_argument("--smoke", action="store_true", help="a check that the script runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.commands, args.repeats = "train.lrr=0.1", 1
    return args


def invocation(command: str, checkout: Path, torch_first: bool) -> tuple[list[str], dict]:
    """The process that answers ``command`` from ``checkout``, and its environment."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "HYDRA_FULL_ERROR": "0"}
    entry = ["-c", TORCH_FIRST] if torch_first else ["-m", "lipnorm_exp"]
    return [sys.executable, *entry, *shlex.split(command)], env


def timed(args: list[str], env: dict, cwd: Path) -> tuple[float, int]:
    """Seconds ``args`` takes to end, and its exit status."""
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return time.perf_counter() - start, done.returncode


def unpack(commit: str, folder: Path) -> Path:
    """The package, configs and plugins of ``commit`` written under ``folder``."""
    parts = ["lipnorm_exp", "configs", "hydra_plugins", "pyproject.toml"]
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit, *parts], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def measure(command: str, args, baseline: Path) -> dict:
    """Median seconds of ``command`` now and as the baseline, ``args.repeats`` times, alternated."""
    ways = {
        "now": invocation(command, REPO, torch_first=False),
        "before": invocation(command, baseline, torch_first=args.baseline is None),
    }
    cwd = {"now": REPO, "before": baseline}
    seconds: dict[str, list[float]] = {"now": [], "before": []}
    codes: dict[str, set[int]] = {"now": set(), "before": set()}
    for way in ways:  # untimed: compiles the modules of a fresh checkout, warms the file cache
        timed(*ways[way], cwd[way])
    for repeat in range(args.repeats):
        for way in ("now", "before") if repeat % 2 == 0 else ("before", "now"):
            wall, code = timed(*ways[way], cwd[way])
            seconds[way].append(wall)
            codes[way].add(code)
    now, before = statistics.median(seconds["now"]), statistics.median(seconds["before"])
    return {
        "command": f"python -m lipnorm_exp {command}",
        "exit_status": ",".join(str(code) for code in sorted(codes["now"] | codes["before"])),
        "before_s": before,
        "now_s": now,
        "faster": before / now,
    }


def commit(revision: str = "HEAD") -> str:
    """``revision``'s short hash (``+`` after HEAD's where the package or configs differ)."""
    git = ["git", "-C", str(REPO)]
    head = subprocess.run([*git, "rev-parse", "--short", revision], capture_output=True, text=True)
    dirty = subprocess.run([*git, "diff", "--quiet", "HEAD", "--", "lipnorm_exp", "configs"])
    return head.stdout.strip() + ("+" if revision == "HEAD" and dirty.returncode else "")


def main(argv=None) -> None:
    args = parse_args(argv)
    extra = {"commit": commit(), "repeats": args.repeats}
    if args.machine:
        extra["machine"] = args.machine
    if args.baseline:
        extra["baseline_commit"] = commit(args.baseline)
    env = environment(**extra)
    baseline = (
        f"`python -m lipnorm_exp` of commit {extra.get('baseline_commit')}"
        if args.baseline
        else "the same entry point with torch and torch_geometric imported first (`python -c "
        f'"{TORCH_FIRST}" <command>`)'
    )
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        checkout = unpack(args.baseline, Path(tmp)) if args.baseline else REPO
        rows = [measure(command, args, checkout) for command in args.commands.split("|")]
    for row in rows:
        print(f"{row['command']}: {row['before_s']:.2f} s → {row['now_s']:.2f} s "
              f"({row['faster']:.1f}× faster)", flush=True)  # fmt: skip
    lines = header("Command-line answers without training: help, config, refusals", env)
    lines += [
        "",
        f"`before_s`: {baseline}; `now_s`: `python -m lipnorm_exp <command>`; each the median "
        f"wall clock of {args.repeats} fresh processes, the two alternated; `faster`: "
        "`before_s / now_s`; `exit_status`: of both (2: a refusal).",
    ]
    write_results(Path(args.out), "cli", pd.DataFrame(rows), lines)


if __name__ == "__main__":
    main()
