"""What a run computes is pinned: the exact histories of tiny runs, per numerics version.

The golden histories (``tests/records/golden/histories.json``) were made, per numerics version, on
one CPU thread: today's :data:`~lipnorm_exp.records.numerics.NUMERICS_VERSION` by the default keys,
version 1 by its keys (``tests/records/golden/regenerate.py``'s ``VERSION_1_KEYS``), so that a
version-1 record can still be made again exactly. On a processor of the model that made them they
must come out bit for bit; on another model, floating-point rounding may differ, so they are
compared within :data:`OTHER_PROCESSOR_RTOL` and the test says so.
"""

import math
import warnings

import pytest
from golden.regenerate import PROCESSOR_KEY, RUNS, VERSIONS_KEY, golden, histories

from lipnorm_exp.records import NUMERICS_VERSION
from lipnorm_exp.records.numerics import VERSION_1
from lipnorm_exp.records.provenance import processor_model

#: the relative tolerance of a comparison on a processor model other than the golden file's
OTHER_PROCESSOR_RTOL = 1e-5
#: what to do when the numbers changed
CHANGED = (
    "numerics changed: if intended, bump NUMERICS_VERSION (lipnorm_exp/records/numerics.py), "
    "add a CHANGELOG line saying why, and regenerate the golden histories with "
    "`python tests/records/golden/regenerate.py`"
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


def test_golden_histories_hold_every_version_up_to_this_one():
    stored = golden()
    assert sorted(stored[VERSIONS_KEY], key=int) == [
        str(v) for v in (VERSION_1, NUMERICS_VERSION)
    ], (
        f"the golden histories hold numerics versions {sorted(stored[VERSIONS_KEY])}, the code's "
        f"is {NUMERICS_VERSION}: regenerate them with `python tests/records/golden/regenerate.py`"
    )
    for runs in stored[VERSIONS_KEY].values():
        assert set(runs) == set(RUNS)


@pytest.mark.parametrize("version", [NUMERICS_VERSION, VERSION_1])
def test_runs_compute_the_golden_histories(tmp_path, version):
    stored = golden()
    made = histories(tmp_path, version)
    here, there = processor_model(), stored[PROCESSOR_KEY]
    rtol = 0.0 if here == there else OTHER_PROCESSOR_RTOL
    if rtol:
        warnings.warn(
            f"golden histories made on {there!r}, compared on {here!r} within a relative "
            f"tolerance of {rtol:g}, not exactly",
            stacklevel=1,
        )
    found = differences(made, stored[VERSIONS_KEY][str(version)], rtol)
    if found:
        pytest.fail(f"{CHANGED}; {len(found)} differences, first: {'; '.join(found[:3])}")


def test_the_fast_paths_change_rounding_only():
    """Version 2 computes version 1's functions: its first epochs agree to float32 rounding."""
    stored = golden()[VERSIONS_KEY]
    old, new = stored[str(VERSION_1)], stored[str(NUMERICS_VERSION)]
    assert old != new  # another rounding: a numerics change
    assert differences(new, old, rtol=1e-4) == []
