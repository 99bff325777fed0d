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
"""

from lipnorm_exp.records.labels import model_label
from lipnorm_exp.report.aggregate import preset_runs, report_groups, select, usable_runs
from lipnorm_exp.report.figures import write_figures
from lipnorm_exp.report.frame import load_records
from lipnorm_exp.report.grids import preset_grid
from lipnorm_exp.report.tables import write_tables

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
