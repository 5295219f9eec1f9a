"""Intervals shown beside a rate: for a person to read, never to decide a verdict."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .checks import check_fraction, check_int

if TYPE_CHECKING:
    from fractions import Fraction


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
