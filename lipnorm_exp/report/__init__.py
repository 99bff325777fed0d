"""Run records → the paper's tables and figures: a read-only step that never trains.

``python -m lipnorm_exp.report --runs results/runs --out results`` loads every record
(:mod:`~lipnorm_exp.report.records`), keeps one scale and applies the selection rule of
:mod:`~lipnorm_exp.report.aggregate`, then writes the tables
(:mod:`~lipnorm_exp.report.tables`) and figures (:mod:`~lipnorm_exp.report.figures`) with
the published numbers (:mod:`~lipnorm_exp.report.paper`) beside ours.
"""

from lipnorm_exp.report.aggregate import report_scales, select, usable_runs
from lipnorm_exp.report.figures import write_figures
from lipnorm_exp.report.labels import model_label
from lipnorm_exp.report.records import load_records
from lipnorm_exp.report.tables import write_tables

__all__ = [
    "report_scales",
    "load_records",
    "model_label",
    "select",
    "usable_runs",
    "write_figures",
    "write_tables",
]
