"""Time and memory of one full-batch training epoch of deep attention stacks, in one process.

GAT and GT stacks (input Linear -> depth layers -> output Linear, hidden 64, 8 heads) with no
normalisation, LipschitzNorm as in the paper (Eqs. 17, 19) and as in the authors' public code,
beside torch-geometric's own GATConv / TransformerConv stacks of the same sizes, on Cora and on
a random graph of ogbn-arxiv's size times --arxiv-scale. Writes <out>/layers.csv (one row per
measured configuration) and <out>/layers.md (ratios and fitted slopes).

    python scripts/bench_layers.py                    # CPU defaults: a few minutes
    python scripts/bench_layers.py --device cuda      # arxiv at full size
    python scripts/bench_layers.py --compile          # also torch.compile timings
    python scripts/bench_layers.py --smoke --out /tmp/bench   # seconds: does it still run?
    python scripts/bench_layers.py --messages         # GAT: our message paths against PyG

With --messages it times instead one training step plus one evaluation of GAT and GT stacks of
:data:`MESSAGE_CASES`, ours summing the messages as CSR products (``model.message_path=csr``) and
by gather/scatter (``gather``) beside PyG's GATConv or TransformerConv stack, round robin, and
writes <out>/messages.csv and <out>/messages.md (the ratios).
"""

import argparse
import math
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import bench_environment
import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.data import Data
from torch_geometric.nn import GATConv, TransformerConv
from torch_geometric.utils import add_self_loops, remove_self_loops

from lipnorm_exp.config import build_model, config_dir
from lipnorm_exp.data import load_task
from lipnorm_exp.data.task import Task
from lipnorm_exp.report.grids import compose_config
from lipnorm_exp.training.epoch import train_epoch

REPO = Path(__file__).resolve().parents[1]
ARXIV = {"nodes": 169_343, "edges": 1_166_243, "features": 128, "classes": 40}
HIDDEN, HEADS, DROPOUT = 64, 8, 0.6
NORMS = ("none", "paper", "published", "pyg")  # pyg: the same stack of PyG's own layer
PYG_LAYERS = {"gat": "GATConv", "gt": "TransformerConv"}
EDGE_DEPTH = 10  # depth of the models run at several edge counts ...
EDGE_NORMS = ("none", "paper")  # ... with these norms
MEMORY_HEADROOM = 0.6  # run a configuration only if its predicted memory fits in this share
#: --messages: (model, graph, depth, heads, channels per head, norm) of the stacks timed
MESSAGE_CASES = (
    ("gat", "cora", 30, 1, 128, "none"),
    ("gat", "cora", 30, 1, 128, "paper"),
    ("gat", "cora", 2, 1, 128, "none"),
    ("gat", "cora", 2, 1, 128, "paper"),
    ("gat", "cora", 10, 8, 8, "none"),
    ("gat", "cora", 10, 8, 8, "paper"),
    ("gat", "synthetic", 10, 1, 128, "none"),
    ("gat", "synthetic", 10, 1, 128, "paper"),
    ("gt", "cora", 10, 1, 128, "none"),
    ("gt", "cora", 10, 1, 128, "paper"),
    ("gt", "cora", 10, 8, 8, "none"),
    ("gt", "synthetic", 10, 1, 128, "none"),
)
MESSAGE_PATHS = ("csr", "gather")  # ours, beside "pyg"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--depths", default="2,10,20,30", help="comma-separated layer counts")
    parser.add_argument("--graphs", default="cora,arxiv", help="cora and/or arxiv (synthetic)")
    parser.add_argument("--models", default="gat,gt")
    parser.add_argument("--norms", default=",".join(NORMS), help="subset of " + ",".join(NORMS))
    parser.add_argument("--repeats", type=int, default=20, help="timed epochs (median; >= 20)")
    parser.add_argument(
        "--warmup", type=int, default=None, help="untimed epochs first (default 3 CUDA, 1 CPU)"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--out", default="results/bench")
    parser.add_argument(
        "--arxiv-scale",
        type=float,
        default=None,
        help="fraction of ogbn-arxiv's nodes and edges (default 1.0 on CUDA, 0.02 on CPU)",
    )
    parser.add_argument(
        "--compile",
        action="store_true",
        help="also time every model under torch.compile (rows of mode 'compiled')",
    )
    parser.add_argument(
        "--edge-factors",
        default="0.5,1,2",
        help=f"the {EDGE_DEPTH}-layer models (norms none and paper) also run on synthetic graphs "
        "with these multiples of the arxiv-scale graph's nodes and edges (same mean degree); "
        "empty: skip",
    )
    parser.add_argument(
        "--messages",
        action="store_true",
        help="time the GAT and GT message paths (csr, gather) against PyG on MESSAGE_CASES instead",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a seconds-long check that the script runs: Cora, 2 layers, 2 timed epochs",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.depths, args.graphs, args.edge_factors = "2", "cora", ""
        args.repeats, args.warmup = 2, 0
    elif args.repeats < 20:
        parser.error("--repeats must be >= 20")
    cuda = args.device.startswith("cuda")
    if args.arxiv_scale is None:
        args.arxiv_scale = 1.0 if cuda else 0.02
    if args.warmup is None:
        args.warmup = 3 if cuda else 1
    return args


def split(text: str) -> list[str]:
    return [item for item in text.split(",") if item]


# ---- graphs ---------------------------------------------------------------------------------


@dataclass
class Graph:
    name: str
    task: Task
    data: Data

    @property
    def num_edges(self) -> int:
        return self.data.edge_index.size(1)


def cora() -> Graph:
    """Cora through the project's loader, as a run gets it (into a temporary data folder: raw
    files copied from ``LIPNORM_RAW_DIRS``, else downloaded)."""
    with tempfile.TemporaryDirectory(prefix="bench-data-") as data_dir:
        cfg = compose_config(
            config_dir(), (f"paths.data_dir={data_dir}", "dataset.feature_layout=dense")
        )
        task = load_task(cfg.dataset, cfg.paths, seed=0)
    return Graph("cora", task, task.train_batches[0])


def synthetic(scale: float, name: str, seed: int = 0) -> Graph:
    """Uniform random directed graph with ``scale`` times ogbn-arxiv's nodes and edges."""
    gen = torch.Generator().manual_seed(seed)
    nodes, edges = round(ARXIV["nodes"] * scale), round(ARXIV["edges"] * scale)
    data = Data(
        x=torch.randn(nodes, ARXIV["features"], generator=gen),
        edge_index=torch.randint(0, nodes, (2, edges), generator=gen),
        y=torch.randint(0, ARXIV["classes"], (nodes,), generator=gen),
        train_mask=torch.rand(nodes, generator=gen) < 0.54,  # arxiv's share of training nodes
    )
    return Graph(name, Task.full_batch(name, data, ARXIV["classes"]), data)


# ---- models ---------------------------------------------------------------------------------


class PygStack(nn.Module):
    """Input Linear -> depth PyG layers (dropout before, ELU after each) -> output Linear.

    ``dropout`` is the feature dropout before each layer, ``attn_dropout`` the layer's own
    dropout of the attention weights (PyG's ``dropout`` argument).
    """

    def __init__(
        self,
        model: str,
        depth: int,
        in_channels: int,
        out_channels: int,
        heads: int = HEADS,
        hidden: int = HIDDEN,
        dropout: float = DROPOUT,
        attn_dropout: float = 0.0,
    ):
        super().__init__()
        self.input = nn.Linear(in_channels, hidden)
        self.convs = nn.ModuleList(
            pyg_layer(model, heads, hidden, attn_dropout) for _ in range(depth)
        )
        self.output = nn.Linear(hidden, out_channels)
        self.dropout = dropout
        self.self_loops = model == "gt"  # TransformerConv adds none; the GT model adds them

    def forward(self, x, edge_index, batch=None):
        if self.self_loops:
            edge_index = add_self_loops(remove_self_loops(edge_index)[0], num_nodes=x.size(0))[0]
        x = self.input(x)
        for conv in self.convs:
            x = F.elu(conv(F.dropout(x, p=self.dropout, training=self.training), edge_index))
        return self.output(x)


def pyg_layer(model: str, heads: int, hidden: int, attn_dropout: float = 0.0) -> nn.Module:
    if model == "gat":
        return GATConv(hidden, hidden // heads, heads=heads, dropout=attn_dropout)
    return TransformerConv(hidden, hidden // heads, heads=heads, dropout=attn_dropout)


def make_model(
    model: str,
    norm: str,
    depth: int,
    graph: Graph,
    heads: int = HEADS,
    hidden: int = HIDDEN,
    message_path: str = "auto",
) -> nn.Module:
    """The project's model from its config group (``configs/model``, ``configs/norm``), at the
    benchmark's sizes; ``norm="pyg"``: the :class:`PygStack` of the same sizes."""
    in_channels, out_channels = graph.task.num_features, graph.task.num_outputs
    if norm == "pyg":
        return PygStack(model, depth, in_channels, out_channels, heads, hidden)
    overrides = [
        f"model={model}",
        f"norm={'none' if norm == 'none' else 'lip'}",
        f"model.depth={depth}",
        f"model.hidden={hidden}",
        f"model.heads={heads}",
        f"model.message_path={message_path}",
        "model.concat=true",
        f"model.dropout={DROPOUT}",
        "model.attn_dropout=0.0",
        "model.residual=false",
        *([] if norm == "none" else [f"norm.variant={norm}"]),
    ]
    cfg = compose_config(config_dir(), tuple(overrides))
    model_cfg, norm_cfg = cfg.model, cfg.norm
    return build_model(model_cfg, norm_cfg, in_channels, out_channels)


# ---- measurements ---------------------------------------------------------------------------


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_epoch(model, optimizer, task, device) -> float:
    """Milliseconds of one training epoch (forward, backward, Adam step)."""
    synchronize(device)
    start = time.perf_counter()
    train_epoch(model, optimizer, task, device)
    synchronize(device)
    return 1e3 * (time.perf_counter() - start)


def timed_step_and_evaluation(model, optimizer, graph: Graph, device) -> float:
    """Milliseconds of one training epoch and one evaluation (a forward pass in eval mode)."""
    x, edge_index = graph.data.x.to(device), graph.data.edge_index.to(device)
    synchronize(device)
    start = time.perf_counter()
    train_epoch(model, optimizer, graph.task, device)
    model.eval()
    with torch.no_grad():
        model(x, edge_index)
    synchronize(device)
    return 1e3 * (time.perf_counter() - start)


def saved_megabytes(model, task, device) -> float:
    """MB of the distinct storages autograd saves for the backward pass of one training step."""
    sizes = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        sizes[(storage.device, storage.data_ptr())] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        train_epoch(model, torch.optim.SGD(model.parameters(), lr=0.0), task, device)
    return sum(sizes.values()) / 2**20


def peak_megabytes(model, optimizer, task, device) -> float:
    """CUDA: ``max_memory_allocated`` over one training epoch (after a reset); CPU: NaN."""
    if device.type != "cuda":
        return math.nan
    synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    train_epoch(model, optimizer, task, device)
    synchronize(device)
    return torch.cuda.max_memory_allocated(device) / 2**20


def available_megabytes(device: torch.device) -> float:
    """Free memory of the device: CUDA's free memory, or MemAvailable of the host."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0] / 2**20
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 2**10
    return math.inf


def too_big(earlier: list[dict], depth: int, edges: int, device: torch.device) -> str | None:
    """Why a run would not fit: its saved memory extrapolated (x2 for the backward pass's
    temporaries) from the largest earlier run of the same model and norm, against free memory."""
    if not earlier:
        return None
    ref = max(earlier, key=lambda row: row["depth"] * row["edges"])
    need = 2 * ref["saved_mb"] * (depth / ref["depth"]) * (edges / ref["edges"])
    free = available_megabytes(device)
    if need <= MEMORY_HEADROOM * free:
        return None
    return f"skipped: ~{need:.0f} MB predicted, {free:.0f} MB free"


def measure_group(model_name, norms, depth, graph, device, args, done, modes) -> list[dict]:
    """One model and depth on one graph, every norm in every mode (``eager``, and
    ``compiled``: the same model under ``torch.compile``): their epochs are timed in turn
    (round robin), so a change of machine load affects them alike."""
    base = {
        "graph": graph.name,
        "nodes": graph.data.num_nodes,
        "edges": graph.num_edges,
        "model": model_name,
        "depth": depth,
    }
    keys = [(norm, mode) for norm in norms for mode in modes]
    rows = {key: {**base, "norm": key[0], "mode": key[1], "status": "ok"} for key in keys}
    runs, times = {}, {key: [] for key in keys}
    for norm, mode in keys:
        reason = too_big(done.get((model_name, norm), []), depth, graph.num_edges, device)
        if reason:
            rows[(norm, mode)]["status"] = reason
            continue
        torch.manual_seed(0)
        model = make_model(model_name, norm, depth, graph).to(device)
        runner = torch.compile(model) if mode == "compiled" else model
        optimizer = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)
        runs[(norm, mode)] = (runner, optimizer)
    for epoch in range(args.warmup + args.repeats):
        for key in list(runs):
            try:
                ms = timed_epoch(*runs[key], graph.task, device)
            except torch.OutOfMemoryError:
                rows[key]["status"] = "skipped: out of memory"
                del runs[key]
                torch.cuda.empty_cache()
                continue
            if epoch >= args.warmup:
                times[key].append(ms)
    for (norm, mode), (runner, optimizer) in runs.items():
        row = rows[(norm, mode)]
        row.update(
            ms=statistics.median(times[(norm, mode)]),
            ms_q1=float(np.percentile(times[(norm, mode)], 25)),
            ms_q3=float(np.percentile(times[(norm, mode)], 75)),
            peak_mb=peak_megabytes(runner, optimizer, graph.task, device),
            # saved-tensor hooks do not see inside a compiled graph
            saved_mb=saved_megabytes(runner, graph.task, device) if mode == "eager" else math.nan,
        )
        if mode == "eager":
            done.setdefault((model_name, norm), []).append(row)
    del runs
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return list(rows.values())


def sweep(graphs, depths, norms, args, device, modes, done=None) -> list[dict]:
    """Every graph x model x depth x norm x mode; memory is predicted from the earlier eager
    runs (``done``) of the same model and norm (on any graph), to skip what would not fit."""
    rows, done = [], {} if done is None else done
    for graph in graphs:
        data = graph.data
        print(f"\n{graph.name}: {data.num_nodes} nodes, {graph.num_edges} edges", flush=True)
        for model_name in split(args.models):
            for depth in depths:
                group = measure_group(model_name, norms, depth, graph, device, args, done, modes)
                for row in group:
                    print(format_row(row), flush=True)
                rows += group
    return rows


def edge_sweep(rows, args, device) -> list[dict]:
    """The EDGE_DEPTH-layer models without and with LipschitzNorm (paper) on synthetic graphs
    of --edge-factors times the arxiv-scale graph; the factor-1 runs of the main sweep are
    reused where there are any."""
    norms = [norm for norm in split(args.norms) if norm in EDGE_NORMS]
    reused = [
        row
        for row in rows
        if row["graph"] == "synthetic"
        and row["depth"] == EDGE_DEPTH
        and row["norm"] in norms
        and row["mode"] == "eager"
    ]
    factors = [float(f) for f in split(args.edge_factors)]
    if reused:
        factors = [f for f in factors if f != 1.0]
    if not factors:
        return reused
    graphs = [synthetic(args.arxiv_scale * f, f"synthetic x{f:g}") for f in factors]
    done = {}
    for row in rows:
        if row["status"] == "ok" and row["mode"] == "eager":
            done.setdefault((row["model"], row["norm"]), []).append(row)
    return reused + sweep(graphs, [EDGE_DEPTH], norms, args, device, ["eager"], done)


def measure_messages(cases, graphs: dict[str, Graph], args, device) -> list[dict]:
    """Per case, ours with each of :data:`MESSAGE_PATHS` and PyG's stack, timed round robin
    (step and evaluation in turn), so that the machine's load hits them alike."""
    rows = []
    for model_name, graph_name, depth, heads, channels, norm in cases:
        graph = graphs[graph_name]
        runs = {}
        for path in (*MESSAGE_PATHS, "pyg"):
            torch.manual_seed(0)
            model = make_model(
                model_name, "pyg" if path == "pyg" else norm, depth, graph, heads,
                heads * channels, message_path=path,
            ).to(device)  # fmt: skip
            optimizer = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)
            runs[path] = (model, optimizer)
        times: dict[str, list[float]] = {path: [] for path in runs}
        for repeat in range(args.warmup + args.repeats):
            for path, (model, optimizer) in runs.items():
                ms = timed_step_and_evaluation(model, optimizer, graph, device)
                if repeat >= args.warmup:
                    times[path].append(ms)
        row = {
            "model": model_name,
            "graph": graph.name,
            "edges": graph.num_edges,
            "depth": depth,
            "heads": heads,
            "channels": channels,
            "norm": norm,
            **{f"ms {path}": statistics.median(times[path]) for path in runs},
        }
        for path in MESSAGE_PATHS:
            row[f"pyg/{path}"] = row["ms pyg"] / row[f"ms {path}"]
        print(
            f"  {model_name} {graph.name} depth {depth} {heads}x{channels} {norm:>5}: "
            + "  ".join(f"{path} {row[f'ms {path}']:.1f} ms" for path in runs),
            flush=True,
        )
        rows.append(row)
    return rows


def write_messages(rows: list[dict], env: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(out / "messages.csv", index=False)
    lines = ["# Message paths against PyG: one training step and one evaluation", ""]
    lines += [f"- {key}: `{value}`" for key, value in env.items()]
    lines += [
        "",
        "Models: input Linear -> depth GAT or GT layers (heads x channels per head, "
        f"concatenated) -> output Linear, feature dropout {DROPOUT}, no attention dropout; one "
        "training epoch (forward, backward, Adam step: the project's `train_epoch`) plus one "
        "evaluation (a forward pass in eval mode), median over the repeats. `csr`: our layer "
        "on the CSR message path (`model.message_path=csr`, what `auto` takes on the CPU: "
        "sparse-dense products for the weighted sums, and for GT a sampled product for the "
        "scores); `gather`: the same model by gather/scatter (the reference arithmetic); `pyg`: "
        "PyG's GATConv or TransformerConv stack of the same sizes. The three of a case are "
        "timed in turn, step by step, so that changes of the machine's load hit them alike. "
        "Ours draw their dropout noise with `lipnorm_exp.nn.dropout_noise` on the CPU (the "
        "noise of PyG's `F.dropout`, bit for bit, about three times faster). "
        "`pyg/csr` above 1: ours is that many times faster. `norm` `paper`: LipschitzNorm "
        "(Eq. 17 for GAT, Eq. 19 for GT).",
        "",
        table(frame),
    ]
    (out / "messages.md").write_text("\n".join(lines) + "\n")


def format_row(row: dict) -> str:
    head = f"  {row['model']:>3} {row['norm']:>9} {row['mode']:>8} depth {row['depth']:>3}"
    if row["status"] != "ok":
        return f"{head}  {row['status']}"
    peak = "" if math.isnan(row["peak_mb"]) else f"  peak {row['peak_mb']:8.1f} MB"
    saved = "" if math.isnan(row["saved_mb"]) else f"  saved {row['saved_mb']:8.1f} MB"
    return f"{head}  {row['ms']:9.1f} ms{saved}{peak}"


# ---- ratios and slopes ----------------------------------------------------------------------


def memory_column(device: torch.device) -> str:
    return "peak_mb" if device.type == "cuda" else "saved_mb"


def ratios(frame: pd.DataFrame, mem: str) -> pd.DataFrame:
    """Per graph, model, depth and mode: Lip (paper, published) / none and ours-none / PyG."""
    index = ["graph", "model", "depth", "mode"]
    wide = frame.pivot_table(index=index, columns="norm", values=["ms", mem])
    out = pd.DataFrame(index=wide.index)
    pairs = [("paper", "none"), ("published", "none"), ("none", "pyg"), ("paper", "pyg")]
    for num, den in pairs:
        if num in wide["ms"] and den in wide["ms"]:
            out[f"time {num}/{den}"] = wide["ms"][num] / wide["ms"][den]
            if mem in wide and num in wide[mem] and den in wide[mem]:
                out[f"mem {num}/{den}"] = wide[mem][num] / wide[mem][den]
    return out.dropna(how="all").reset_index()


def compile_speedups(frame: pd.DataFrame) -> pd.DataFrame:
    """Per graph, model, depth and norm: eager and compiled epoch times and their ratio."""
    wide = frame.pivot_table(index=["graph", "model", "depth", "norm"], columns="mode", values="ms")
    out = wide.rename(columns={"eager": "eager ms", "compiled": "compiled ms"})
    out["compiled/eager"] = wide["compiled"] / wide["eager"]
    return out.reset_index()


def depth_slopes(frame: pd.DataFrame, mem: str) -> pd.DataFrame:
    """Least-squares ms and MB per layer (and R^2 of the time fit) per graph, model and norm."""
    rows = []
    for (graph, model, norm), group in frame.groupby(["graph", "model", "norm"]):
        if group["depth"].nunique() < 2:
            continue
        depth = group["depth"].to_numpy(float)
        ms_slope, ms_r2 = linear_fit(depth, group["ms"].to_numpy(float))
        mem_slope, _ = linear_fit(depth, group[mem].to_numpy(float))
        rows.append(
            {
                "graph": graph,
                "model": model,
                "norm": norm,
                "ms/layer": ms_slope,
                "R2 (time)": ms_r2,
                "MB/layer": mem_slope,
            }
        )
    return pd.DataFrame(rows)


def linear_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Slope of the least-squares line through (x, y) and its R^2."""
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    total = ((y - y.mean()) ** 2).sum()
    return float(slope), float(1 - (residual**2).sum() / total) if total else 1.0


def edge_exponents(frame: pd.DataFrame, mem: str) -> pd.DataFrame:
    """Log-log exponent of time and memory vs edges over the edge-scaling runs."""
    rows = []
    for (model, norm), group in frame.groupby(["model", "norm"]):
        if group["edges"].nunique() < 2:
            continue
        log_edges = np.log(group["edges"].to_numpy(float))
        rows.append(
            {
                "model": model,
                "norm": norm,
                "edges": ", ".join(str(e) for e in sorted(group["edges"].unique())),
                "time exponent": float(np.polyfit(log_edges, np.log(group["ms"]), 1)[0]),
                "memory exponent": float(np.polyfit(log_edges, np.log(group[mem]), 1)[0]),
            }
        )
    return pd.DataFrame(rows)


# ---- output ---------------------------------------------------------------------------------


def environment(device: torch.device, args) -> dict:
    return bench_environment.environment(
        device, arxiv_scale=args.arxiv_scale, repeats=args.repeats, warmup=args.warmup
    )


def memory_note(device: torch.device) -> str:
    saved = (
        "`saved_mb`: MB of the distinct storages autograd saves for the backward pass of one "
        "training step (saved-tensor hooks), i.e. the activation memory, which grows with depth "
        "and edges; it leaves out parameters, optimiser state and short-lived temporaries."
    )
    if device.type == "cuda":
        return (
            "`peak_mb`: `torch.cuda.max_memory_allocated` over one training epoch after a reset "
            "(includes the graph, parameters and optimiser state); memory ratios use it. " + saved
        )
    return saved + " On CPU there is no allocator peak to read, so memory ratios use `saved_mb`."


def table(frame: pd.DataFrame) -> str:
    return frame.to_markdown(index=False, floatfmt=".3g")


def write_outputs(rows, edge_rows, env, device, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows + [row for row in edge_rows if row["graph"] != "synthetic"])
    frame.to_csv(out / "layers.csv", index=False)
    mem = memory_column(device)
    main = pd.DataFrame(rows)
    ok = main[main["status"] == "ok"]
    edges_ok = pd.DataFrame(edge_rows)
    lines = ["# Layer benchmark: one full-batch training epoch", ""]
    lines += [f"- {key}: `{value}`" for key, value in env.items()]
    lines += [
        "",
        "Models: input Linear -> depth layers -> output Linear, hidden 64, 8 heads (concat), "
        f"dropout {DROPOUT}; epoch = forward + backward + Adam step (the project's "
        "`train_epoch`), median of the timed epochs after warm-up; the norms of one model, "
        "depth and graph are timed in turn, epoch by epoch, so that changes of the machine's "
        "load hit them alike (with `--compile`, also their `torch.compile`d twins, `mode` "
        "`compiled`, timed in the same round robin after warm-up epochs that compile them). "
        "`none`/`paper`/`published`: "
        "our GATLayer/GTLayer without norm, with LipschitzNorm (paper Eqs. 17/19) and with the "
        "published code's variant; `pyg`: PyG's GATConv/TransformerConv stack (TransformerConv "
        "gets the self-loops GTLayer adds). The synthetic graph is uniform random with "
        f"`arxiv_scale` x ({ARXIV['nodes']} nodes, {ARXIV['edges']} edges, {ARXIV['features']} "
        f"features, {ARXIV['classes']} classes).",
        "",
        memory_note(device),
        "",
        "## Measurements",
        "",
        table(main.drop(columns=["nodes"]).dropna(axis=1, how="all")),
        "",
        "## Ratios (time: median epoch; memory: " + mem + ")",
        "",
        table(ratios(ok, mem)),
        "",
        "## Growth with depth (eager; least-squares fit over the depths)",
        "",
        table(depth_slopes(ok[ok["mode"] == "eager"], mem)),
    ]
    if (ok["mode"] == "compiled").any():
        lines += [
            "",
            "## torch.compile (default inductor backend; the same models, epoch times)",
            "",
            table(compile_speedups(ok)),
        ]
    if not edges_ok.empty:
        edges_ok = edges_ok[edges_ok["status"] == "ok"]
        lines += [
            "",
            f"## Growth with edges ({EDGE_DEPTH} layers, synthetic graphs of equal mean degree; "
            "log-log exponent, 1.0 = linear)",
            "",
            table(edge_exponents(edges_ok, mem)),
        ]
    skipped = frame[frame["status"] != "ok"]
    if not skipped.empty:
        lines += ["", f"{len(skipped)} configurations skipped (see `status`)."]
    (out / "layers.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    env = environment(device, args)
    print("\n".join(f"{key}: {value}" for key, value in env.items()), flush=True)
    builders = {"cora": cora, "arxiv": lambda: synthetic(args.arxiv_scale, "synthetic")}
    if args.messages:  # smoke: 2 layers, one head of 16 channels, on every graph
        smoke_cases = sorted({(m, g, 2, 1, 16, n) for m, g, _, _, _, n in MESSAGE_CASES})
        cases = smoke_cases if args.smoke else list(MESSAGE_CASES)
        graph_of = {"cora": cora, "synthetic": builders["arxiv"]}
        graphs = {name: graph_of[name]() for name in {case[1] for case in cases}}
        write_messages(measure_messages(cases, graphs, args, device), env, Path(args.out))
        print((Path(args.out) / "messages.md").read_text())
        return
    graphs = [builders[name]() for name in split(args.graphs)]
    depths = [int(depth) for depth in split(args.depths)]
    modes = ["eager", "compiled"] if args.compile else ["eager"]
    rows = sweep(graphs, depths, split(args.norms), args, device, modes)
    edge_rows = edge_sweep(rows, args, device) if args.edge_factors else []
    out = Path(args.out)
    write_outputs(rows, edge_rows, env, device, out)
    print(f"\nwrote {out / 'layers.csv'} and {out / 'layers.md'}")
    print((out / "layers.md").read_text().split("## Ratios", 1)[1])


if __name__ == "__main__":
    main()
