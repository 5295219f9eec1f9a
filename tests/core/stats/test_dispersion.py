"""Overdispersion and outside-the-system rates: the bounds allowances are widened by.

Checked against scipy's chi-square and beta distributions (the Clopper-Pearson bound is a
beta quantile) and against binomial tails summed here from ``math.comb``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import scipy.stats  # type: ignore[import-untyped, unused-ignore]

from pytest_failgate.core.stats.allowance import (
    Movement,
    allowance,
    may_move,
    rate_allowance,
    rate_upper,
)
from pytest_failgate.core.stats.dispersion import CONFIDENCE, chi2_quantile, dispersion_bound


@pytest.mark.parametrize("df", [1, 2, 3, 4, 9, 19, 40])
@pytest.mark.parametrize("probability", [Fraction(1, 5), Fraction(1, 20), Fraction(1, 2)])
def test_the_chi_square_quantile_is_scipys_rounded_down(df: int, probability: Fraction) -> None:
    want = scipy.stats.chi2.ppf(float(probability), df)
    found = chi2_quantile(df, probability)
    assert found.denominator <= 10_000
    assert float(found) <= want < float(found) + 1e-4 + 1e-9


def test_the_dispersion_bound_is_the_chi_square_bound_of_the_variance_over_independent_moves(
        ) -> None:
    # three runs whose count spread exactly as independent moves predict (s**2 = mu / 2):
    # the bound at 1/2 is 2 / chi2_2(0.5) = 2 / (2 ln 2) = 2 / 1.3862 times that, rounded up
    bound = dispersion_bound(Fraction(10), Fraction(20), 3)
    assert bound == Fraction(math.ceil(2 / Fraction(13862, 10000) * 100), 100) == Fraction(
        145, 100)
    # at 80% it would be 2 / chi2_2(0.2) = 2 / 0.4462
    assert dispersion_bound(Fraction(10), Fraction(20), 3, Fraction(4, 5)) == Fraction(449, 100)
    # more runs, a tighter bound for the same spread
    assert dispersion_bound(Fraction(10), Fraction(20), 10) < dispersion_bound(
        Fraction(10), Fraction(20), 5) < bound
    # a count that spread less than its moves explain keeps today's allowance: never below 1
    assert dispersion_bound(Fraction(1, 100), Fraction(20), 3) == 1
    assert dispersion_bound(Fraction(0), Fraction(20), 3) == 1
    assert dispersion_bound(Fraction(5), Fraction(0), 3) == 1  # nothing moved: nothing to widen
    assert Fraction(1, 2) == CONFIDENCE


def test_an_overdispersed_count_moves_as_phi_times_its_cases_and_says_so() -> None:
    plain = Movement(Fraction(12), "band.json: 3 runs, 20 cases moved", Fraction(1), 3)
    wide = Movement(Fraction(12), "band.json: 3 runs, 20 cases moved", Fraction(5, 2), 3)
    slight = Movement(Fraction(12), "band.json: 3 runs, 20 cases moved", Fraction(11, 10), 3)
    assert plain.cases == may_move(Fraction(12)) == 12 + 4 + 2
    assert wide.cases == 30  # 12 x 2.5: the count's bounded spread, more than 18
    assert slight.cases == 18  # 12 x 1.1 = 13.2: never narrower than independent moves
    level = Fraction(1, 120)
    assert wide.allowance(level) == allowance(30, level) > plain.allowance(level)
    assert wide.described == ("band.json: 3 runs, 20 cases moved; overdispersed: spread x2.5 "
                              "beyond independent case moves (chi-square bound at 50% over 3 "
                              "runs)")
    assert plain.model == "independent case moves (spread over 3 runs within them)"
    assert Movement(Fraction(1), "repeats").model == (
        "independent case moves (day-to-day drift not measured)")
    with pytest.raises(ValueError, match="at least 1"):
        Movement(Fraction(1), "x", Fraction(1, 2))


@pytest.mark.parametrize(("seen", "trials"), [(0, 1200), (3, 1200), (12, 1600), (40, 400)])
def test_the_error_rate_bound_is_the_one_sided_clopper_pearson_bound(seen: int,
                                                                     trials: int) -> None:
    want = scipy.stats.beta.ppf(0.95, seen + 1, trials - seen)
    found = rate_upper(seen, trials)
    assert want <= float(found) <= want + 2e-6


def _tail(n: int, rate: Fraction, above: int) -> Fraction:
    """P[Bin(n, rate) > above], summed term by term."""
    return sum((math.comb(n, k) * rate**k * (1 - rate) ** (n - k)
                for k in range(above + 1, n + 1)), Fraction(0))


def test_an_error_rate_allowance_is_the_least_count_a_run_exceeds_rarely_at_the_bound() -> None:
    level = Fraction(1, 120)
    # no error in three band runs and this one: the rate is still not known to be 0
    rate = rate_upper(0, 1600)
    found = rate_allowance(0, 1600, 400, 0, level)
    assert _tail(400, rate, found) <= level < _tail(400, rate, found - 1)
    assert found > 2  # more than the 0 + 2 a band that saw no movement gives
    # a steady 1% (16 of 1600): set from 4 this run, room for what that rate brings
    found = rate_allowance(16, 1600, 400, 4, level)
    rate = rate_upper(16, 1600)
    assert _tail(400, rate, 4 + found) <= level < _tail(400, rate, 4 + found - 1)
    assert rate_allowance(16, 1600, 400, 400, level) == 0
