"""Argument checks shared by the exact statistics: integers and exact rationals only.

A float is refused wherever a decision is made, not converted: ``0.05`` is not
one twentieth, and a verdict must not depend on which float a user typed.
"""

from __future__ import annotations

import numbers
from fractions import Fraction


def check_int(name: str, value: object, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_fraction(name: str, value: object) -> Fraction:
    """An exact rational: a Fraction or an int. Floats are refused, not converted."""
    if isinstance(value, bool) or not isinstance(value, numbers.Rational):
        raise TypeError(
            f"{name} must be a fractions.Fraction (or int), got {type(value).__name__}; "
            f"a float is not exact, write Fraction(1, 20) or Fraction('0.05')"
        )
    return Fraction(value)


def check_alpha(alpha: object) -> Fraction:
    value = check_fraction("alpha", alpha)
    if not 0 < value < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {value}")
    return value
