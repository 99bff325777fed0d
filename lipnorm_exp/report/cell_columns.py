"""The columns of a table's tidy cells that more than one module names.

A table's builder (`lipnorm_exp.report.aggregate.cell_numbers`, `lipnorm_exp.report.tables`,
`lipnorm_exp.report.trees`) names each when it makes a cell, and
`lipnorm_exp.report.table_files` when it writes the cells (``<table>.csv``): counts as integers,
numbers in % rounded. The points of a figure's lines
(`lipnorm_exp.report.aggregate.curves`) hold their numbers under the same names.
"""

from typing import Final

#: the number reported, in % (mean and std over the seeds); a column whose name ends so is a
#: mean or std in % (``val_mean``, ``paper_std``, ...)
MEAN: Final = "mean"
STD: Final = "std"
#: the seeds the number is over, and those beside them that diverged
N: Final = "n"
N_DIVERGED: Final = "n_diverged"
#: the runs of the cell over every setting, and those that diverged
CELL_RUNS: Final = "cell_runs"
CELL_DIVERGED: Final = "cell_diverged"
#: the parameters of the chosen model
PARAMS: Final = "params"
#: the depth the paper chose on validation
PAPER_DEPTH: Final = "paper_depth"
#: TREES: the mean passes over the training trees the runs made
PASSES: Final = "passes"

__all__ = [
    "CELL_DIVERGED",
    "CELL_RUNS",
    "MEAN",
    "N",
    "N_DIVERGED",
    "PAPER_DEPTH",
    "PARAMS",
    "PASSES",
    "STD",
]
