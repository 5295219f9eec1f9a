"""Intervals shown beside a rate: for a person to read, never to decide a verdict."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from .binomial import binomial_upper_tail
from .checks import check_fraction, check_int

if TYPE_CHECKING:
    from collections.abc import Callable


def wilson_interval(successes: Fraction, n: int,
                    z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval for ``successes / n``, for display only.

    ``successes`` may be fractional (metric values need not be 0 or 1); the
    bounds are clamped to ``[0, 1]``.
    """
    check_int("n", n, minimum=1)
    value = check_fraction("successes", successes)
    if not 0 <= value <= n:
        raise ValueError(f"successes must be between 0 and n = {n}, got {value}")
    if not (math.isfinite(z) and z > 0):
        raise ValueError(f"z must be a finite number > 0, got {z}")
    phat = float(value / n)
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (phat + z2 / (2 * n)) / denominator
    half_width = z / denominator * math.sqrt(phat * (1 - phat) / n + z2 / (4 * n * n))
    return max(0.0, centre - half_width), min(1.0, centre + half_width)


def exact_interval(successes: int, n: int, confidence: Fraction = Fraction(95, 100),
                   steps: int = 40) -> tuple[float, float]:
    """The Clopper-Pearson (exact) interval for ``successes / n``.

    Its bounds are the rates at which the exact binomial tails equal ``(1 - confidence) / 2``;
    each is found by bisection on the rate, every step an exact tail decision
    (:meth:`.binomial.TailProbability.at_most`), to ``2**-steps`` (fewer steps are
    cheaper: each halves the rate's denominator's size).
    """
    check_int("n", n, minimum=1)
    check_int("successes", successes)
    if successes > n:
        raise ValueError(f"successes must be between 0 and n = {n}, got {successes}")
    level = (1 - check_fraction("confidence", confidence)) / 2

    def bisect(too_low: Callable[[Fraction], bool]) -> float:
        low, high = Fraction(0), Fraction(1)
        for _ in range(steps):
            middle = (low + high) / 2
            if too_low(middle):
                low = middle
            else:
                high = middle
        return float((low + high) / 2)

    # lower: the rate p with P[X >= k | p] = level (P rises with p)
    lower = 0.0 if successes == 0 else bisect(
        lambda p: binomial_upper_tail(successes, n, p).at_most(level))
    # upper: the rate p with P[X <= k | p] = level, i.e. P[X >= k+1 | p] = 1 - level
    upper = 1.0 if successes == n else bisect(
        lambda p: binomial_upper_tail(successes + 1, n, p).at_most(1 - level))
    return lower, upper
