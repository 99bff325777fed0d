"""Run records: one JSON record per run, named by the run's hash, written atomically.

A record holds the whole resolved config (its ``paths`` relative to ``paths.root_dir`` where
they lie under it, so a record reads the same on every machine; ``config.tags`` names every
preset the run serves), the status (``completed``, ``diverged``, ``failed`` with its error, or
``interrupted``), summary metrics, the per-epoch history, timings, versions, the git commit,
the machine, and the schema and numerics versions.

- [`schema`][lipnorm_exp.records.schema]: the typed record (``Record``, its ``Summary`` and
  ``EpochRow``s), its keys, statuses and schema version.
- [`numerics`][lipnorm_exp.records.numerics]: the numerics version of the code that makes records.
- [`identity`][lipnorm_exp.records.identity]: what defines a run, its ``run_id`` and its setting.
- [`store`][lipnorm_exp.records.store]: writing, reading, setting aside and re-tagging
  records.
- `provenance`: paths, versions, commit and machine of a record.
- [`merge`][lipnorm_exp.records.merge]: records made elsewhere into a folder of records
  (``lipnorm-exp-merge``).
- [`verify`][lipnorm_exp.records.verify]: the rule that judges a run trained again against its
record
  (``lipnorm-exp-verify``), and its verdicts.
"""

from lipnorm_exp.records.identity import (
    COMPUTATION_KEYS,
    NON_DEFINING_KEYS,
    NON_DEFINING_TRAIN_KEYS,
    SEED_KEY,
    defining_config,
    run_id,
    setting_key,
)
from lipnorm_exp.records.numerics import (
    NUMERICS_VERSION,
    made_by_current_numerics,
    newer_version,
    run_numerics,
)
from lipnorm_exp.records.provenance import git_commit, machine, portable_paths, versions
from lipnorm_exp.records.schema import (
    COMPLETED,
    DIVERGED,
    EPOCH_TIME_KEY,
    FAILED,
    FINISHED,
    INTERRUPTED,
    RECORD_KEYS,
    SCHEMA_VERSION,
    STATUSES,
    SUMMARY_KEYS,
)
from lipnorm_exp.records.store import (
    CONFIG_GROUPS,
    RECORD_NAME,
    RERUN_SUFFIX,
    RUNS_FOLDER,
    SET_ASIDE,
    BadRecordError,
    FolderRecords,
    add_tags,
    config_problem,
    iter_records,
    read_record,
    record_path,
    record_problem,
    save_record,
    set_aside,
    strict_json,
    summary_problem,
    take_record,
    write_record,
)

__all__ = [
    "COMPLETED",
    "CONFIG_GROUPS",
    "DIVERGED",
    "EPOCH_TIME_KEY",
    "FAILED",
    "FINISHED",
    "INTERRUPTED",
    "COMPUTATION_KEYS",
    "NON_DEFINING_KEYS",
    "NON_DEFINING_TRAIN_KEYS",
    "NUMERICS_VERSION",
    "RECORD_KEYS",
    "RECORD_NAME",
    "RERUN_SUFFIX",
    "RUNS_FOLDER",
    "SCHEMA_VERSION",
    "SEED_KEY",
    "SET_ASIDE",
    "STATUSES",
    "SUMMARY_KEYS",
    "BadRecordError",
    "FolderRecords",
    "add_tags",
    "config_problem",
    "defining_config",
    "git_commit",
    "iter_records",
    "machine",
    "made_by_current_numerics",
    "newer_version",
    "run_numerics",
    "portable_paths",
    "read_record",
    "record_path",
    "record_problem",
    "run_id",
    "save_record",
    "set_aside",
    "setting_key",
    "strict_json",
    "summary_problem",
    "take_record",
    "versions",
    "write_record",
]
