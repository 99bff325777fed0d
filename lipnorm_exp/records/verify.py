r"""The verify rule: a run trained again, judged against its record epoch by epoch.

[`judge`][lipnorm_exp.records.verify.judge] compares the history of a run trained again (``ours``)
with the stored one, row by row (the epoch times aside), and gives one of three verdicts:

- `IDENTICAL`: every row equal, number for number, and the same status;
- `ROUNDING` (``same up to rounding``): at the first epoch where they part, every measured
  column (the losses, the learning rate, the Lipschitz estimates) agrees to a relative difference
  of at most [`RTOL`][lipnorm_exp.records.verify.RTOL], a few units in float32's last place, which
  is what rounding in another order explains; for the
  [`ROUNDING_EPOCHS`][lipnorm_exp.records.verify.ROUNDING_EPOCHS] epochs from there the difference
  grows at most `GROWTH`-fold an epoch ($k$ epochs on, at most $\mathrm{RTOL} \cdot
  \mathrm{GROWTH}^k$), as training amplifies a rounding difference; after that, where chaos takes
  over, the two runs end with the same status and test accuracies (at the best validation epoch) at
  most the setting's [`spread`][lipnorm_exp.records.verify.spread] apart (a setting of fewer than
  [`SPREAD_SEEDS`][lipnorm_exp.records.verify.SPREAD_SEEDS] seeds has no spread to judge them by,
  and its verdict rests on the history's window alone). The accuracies and the
  gradient norms ([`jumps`][lipnorm_exp.records.verify.jumps]) are not measured columns: they are
  functions of the training's state that jump where rounding tips a near-tie, the accuracies by
  whole nodes (two logits of a node within rounding), the gradient norms where a maximum over
  neighbours (Eq. 17's) or an activation's kink routes a gradient the other way;
- `DEPARTED` (``departed by rounding``): the history passes the rounding window as for
  `ROUNDING`, and both runs end with the same status, but chaos carries the final test accuracy
  further from the record's than the setting's spread. On a chaotic setting (Table 1's GAT-PN
  on Cora at lr 0.1, say) a re-run at another thread count, message path or feature layout does
  this, and so does a change of the config in its fifth digit, which parts within rounding: no
  rule on one record tells the two apart, so this verdict neither verifies
  the record nor calls it different. The cell-level check (`lipnorm_exp.records.cell_check`)
  answers the question it leaves: are the re-run seeds' numbers drawn like the recorded ones?
- `DIFFERENT`: otherwise: the histories part beyond rounding, as another seed or other code does,
  or end with another status. A first departure that Adam's step normalisation makes lr-sized
  (a gradient near zero, whose rounding becomes a step of the learning rate's size) is beyond
  the window and is called different: the rule cannot tell it from a change of code.

The relative difference of two numbers is $|a - b| / \max(|a|, |b|)$; of two lists the
largest of their elements'; a number beside a missing or non-finite one differs infinitely.
Each judgement also names the size of the first departure
([`Judgement`][lipnorm_exp.records.verify.Judgement]): the largest relative difference of the
measured columns at the first epoch that differs, and the column.

[`RTOL`][lipnorm_exp.records.verify.RTOL], `GROWTH` and
[`ROUNDING_EPOCHS`][lipnorm_exp.records.verify.ROUNDING_EPOCHS] are calibrated by
``scripts/calibrate_verify.py`` and ``scripts/calibrate_chaos.py``:
``results/verify_calibration.md`` and ``results/verify_chaos.md`` give, for re-runs that only
round differently, small real changes and other seeds of a setting, how often each passes each
verdict, and what the rule can and cannot tell.

Findings judged before this rule (``verification.csv`` rows without a ``rule``) were judged by
[`OLD_RULE`][lipnorm_exp.records.verify.OLD_RULE], whose `WITHIN_SPREAD` compared the final test
accuracy only; [`rejudged`][lipnorm_exp.records.verify.rejudged] says again what can be said of them
from what they stored.
"""

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from lipnorm_exp.records import schema
from lipnorm_exp.records.consistency import ACCURACY_SUFFIX
from lipnorm_exp.records.schema import EpochRow, Record

#: every row equal, the epoch times aside
IDENTICAL = "identical"
#: parts within what rounding explains, and ends within the setting's spread
ROUNDING = "same up to rounding"
#: parts within what rounding explains, then chaos carries the final number beyond the spread
DEPARTED = "departed by rounding"
#: parts beyond rounding, as another seed or other code does
DIFFERENT = "different"
#: the verdicts of [`RULE`][lipnorm_exp.records.verify.RULE], in order
VERDICTS = (IDENTICAL, ROUNDING, DEPARTED, DIFFERENT)
#: the verdicts that verify a record
PASSING = (IDENTICAL, ROUNDING)
#: [`OLD_RULE`][lipnorm_exp.records.verify.OLD_RULE]'s verdict between identical and different; it
#: verifies nothing today
WITHIN_SPREAD = "within spread"
#: the largest relative difference that float32 rounding explains where two histories part
RTOL = 1e-6
#: how much a rounding difference may grow an epoch, over
#: [`ROUNDING_EPOCHS`][lipnorm_exp.records.verify.ROUNDING_EPOCHS] epochs
GROWTH = 3.0
#: over how many epochs from the first departure the difference is held to its envelope
ROUNDING_EPOCHS = 10
#: the smallest spread (points of test accuracy) final numbers are judged within
MIN_SPREAD = 0.5
#: the fewest seeds with a test accuracy a setting's spread is measured over; with fewer, the
#: final numbers are not judged
SPREAD_SEEDS = 2
#: the rule [`judge`][lipnorm_exp.records.verify.judge] applies, as findings name it
RULE = (
    f"epochwise rtol={RTOL:g} growth={GROWTH:g} epochs={ROUNDING_EPOCHS} "
    f"spread_seeds={SPREAD_SEEDS} departed"
)
#: earlier epoch-by-epoch rules, stricter than [`RULE`][lipnorm_exp.records.verify.RULE]: growth 2
#: an epoch and the gradient norms held to the envelope; then growth 3 and the final numbers of a
#: one-seed setting held to `MIN_SPREAD`; then the same as today's but calling a departure by
#: rounding `DIFFERENT` (its passing findings pass today's rule)
EARLIER_RULES = (
    "epochwise rtol=1e-06 growth=2 epochs=10",
    "epochwise rtol=1e-06 growth=3 epochs=10",
    "epochwise rtol=1e-06 growth=3 epochs=10 spread_seeds=2",
)
#: the rule of findings made before [`RULE`][lipnorm_exp.records.verify.RULE]: identical, else the
#: final test accuracy within the setting's spread (`WITHIN_SPREAD`), else different
OLD_RULE = "final test within spread"
#: columns of a history that are not judged: the epoch's number and its time
UNJUDGED = ("epoch", schema.EPOCH_TIME_KEY)
#: the gradient-norm columns (``train.track_gradients``), which jump where rounding tips a
#: near-tie (reported, not held to [`RTOL`][lipnorm_exp.records.verify.RTOL])
GRADIENT_NORMS = (schema.GRAD_ATTN, schema.GRAD_LAYER)


@dataclass(frozen=True)
class Judgement:
    """A verdict of [`judge`][lipnorm_exp.records.verify.judge], and what it rests on.

    Args:
        verdict: one of [`VERDICTS`][lipnorm_exp.records.verify.VERDICTS].
        first_different_epoch: the first epoch whose row differs (``None`` where none does).
        departure: the largest relative difference at that epoch, over the measured columns
            (over the accuracies and gradient norms where only they differ there).
        departure_column: the column of ``departure``.
        rounding_window: the largest relative difference of the measured columns over the
            [`ROUNDING_EPOCHS`][lipnorm_exp.records.verify.ROUNDING_EPOCHS] epochs from the first
            departure.
        rounding_excess: the largest ratio, over those epochs, of that difference to what
            rounding explains (`rounding_envelope`); at most 1 for
            `ROUNDING`.
        rule: the rule that judged ([`RULE`][lipnorm_exp.records.verify.RULE]).
    """

    verdict: str
    first_different_epoch: int | None = None
    departure: float | None = None
    departure_column: str | None = None
    rounding_window: float | None = None
    rounding_excess: float | None = None
    rule: str = RULE


def _numbers(value: Any) -> list[float | None]:
    if isinstance(value, list | tuple):
        return [None if v is None else float(v) for v in value]
    return [None if value is None else float(value)]


def relative_difference(a: Any, b: Any) -> float:
    r"""$|a - b| / \max(|a|, |b|)$, the largest over elements for lists.

    0 for equal values (NaN equal to NaN, a record writes a non-finite number as ``null``);
    ``inf`` where one is missing or non-finite and the other not, or lists differ in length.
    """
    xs, ys = _numbers(a), _numbers(b)
    if len(xs) != len(ys):
        return math.inf
    largest = 0.0
    for x, y in zip(xs, ys, strict=True):
        x_ok = x is not None and math.isfinite(x)
        y_ok = y is not None and math.isfinite(y)
        if not (x_ok and y_ok):
            same = x == y or (x is not None and y is not None and math.isnan(x) and math.isnan(y))
            largest = max(largest, 0.0 if same or (x is None and y is None) else math.inf)
            continue
        assert x is not None and y is not None
        if x != y:
            largest = max(largest, abs(x - y) / max(abs(x), abs(y)))
    return largest


def row_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, float]:
    """The relative difference of each column of two rows (``inf`` where one lacks it)."""
    keys = [key for key in dict.fromkeys([*a, *b]) if key not in UNJUDGED]
    return {
        key: relative_difference(a[key], b[key]) if key in a and key in b else math.inf
        for key in keys
    }


def rounding_envelope(k: int) -> float:
    """The largest relative difference rounding explains ``k`` epochs after the first departure."""
    return RTOL * GROWTH**k


def jumps(column: str) -> bool:
    """Whether a history column moves by jumps: an accuracy (whole nodes) or a gradient norm.

    Such a column is reported where two histories part, not held to the rounding envelope.
    """
    return column.endswith(ACCURACY_SUFFIX) or column in GRADIENT_NORMS


def _measured(differences: Mapping[str, float]) -> float:
    return max((value for key, value in differences.items() if not jumps(key)), default=0.0)


def points_at_best_val(record: Record) -> float | None:
    """The test accuracy at the best validation epoch of a record, in points (or ``None``)."""
    summary = record.get(schema.SUMMARY)
    value = summary.get(schema.TEST_ACC_AT_BEST_VAL) if summary else None
    return None if value is None else 100 * value


def spread(setting_tests: Iterable[float | None]) -> float | None:
    """Points of test accuracy final numbers may differ by: the setting's seeds' sample std.

    At least `MIN_SPREAD`; missing and non-finite accuracies are left out. ``None`` where fewer
    than `SPREAD_SEEDS` are left: one seed says nothing of how far chaos moves a final number.
    """
    finite = [value for value in setting_tests if value is not None and math.isfinite(value)]
    if len(finite) < SPREAD_SEEDS:
        return None
    return max(statistics.stdev(finite), MIN_SPREAD)


def _within(a: float | None, b: float | None, allowed: float | None) -> bool:
    if allowed is None:
        return True
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= allowed


def judge(stored: Record, ours: Record, allowed: float | None) -> Judgement:
    """The `Judgement` of record ``ours`` against record ``stored``.

    ``allowed``: the spread (points of test accuracy) of the run's setting,
    [`spread`][lipnorm_exp.records.verify.spread]; ``None`` (no spread known) leaves the final
    numbers unjudged.
    """
    a: Sequence[EpochRow] = stored.get(schema.HISTORY) or []
    b: Sequence[EpochRow] = ours.get(schema.HISTORY) or []
    same_status = stored.get(schema.STATUS) == ours.get(schema.STATUS)
    rows = [row_differences(x, y) for x, y in zip(a, b, strict=False)]
    first = next((k for k, diff in enumerate(rows) if any(diff.values())), None)
    if first is None:
        if len(a) == len(b):
            if same_status:
                return Judgement(IDENTICAL)
            return Judgement(DIFFERENT, len(a), math.inf, schema.STATUS, math.inf, math.inf)
        # equal rows, one history longer: they part where the shorter one stops
        where = min(len(a), len(b)) + 1
        return Judgement(DIFFERENT, where, math.inf, "epochs", math.inf, math.inf)
    at_first = rows[first]
    measured_columns = [key for key in at_first if not jumps(key)]
    if not any(at_first[key] for key in measured_columns):  # only jumping columns differ there
        measured_columns = list(at_first)
    column = max(measured_columns, key=lambda key: at_first[key])
    measured = [_measured(diff) for diff in rows[first : first + ROUNDING_EPOCHS]]
    excess = max(value / rounding_envelope(k) for k, value in enumerate(measured))
    final = _within(points_at_best_val(stored), points_at_best_val(ours), allowed)
    verdict = DIFFERENT
    if excess <= 1 and same_status:
        verdict = ROUNDING if final else DEPARTED
    return Judgement(verdict, first + 1, at_first[column], column, max(measured), excess)


def rejudged(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings with a ``rule``: those judged by `OLD_RULE` judged again where they can be.

    A finding without a rule was judged by [`OLD_RULE`][lipnorm_exp.records.verify.OLD_RULE]. Its
    ``identical`` is identical under [`RULE`][lipnorm_exp.records.verify.RULE] too, and takes it.
    Its ``different`` (not identical, and the final test accuracies further apart than the
    setting's spread) may be different or departed by rounding under it, and its ``within
    spread`` may be any of today's verdicts: neither can be judged again without the history it
    trained, which was not kept, so both keep their verdict and
    [`OLD_RULE`][lipnorm_exp.records.verify.OLD_RULE], and verify nothing (``within spread`` is not
    in [`PASSING`][lipnorm_exp.records.verify.PASSING]).

    A finding of one of [`EARLIER_RULES`][lipnorm_exp.records.verify.EARLIER_RULES] that passed
    passes [`RULE`][lipnorm_exp.records.verify.RULE], which is wider, and takes it; its
    ``different`` keeps its rule until the run is verified again.
    """
    out = findings.copy()
    if "rule" not in out:
        out["rule"] = None
    old = out["rule"].isna()
    out.loc[old, "rule"] = OLD_RULE
    out.loc[old & (out["verdict"] == IDENTICAL), "rule"] = RULE
    out.loc[out["rule"].isin(EARLIER_RULES) & out["verdict"].isin(PASSING), "rule"] = RULE
    return out


__all__ = [
    "ACCURACY_SUFFIX",
    "DEPARTED",
    "DIFFERENT",
    "EARLIER_RULES",
    "GRADIENT_NORMS",
    "GROWTH",
    "IDENTICAL",
    "MIN_SPREAD",
    "OLD_RULE",
    "PASSING",
    "ROUNDING",
    "ROUNDING_EPOCHS",
    "RTOL",
    "RULE",
    "SPREAD_SEEDS",
    "UNJUDGED",
    "VERDICTS",
    "WITHIN_SPREAD",
    "Judgement",
    "judge",
    "jumps",
    "rejudged",
    "relative_difference",
    "rounding_envelope",
    "row_differences",
    "points_at_best_val",
    "spread",
]
