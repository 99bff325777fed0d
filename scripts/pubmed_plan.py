"""The PubMed lines of the scorecard as runs to make: their cells, seeds and epochs.

Table 1's, Table 2's GCNII and Table 3's 15-layer candidates are those
``scripts/reproduce_pubmed.sh`` runs (read from it: the script is their one list), each over the
selecting seeds 0-2 (Table 3: the protocol's 0-4), and the cell's reporting seeds 100-104 at the
costliest of its candidates where it has several (the chosen one is not known before
selection; an upper bound). Table 2's GAT-Lip line is Table 1's GAT-Lip 100% cell (the same
runs). Table 3 at 30 layers and Fig. 6 run at the protocol's settings, 5 seeds. Every run under
the published protocol, as the presets' paper grids run it. Epochs: the presets' 1000, except
Table 3, which stops after 200 epochs without a better validation accuracy: the mean epochs
its Cora records of the same model and depth ran (else 1000). ``bench_reproduce`` times the
cells (`timed_cells`) and projects each line (`project_lines`).
"""

import re
import shlex
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lipnorm_exp.report.grids import paper_protocol

__all__ = [
    "FIG6_TIMED",
    "LINES",
    "TABLE2_CELL",
    "TABLE3_CELL",
    "candidate",
    "candidate_rows",
    "project_lines",
    "selecting_seeds",
    "timed_cells",
]

SCRIPT = Path(__file__).resolve().parent / "reproduce_pubmed.sh"
SELECTING, REPORTING, PROTOCOL_SEEDS = 3, 5, 5
EPOCHS = 1000


def paper_run(preset: str) -> tuple[str, ...]:
    """The overrides of a PubMed run of ``preset`` as its paper grid runs it (its protocol)."""
    return (f"+experiment={preset}", "scale=paper", f"protocol={paper_protocol(preset)}",
            "dataset=pubmed")  # fmt: skip


TABLE1, RESIDUAL = paper_run("missing_vector"), paper_run("residual")
#: the cells of Table 2's and Table 3's candidate rows (Table 1's are their missing rates), each
#: with its preset
TABLE2_CELL, TABLE3_CELL = "table2", "table3"
PRESET_OF_CELL = {TABLE2_CELL: "gcnii", TABLE3_CELL: "residual"}
#: (cell, method, depth, other overrides): a candidate row of the script
Row = tuple[str, str, int, tuple[str, ...]]
METHODS = {"gcn": "GCN", "ggnn": "GGNN", "gat": "GAT", "gat_pn": "GAT-PN", "gat_lip": "GAT-Lip"}
#: Fig. 6's depths, and the two its cells are timed at (the others on the line through them: a
#: layer costs the same at any depth)
FIG6_DEPTHS = (2, 5, 10, 15, 20, 25, 30)
FIG6_TIMED = (2, 10)


@dataclass(frozen=True)
class Line:
    """A scorecard line: its candidates' overrides, the seeds of each, the reporting seeds
    (run at one candidate), or the line whose runs it shares."""

    name: str
    candidates: tuple[tuple[str, ...], ...]
    seeds: int
    reporting: int = 0
    shared_with: str = ""


def candidate_rows(script: Path = SCRIPT) -> list[Row]:
    """(cell, method, depth, other overrides) of each candidate row of ``script``.

    The cell is a Table 1 missing rate (``0.0``, ``1.0``), ``table2`` (Table 2's PubMed column,
    100% missing) or ``table3`` (Table 3's PubMed columns, their depth the row's).
    """
    text = script.read_text()
    block = re.search(r"<<'ROWS'[^\n]*\n(.*?)\nROWS", text, re.S)
    assert block, f"{script}: no ROWS block"
    rows = []
    for line in block.group(1).splitlines():
        if line.startswith(("+", "report ")):  # a sweep of its own, or a cell's reporting
            continue  # seeds: not a candidate
        cell, method, depth, *extra = shlex.split(line)
        rows.append((cell, method, int(depth), tuple(extra)))
    return rows


def candidate(cell: str, method: str, depth: int, extra: tuple[str, ...]) -> tuple[str, ...]:
    """The overrides of one run of a candidate row (`candidate_rows`), without its seed."""
    if cell in PRESET_OF_CELL:
        return (*paper_run(PRESET_OF_CELL[cell]), f"+method={method}", f"model.depth={depth}",
                *extra)  # fmt: skip
    return (*TABLE1, f"dataset.missing_rate={cell}", f"+method={method}", f"model.depth={depth}",
            *extra)  # fmt: skip


def selecting_seeds(cell: str) -> int:
    """How many seeds (0, 1, ...) each candidate of ``cell`` runs: Table 3's protocol's 5, the
    others' 3."""
    return PROTOCOL_SEEDS if cell == TABLE3_CELL else SELECTING


def _table1_lines() -> list[Line]:
    lines = []
    rows = candidate_rows()
    for rate in ("0.0", "1.0"):
        for method, label in METHODS.items():
            candidates = tuple(candidate(*row) for row in rows if row[:2] == (rate, method))
            percent = "0%" if rate == "0.0" else "100%"
            lines.append(
                Line(f"Table 1 {label} PubMed {percent}", candidates, SELECTING, REPORTING)
            )
    return lines


#: Table 3's methods, and the depths the script runs as candidate rows (each then reported
#: over seeds 100-104 where it has several) and at the protocol's values only
TABLE3_METHODS = {
    "gat": "GAT",
    "gat_res": "GAT-res",
    "gat_lip": "GAT-Lip",
    "gat_lip_res": "GAT-Lip-res",
}
TABLE3_SELECTED, TABLE3_PROTOCOL = (15,), (30,)


def _table3_lines() -> list[Line]:
    rows = [row for row in candidate_rows() if row[0] == TABLE3_CELL]
    lines = []
    for depth in (*TABLE3_SELECTED, *TABLE3_PROTOCOL):
        for method, label in TABLE3_METHODS.items():
            name = f"Table 3 {label} PubMed, {depth} layers"
            if depth in TABLE3_PROTOCOL:
                protocol = (*RESIDUAL, f"+method={method}", f"model.depth={depth}")
                lines.append(Line(name, (protocol,), PROTOCOL_SEEDS))
                continue
            candidates = tuple(candidate(*row) for row in rows if row[1:3] == (method, depth))
            reporting = REPORTING if len(candidates) > 1 else 0
            lines.append(Line(name, candidates, PROTOCOL_SEEDS, reporting))
    return lines


LINES: list[Line] = [
    *_table1_lines(),
    Line(
        "Table 2 GCNII PubMed 100%",
        tuple(candidate(*row) for row in candidate_rows() if row[0] == TABLE2_CELL),
        SELECTING,
        REPORTING,
    ),
    Line("Table 2 GAT-Lip PubMed 100%", (), 0, shared_with="Table 1 GAT-Lip PubMed 100%"),
    *_table3_lines(),
    *(
        Line(
            f"Fig. 6 PubMed {model.upper()}, {norm}",
            tuple(
                (*paper_run("depth"), f"model={model}", f"norm={norm}", f"model.depth={depth}")
                for depth in FIG6_DEPTHS
            ),  # fmt: skip
            PROTOCOL_SEEDS,
        )
        for model in ("gat", "gt")
        for norm in ("none", "pairnorm", "layernorm", "lip")
    ),
]


def _depth(overrides: tuple[str, ...]) -> int:
    [depth] = [int(item.split("=")[1]) for item in overrides if item.startswith("model.depth=")]
    return depth


def _at_depth(overrides: tuple[str, ...], depth: int) -> tuple[str, ...]:
    return tuple(f"model.depth={depth}" if item.startswith("model.depth=") else item
                 for item in overrides)  # fmt: skip


def _interpolated(line: Line) -> bool:
    return line.name.startswith("Fig. 6")


def timed_cells() -> list[tuple[str, ...]]:
    """The overrides of every cell to time: each candidate, Fig. 6 at `FIG6_TIMED` only."""
    cells = []
    for line in LINES:
        for candidate in line.candidates:
            if _interpolated(line) and _depth(candidate) not in FIG6_TIMED:
                continue
            cells.append(candidate)
    return list(dict.fromkeys(cells))


def _seconds(line: Line, candidate: tuple[str, ...], timed: dict[tuple, float]) -> float:
    if candidate in timed:
        return timed[candidate]
    low, high = FIG6_TIMED
    at_low, at_high = timed[_at_depth(candidate, low)], timed[_at_depth(candidate, high)]
    return at_low + (at_high - at_low) * (_depth(candidate) - low) / (high - low)


def project_lines(
    timed: dict[tuple[str, ...], float], cora_epochs: Callable[[tuple[str, ...]], float | None]
) -> pd.DataFrame:
    """Each line's runs, epochs and projected CPU-hours from ``timed`` CPU seconds per epoch.

    ``cora_epochs``: the mean epochs Cora's records of a Table 3 candidate ran (``None``: none).
    """
    rows = []
    for line in LINES:
        if line.shared_with:
            rows.append({"line": line.name, "runs": 0, "cpu h": 0.0,
                         "epochs from": f"the runs of {line.shared_with}"})  # fmt: skip
            continue
        costs, epochs, sources = [], [], set()
        for candidate in line.candidates:
            count, source = float(EPOCHS), "the preset's 1000"
            if candidate[: len(RESIDUAL)] == RESIDUAL:
                recorded = cora_epochs(candidate)
                if recorded is not None:
                    count, source = recorded, "Cora's records (early stop)"
            epochs.append(count)
            sources.add(source)
            costs.append(count * _seconds(line, candidate, timed))
        runs = line.seeds * len(costs) + line.reporting
        hours = (line.seeds * sum(costs) + line.reporting * max(costs)) / 3600
        rows.append(
            {
                "line": line.name,
                "cells": len(costs),
                "runs": runs,
                "epochs per run": statistics.mean(epochs),
                "epochs from": ", ".join(sorted(sources)),
                "cpu h": hours,
            }
        )
    return pd.DataFrame(rows)
