"""The true count of a category from a judge's labels and a small gold-labelled sample.

For a finite run of ``N`` cases the judge labels every case and people label a random
sample of them (uniform, or stratified by the judge's label). For a category, with ``J``
the judge's count, ``n1`` of the labelled cases in its stratum (``d-`` of them truly not
in the category: wrong calls) and ``n0`` outside it (``d+`` truly in it: misses), the
estimate of the true count ``T = J - D- + D+`` is the post-stratified one,

    T^ = J (n1 - d-)/n1 + (N - J) d+/n0,

PPI++ with its tuned weight for a yes/no judge label (Angelopoulos et al., 2023). A
ceiling bounds the true count, one-sided: the gate fails a count when the exact test of
``H0: T <= ceiling`` (``stats.poststrat``) rejects at the run's level, and passes it
otherwise. Beside the verdict: the interval ``[lower, upper]`` (each end the inversion of
one one-sided test at the same level: a ceiling below ``lower`` fails, ``upper`` is the
largest true count the labels cannot rule out), the estimate (never negative, clipped
into the interval when the discrete bounds fall on one side of it), and the smallest
true count the test would catch in 80% of runs.
"""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist
from typing import Literal

from ..base.classes import dataclass
from .hypergeom import lower_bound, upper_bound
from .poststrat import Sample, StratifiedTest, estimate

__all__ = ["GAMMA_SHARE", "POWER", "Corrected", "Sample", "StratifiedTest", "correct",
           "lower_bound", "summarize", "upper_bound"]

CorrectedVerdict = Literal["pass", "fail", "inconclusive"]
# The Berger-Boos share: gamma = level / 10. Measured (bench/judge_correction.py --only
# gamma; sloppy judge, 280 labels, +50%): level/5, /10, /20 catch it in 88.5%, 89%,
# 88.5% of 200 runs: the choice hardly matters; a smaller share widens the box (more
# splits to bound), a larger one spends more of the level on it.
GAMMA_SHARE = Fraction(1, 10)
POWER = Fraction(4, 5)  # the smallest regression caught: with this probability


@dataclass(frozen=True)
class Corrected:
    """One category's true count as the labels correct it: the exact test's verdict
    against its ceiling, the estimate and the exact interval at the same level."""

    count: int  # the judge's count over the run
    estimate: Fraction  # the post-stratified estimate, clipped into [lower, upper]
    lower: int  # a ceiling below it fails (the one-sided test rejects T <= ceiling)
    upper: int  # the largest true count the labels cannot rule out
    missed: int  # d+: sampled cases the judge left out of the category
    wrong: int  # d-: sampled cases the judge put in it wrongly
    labelled: int  # n1 + n0
    alpha: Fraction  # each bound's one-sided level (the level the verdict was decided at)
    in_judged: int = 0  # n1: labelled cases the judge put in the category
    caught: int | None = None  # about the smallest true count failed in 80% of runs
    verdict: CorrectedVerdict | None = None  # against the ceiling (None: no ceiling given)
    unknown: int = 0  # drawn cases of the run whose label could not be used
    ceiling: int | None = None  # the limit of the true count it was tested against


def summarize(test: StratifiedTest, level: Fraction, ceiling: int | None) -> Corrected:
    """The test's bounds at ``level``, its verdict on ``ceiling`` and the estimate."""
    s = test.sample
    lower, upper = test.lower(level), test.upper(level)
    if upper < lower:  # discrete bounds at a large level can cross: report one point
        lower = upper = min(lower, upper)
    raw = estimate(s)
    clipped = min(max(raw, Fraction(lower)), Fraction(upper))
    verdict: CorrectedVerdict | None = None
    caught = None
    if ceiling is not None:
        verdict = "fail" if ceiling < lower else "pass"
        caught = ceiling + _regression(lower, upper, level)
    return Corrected(s.count, clipped, lower, upper, s.missed, s.wrong,
                     s.in_judged + s.in_other, level, s.in_judged, caught, verdict,
                     ceiling=ceiling)


def _regression(lower: int, upper: int, level: Fraction) -> int:
    """About how far past the ceiling the true count must be for the test to fail it in
    ``POWER`` of runs: the interval's half-width read as ``z(level)`` standard errors,
    plus ``z(POWER)`` of them (a display figure, never a verdict; at least one case)."""
    normal = NormalDist()
    z_level = normal.inv_cdf(1 - float(level))
    z_power = normal.inv_cdf(float(POWER))
    half = (upper - lower) / 2
    return max(1, math.ceil(half * (1 + z_power / z_level) - 1e-9))


def correct(n_cases: int, count: int, in_judged: int, in_other: int, missed: int,
            wrong: int, alpha: Fraction, ceiling: int | None = None,
            gamma: Fraction | None = None) -> Corrected:
    """The corrected count of one category: bounds each at one-sided level ``alpha``,
    and the verdict on ``ceiling`` when given.

    ``n_cases`` is the run's N, ``count`` the judge's J; of the ``in_judged + in_other``
    labelled cases, ``in_judged`` the judge put in the category (``wrong`` of them are not,
    by the gold label) and ``in_other`` it did not (``missed`` of them are)."""
    labelled = in_judged + in_other
    if labelled <= 0:
        raise ValueError("a sample of the run's cases, and a count within them")
    sample = Sample(n_cases, count, in_judged, in_other, missed, wrong)
    test = StratifiedTest(sample, alpha * GAMMA_SHARE if gamma is None else gamma)
    return summarize(test, alpha, ceiling)
