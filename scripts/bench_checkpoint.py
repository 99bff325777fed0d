"""What resumable runs cost: a checkpoint's time against an epoch's, on Cora, one process.

For each configuration (the default run, and the published protocol's 15- and 30-layer GAT-Lip
of Table 3), trains a few epochs as the trainer does (one training epoch, one evaluation) and
times, per epoch, what lipnorm_exp/training/checkpoint.py adds: the state kept in memory at every
epoch's end (``keep``: model, optimiser, history and random states copied) and the file written
every ``train.checkpoint_every`` epochs (``write``: ``torch.save`` to a temporary file and a
rename). The overhead of a value of ``checkpoint_every`` is (keep + write / checkpoint_every) /
epoch, all measured in the same run. Writes <out>/checkpoint.md and <out>/checkpoint.csv.

    python scripts/bench_checkpoint.py                       # about a minute per configuration
    python scripts/bench_checkpoint.py --epochs 5 --every 1,10,50
    python scripts/bench_checkpoint.py --smoke --out /tmp/bench   # seconds: does it still run?
"""

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
from bench_environment import environment, header, write_results

from lipnorm_exp.cli.tracking import NullTracker
from lipnorm_exp.config import build_model, config_dir
from lipnorm_exp.data import load_task
from lipnorm_exp.report.grids import compose_config
from lipnorm_exp.training.checkpoint import Checkpoint, snapshot
from lipnorm_exp.training.epoch import evaluate, train_epoch
from lipnorm_exp.training.state import RunState, make_optimizer

#: name → command-line overrides of the configurations measured
CONFIGS = {
    "default (GAT-Lip, 10 layers, standard)": [],
    "Table 3 GAT-Lip, 15 layers, published": ["protocol=published", "model.depth=15"],
    "Table 3 GAT-Lip, 30 layers, published": ["protocol=published", "model.depth=30"],
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=8, help="epochs timed per configuration")
    parser.add_argument("--every", default="1,10,50", help="values of train.checkpoint_every")
    parser.add_argument(
        "--data-dir",
        default=None,
        help="paths.data_dir, where Cora is read (default: a run's, LIPNORM_DATA_DIR or data/)",
    )
    parser.add_argument("--out", default="results/bench")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a seconds-long check that the script runs: the default run, 2 epochs, every 1",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.epochs, args.every = 2, "1"
    return args


def measure(overrides: list[str], args, folder: Path) -> dict:
    """Median seconds per epoch of training + evaluation, keeping the state, writing it."""
    # raw files as a run gets them (LIPNORM_RAW_DIRS); the data folder a run's unless given
    paths = [f"paths.data_dir={Path(args.data_dir).resolve()}"] if args.data_dir else []
    cfg = compose_config(config_dir(), (*paths, "device=cpu", *overrides))
    task = load_task(cfg.dataset, cfg.paths, cfg.seed)
    model = build_model(cfg.model, cfg.norm, task.num_features, task.num_outputs)
    state = RunState(make_optimizer(model, cfg.train), cfg.train, NullTracker())
    # kept at every epoch, never written by keep(): the write is timed on its own
    checkpoint = Checkpoint(folder, "bench", every=args.epochs + 1, clock=time.perf_counter())
    epoch_s, keep_s, write_s = [], [], []
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        loss, _ = train_epoch(model, state.optimizer, task, torch.device("cpu"))
        state.end_epoch(epoch, loss, evaluate(model, task, torch.device("cpu")))
        kept = time.perf_counter()
        checkpoint.keep(epoch, lambda: snapshot(model, state, task.generators))
        written = time.perf_counter()
        checkpoint.write()
        done = time.perf_counter()
        epoch_s.append(kept - start)
        keep_s.append(written - kept)
        write_s.append(done - written)
    size = checkpoint.path.stat().st_size
    checkpoint.remove()
    median = {  # the first epoch warms the allocator up
        name: pd.Series(values[1:]).median()
        for name, values in (("epoch_s", epoch_s), ("keep_s", keep_s), ("write_s", write_s))
    }
    parameters = sum(p.numel() for p in model.parameters())
    return {"parameters": parameters, "checkpoint_MB": size / 2**20, **median}


def main(argv=None) -> None:
    args = parse_args(argv)
    everies = [int(value) for value in args.every.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        configs = list(CONFIGS.items())[:1] if args.smoke else CONFIGS.items()
        for name, overrides in configs:
            row = {"configuration": name, **measure(overrides, args, Path(folder))}
            for every in everies:
                cost = row["keep_s"] + row["write_s"] / every
                row[f"overhead every {every}"] = f"{100 * cost / row['epoch_s']:.2f}%"
            print(row, flush=True)
            rows.append(row)
    frame = pd.DataFrame(rows)
    out = Path(args.out)
    lines = header("Checkpoint cost (resumable runs)", environment("cpu"))
    lines += [
        "",
        "Per epoch, median over the epochs timed: `epoch_s` one training epoch and one "
        "evaluation; `keep_s` the state copied in memory at the epoch's end (every epoch); "
        "`write_s` one checkpoint file written; `overhead every k`: (keep + write / k) / epoch, "
        "the cost of `train.checkpoint_every=k`.",
    ]
    write_results(out, "checkpoint", frame, lines)


if __name__ == "__main__":
    main()
