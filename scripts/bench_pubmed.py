"""PubMed's scorecard lines: each cell timed, each line's CPU cost projected, and checked.

The PubMed part of the paper (Dasoulas, Scaman & Virmaux, ICML 2021: Tables 1-3 and Fig. 6 on
PubMed) as ``scripts/reproduce_pubmed.sh`` runs it, every run under its preset's paper protocol
(`pubmed_plan`). Each cell of `pubmed_plan.timed_cells` trains a few epochs at numerics version 2
as a run is built and trained (``bench_reproduce.time_cell``: CPU seconds of this thread,
``time.thread_time``, so that the projection does not grow with the machine's load; wall
seconds beside them); each line's CPU-hours follow (`pubmed_plan.project_lines`). Beside each
timed cell, what its finished records took (``timing.epoch_s_mean``: wall seconds an epoch,
under whatever load they ran), so that the projection is checked against the campaign itself.

    OMP_NUM_THREADS=1 python scripts/bench_pubmed.py                 # ten minutes or more
    python scripts/bench_pubmed.py --smoke --out /tmp/bench          # one cell, one epoch
"""

import os
import statistics
import tempfile

import bench_environment
import numpy as np
import pandas as pd
import pubmed_plan
from bench_reproduce import CPU, add_cell_arguments, cell_key, recorded_epochs, table, time_cell
from omegaconf import OmegaConf

from lipnorm_exp.records import setting_key
from lipnorm_exp.report.grids import CONFIGS_DIR, compose_config
from lipnorm_exp.util.commands import OneLineParser

#: the file name of the results, ``<out>/pubmed.md`` and ``.csv``
NAME = "pubmed"


def parse_args(argv=None):
    """The command line; a bad argument is refused in one line before anything runs."""
    parser = OneLineParser(
        description=__doc__.split("\n\n")[0], error_prefix="bench_pubmed.py: error: "
    )
    add_cell_arguments(parser)
    parser.add_argument(
        "--smoke", action="store_true", help="seconds: the first cell for one epoch, no projection"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.epochs = 1
    return args


def recorded_seconds(records: list[dict], cells: list[tuple[str, ...]]) -> dict[tuple, list]:
    """Each cell's finished PubMed records' wall seconds an epoch (``records``:
    `recorded_epochs`), found by the cell's setting (cells of one setting, as Table 1's GAT at 2
    layers and 0% and Fig. 6's, share their records)."""
    settings: dict[str, list[tuple[str, ...]]] = {}
    for cell in cells:
        key = setting_key(compose_config(CONFIGS_DIR, (*cell, "seed=0")))
        settings.setdefault(key, []).append(cell)
    seconds: dict[tuple[str, ...], list] = {cell: [] for cell in cells}
    for row in records:
        if row["dataset"] == "pubmed":
            for cell in settings.get(row["setting"], ()):
                seconds[cell].append(row["epoch s"])
    return seconds


def main(argv=None) -> None:
    args = parse_args(argv)
    cells = pubmed_plan.timed_cells()[:1] if args.smoke else pubmed_plan.timed_cells()
    env = bench_environment.environment(CPU, epochs_per_cell=args.epochs)
    print("\n".join(f"{key}: {value}" for key, value in env.items()), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-data-") as data_dir:
        sampled = {
            cell: time_cell(NAME, {"cell": " ".join(cell)}, cell, args.epochs, data_dir, ("v2",))
            for cell in cells
        }
    env["load_average_at_end"] = round(os.getloadavg()[0], 1)
    records = recorded_epochs(args.runs)
    recorded = recorded_seconds(records, cells)
    for cell, row in sampled.items():
        row["records"] = len(recorded[cell])
        row["recorded wall s"] = statistics.mean(recorded[cell]) if recorded[cell] else np.nan
    samples = pd.DataFrame(sampled.values()).drop(columns="preset").dropna(axis=1, how="all")
    lines = bench_environment.header("PubMed's scorecard lines: measured epochs", env)
    if args.smoke:
        bench_environment.write_results(args.out, NAME, samples, lines)
        return
    residual = [row for row in records if "residual" in row["tags"]]

    def cora_epochs(candidate: tuple[str, ...]) -> float | None:
        on_cora = tuple("dataset=cora" if item == "dataset=pubmed" else item for item in candidate)
        cfg = compose_config(CONFIGS_DIR, on_cora)
        key = cell_key(OmegaConf.to_container(cfg, resolve=True))
        protocol = cfg.protocol.name
        found = [r["epochs"] for r in residual if r["key"] == key and r["protocol"] == protocol]
        return float(np.mean(found)) if found else None

    timed = {cell: row["v2 cpu s"] for cell, row in sampled.items()}
    lines_cost = pubmed_plan.project_lines(timed, cora_epochs)
    cost = lines_cost["cpu h"].sum()
    lines += [
        "",
        "## Every scorecard line's projected cost (CPU-hours, v2)",
        "",
        " ".join(pubmed_plan.__doc__.replace("``", "`").split()),
        "",
        "CPU-hours = seeds x epochs x CPU seconds per epoch summed over a line's candidates "
        "(the reporting seeds at its costliest), each candidate's seconds timed (Fig. 6: "
        f"at depths {pubmed_plan.FIG6_TIMED}, the line through them for the others).",
        "",
        table(lines_cost),
        "",
        f"Total: **{cost:.0f} CPU-hours** ({cost / 24:.1f} days of one core).",
        "",
        "## The timed cells (seconds per epoch)",
        "",
        "`v2 cpu s`: the median CPU seconds of this thread over the timed epochs (a training "
        "epoch and an evaluation); `v2 wall s` beside it, at the load average `load`; the "
        "FLOP bound as in `reproduce.md`. `records` and `recorded wall s`: the cell's finished "
        "records in the records' folder and their mean wall seconds an epoch, under the load "
        "they ran at (two runs on two cores: about their CPU seconds).",
    ]
    bench_environment.write_results(args.out, NAME, samples, lines)
    lines_cost.to_csv(args.out / f"{NAME}_lines.csv", index=False)


if __name__ == "__main__":
    main()
