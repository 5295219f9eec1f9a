"""Overdispersion: how much more a count varies than independent case moves explain.

The allowance (:mod:`.allowance`) models a rise as a sum of independent case moves:
between two runs ``mu`` cases are expected to move, each either way, so a count's
variance over runs is about ``mu / 2``. Real LLM noise is correlated: a judge or a
provider is harsher on some days, and every flaky case moves the same way that day. Such
a shared shift leaves each case's own movement as it was, but the count spreads more: its
variance over repeated runs is ``phi * mu / 2`` with a **dispersion factor** ``phi > 1``
(quasi-binomial; a beta-binomial's intra-class correlation shows up the same way).

The repeats estimate it: ``phi_hat = 2 s**2 / mu``, with ``s**2`` the count's sample
variance over the ``n`` runs and ``mu`` the unbiased movement between two of them. With
the three to five repeats teams can afford, ``s**2`` is loose (``n - 1`` degrees of
freedom), so the variance used is the chi-square bound ``(n - 1) s**2 /
chi2_{n-1}(1 - CONFIDENCE)`` over ``mu / 2``. ``CONFIDENCE`` is 1/2: the bound is the
variance's median given ``s**2`` (1.44 ``s**2`` from three runs, above the sample
variance), not a high-confidence bound: at 80% three runs would multiply the variance by
4.5 and cost a fifth of the power on every system, drifting or not, while the measured
false alarms (docs/noise.md, ``bench/noise_loop.py --drift``) stay near 1% at 1/2. The
margin beyond it is the Bonferroni split and the observed count set from the mean of
the runs (``core.gate.noisy.observed_center``). More runs (repeats spread over days, or
main's history measured with ``failgate noise``) tighten the bound whatever the level.

It is never below 1: a count whose runs spread less than independent moves keeps
today's allowance, never a narrower one. The bound is an estimate made once per noise
source, rounded **up** to 1/100, and the chi-square quantile rounded **down** to 1/10000
(both towards a wider allowance); every decision made with it stays exact
(:mod:`.allowance`).
"""

from __future__ import annotations

import math
from fractions import Fraction

from .checks import check_fraction, check_int

__all__ = ["CONFIDENCE", "chi2_quantile", "dispersion_bound"]

CONFIDENCE = Fraction(1, 2)  # the one-sided level of the variance's bound (see above)
_QUANTILE_SCALE = 10_000  # the chi-square quantile, rounded down to this
_FACTOR_SCALE = 100  # the dispersion factor, rounded up to this


def _lower_gamma(a: float, x: float) -> float:
    """The regularised lower incomplete gamma ``P(a, x)`` by its power series (x small or
    moderate, as the quantiles needed here are: the series converges for every x)."""
    if x <= 0:
        return 0.0
    term = 1.0 / a
    total = term
    n = 1
    while term > total * 1e-16:
        term *= x / (a + n)
        total += term
        n += 1
    return math.exp(a * math.log(x) - x - math.lgamma(a)) * total


def chi2_quantile(df: int, probability: Fraction) -> Fraction:
    """The ``probability`` quantile of a chi-square of ``df`` degrees of freedom, rounded
    down to 1/10000 (a lower quantile makes the variance bound above it larger)."""
    check_int("df", df, minimum=1)
    p = float(check_fraction("probability", probability))
    if not 0 < p < 1:
        raise ValueError(f"probability must be in (0, 1), got {probability}")
    low, high = 0.0, 1.0
    while _lower_gamma(df / 2, high / 2) < p:
        high *= 2
    for _ in range(200):  # bisection: the CDF rises with x
        middle = (low + high) / 2
        if _lower_gamma(df / 2, middle / 2) < p:
            low = middle
        else:
            high = middle
    return Fraction(math.floor(low * _QUANTILE_SCALE), _QUANTILE_SCALE)


def dispersion_bound(variance: Fraction, expected: Fraction, runs: int,
                     confidence: Fraction = CONFIDENCE) -> Fraction:
    """The upper ``confidence`` bound of a count's dispersion factor, at least 1.

    ``variance`` is the count's sample variance over ``runs`` repeated runs, ``expected``
    the cases expected to move between two of them. Without movement (``expected`` 0)
    there is nothing to widen: 1.
    """
    s2 = check_fraction("variance", variance)
    mu = check_fraction("expected", expected)
    check_int("runs", runs, minimum=2)
    if s2 < 0 or mu < 0:
        raise ValueError("variance and expected movement must be >= 0")
    if mu == 0 or s2 == 0:
        return Fraction(1)
    quantile = chi2_quantile(runs - 1, 1 - check_fraction("confidence", confidence))
    if quantile == 0:
        raise ValueError(f"{runs} runs bound no dispersion at confidence {confidence}")
    bound = (runs - 1) * s2 / quantile / (mu / 2)
    rounded = Fraction(math.ceil(bound * _FACTOR_SCALE), _FACTOR_SCALE)
    return max(Fraction(1), rounded)
