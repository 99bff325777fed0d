"""Run records → the paper's tables and figures: a read-only step that never trains.

``python -m lipnorm_exp.report --runs results/runs --out results`` loads every record
(`frame`), splits them by scale and protocol, and gives each table
or figure the runs of its own preset only (tag and grid, `grids`;
each preset's tables, figures and claims: `paper_presets`),
where the selection rule of `aggregate` picks the setting of each
cell. It writes the tables (`tables`,
`ablation`) and figures (`figures`) with the
published numbers (`published_numbers`) beside ours, and beside each
the runs it used and a line saying where they come from (`used_runs`).

The names below are imported when first used, so that importing the package (as
``python -m lipnorm_exp.report`` does before its ``__main__``) needs none of the ``app`` extra's
modules (pandas, Hydra, matplotlib).
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lipnorm_exp.records.labels import model_label
    from lipnorm_exp.report.aggregate import preset_runs, report_groups, select, usable_runs
    from lipnorm_exp.report.figures import write_figures
    from lipnorm_exp.report.frame import load_records
    from lipnorm_exp.report.grids import preset_grid
    from lipnorm_exp.report.tables import write_tables

#: each name → the module that defines it
_DEFINED_IN = {
    "load_records": "lipnorm_exp.report.frame",
    "model_label": "lipnorm_exp.records.labels",
    "preset_grid": "lipnorm_exp.report.grids",
    "preset_runs": "lipnorm_exp.report.aggregate",
    "report_groups": "lipnorm_exp.report.aggregate",
    "select": "lipnorm_exp.report.aggregate",
    "usable_runs": "lipnorm_exp.report.aggregate",
    "write_figures": "lipnorm_exp.report.figures",
    "write_tables": "lipnorm_exp.report.tables",
}

__all__ = [
    "load_records",
    "model_label",
    "preset_grid",
    "preset_runs",
    "report_groups",
    "select",
    "usable_runs",
    "write_figures",
    "write_tables",
]


def __getattr__(name: str) -> Any:
    """``name`` of `__all__`, imported from its module on first use (PEP 562)."""
    if name not in _DEFINED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_DEFINED_IN[name]), name)
