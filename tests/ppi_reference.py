"""An independent reference for the corrected counts (``core.stats.ppi``): the tests'
own plain implementation, written from the definitions, not from the module.

Hypergeometric probabilities come from the product formula with ``Fraction`` (no
``math.comb``), bounds from a linear scan over every possible count (no bisection), and
the estimate from the PPI formula as the issue states it: N x (the judge's share + the
mean of gold minus judge indicators over the labelled cases), with no strata.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache
from typing import Any


@cache
def _choose(n: int, k: int) -> Fraction:
    if k < 0 or k > n:
        return Fraction(0)
    value = Fraction(1)
    for i in range(k):
        value = value * (n - i) / (i + 1)
    return value


def pmf(population: int, successes: int, draws: int, x: int) -> Fraction:
    """P[X = x], X the successes among ``draws`` taken without replacement."""
    return (_choose(successes, x) * _choose(population - successes, draws - x)
            / _choose(population, draws))


@cache
def cdf(population: int, successes: int, draws: int, x: int) -> Fraction:
    return sum((pmf(population, successes, draws, j) for j in range(x + 1)), Fraction(0))


def bounds(population: int, draws: int, observed: int, level: Fraction) -> tuple[int, int]:
    """Every count of successes not rejected by either one-sided test at ``level``."""
    kept = [k for k in range(population + 1)
            if observed <= k and draws - observed <= population - k
            and cdf(population, k, draws, observed) > level
            and 1 - cdf(population, k, draws, observed - 1) > level]
    return min(kept), max(kept)


def estimate(n_cases: int, judge: list[Any], gold: dict[int, Any], category: Any) -> Fraction:
    """PPI: N (judge share over all N + mean over labelled of gold - judge indicator)."""
    share = Fraction(sum(1 for j in judge if j == category), n_cases)
    rectifier = Fraction(sum((gold[i] == category) - (judge[i] == category) for i in gold),
                         len(gold))
    return n_cases * (share + rectifier)


def interval(n_cases: int, judge: list[Any], gold: dict[int, Any], category: Any,
             alpha: Fraction) -> tuple[int, int]:
    """The stratified exact interval: bounds on the judge's wrong calls within its own
    count and on its misses within the rest, at alpha/4 each."""
    count = sum(1 for j in judge if j == category)
    inside = [i for i in gold if judge[i] == category]
    outside = [i for i in gold if judge[i] != category]
    wrong = sum(1 for i in inside if gold[i] != category)
    missed = sum(1 for i in outside if gold[i] == category)
    level = alpha / 4
    w_low, w_high = bounds(count, len(inside), wrong, level) if count else (0, 0)
    m_low, m_high = (bounds(n_cases - count, len(outside), missed, level)
                     if n_cases - count else (0, 0))
    return max(0, count + m_low - w_high), min(n_cases, count + m_high - w_low)


def normal_interval(n_cases: int, judge: list[Any], gold: dict[int, Any], category: Any,
                    z: float) -> tuple[float, float]:
    """The plain normal interval on the rectifier's mean (what the issue says fails)."""
    values = [(gold[i] == category) - (judge[i] == category) for i in gold]
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / max(1, n - 1)
    center = float(estimate(n_cases, judge, gold, category))
    half = z * n_cases * math.sqrt(var / n * (1 - n / n_cases))
    return center - half, center + half


# -- the post-stratified exact test (``core.stats.poststrat``), by brute force ------------
# Every split of the true count in the confidence box and every outcome of the sample,
# in Fractions: no monotonicity, boundary, threshold or float shortcut is assumed.


def post_stratified(n_cases: int, count: int, n1: int, n0: int, wrong: Any,
                    missed: Any) -> Fraction:
    """J (n1 - d-)/n1 + (N - J) d+/n0 (an undrawn stratum: the judge's word)."""
    judged = Fraction(count) * (n1 - wrong) / n1 if n1 else Fraction(count)
    other = Fraction(n_cases - count) * missed / n0 if n0 else Fraction(0)
    return judged + other


def _box(population: int, draws: int, observed: int, side: Fraction) -> tuple[int, int]:
    return bounds(population, draws, observed, side) if draws else (0, population)


def p_value(n_cases: int, count: int, n1: int, n0: int, wrong: int, missed: int,
            c: int, gamma: Fraction, upper: bool = True) -> Fraction:
    """The Berger-Boos p-value of ``T <= c`` (``upper``) or ``T >= c``."""
    others = n_cases - count
    seen = post_stratified(n_cases, count, n1, n0, wrong, missed)
    w_box = _box(count, n1, wrong, gamma / 4)
    m_box = _box(others, n0, missed, gamma / 4)
    worst = Fraction(0)
    for d_wrong in range(w_box[0], w_box[1] + 1):
        for d_missed in range(m_box[0], m_box[1] + 1):
            truth = count - d_wrong + d_missed
            if (truth > c) if upper else (truth < c):
                continue
            tail = Fraction(0)
            for x in range(n1 + 1):
                px = pmf(count, d_wrong, n1, x) if n1 else Fraction(x == 0)
                if not px:
                    continue
                for y in range(n0 + 1):
                    py = pmf(others, d_missed, n0, y) if n0 else Fraction(y == 0)
                    value = post_stratified(n_cases, count, n1, n0, x, y)
                    if py and ((value >= seen) if upper else (value <= seen)):
                        tail += px * py
            worst = max(worst, tail)
    return gamma + worst


def test_bounds(n_cases: int, count: int, n1: int, n0: int, wrong: int, missed: int,
                level: Fraction, gamma: Fraction) -> tuple[int, int]:
    """Every c the one-sided tests keep: the least ``T <= c`` and the largest ``T >= c``."""
    kept_low = [c for c in range(n_cases + 1)
                if p_value(n_cases, count, n1, n0, wrong, missed, c, gamma) > level]
    kept_high = [c for c in range(n_cases + 1)
                 if p_value(n_cases, count, n1, n0, wrong, missed, c, gamma, False) > level]
    return min(kept_low, default=n_cases), max(kept_high, default=0)
