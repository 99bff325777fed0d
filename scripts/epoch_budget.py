"""What a preset's runs would report with fewer epochs: the epochs ablation, from histories.

A run reports the test accuracy at its best validation epoch. Cut its history after k epochs
and the same rule gives what a k-epoch run would have reported (the optimiser's path up to
epoch k does not depend on the epoch count; a learning-rate schedule does not either, since it
only looks back). For each model label, dataset, missing rate, depth and ablation of a
preset's runs (one scale and protocol), this prints that number for every budget k, mean ± std
over seeds (– past the epochs the runs had), and the test accuracy at the run's last epoch
(what the authors' scripts print), as a Markdown table:

    python scripts/epoch_budget.py --preset residual --scale paper --protocol published \
        --budgets 25,50,100,150
"""

import argparse
from pathlib import Path

import pandas as pd
from tabulate import tabulate

from lipnorm_exp.records import RUNS_FOLDER, schema
from lipnorm_exp.report.aggregate import MISSING, format_cell, tagged, usable_runs
from lipnorm_exp.report.frame import load_records

GROUP = ["label", "dataset", "missing_rate", "depth", "ablation"]


def test_at_best_val(history: list[dict], budget: int) -> float:
    """Test accuracy at the first epoch with the best validation accuracy among the first k."""
    rows = [row for row in history if row["epoch"] <= budget]
    if not rows:
        return float("nan")
    best = max(rows, key=lambda row: (row["val_acc"], -row["epoch"]))
    return best["test_acc"]


def budget_table(runs: pd.DataFrame, budgets: list[int]) -> pd.DataFrame:
    """One row per (label, dataset, missing rate, depth); one column per budget."""
    lines = []
    for key, group in runs.groupby(GROUP, sort=True, dropna=False):
        line = dict(zip(GROUP, key, strict=True))
        line["epochs run"] = int(group[schema.EPOCHS_RUN].max())
        for budget in budgets:
            if budget > line["epochs run"]:
                line[f"≤ {budget} epochs"] = MISSING
                continue
            values = 100.0 * pd.Series([test_at_best_val(h, budget) for h in group["history"]])
            line[f"≤ {budget} epochs"] = format_cell(values.mean(), values.std(ddof=1), len(values))
        last = 100.0 * pd.Series([h[-1]["test_acc"] for h in group["history"] if h])
        line["last epoch"] = format_cell(last.mean(), last.std(ddof=1), len(last))
        lines.append(line)
    table = pd.DataFrame(lines)
    return table.loc[:, table.notna().any()]  # no ablation column outside the ablation preset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=RUNS_FOLDER)
    parser.add_argument("--preset", required=True)
    parser.add_argument("--scale", default="paper")
    parser.add_argument("--protocol", default="published")
    parser.add_argument("--budgets", default="25,50,100,150")
    args = parser.parse_args()
    budgets = [int(value) for value in args.budgets.split(",")]
    runs = tagged(usable_runs(load_records(args.runs), args.scale, args.protocol), args.preset)
    print(
        f"Preset {args.preset}, scale {args.scale}, protocol {args.protocol}: "
        f"test accuracy (%) at the best validation epoch within the first k epochs\n"
    )
    print(tabulate(budget_table(runs, budgets), headers="keys", tablefmt="github", showindex=False))


if __name__ == "__main__":
    main()
