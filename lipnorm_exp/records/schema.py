"""The shape of a run record: its keys, its statuses, its summary and its schema version.

A record is one JSON object per run (:mod:`lipnorm_exp.records.store`). This module is the one
place that names its keys: every writer (:mod:`lipnorm_exp.training`), reader and check
(:func:`lipnorm_exp.records.store.record_problem`) and the report's columns take them from here.

Schema versions: a record without :data:`SCHEMA_VERSION_KEY` was written before records were
versioned and reads as version 1 (:data:`FIRST_SCHEMA_VERSION`); version 2 adds the version
itself and :data:`NUMERICS` (:mod:`lipnorm_exp.records.numerics`). Both versions are read alike.
"""

from collections.abc import Mapping
from enum import Enum
from typing import Any

#: the schema version written into every new record
SCHEMA_VERSION = 2
#: the schema version of a record that names none (one written before records were versioned)
FIRST_SCHEMA_VERSION = 1

# statuses
COMPLETED = "completed"
DIVERGED = "diverged"
FAILED = "failed"
INTERRUPTED = "interrupted"
#: every status a record can hold
STATUSES = (COMPLETED, DIVERGED, FAILED, INTERRUPTED)
#: statuses that are a result: a re-launched sweep does not run them again (``force=true`` does)
FINISHED = (COMPLETED, DIVERGED)

# top-level keys, in the order a run writes them
SCHEMA_VERSION_KEY = "schema_version"
RUN_ID = "run_id"
STATUS = "status"
#: what ended a run that did not complete (``null`` for a completed one)
ERROR = "error"
#: the whole resolved config
CONFIG = "config"
#: the device a run trained on, as torch names it
DEVICE = "device"
#: the machine (:func:`lipnorm_exp.records.provenance.machine`); records of 2024 lack it
MACHINE = "machine"
VERSIONS = "versions"
GIT_COMMIT = "git_commit"
#: the numerics version of the code that ran (:data:`lipnorm_exp.records.numerics.
#: NUMERICS_VERSION`); a record without it was made before numerics were versioned
NUMERICS = "numerics"
STARTED_AT = "started_at"
#: the seeds a run was trained together with, where it was trained among others
BATCHED = "batched"
SUMMARY = "summary"
#: one row per epoch
HISTORY = "history"
#: the epochs after which a resumed run's processes went on
RESUMED_AT = "resumed_at"
#: where a run stopped by an error or a stop request stopped, and where its next launch resumes
STOPPED_AFTER_EPOCH = "stopped_after_epoch"
RESUMES_AFTER_EPOCH = "resumes_after_epoch"
TIMING = "timing"
FINISHED_AT = "finished_at"
#: every top-level key a record may hold, in the order a run writes them
RECORD_FIELDS = (
    SCHEMA_VERSION_KEY,
    RUN_ID,
    STATUS,
    ERROR,
    CONFIG,
    DEVICE,
    MACHINE,
    VERSIONS,
    GIT_COMMIT,
    NUMERICS,
    STARTED_AT,
    BATCHED,
    SUMMARY,
    HISTORY,
    RESUMED_AT,
    STOPPED_AFTER_EPOCH,
    RESUMES_AFTER_EPOCH,
    TIMING,
    FINISHED_AT,
)
#: keys without which a JSON object is not a run record
RECORD_KEYS = (RUN_ID, STATUS, CONFIG)

#: the key of an epoch's wall-clock seconds in a record's ``history`` (the one column two runs
#: that computed the same may differ in)
EPOCH_TIME_KEY = "time_s"


class Kind(Enum):
    """What a summary entry holds."""

    #: the name of the task's metric (``accuracy``, ``rocauc``, ...)
    NAME = "a name"
    #: a fraction in [0, 1]; ``null`` only where no epoch was scored
    ACCURACY = "a number in [0, 1]"
    #: an epoch number or a count of epochs; ``null`` where there is none
    EPOCHS = "an integer >= 0"


# summary keys
METRIC = "metric"
BEST_EPOCH = "best_epoch"
BEST_VAL_ACC = "best_val_acc"
TEST_ACC_AT_BEST_VAL = "test_acc_at_best_val"
TRAIN_ACC_AT_BEST_VAL = "train_acc_at_best_val"
BEST_TRAIN_ACC = "best_train_acc"
FINAL_TRAIN_ACC = "final_train_acc"
EPOCHS_RUN = "epochs_run"
DIVERGED_AT_EPOCH = "diverged_at_epoch"
#: every key of a finished record's summary and its kind, in the order a run writes them
#: (:func:`lipnorm_exp.training.state.summarise`) and the report's columns show them
SUMMARY_KINDS = {
    METRIC: Kind.NAME,
    BEST_EPOCH: Kind.EPOCHS,
    BEST_VAL_ACC: Kind.ACCURACY,
    TEST_ACC_AT_BEST_VAL: Kind.ACCURACY,
    TRAIN_ACC_AT_BEST_VAL: Kind.ACCURACY,
    BEST_TRAIN_ACC: Kind.ACCURACY,
    FINAL_TRAIN_ACC: Kind.ACCURACY,
    EPOCHS_RUN: Kind.EPOCHS,
    DIVERGED_AT_EPOCH: Kind.EPOCHS,
}
SUMMARY_KEYS = tuple(SUMMARY_KINDS)
#: summary keys that hold a fraction in [0, 1]
SUMMARY_ACCURACIES = tuple(key for key, kind in SUMMARY_KINDS.items() if kind is Kind.ACCURACY)
#: summary keys that hold an epoch number or a count of epochs
SUMMARY_EPOCHS = tuple(key for key, kind in SUMMARY_KINDS.items() if kind is Kind.EPOCHS)


def _unknown(what: str, given: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = [key for key in given if key not in allowed]
    if unknown:
        raise ValueError(f"{what} key {unknown[0]!r} is unknown (allowed: {', '.join(allowed)})")


def summary(**values: Any) -> dict[str, Any]:
    """A record's summary from every entry of :data:`SUMMARY_KEYS`, in their order.

    Raises:
        ValueError: a key is missing or unknown.
    """
    _unknown("summary", values, SUMMARY_KEYS)
    missing = [key for key in SUMMARY_KEYS if key not in values]
    if missing:
        raise ValueError(f"summary lacks {', '.join(missing)}")
    return {key: values[key] for key in SUMMARY_KEYS}


def record(**fields: Any) -> dict[str, Any]:
    """A record from its top-level ``fields`` (of :data:`RECORD_FIELDS`), in their order.

    Raises:
        ValueError: a key of :data:`RECORD_KEYS` is missing, a key is unknown, or the status is
            not one of :data:`STATUSES`.
    """
    _unknown("record", fields, RECORD_FIELDS)
    missing = [key for key in RECORD_KEYS if key not in fields]
    if missing:
        raise ValueError(f"record lacks {', '.join(missing)}")
    if fields[STATUS] not in STATUSES:
        allowed = ", ".join(STATUSES)
        raise ValueError(f"record {STATUS} {fields[STATUS]!r} is unknown (allowed: {allowed})")
    return {key: fields[key] for key in RECORD_FIELDS if key in fields}


def schema_version(record: Mapping[str, Any]) -> int:
    """The schema version ``record`` was written in (:data:`FIRST_SCHEMA_VERSION` if unnamed)."""
    return record.get(SCHEMA_VERSION_KEY, FIRST_SCHEMA_VERSION)


def numerics_version(record: Mapping[str, Any]) -> int | None:
    """The numerics version of the code that made ``record``; ``None``: made before there were."""
    return record.get(NUMERICS)


__all__ = [
    "BATCHED",
    "BEST_EPOCH",
    "BEST_TRAIN_ACC",
    "BEST_VAL_ACC",
    "COMPLETED",
    "CONFIG",
    "DEVICE",
    "DIVERGED",
    "DIVERGED_AT_EPOCH",
    "EPOCHS_RUN",
    "EPOCH_TIME_KEY",
    "ERROR",
    "FAILED",
    "FINAL_TRAIN_ACC",
    "FINISHED",
    "FINISHED_AT",
    "FIRST_SCHEMA_VERSION",
    "GIT_COMMIT",
    "HISTORY",
    "INTERRUPTED",
    "MACHINE",
    "METRIC",
    "NUMERICS",
    "RECORD_FIELDS",
    "RECORD_KEYS",
    "RESUMED_AT",
    "RESUMES_AFTER_EPOCH",
    "RUN_ID",
    "SCHEMA_VERSION",
    "SCHEMA_VERSION_KEY",
    "STARTED_AT",
    "STATUS",
    "STATUSES",
    "STOPPED_AFTER_EPOCH",
    "SUMMARY",
    "SUMMARY_ACCURACIES",
    "SUMMARY_EPOCHS",
    "SUMMARY_KEYS",
    "SUMMARY_KINDS",
    "TEST_ACC_AT_BEST_VAL",
    "TIMING",
    "TRAIN_ACC_AT_BEST_VAL",
    "VERSIONS",
    "Kind",
    "numerics_version",
    "record",
    "schema_version",
    "summary",
]
