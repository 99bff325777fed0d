"""A record checked against itself: its name against its config, its history, its summary.

[`record_problem`][lipnorm_exp.records.store.record_problem] checks each part of a record on its
own; the checks here compare the parts: a record whose config was edited under the same run id,
whose history is not a list of finite epochs, or whose summary is not the one its history and status
make, is not what the run computed, and is never reused by a skip or read by the report.
"""

import math
import types
from collections.abc import Mapping
from typing import Any, Literal, get_args, get_origin, get_type_hints, is_typeddict

from lipnorm_exp.records import schema
from lipnorm_exp.records.identity import run_id

__all__ = [
    "consistency_problem",
    "history_problem",
    "identity_problem",
    "scalar_problem",
    "unknown_keys_problem",
]

#: the history columns that hold a fraction in [0, 1] where not ``null``
ACCURACY_SUFFIX = "_acc"


def unknown_keys_problem(record: Mapping[str, Any]) -> str | None:
    """A top-level key no run writes (`RECORD_FIELDS`)."""
    unknown = sorted(key for key in record if key not in schema.RECORD_FIELDS)
    return f"unknown top-level keys {', '.join(unknown)}" if unknown else None


def _kinds(hint: Any) -> tuple[type, ...]:
    """The JSON kinds a top-level hint of `schema.Record` allows.

    ``str | None`` → ``(str, NoneType)``, a ``Literal`` of names → ``(str,)``, ``list[int]`` →
    ``(list,)``.
    """
    if get_origin(hint) is Literal:
        return tuple({type(arg) for arg in get_args(hint)})
    if get_origin(hint) is types.UnionType:
        return tuple(kind for arg in get_args(hint) for kind in _kinds(arg))
    return (get_origin(hint) or hint,)


#: how a refusal names each kind of `SCALAR_KINDS`
KIND_NAMES = {str: "text", int: "an integer", list: "a list of epoch numbers", type(None): "null"}
#: each top-level key of a record that holds a name, a number or a list of epochs, and its kinds
#: (the objects, its config, summary, history and the like, are checked part by part)
SCALAR_KINDS = {
    key: _kinds(hint)
    for key, hint in get_type_hints(schema.Record).items()
    if not is_typeddict(hint) and get_origin(hint) is not dict and key != schema.HISTORY
}


def scalar_problem(record: Mapping[str, Any]) -> str | None:
    """A top-level name, number or list of epochs (`SCALAR_KINDS`) of another kind.

    A ``finished_at`` that is a number, a ``git_commit`` that is a list, ``resumed_at: [true]``.
    """
    for key, kinds in SCALAR_KINDS.items():
        if key not in record:
            continue
        value = record[key]
        epochs = value if isinstance(value, list) else [value]
        wrong = not isinstance(value, kinds) or (int in kinds and isinstance(value, bool))
        if list in kinds and isinstance(value, list):
            wrong = any(isinstance(e, bool) or not isinstance(e, int) or e < 0 for e in epochs)
        if wrong:
            allowed = " or ".join(KIND_NAMES[kind] for kind in kinds)
            return f"{key} is {value!r}, not {allowed}"
    return None


def identity_problem(record: Mapping[str, Any]) -> str | None:
    """A config that names another run than the record's ``run_id`` (edited after the run)."""
    named = run_id(record[schema.CONFIG])
    if named != record[schema.RUN_ID]:
        return f"its config names run {named}, not {record[schema.RUN_ID]} (changed after the run)"
    return None


def _value_problem(epoch: int, key: str, value: Any) -> str | None:
    values = value if isinstance(value, list) else [value]
    for item in values:
        if item is None or isinstance(item, str):
            continue
        if isinstance(item, bool) or not isinstance(item, int | float):
            return f"epoch {epoch}'s {key} is {item!r}, not a number"
        if not math.isfinite(item):
            return f"epoch {epoch}'s {key} is {item!r}, not finite (a record writes null)"
        if key.endswith(ACCURACY_SUFFIX) and not 0.0 <= item <= 1.0:
            return f"epoch {epoch}'s {key} is {item!r}, not in [0, 1]"
    return None


def history_problem(history: Any) -> str | None:
    """Why ``history`` is not a run's epochs: a list of rows numbered 1, 2, ..., finite values."""
    if history is None:
        return None
    if not isinstance(history, list):
        return f"its {schema.HISTORY} is {type(history).__name__}, not a list of epochs"
    for k, row in enumerate(history, 1):
        if not isinstance(row, Mapping) or row.get(schema.EPOCH) != k:
            return f"its {schema.HISTORY}'s row {k} is not epoch {k}"
        for key, value in row.items():
            # the common case, checked without a call: a finite number (x - x is 0 for no inf
            # or nan; bool is not int's type) in [0, 1] or outside an accuracy column
            kind = type(value)
            if (
                (kind is float or kind is int)
                and value - value == 0
                and (0.0 <= value <= 1.0 or not key.endswith(ACCURACY_SUFFIX))
            ):
                continue
            problem = _value_problem(k, key, value)
            if problem:
                return problem
    return None


def consistency_problem(record: Mapping[str, Any]) -> str | None:
    """Why a finished record's summary is not the one its history and status make, or ``None``.

    Its epochs run are its history's rows; its best epoch is one of them, with the validation
    and test accuracies the summary names (where the row holds them); a diverged record's
    divergence comes after its last row, and one that diverged before any epoch was scored
    holds no accuracy.
    """
    summary, history = record.get(schema.SUMMARY), record.get(schema.HISTORY)
    if record[schema.STATUS] not in schema.FINISHED or summary is None:
        return None
    if history is None:  # the epochs its summary is made of, removed
        return f"a {record[schema.STATUS]} record without its {schema.HISTORY}"
    if summary[schema.EPOCHS_RUN] != len(history):
        says = summary[schema.EPOCHS_RUN]
        return f"its {schema.SUMMARY} says {says} epochs, its history has {len(history)}"
    diverged_at = summary[schema.DIVERGED_AT_EPOCH]
    if (record[schema.STATUS] == schema.DIVERGED) != (diverged_at is not None):
        return f"a {record[schema.STATUS]} record with {schema.DIVERGED_AT_EPOCH} {diverged_at!r}"
    if diverged_at is not None and diverged_at != len(history) + 1:
        return f"it diverged at epoch {diverged_at} after {len(history)} epochs"
    best = summary[schema.BEST_EPOCH]
    if best is None:
        scored = [summary[key] for key in schema.SUMMARY_ACCURACIES if summary[key] is not None]
        return f"accuracies {scored} without a best epoch" if scored and not history else None
    if not 1 <= best <= len(history):
        return f"its best epoch {best} is not one of its {len(history)} epochs"
    row = history[best - 1]
    for key, column in (
        (schema.BEST_VAL_ACC, schema.VAL_ACC),
        (schema.TEST_ACC_AT_BEST_VAL, schema.TEST_ACC),
    ):
        if column in row and summary[key] != row[column]:
            return f"its {key} {summary[key]!r} is not epoch {best}'s {column} {row[column]!r}"
    return None
