"""Exact one-sided bounds on a finite population's successes from a sample without
replacement: the hypergeometric analogue of Clopper-Pearson, every tail a sum of integer
binomial coefficients compared with the level's fraction in integers."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fractions import Fraction


def _tail_at_most(population: int, successes: int, draws: int, observed: int) -> int:
    """``C(population, draws) * P[X <= observed]`` for ``X ~ Hypergeometric``: an integer."""
    failures = population - successes
    return sum(math.comb(successes, j) * math.comb(failures, draws - j)
               for j in range(max(0, draws - failures), min(observed, successes, draws) + 1))


def _tail_at_least(population: int, successes: int, draws: int, observed: int) -> int:
    """``C(population, draws) * P[X >= observed]``: an integer."""
    failures = population - successes
    return sum(math.comb(successes, j) * math.comb(failures, draws - j)
               for j in range(max(observed, 0, draws - failures), min(successes, draws) + 1))


def upper_bound(population: int, draws: int, observed: int, level: Fraction) -> int:
    """The largest number of successes in ``population`` that a sample of ``draws`` with
    ``observed`` successes does not reject at ``level`` (``P[X <= observed] > level``).

    ``P[X <= observed]`` falls as the successes grow, so the set is an interval from the
    observed count up, found by bisection; each comparison in integers."""
    total = math.comb(population, draws)
    most = population - (draws - observed)  # the sample's other cases exist too

    def kept(successes: int) -> bool:
        tail = _tail_at_most(population, successes, draws, observed)
        return tail * level.denominator > level.numerator * total

    low, high = observed, most  # kept(observed) holds: the observed count is its mode side
    if kept(high):
        return high
    while high - low > 1:
        middle = (low + high) // 2
        if kept(middle):
            low = middle
        else:
            high = middle
    return low


def lower_bound(population: int, draws: int, observed: int, level: Fraction) -> int:
    """The smallest number of successes that ``observed`` of ``draws`` does not reject at
    ``level`` (``P[X >= observed] > level``); the mirror of :func:`upper_bound`."""
    if draws == 0:
        return 0
    return population - upper_bound(population, draws, draws - observed, level)
