"""The numerics version: which computation a run's numbers come from.

Every new record holds the numerics version of its run
([`run_numerics`][lipnorm_exp.records.numerics.run_numerics]) beside its ``git_commit``
(`lipnorm_exp.records.schema.NUMERICS`). Two records of one run id and one numerics version computed
the same thing, whatever commit made them, up to the rounding of the device their configs name; a
record without it was made before numerics were versioned
([`lipnorm_exp.records.schema.numerics_version`][lipnorm_exp.records.schema.numerics_version] reads
``None``).

Versions:

- **1**: the code of the first versioned records: the attention layers sum their messages by
  PyG's gather/scatter (``model.message_path=gather``) and the input Linear multiplies dense
  features (``dataset.feature_layout=dense``).
- **2**: the fast paths by default: messages summed as sparse-dense products on the CPU
  (``model.message_path=auto``) and sparse input features multiplied as a sparse matrix
  (``dataset.feature_layout=auto``). The same functions, other rounding. A run given the
  version-1 values of these keys (`COMPUTATION_KEYS`, at
  their `ADDED_KEYS` values) computes version 1 exactly, and
  its record says so.

``tests/records/test_numerics.py`` pins the exact history of a few tiny runs made by each version
(``tests/records/golden/``).
"""

from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig

from lipnorm_exp.records.identity import ADDED_KEYS, COMPUTATION_KEYS
from lipnorm_exp.records.schema import SCHEMA_VERSION, numerics_version, schema_version
from lipnorm_exp.util.errors import UserError

#: Bump it whenever a change alters what a run computes (a layer's arithmetic, an initialisation,
#: the order of random draws, the data a split holds, ...), add a CHANGELOG line saying why, and
#: regenerate the golden histories (``python tests/records/golden/regenerate.py``).
NUMERICS_VERSION = 2
#: the version a run computes where every key of
#: `COMPUTATION_KEYS` it has is at its value before the key
VERSION_1 = 1


def run_numerics(config: DictConfig | Mapping[str, Any]) -> int:
    """The numerics version the run of ``config`` computes (composed, or a record's config).

    `VERSION_1` where each computation key the config holds is at the value every run had
    before the key existed (``gather``, ``dense``), else `NUMERICS_VERSION`.
    """
    for group, key in COMPUTATION_KEYS:
        values = config.get(group) or {}
        if key in values and values[key] != ADDED_KEYS[(group, key)]:
            return NUMERICS_VERSION
    return VERSION_1


def made_by_current_numerics(record: Mapping[str, Any], config: DictConfig) -> bool:
    """Whether ``record`` was made by the numerics the run of ``config`` computes today.

    A record made before numerics were versioned was not: nothing says what computed it.
    """
    return numerics_version(record) == run_numerics(config)


class NewerRecordError(UserError):
    """A record that newer code wrote: neither reused nor replaced; the message names the fix."""


def newer_version(record: Mapping[str, Any]) -> str | None:
    """Which version of ``record`` this code does not have, or ``None`` where it has both.

    A record of a schema version above `SCHEMA_VERSION`, or of
    a numerics version above `NUMERICS_VERSION`, was made by newer code: this code can
    neither tell what it holds nor compute what it computed.
    """
    if schema_version(record) > SCHEMA_VERSION:
        return f"schema_version {schema_version(record)} (this code reads 1 to {SCHEMA_VERSION})"
    numerics = numerics_version(record)
    if numerics is not None and numerics > NUMERICS_VERSION:
        return f"numerics {numerics} (this code computes {VERSION_1} to {NUMERICS_VERSION})"
    return None


def check_known_versions(record: Mapping[str, Any], where: str) -> None:
    """Refuse ``record`` (stored at ``where``) where newer code made it (`newer_version`).

    Raises:
        NewerRecordError: one line naming the file, the version and the fix.
    """
    newer = newer_version(record)
    if newer is not None:
        raise NewerRecordError(
            f"{where} was made by newer code ({newer}): neither reused nor replaced; install "
            "the newer lipnorm_exp, or give another paths.results_dir"
        )


__all__ = [
    "NUMERICS_VERSION",
    "VERSION_1",
    "NewerRecordError",
    "check_known_versions",
    "made_by_current_numerics",
    "newer_version",
    "run_numerics",
]
