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
