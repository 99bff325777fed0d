"""The numerics version: which computation a run's numbers come from.

Every new record holds :data:`NUMERICS_VERSION` beside its ``git_commit``
(:data:`lipnorm_exp.records.schema.NUMERICS`). Two records of one run id and one numerics
version computed the same thing, whatever commit made them; a record without it was made before
numerics were versioned (:func:`lipnorm_exp.records.schema.numerics_version` reads ``None``).

``tests/test_numerics.py`` pins the exact history of a few tiny runs made by this version
(``tests/golden/``).
"""

from collections.abc import Mapping
from typing import Any

from lipnorm_exp.records.schema import numerics_version

#: Bump it whenever a change alters what a run computes (a layer's arithmetic, an initialisation,
#: the order of random draws, the data a split holds, ...), add a CHANGELOG line saying why, and
#: regenerate the golden histories (``python tests/golden/regenerate.py``). Version 1: the code
#: of the first versioned records.
NUMERICS_VERSION = 1


def made_by_current_numerics(record: Mapping[str, Any]) -> bool:
    """Whether ``record`` was made by today's numerics (:data:`NUMERICS_VERSION`).

    A record made before numerics were versioned was not: nothing says what computed it.
    """
    return numerics_version(record) == NUMERICS_VERSION


__all__ = ["NUMERICS_VERSION", "made_by_current_numerics"]
