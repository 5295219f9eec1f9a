"""Small, neutral wording shared by the core's messages and every output.

Numbers as ceilings are written, plurals, and the one line that introduces a report.
It depends on nothing, so the ceilings, the result builder and the renderers can all
use it without depending on one another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fractions import Fraction


def format_number(value: int | Fraction) -> str:
    """A count as an integer, a rate as the shortest exact decimal (rates we write are decimal)."""
    if isinstance(value, int):
        return str(value)
    if value.denominator == 1:
        return str(value.numerator)
    digits = 0
    while (value * 10**digits).denominator != 1:
        digits += 1
        if digits > 30:
            return f"{float(value):.30g}"
    scaled = value.numerator * 10**digits // value.denominator
    whole, frac = divmod(scaled, 10**digits)
    return f"{whole}.{frac:0{digits}d}"


def plural(n: int, word: str) -> str:
    """``1 report``, ``2 reports``: messages count things."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def case_counts(n_cases: int | None, failed: int | None, aggregate: bool) -> str:
    """``26 cases, 7 failed``: a report's size, as every message, table and page says it.

    An aggregate's counts are the ones it recorded (failgate cannot recompute them), so
    it says so; an unknown number shows as ``?``.
    """
    cases = "? cases" if n_cases is None else plural(n_cases, "case")
    failed_text = "?" if failed is None else str(failed)
    line = f"{cases}, {failed_text} failed"
    return line + (" (recorded counts, not recomputed)" if aggregate else "")


def report_heading(name: str, n_cases: int | None, failed: int | None,
                   aggregate: bool, separator: str = ": ") -> str:
    """``eval_summary: 26 cases, 7 failed``: the line that introduces a report."""
    return f"{name}{separator}{case_counts(n_cases, failed, aggregate)}"
