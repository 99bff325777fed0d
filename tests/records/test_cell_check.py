"""The cell-level check: a cell's re-run seeds against its recorded ones (TOST and Welch)."""

import math

import pytest
from scipy import stats

from lipnorm_exp.records.cell_check import (
    CELL_VERDICTS,
    DIFFERENT,
    EQUIVALENT,
    IDENTICAL,
    INCONCLUSIVE,
    judge_cell,
)

RECORDED = [80.1, 78.9, 81.4, 79.6, 80.6]


def test_the_same_numbers_seed_for_seed_are_identical():
    judged = judge_cell(RECORDED, list(RECORDED), margin=2.0)
    assert judged.verdict == IDENTICAL and judged.difference == 0.0


def test_welch_s_p_value_and_interval_are_scipy_s():
    rerun = [78.2, 80.9, 77.5, 79.3, 76.8]
    judged = judge_cell(RECORDED, rerun, margin=2.0)
    welch = stats.ttest_ind(rerun, RECORDED, equal_var=False)
    assert judged.p_equal == pytest.approx(welch.pvalue, rel=1e-9)
    interval = welch.confidence_interval(confidence_level=0.90)
    assert (judged.low, judged.high) == pytest.approx((interval.low, interval.high), rel=1e-9)
    assert judged.difference == pytest.approx(sum(rerun) / 5 - sum(RECORDED) / 5)


def test_close_means_with_a_narrow_interval_are_equivalent():
    rerun = [value + 0.05 * (-1) ** k for k, value in enumerate(RECORDED)]
    judged = judge_cell(RECORDED, rerun, margin=2.0)
    assert judged.verdict == EQUIVALENT and -2.0 < judged.low < judged.high < 2.0


def test_a_shift_beyond_the_margin_is_different_and_a_small_sample_is_inconclusive():
    shifted = [value - 4.0 for value in RECORDED]
    assert judge_cell(RECORDED, shifted, margin=2.0).verdict == DIFFERENT
    # as chaos does: other draws from the same spread; five seeds cannot show equivalence
    chaotic = [78.0, 81.5, 77.9, 80.2, 79.1]
    judged = judge_cell(RECORDED, chaotic, margin=2.0)
    assert judged.verdict == INCONCLUSIVE and judged.p_equal > 0.05
    assert judged.high - judged.low > 2.0  # the interval is wider than the band's half


def test_a_significant_difference_inside_the_margin_is_not_called_different():
    recorded, rerun = [80.0, 80.1, 80.0, 80.1], [80.6, 80.7, 80.6, 80.7]
    judged = judge_cell(recorded, rerun, margin=2.0)
    assert judged.p_equal < 0.05 and judged.verdict == EQUIVALENT


def test_constant_samples_are_judged_by_their_exact_difference():
    assert judge_cell([80.0, 80.0], [80.0, 80.0], 2.0).verdict == IDENTICAL
    apart = judge_cell([80.0, 80.0], [77.0, 77.0], 2.0)
    assert apart.verdict == DIFFERENT and apart.p_equal == 0.0 and apart.low == -3.0
    near = judge_cell([80.0, 80.0], [79.0, 79.0], 2.0)
    assert near.verdict == EQUIVALENT


@pytest.mark.parametrize(
    ("recorded", "rerun", "margin"),
    [([80.0], [80.0, 81.0], 2.0), (RECORDED, RECORDED, 0.0), (RECORDED, RECORDED, math.nan)],
)
def test_too_few_seeds_or_no_margin_is_refused(recorded, rerun, margin):
    with pytest.raises(ValueError):
        judge_cell(recorded, rerun, margin)


def test_the_verdicts_run_from_agreement_to_difference():
    assert CELL_VERDICTS == (IDENTICAL, EQUIVALENT, INCONCLUSIVE, DIFFERENT)
