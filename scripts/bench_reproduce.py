"""The paper's grid on a CPU: its cost measured, not guessed, at numerics version 2 and 1.

Two measurements in one process, on the threads torch is given (the committed file: one):

1. **Table 1's epoch against PyG.** A 2-layer GAT-Lip on Cora, hidden 128 as 2 heads x 64,
   dropout 0.5 and the published protocol's other values, built from the project's config as
   a run builds it (:data:`TABLE1`), at numerics version 2 (``model.message_path=auto``,
   ``dataset.feature_layout=auto``: CSR messages, a sparse input) and at version 1
   (``gather``, ``dense``), beside PyG's ``GATConv`` stack of the same sizes with a dense input
   Linear (no norm: PyG has none). One training step plus one evaluation pass, the three
   in turn (round robin), median of ``--repeats`` after warm-up (wall time).
2. **Each CPU preset's projected cost.** A sample of each preset's paper-scale cells
   (:data:`PRESETS`) trains a few epochs at version 2 and version 1 side by side (one epoch
   of each in turn), each built and trained as a run is (config, ``load_task``,
   ``build_model``, ``make_optimizer``, ``train_epoch`` then ``evaluate``), timed in CPU
   seconds of this thread (``time.thread_time``) and in wall seconds, with the load average;
   a full-graph cell also gets its FLOP bound (``gemm_bound``). A preset's CPU-hours are the
   sum over its cells of seeds x epochs x CPU seconds per epoch (:func:`project`).

``--presets`` and ``--versions`` time a subset (the file then names what was not timed).
PubMed's lines are timed (with `time_cell`) and projected by ``bench_pubmed.py``.

    OMP_NUM_THREADS=1 python scripts/bench_reproduce.py        # an hour or more on one thread
    python scripts/bench_reproduce.py --smoke --out /tmp/bench  # a minute: does it still run?
"""

import itertools
import json
import os
import statistics
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import bench_environment
import numpy as np
import pandas as pd
import torch
from bench_layers import Graph, PygStack, timed_step_and_evaluation
from gemm_bound import epoch_bound
from omegaconf import OmegaConf
from torch_geometric import seed_everything

from lipnorm_exp.cli.file_arguments import output_folder
from lipnorm_exp.config import build_model
from lipnorm_exp.data import FULL_GRAPH_NODES, load_task
from lipnorm_exp.records import FINISHED, RUNS_FOLDER, setting_key
from lipnorm_exp.records.labels import model_label
from lipnorm_exp.report.grids import CONFIGS_DIR, compose_config, paper_protocol
from lipnorm_exp.sweeps.progress import sweep_axes
from lipnorm_exp.training.epoch import NonFiniteError, evaluate, train_epoch
from lipnorm_exp.training.state import make_optimizer
from lipnorm_exp.util.commands import (
    OneLineParser,
    existing_folder,
    non_negative_int,
    positive_int,
)

CPU = torch.device("cpu")
#: Table 1's model: GAT-Lip, 2 layers, input Linear to 128, 2 heads x 64, dropout 0.5
TABLE1 = (
    "+method=gat_lip",
    "protocol=published",
    "dataset=cora",
    "model.depth=2",
    "model.hidden=64",
    "++model.heads=2",
    "model.input_width=128",
    "model.dropout=0.5",
)
#: the keys that make a run of version 1, those of them a run has (TREES has no feature layout,
#: GCN, GIN and GGNN no message path)
VERSION_1 = ("model.message_path=gather", "dataset.feature_layout=dense")
#: the sizes the TREES records ran at d >= 3 (scripts/reproduce_cpu.sh: 5000 trees, an
#: evaluation every 10 passes); d = 2 runs the protocol's (96 trees, 1000 passes)
TREES_AS_RECORDED = ("dataset.num_trees=5000", "dataset.passes_per_epoch=10")
#: TREES passes timed per epoch: the recorded passes / this (at least 1), scaled back up
PASS_SAMPLE = 50


@dataclass(frozen=True)
class Preset:
    """A paper preset's CPU part and the cells timed.

    Args:
        name: ``configs/experiment/<name>.yaml`` and its records' tag.
        shows: the paper's table or figure.
        cpu: swept keys narrowed to the values that run on a CPU (others: the whole grid).
        timed: swept keys narrowed to the values timed; a cell at another value is timed as at
            the first timed one, except the depth, between the two timed depths around it.
        depth_key: the swept depth.
    """

    name: str
    shows: str
    cpu: Mapping[str, tuple] = field(default_factory=dict)
    timed: Mapping[str, tuple] = field(default_factory=dict)
    depth_key: str = "model.depth"


PRESETS = (
    Preset(
        "missing_vector",
        "Table 1",
        {"dataset": ("cora", "citeseer")},
        {"dataset.missing_rate": (0.0,), "model.depth": (2, 20)},
    ),
    Preset("residual", "Table 3", {"dataset": ("cora",), "model.depth": (15,)}),
    Preset("gradients", "Figs. 2-3"),
    Preset("depth", "Fig. 6", {"dataset": ("cora",)}, {"model.depth": (2, 30)}),
    Preset("trees", "Fig. 5, d <= 5", {"dataset.depth": (2, 3, 4, 5)}, depth_key="dataset.depth"),
)
#: --smoke: one cell of Table 1 and one of TREES, timed and projected alone
SMOKE_TABLE1 = {"dataset": ("cora",), "dataset.missing_rate": (0.0,), "+method": ("gat_lip",)}
SMOKE_TREES = {"dataset.depth": (2,), "+method": ("gat",)}
SMOKE_PRESETS = (
    Preset("missing_vector", "Table 1", {**SMOKE_TABLE1, "model.depth": (2,)}),
    Preset("trees", "Fig. 5, d = 2", SMOKE_TREES, depth_key="dataset.depth"),
)


def add_cell_arguments(parser: OneLineParser) -> None:
    """``--epochs`` (timed per cell, after one untimed), ``--runs`` and ``--out``: the arguments
    of a benchmark that times cells (`time_cell`) and reads the records' epochs."""
    parser.add_argument(
        "--epochs", type=positive_int, default=3, help="epochs timed per cell (after one untimed)"
    )
    parser.add_argument(
        "--runs", type=existing_folder, default=str(RUNS_FOLDER), help="the records' folder"
    )
    parser.add_argument("--out", type=output_folder, default="results/bench")


def parse_args(argv=None):
    """The command line; a bad argument is refused in one line before anything runs."""
    parser = OneLineParser(
        description=__doc__.split("\n\n")[0], error_prefix="bench_reproduce.py: error: "
    )
    parser.add_argument("--repeats", type=int, default=30, help="Table 1 epochs timed (>= 20)")
    parser.add_argument(
        "--warmup", type=non_negative_int, default=3, help="Table 1 epochs untimed first"
    )
    add_cell_arguments(parser)
    parser.add_argument(
        "--presets", type=lambda text: text.split(","), help="time only these (comma-separated)"
    )
    parser.add_argument(
        "--versions", type=lambda text: text.split(","), default=["v2", "v1"],
        help="numerics versions timed (comma-separated)",
    )  # fmt: skip
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="seconds: Table 1 for 2 epochs, one Cora and one TREES cell for 2 epochs",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeats, args.warmup, args.epochs = 2, 0, 1
    elif args.repeats < 20:
        parser.error(f"argument --repeats: {args.repeats} is not an integer >= 20")
    return args


# ---- Table 1 against PyG ----------------------------------------------------------------------


def table1(args, data_dir: str) -> pd.DataFrame:
    """Median ms of a training step and an evaluation of ours (v2, v1) and PyG's, in turn."""
    cases = {}
    for version, extra in (("v2", ()), ("v1", VERSION_1)):
        cfg = compose_config(CONFIGS_DIR, (*TABLE1, *paths(data_dir), *extra))
        task = load_task(cfg.dataset, cfg.paths, cfg.seed)
        graph = Graph("cora", task, task.train_batches[0])
        seed_everything(0)
        model = build_model(cfg.model, cfg.norm, graph.task.num_features, graph.task.num_outputs)
        cases[f"ours {version}"] = (model, make_optimizer(model, cfg.train), graph)
    graph = cases["ours v1"][2]  # dense features
    seed_everything(0)
    pyg = PygStack(
        "gat", 2, graph.task.num_features, graph.task.num_outputs, heads=2, hidden=128,
        dropout=cfg.model.dropout, attn_dropout=cfg.model.attn_dropout,
    )  # fmt: skip
    optimizer = torch.optim.Adam(
        pyg.parameters(), lr=cfg.train.lr, weight_decay=cfg.train.weight_decay, foreach=True
    )
    cases["PyG GATConv"] = (pyg, optimizer, graph)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for repeat in range(args.warmup + args.repeats):
        for name, (model, optimizer, graph) in cases.items():
            ms = timed_step_and_evaluation(model, optimizer, graph, CPU)
            if repeat >= args.warmup:
                times[name].append(ms)
    rows = [{"model": name, "ms": statistics.median(times[name])} for name in cases]
    frame = pd.DataFrame(rows)
    frame["x ours v2"] = frame["ms"] / frame.loc[0, "ms"]
    return frame


# ---- the presets' cells -----------------------------------------------------------------------


def paths(data_dir: str) -> tuple[str, ...]:
    """Data in ``data_dir`` (raw files copied from ``LIPNORM_RAW_DIRS``, else downloaded)."""
    return (f"paths.data_dir={data_dir}", "train.progress=false", "device=cpu")


def grid_axes(preset: Preset, narrowed: Mapping[str, tuple]) -> dict[str, list]:
    """The preset's swept keys at ``scale=paper`` (seed left out), narrowed."""
    composed = compose_config(CONFIGS_DIR, (f"+experiment={preset.name}", "scale=paper"), True)
    axes = {k: v for k, v in sweep_axes(composed.hydra).items() if k != "seed"}
    for key, values in narrowed.items():
        assert all(value in axes[key] for value in values), (preset.name, key, values)
        axes[key] = list(values)
    return axes


def seeds(preset: Preset) -> int:
    composed = compose_config(CONFIGS_DIR, (f"+experiment={preset.name}", "scale=paper"), True)
    return len(sweep_axes(composed.hydra)["seed"])


def cells(axes: Mapping[str, list]) -> list[dict]:
    return [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*axes.values())]


def cell_overrides(preset: Preset, cell: Mapping) -> tuple[str, ...]:
    """The overrides of ``cell`` (a run of the preset at its paper scale)."""
    items = [f"+experiment={preset.name}", "scale=paper", *(f"{k}={v}" for k, v in cell.items())]
    if preset.name == "trees" and cell["dataset.depth"] >= 3:
        items += TREES_AS_RECORDED
    return tuple(items)


def cell_key(config: Mapping) -> tuple:
    """What the records and the cells are matched on: label, dataset, missing rate, depth."""
    dataset = config["dataset"]
    rate = float(dataset.get("missing_rate", 0.0) or 0.0)
    return model_label(config), dataset["name"], rate, int(config["model"]["depth"])


@dataclass
class Trainee:
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    task: object
    track_gradients: bool
    passes: int  # the passes of a cell's epoch over those of the trainee's (TREES)
    full_graph: bool  # trained as one whole graph (Planetoid): its FLOP bound is measured


def trainee(overrides: tuple[str, ...], version: str, data_dir: str) -> Trainee:
    """A cell's run at ``version``, made as the run makes it (seed, data, model, optimiser)."""
    cfg = compose_config(CONFIGS_DIR, (*overrides, *paths(data_dir)))
    extra = []
    if version == "v1":  # the keys of VERSION_1 the run has (GCN has no message path)
        extra = [item for item in VERSION_1 if OmegaConf.select(cfg, item.split("=")[0])]
    passes = int(cfg.dataset.get("passes_per_epoch", 1))
    sample = max(1, passes // PASS_SAMPLE)
    if passes > 1:
        extra.append(f"dataset.passes_per_epoch={sample}")
    cfg = compose_config(CONFIGS_DIR, (*overrides, *paths(data_dir), *extra))
    seed_everything(cfg.seed)
    task = load_task(cfg.dataset, cfg.paths, cfg.seed)
    model = build_model(cfg.model, cfg.norm, task.num_features, task.num_outputs)
    optimizer = make_optimizer(model, cfg.train)
    full = cfg.dataset.name in FULL_GRAPH_NODES
    return Trainee(model, optimizer, task, bool(cfg.train.track_gradients), passes / sample, full)


def epoch_seconds(run: Trainee) -> tuple[float, float]:
    """Wall and CPU seconds of one epoch as a run trains it (``train_epoch``, then
    ``evaluate``), its training passes scaled to the cell's.

    CPU: ``time.thread_time`` of this thread, where torch computes on one thread.
    """
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        train_epoch(run.model, run.optimizer, run.task, CPU, run.track_gradients)
        trained = time.perf_counter(), time.thread_time()
        evaluate(run.model, run.task, CPU)
    except NonFiniteError:  # a diverging sample: its epoch's time still counts
        trained = time.perf_counter(), time.thread_time()
    done = time.perf_counter(), time.thread_time()
    return tuple(
        (end_train - start) * run.passes + end - end_train
        for start, end_train, end in zip((wall, cpu), trained, done, strict=True)
    )


def time_cell(
    preset: str, cell: dict, overrides: tuple[str, ...], epochs: int, data_dir: str,
    versions: tuple[str, ...] = ("v2", "v1"),
) -> dict:  # fmt: skip
    """Median wall and CPU seconds per epoch of ``cell`` at ``versions``, one epoch of each in
    turn after one untimed epoch each; a full graph's FLOP bound (`gemm_bound`) at v2."""
    load = os.getloadavg()[0]
    runs = {version: trainee(overrides, version, data_dir) for version in versions}
    times: dict[str, list[tuple[float, float]]] = {version: [] for version in runs}
    for repeat in range(1 + epochs):
        for version, run in runs.items():
            seconds = epoch_seconds(run)
            if repeat:
                times[version].append(seconds)
    row = {"preset": preset, **cell}
    for version in sorted(versions):
        row[f"{version} wall s"] = statistics.median(wall for wall, _ in times[version])
        row[f"{version} cpu s"] = statistics.median(cpu for _, cpu in times[version])
    if "v1" in runs:
        row["v1/v2"] = row["v1 cpu s"] / row["v2 cpu s"]
    row["load"] = load
    v2 = runs["v2"]
    if v2.full_graph:
        row |= epoch_bound(lambda: evaluate(v2.model, v2.task, CPU))
        row["v2 cpu/bound"] = row["v2 cpu s"] / row["bound s"]
    shown = ", ".join(f"{v} {row[f'{v} cpu s']:.3f} s" for v in sorted(versions))
    print(f"  {preset} {cell}: CPU {shown}", flush=True)
    return row


# ---- the projection ---------------------------------------------------------------------------


def recorded_epochs(runs: Path) -> list[dict]:
    """Per finished paper-scale record: its presets, protocol, :func:`cell_key`, epochs, dataset,
    setting (`setting_key`) and mean wall seconds an epoch."""
    rows = []
    for path in sorted(runs.glob("*.json")):
        record = json.loads(path.read_text())
        config = record["config"]
        if record["status"] not in FINISHED or config.get("scale") != "paper":
            continue
        rows.append(
            {
                "tags": tuple(config.get("tags") or ()),
                "protocol": config["protocol"]["name"],
                "key": cell_key(config),
                "epochs": int(record["summary"]["epochs_run"]),
                "dataset": config["dataset"]["name"],
                "setting": setting_key(config),
                "epoch s": float(record["timing"]["epoch_s_mean"]),
            }
        )
    return rows


def epochs_of(key: tuple, records: list[dict]) -> tuple[float, str]:
    """Mean epochs the preset's records of ``key`` ran: of its label, dataset, missing rate
    and depth, else of its label and depth, else of its label, else of all (and which)."""
    label, dataset, rate, depth = key
    matches = (
        ("cell", lambda k: k == key),
        ("label, depth", lambda k: k[0] == label and k[3] == depth),
        ("label", lambda k: k[0] == label),
        ("preset", lambda k: True),
    )
    for name, match in matches:
        found = [row["epochs"] for row in records if match(row["key"])]
        if found:
            return float(np.mean(found)), name
    raise ValueError(f"no record to count the epochs of {key}")


def timed_value(preset: Preset, key: str, value):
    timed = preset.timed.get(key)
    return value if timed is None or value in timed else timed[0]


def seconds_at(samples: pd.DataFrame, preset: Preset, cell: dict, version: str) -> float:
    """The cell's epoch seconds: its sample's, or the line through the timed depths around."""
    same = samples
    for key, value in cell.items():
        if key != preset.depth_key:
            same = same[same[key] == timed_value(preset, key, value)]
    same = same.sort_values(preset.depth_key)
    depths, seconds = same[preset.depth_key].to_numpy(float), same[f"{version} cpu s"].to_numpy()
    if len(depths) == 1:
        return float(seconds[0])
    i = int(np.clip(np.searchsorted(depths, cell[preset.depth_key]), 1, len(depths) - 1))
    slope = (seconds[i] - seconds[i - 1]) / (depths[i] - depths[i - 1])
    return float(seconds[i - 1] + slope * (cell[preset.depth_key] - depths[i - 1]))


def project(
    preset: Preset, axes: dict, samples: pd.DataFrame, records: list[dict], versions: list[str]
) -> dict:
    """The preset's CPU-hours at ``versions`` over the cells of ``axes`` (:data:`RULE`)."""
    protocol = paper_protocol(preset.name)
    mine = [row for row in records if preset.name in row["tags"] and row["protocol"] == protocol]
    runs = seeds(preset)
    hours = dict.fromkeys(versions, 0.0)
    epochs, sources = [], []
    labels = {}
    for cell in cells(axes):
        rest = tuple((k, v) for k, v in cell.items() if k != preset.depth_key)
        if rest not in labels:  # the label, dataset and rate do not change with depth
            labels[rest] = composed_key(preset, cell)
        label, dataset, rate, offset = labels[rest]
        depth = cell[preset.depth_key] + offset
        count, source = epochs_of((label, dataset, rate, depth), mine)
        epochs.append(count)
        sources.append(source)
        for version in hours:
            hours[version] += runs * count * seconds_at(samples, preset, cell, version) / 3600
    return {
        "preset": preset.name,
        "shows": preset.shows,
        "cells": len(epochs),
        "runs": runs * len(epochs),
        "records": len(mine),
        "epochs per run": float(np.mean(epochs)),
        "epochs from": ", ".join(f"{s} {sources.count(s)}" for s in dict.fromkeys(sources)),
        **{f"{version} h": hours[version] for version in sorted(hours)},
        **({"v1/v2": hours["v1"] / hours["v2"]} if "v1" in hours else {}),
    }


def composed_key(preset: Preset, cell: dict) -> tuple:
    """The cell's :func:`cell_key`, its depth replaced by the model's depth minus the swept
    depth (TREES: d + 1 layers)."""
    cfg = compose_config(CONFIGS_DIR, cell_overrides(preset, cell))
    label, dataset, rate, depth = cell_key(OmegaConf.to_container(cfg, resolve=True))
    return label, dataset, rate, depth - cell[preset.depth_key]


# ---- output -----------------------------------------------------------------------------------

RULE = (
    "A preset's CPU-hours = sum over its cells (the paper-scale grid, `scale=paper`, narrowed "
    "to what runs on a CPU: columns `shows` and the list below) of seeds x epochs x seconds per "
    "epoch. **Epochs**: the mean `epochs_run` of the preset's committed records "
    "(results/runs, scale paper, the preset's protocol, completed or diverged) of the cell's "
    "model label, dataset, missing rate and depth, else of its label and depth, else of its "
    "label (`epochs from` counts the cells of each): the budgets and early stops as the "
    "records ran them (scripts/reproduce_cpu.sh: Planetoid 200-1000 epochs, Table 3 up to "
    "1000 with its stop after 200 epochs without a better validation accuracy, TREES d >= 3 "
    "evaluations every 10 passes over 5000 trees), not the paper's 1000 everywhere. "
    "**Seconds per epoch**: the CPU seconds (`time.thread_time`, torch on one thread) of the "
    "cell's timed sample (a training epoch and an evaluation, median of the timed epochs), "
    "so that the projection does not grow with the machine's load (the wall seconds are in "
    "the samples' table beside them); at another depth the line through the two timed "
    "depths around it; TREES samples train 1 pass of their epoch's 10 (d = 2: 20 of 1000) and "
    "that time is scaled up. v2: the defaults (`model.message_path=auto`, "
    "`dataset.feature_layout=auto`); v1: `model.message_path=gather "
    "dataset.feature_layout=dense` (of them, those a run has: TREES has no feature layout, "
    "GCN, GIN and GGNN no message path), both at this commit's code."
)
BOUND = (
    "**FLOP bound** (full-graph cells): `GFLOP` = the dense products (`mm`, `addmm`, `bmm` of "
    "strided tensors; the CSR messages' and a sparse input's sparse-dense products left out) "
    "of one evaluation pass, times 4 (a training epoch's forward and backward about 3, the "
    "evaluation 1); `bound s` = 4 x the sum over those products of one `torch.mm` (`bmm`) of "
    "the same shape timed on this machine (CPU seconds), `GEMM GFLOP/s` the rate that gives; "
    "`v2 cpu/bound` = the cell's CPU seconds per epoch over its bound (scripts/gemm_bound.py)."
)


def preset_notes(presets) -> list[str]:
    lines = []
    for preset in presets:
        cpu = ", ".join(f"{k}={list(v)}" for k, v in preset.cpu.items()) or "the whole grid"
        timed = ", ".join(f"{k}={list(v)}" for k, v in preset.timed.items()) or "every cell"
        lines.append(f"- `{preset.name}` ({preset.shows}): cells {cpu}; timed {timed}")
    return lines


def write_outputs(out: Path, env: dict, pyg: pd.DataFrame, samples, projection, presets) -> None:
    out.mkdir(parents=True, exist_ok=True)
    ratio = pyg.set_index("model")["ms"]
    frames = [pyg.assign(table="table1"), samples.assign(table="sample"),
              projection.assign(table="projection")]  # fmt: skip
    pd.concat(frames, ignore_index=True).to_csv(out / "reproduce.csv", index=False)
    total = projection.filter(like=" h").sum()
    lines = bench_environment.header("The paper's grid on a CPU: measured epochs", env)
    lines += [
        "",
        "## Table 1's epoch against PyG",
        "",
        f"`{' '.join(TABLE1)}`: GAT-Lip, input Linear 1433 -> 128, 2 GAT layers of 2 heads x "
        "64, output Linear; ours built from the config as a run builds it; PyG: the same "
        "sizes of `GATConv` (attention dropout the same, no norm) after a dense input Linear, "
        "Adam with `foreach=True` as ours. One training step plus one evaluation pass, the "
        "three in turn, median of the timed epochs after warm-up (wall time).",
        "",
        table(pyg),
        "",
        f"PyG / ours v2: **{ratio['PyG GATConv'] / ratio['ours v2']:.2f}x**; "
        f"ours v1 / ours v2: **{ratio['ours v1'] / ratio['ours v2']:.2f}x**.",
        "",
        "## Each CPU preset's projected cost (CPU-hours)",
        "",
        RULE,
        "",
        *preset_notes(presets),
        "",
        table(projection),
        "",
        "Total: "
        + ", ".join(f"{key} **{hours:.1f}**" for key, hours in total.items())
        + " of CPU"
        + (f", v1/v2 **{total['v1 h'] / total['v2 h']:.2f}x**." if "v1 h" in total else "."),
    ]
    lines += [
        "",
        "## The timed samples (seconds per epoch)",
        "",
        BOUND,
        "",
        table(samples.dropna(axis=1, how="all")),
    ]
    (out / "reproduce.md").write_text("\n".join(lines) + "\n")
    print(f"\nwrote {out / 'reproduce.csv'} and {out / 'reproduce.md'}")


def table(frame: pd.DataFrame) -> str:
    return frame.to_markdown(index=False, floatfmt=".3g")


def main(argv=None) -> None:
    args = parse_args(argv)
    presets = SMOKE_PRESETS if args.smoke else PRESETS
    presets = [preset for preset in presets if args.presets is None or preset.name in args.presets]
    env = bench_environment.environment(
        CPU, repeats=args.repeats, warmup=args.warmup, epochs_per_sample=args.epochs
    )
    print("\n".join(f"{key}: {value}" for key, value in env.items()), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-data-") as data_dir:
        pyg = table1(args, data_dir)
        print(table(pyg), flush=True)
        records = recorded_epochs(args.runs)
        rows, projections = [], []
        for preset in presets:
            axes = grid_axes(preset, preset.cpu)
            timed = grid_axes(preset, {**preset.cpu, **preset.timed})
            sampled = [
                time_cell(
                    preset.name,
                    cell,
                    cell_overrides(preset, cell),
                    args.epochs,
                    data_dir,
                    args.versions,
                )  # fmt: skip
                for cell in cells(timed)
            ]
            rows += sampled
            frame = pd.DataFrame(sampled)
            projections.append(project(preset, axes, frame, records, args.versions))
            print(projections[-1], flush=True)
    env["load_average_at_end"] = round(os.getloadavg()[0], 1)
    untimed = [preset.name for preset in PRESETS if preset not in presets]
    if not args.smoke and (untimed or args.versions != ["v2", "v1"]):
        env["not timed in this run"] = (
            f"{', '.join(untimed) or 'no preset'}; versions other than "
            f"{', '.join(args.versions)} (an earlier run's figures: this file's git history)"
        )
    projection = pd.DataFrame(projections)
    write_outputs(args.out, env, pyg, pd.DataFrame(rows), projection, presets)


if __name__ == "__main__":
    main()
