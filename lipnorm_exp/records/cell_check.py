r"""A table cell trained again: are the re-run seeds' numbers drawn like the recorded ones?

The verify rule (`lipnorm_exp.records.verify`) judges one record by its history. On a chaotic
setting that question has no answer: a re-run that only rounds differently (another thread
count, BLAS or device) and a change of the config in its fifth digit both leave the rounding
window and end anywhere within the setting's spread of outcomes, or beyond it. What a reader
re-running a cell on their own machine can ask instead is whether the cell's *number* holds:
whether the test accuracies of its seeds trained again, $y_1, \dots, y_m$, are drawn like the
recorded ones, $x_1, \dots, x_n$ (in points, at the best validation epoch, as the tables
report them).

The check is an equivalence test of the two means (two one-sided tests, Schuirmann 1987) with
a margin $\delta$, by default the scorecard's band, 2 points (`TOLERANCE_POINTS`: a number
within it of the paper's is ``reproduced``): with $d = \bar y - \bar x$, its standard error
$s = \sqrt{s_x^2/n + s_y^2/m}$ and Welch–Satterthwaite's degrees of freedom $\nu$,

- ``identical``: every re-run number equals its record's;
- ``equivalent``: the $1 - 2\alpha$ (90%) confidence interval $d \pm t_{1-\alpha,\nu}\, s$ lies
  inside $(-\delta, \delta)$: both one-sided tests reject a difference of $\delta$ or more at
  $\alpha = 5\%$. The cell's number holds on this machine to within the band;
- ``different``: Welch's two-sided test rejects equal means at 5% and the difference is at
  least $\delta$: the re-runs are drawn from another distribution, by more than the band;
- ``inconclusive``: neither: with this many seeds, the two can neither be told apart by a
  difference the band counts nor be shown equivalent (more seeds would tell).

With $n = m = 5$ seeds and a spread of 1.5 points, the 90% interval is about ±1.8 points wide,
so ``equivalent`` needs the means within about 0.2 points of each other: a chaotic cell
re-run elsewhere is mostly ``inconclusive``, which says what five seeds can say.
"""

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats

__all__ = [
    "ALPHA",
    "CELL_VERDICTS",
    "DIFFERENT",
    "EQUIVALENT",
    "IDENTICAL",
    "INCONCLUSIVE",
    "CellJudgement",
    "judge_cell",
]

IDENTICAL = "identical"
EQUIVALENT = "equivalent"
INCONCLUSIVE = "inconclusive"
DIFFERENT = "different"
#: the cell-level verdicts, from the strongest agreement to a difference
CELL_VERDICTS = (IDENTICAL, EQUIVALENT, INCONCLUSIVE, DIFFERENT)
#: the level of each one-sided test, and of Welch's two-sided test
ALPHA = 0.05


@dataclass(frozen=True)
class CellJudgement:
    """The verdict on a cell's re-run seeds, and the numbers it rests on (points of accuracy).

    Args:
        verdict: one of `CELL_VERDICTS`.
        recorded_mean, recorded_std: the recorded seeds' mean and sample std.
        rerun_mean, rerun_std: the re-run seeds'.
        difference: ``rerun_mean - recorded_mean``.
        low, high: the 90% confidence interval of the difference (Welch).
        p_equal: Welch's two-sided p-value for equal means (1 where both samples are constant
            and equal, 0 where they are constant and not).
        margin: the equivalence margin δ.
    """

    verdict: str
    recorded_mean: float
    recorded_std: float
    rerun_mean: float
    rerun_std: float
    difference: float
    low: float
    high: float
    p_equal: float
    margin: float


def _std(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def judge_cell(recorded: Sequence[float], rerun: Sequence[float], margin: float) -> CellJudgement:
    """The `CellJudgement` of a cell's re-run test accuracies against its recorded ones.

    ``recorded`` and ``rerun`` are in points, seed for seed in the same order where the re-run
    trained the recorded seeds (``identical`` compares them pairwise); at least two of each.

    Raises:
        ValueError: fewer than two values on a side, or a margin that is not positive.
    """
    if len(recorded) < 2 or len(rerun) < 2:
        raise ValueError(f"a cell needs two seeds a side, got {len(recorded)} and {len(rerun)}")
    if not margin > 0:
        raise ValueError(f"the margin must be positive, got {margin}")
    n, m = len(recorded), len(rerun)
    x_mean, y_mean = statistics.fmean(recorded), statistics.fmean(rerun)
    x_std, y_std = _std(recorded), _std(rerun)
    difference = y_mean - x_mean
    error = math.sqrt(x_std**2 / n + y_std**2 / m)
    if error == 0:  # both constant: the difference is known exactly
        low = high = difference
        p_equal = 1.0 if difference == 0 else 0.0
    else:
        freedom = error**4 / ((x_std**2 / n) ** 2 / (n - 1) + (y_std**2 / m) ** 2 / (m - 1))
        half = float(stats.t.ppf(1 - ALPHA, freedom)) * error
        low, high = difference - half, difference + half
        p_equal = float(2 * stats.t.sf(abs(difference) / error, freedom))
    if n == m and list(recorded) == list(rerun):
        verdict = IDENTICAL
    elif -margin < low and high < margin:
        verdict = EQUIVALENT
    elif p_equal < ALPHA and abs(difference) >= margin:
        verdict = DIFFERENT
    else:
        verdict = INCONCLUSIVE
    return CellJudgement(
        verdict, x_mean, x_std, y_mean, y_std, difference, low, high, p_equal, margin
    )
