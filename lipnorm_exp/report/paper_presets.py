"""The paper presets and what each owns: its tables, figures, claims, published numbers, budget.

A paper preset is two things: its YAML file ``configs/experiment/<name>.yaml`` (its name, its
grids and its budget, ``grid.paper``: `preset_names`) and its entry
here, one `Preset` of `PRESETS`. The report writes each entry's tables and figures
from that preset's runs, and the scorecard checks its published numbers and claims; ``make
reproduce`` and ``--help`` list the YAML files. Adding a paper preset is its YAML and its entry.
What a finished run is compared with, the published numbers of the paper's cells it belongs to
(its model label, dataset and missing rate in Tables 1 and 2, whose depth the paper chose on
validation; its dataset and depth in Table 3), is read from the entries' tables too
(`published_for`).

`PRESETS` is in the paper's order (Tables 1–3, Figs. 2–6, the ablations), the order of
the scorecard's lines.
"""

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from lipnorm_exp.records.labels import dataset_label, model_label
from lipnorm_exp.report import ablation, claims, figures, published_numbers, trees
from lipnorm_exp.report.figures import FigureSpec
from lipnorm_exp.report.grids import (
    Budget,
    PresetGrid,
    paper_budget,
    paper_protocol,
    preset_grid,
)
from lipnorm_exp.report.tables import Column, TableOfRuns, TableSpec
from lipnorm_exp.report.verdicts import ScoreLine

#: ``claim(runs, grid, protocol, why)`` → the scorecard's lines of one figure's claims
#: (`claims`)
Claim = Callable[[pd.DataFrame | None, PresetGrid | None, str, claims.Why], list[ScoreLine]]


@dataclass(frozen=True)
class Preset:
    """One paper preset and the outputs it owns.

    Args:
        name (str): its YAML file's name (``configs/experiment/<name>.yaml``), its runs' tag.
        tables (tuple): its tables: `TableSpec` (one of the
            paper's, with its published numbers) or
            `TableOfRuns`. (default: none)
        figures (tuple[FigureSpec, ...]): its figures. (default: none)
        claims (tuple[Claim, ...]): the claims of the paper's text its runs check. (default: none)
        numbers (tuple[Mapping, ...]): published numbers its figures and claims show beside
            ours (`published_numbers`); a `TableSpec` holds its own.
            (default: none)
    """

    name: str
    tables: tuple[TableSpec | TableOfRuns, ...] = ()
    figures: tuple[FigureSpec, ...] = ()
    claims: tuple[Claim, ...] = ()
    numbers: tuple[Mapping[str, Any], ...] = ()

    @property
    def paper_tables(self) -> tuple[TableSpec, ...]:
        """Its tables of the paper, whose every published number the scorecard scores."""
        return tuple(table for table in self.tables if isinstance(table, TableSpec))

    @property
    def published(self) -> tuple[Mapping[str, Any], ...]:
        """Every published number it shows: its paper tables', then `numbers`."""
        return (*(table.paper for table in self.paper_tables), *self.numbers)

    @property
    def budget(self) -> Budget:
        """The paper's epochs and seeds per setting, from its YAML's ``grid.paper``."""
        return paper_budget(self.name)

    @property
    def title(self) -> str:
        """How the paper names it: its tables (``Table 2``), else its datasets (``TREES``)."""
        if self.paper_tables:
            return ", ".join(table.item for table in self.paper_tables)
        datasets = preset_grid(self.name, "paper", paper_protocol(self.name)).datasets
        return ", ".join(dataset_label(dataset) for dataset in datasets)


PRESETS: tuple[Preset, ...] = (
    Preset(
        "missing_vector",
        tables=(
            TableSpec(
                "table1_missing_vector",
                "Table 1: test accuracy (%) in the missing-vector setting (depth chosen on "
                "validation)",
                published_numbers.TABLE1,
            ),
        ),
    ),
    Preset(
        "gcnii",
        tables=(
            TableSpec(
                "table2_gcnii",
                "Table 2: GAT-Lip against GCNII, test accuracy (%) (depth chosen on validation; "
                "* OGB leaderboard)",
                published_numbers.TABLE2,
            ),
        ),
    ),
    Preset(
        "residual",
        tables=(
            TableSpec(
                "table3_residual",
                "Table 3: test accuracy (%) of deep GAT with/without residual connections and "
                "LipschitzNorm",
                published_numbers.TABLE3,
                depth_columns=True,
            ),
        ),
    ),
    Preset(
        "gradients",
        figures=(
            FigureSpec("fig2_gradients", figures.fig2_gradients, "panel", settings_apart=True),
            FigureSpec("fig3_train_acc", figures.fig3_train_acc, "panel", settings_apart=True),
        ),
        claims=(claims.fig2_lines, claims.fig3_lines),
    ),
    Preset(
        "pubmed_depth",
        figures=(FigureSpec("fig4_pubmed_depth", figures.fig4_pubmed_depth),),
    ),
    Preset(
        "trees",
        tables=(TableOfRuns(trees.NAME, trees.trees_table),),
        figures=(FigureSpec("fig5_trees", figures.fig5_trees),),
        claims=(claims.fig5_lines,),
        numbers=(published_numbers.TREES_TRAIN_ACC, published_numbers.ALON_YAHAV_TRAIN_ACC),
    ),
    Preset(
        "depth",
        figures=(FigureSpec("fig6_depth", figures.fig6_depth),),
        claims=(claims.fig6_lines,),
    ),
    Preset("ablation", tables=(TableOfRuns(ablation.NAME, ablation.ablation_table),)),
)


def owned_tables() -> tuple[tuple[str, TableSpec | TableOfRuns], ...]:
    """Every table, with its preset's name: ``(preset, table)``, in `PRESETS` order."""
    return tuple((entry.name, table) for entry in PRESETS for table in entry.tables)


def owned_figures() -> tuple[tuple[str, FigureSpec], ...]:
    """Every figure, with its preset's name: ``(preset, figure)``, in `PRESETS` order."""
    return tuple((entry.name, figure) for entry in PRESETS for figure in entry.figures)


def published_for(config: Mapping[str, Any]) -> list[str]:
    """The published numbers of the cells the run ``config`` belongs to, one text each.

    ``Table 1 (+experiment=missing_vector) GAT-Lip Cora 0%: 83.1 ± 0.5 at depth 5``: the
    paper's test accuracy in %, mean ± std, and the depth it chose on validation (Tables 1
    and 2; a column of Table 3 is one depth).
    Empty for a run in no cell of the paper's tables.

    Args:
        config: a run's resolved config (a record's ``config``).
    """
    label = model_label(config)
    dataset, rate = config["dataset"]["name"], config["dataset"].get("missing_rate", 0.0)
    found = []
    for preset in PRESETS:
        for spec in preset.paper_tables:
            if spec.depth_columns and rate:
                continue  # the paper's depth columns hold no missing vectors
            column = Column(dataset, rate, config["model"]["depth"] if spec.depth_columns else None)
            value = spec.paper.get(label, {}).get(column.paper_key)
            if value is None:
                continue
            shown = str(dataclasses.replace(value, depth=None))
            if value.depth is not None:
                shown += f" at depth {value.depth}"
            found.append(f"{spec.item} (+experiment={preset.name}) {label} {column.title}: {shown}")
    return found


__all__ = ["PRESETS", "Claim", "Preset", "owned_figures", "owned_tables", "published_for"]
