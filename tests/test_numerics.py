"""What a run computes is pinned: the exact histories of tiny runs, per numerics version.

The golden histories (``tests/golden/histories.json``) were made by
:data:`~lipnorm_exp.records.numerics.NUMERICS_VERSION` on one CPU thread. On a processor of the
model that made them they must come out bit for bit; on another model, floating-point rounding
may differ, so they are compared within :data:`OTHER_PROCESSOR_RTOL` and the test says so.
"""

import math
import warnings

import pytest
from golden.regenerate import PROCESSOR_KEY, RUNS, RUNS_KEY, VERSION_KEY, golden, histories

from lipnorm_exp.records import NUMERICS_VERSION
from lipnorm_exp.records.provenance import processor_model

#: the relative tolerance of a comparison on a processor model other than the golden file's
OTHER_PROCESSOR_RTOL = 1e-5
#: what to do when the numbers changed
CHANGED = (
    "numerics changed: if intended, bump NUMERICS_VERSION (lipnorm_exp/records/numerics.py), "
    "add a CHANGELOG line saying why, and regenerate the golden histories with "
    "`python tests/golden/regenerate.py`"
)


def differences(made, pinned, rtol: float, where: str = "") -> list[str]:
    """Where ``made`` differs from ``pinned`` (nested rows, lists and numbers).

    Numbers are equal exactly where ``rtol`` is 0, else within ``rtol`` of each other.
    """
    if isinstance(pinned, dict) and isinstance(made, dict):
        if made.keys() != pinned.keys():
            return [f"{where}: keys {sorted(made)} instead of {sorted(pinned)}"]
        return [
            d for key in pinned for d in differences(made[key], pinned[key], rtol, f"{where}.{key}")
        ]
    if isinstance(pinned, list) and isinstance(made, list):
        if len(made) != len(pinned):
            return [f"{where}: {len(made)} items instead of {len(pinned)}"]
        pairs = zip(made, pinned, strict=True)
        return [
            d for k, (m, p) in enumerate(pairs) for d in differences(m, p, rtol, f"{where}[{k}]")
        ]
    same = made == pinned or (
        rtol > 0
        and isinstance(made, float)
        and isinstance(pinned, float)
        and math.isclose(made, pinned, rel_tol=rtol)
    )
    return [] if same else [f"{where}: {made!r} instead of {pinned!r}"]


def test_differences_are_exact_unless_a_tolerance_is_given():
    pinned = {"run": [{"epoch": 1, "loss": 1.0, "grads": [0.5, 0.25]}]}
    close = {"run": [{"epoch": 1, "loss": 1.0 + 1e-7, "grads": [0.5, 0.25]}]}
    assert differences(pinned, pinned, 0.0) == []
    assert differences(close, pinned, 0.0) == [f".run[0].loss: {1.0 + 1e-7!r} instead of 1.0"]
    assert differences(close, pinned, OTHER_PROCESSOR_RTOL) == []
    far = {"run": [{"epoch": 2, "loss": 1.001, "grads": [0.5]}]}
    assert differences(far, pinned, OTHER_PROCESSOR_RTOL) == [
        ".run[0].epoch: 2 instead of 1",
        ".run[0].loss: 1.001 instead of 1.0",
        ".run[0].grads: 1 items instead of 2",
    ]


def test_golden_histories_are_this_numerics_versions():
    stored = golden()
    assert stored[VERSION_KEY] == NUMERICS_VERSION, (
        f"the golden histories are numerics version {stored[VERSION_KEY]}, the code's is "
        f"{NUMERICS_VERSION}: regenerate them with `python tests/golden/regenerate.py`"
    )
    assert set(stored[RUNS_KEY]) == set(RUNS)


def test_runs_compute_the_golden_histories(tmp_path):
    stored = golden()
    made = histories(tmp_path)
    here, there = processor_model(), stored[PROCESSOR_KEY]
    rtol = 0.0 if here == there else OTHER_PROCESSOR_RTOL
    if rtol:
        warnings.warn(
            f"golden histories made on {there!r}, compared on {here!r} within a relative "
            f"tolerance of {rtol:g}, not exactly",
            stacklevel=1,
        )
    found = differences(made, stored[RUNS_KEY], rtol)
    if found:
        pytest.fail(f"{CHANGED}; {len(found)} differences, first: {'; '.join(found[:3])}")
