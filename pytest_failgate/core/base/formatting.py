"""Small, neutral wording shared by the core's messages and every output.

Numbers as ceilings are written, plurals, and the one line that introduces a report.
It depends on nothing, so the ceilings, the result builder and the renderers can all
use it without depending on one another.
"""

from __future__ import annotations

import re
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
    return f"{one_line(name)}{separator}{case_counts(n_cases, failed, aggregate)}"


# Characters that end or rewrite a line on a terminal or in a CI log (C0 and C1 controls,
# DEL, Unicode's line and paragraph separators), and the bidirectional controls that
# reorder what a reader sees (U+202E shows ``abc\u202edcba.exe`` as ``abcexe.abcd``):
# embeddings and overrides, isolates, and the marks (LRM, RLM, ALM).
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029"
                      "\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: str) -> str:
    """Report content (a case id, a slice's value, a report's name, an error it recorded)
    as one inert line of text: each control character as its visible escape (``\\n``,
    ``\\x1b``, ``\\u202e``), so data never starts a line of its own, moves the cursor,
    clears the screen, opens a terminal hyperlink or reorders the text around it, in a
    terminal, a CI log, a Markdown table or an HTML page. Every renderer shows report
    content through this function. A backslash is doubled only where it would otherwise
    read as such an escape."""
    if not CONTROL.search(text):
        return text
    return CONTROL.sub(lambda found: _NAMED.get(found.group(), repr(found.group())[1:-1]),
                        text.replace("\\", "\\\\"))


def inert_lines(text: str) -> str:
    """Text failgate composed of several lines (an item's message, an error) with report
    content inside: each line made inert as ``one_line`` makes it, the line breaks kept."""
    return "\n".join(map(one_line, text.split("\n")))
