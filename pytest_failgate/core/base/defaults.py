"""The defaults the core and every front end share, each one constant in one type.

The option table (``options.py``) writes them into its rows and help, the core decides
with them, and the tests read them from here: changing one is one edit. Exact values
(``Fraction``, ``int``) as every decision is exact; ``decimal`` writes one as a user
types it (``0.05``), never through a float.

Imported by the option table on every gate run: the standard library only.
"""

from __future__ import annotations

from fractions import Fraction

# the most probability that a sequential run's early verdict is not the full run's
DEFAULT_DELTA = Fraction(1, 20)
# the futility stop's margin: the regression, in cases past a ceiling, it rules out
DEFAULT_MARGIN = 10
# how close in time (hours) a run paired case by case with this one must have been measured
DEFAULT_WINDOW_HOURS = 12


def decimal(value: Fraction) -> str:
    """``value`` as an exact decimal (``Fraction(1, 20)``: ``0.05``); a fraction with no
    finite decimal as ``p/q``, which ``Fraction`` reads back alike."""
    denominator, twos, fives = value.denominator, 0, 0
    while denominator % 2 == 0:
        denominator, twos = denominator // 2, twos + 1
    while denominator % 5 == 0:
        denominator, fives = denominator // 5, fives + 1
    if denominator != 1:
        return str(value)
    places = max(twos, fives)
    scaled = abs(value.numerator) * 10**places // value.denominator
    sign = "-" if value < 0 else ""
    whole, part = divmod(scaled, 10**places)
    return f"{sign}{whole}" + (f".{part:0{places}d}".rstrip("0") if part else "")
