"""The paper's published numbers for one run's cell: what a finished run is compared with.

A run is a cell of one of the paper's tables where its model label, dataset and missing rate
(Tables 1 and 2, whose depth the paper chose on validation) or dataset and depth (Table 3)
are a key of that table's published numbers (:mod:`~lipnorm_exp.report.paper`, owned by the
presets of :data:`~lipnorm_exp.report.paper_presets.PRESETS`).
"""

import dataclasses
from collections.abc import Mapping
from typing import Any

from lipnorm_exp.records.labels import model_label
from lipnorm_exp.report.paper_presets import PRESETS
from lipnorm_exp.report.tables import Column

__all__ = ["published_for"]


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
