"""Errors of the rule language: a compile-time error with its place, and a runtime one."""

from __future__ import annotations

import unicodedata
from typing import Any


class ExprError(Exception):
    """A syntax or whitelist error, found when the expression is compiled.

    ``col`` is the 1-based column (in characters) of the offending spot on line
    ``line`` of the expression text; expressions are usually one line.
    """

    def __init__(self, message: str, col: int, line: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.col = col
        self.line = line

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.col, self.line))

    def __str__(self) -> str:
        where = f"line {self.line}, column {self.col}" if self.line > 1 else f"column {self.col}"
        return f"{self.message} (at {where})"

    def caret(self, text: str, indent: str = "    ") -> str:
        """Two lines: the expression text, then a caret under ``col``."""
        lines = text.split("\n")
        shown = lines[min(max(self.line, 1), len(lines)) - 1].rstrip("\r")
        return f"{indent}{shown}\n{indent}{_pad(shown[: max(self.col - 1, 0)])}^"


def _pad(prefix: str) -> str:
    """Blanks as wide on a terminal as ``prefix`` (tabs kept, wide characters doubled)."""
    out = []
    for ch in prefix:
        if ch == "\t":
            out.append("\t")
        elif unicodedata.combining(ch):
            continue
        elif unicodedata.east_asian_width(ch) in ("W", "F"):
            out.append("  ")
        else:
            out.append(" ")
    return "".join(out)


class ExprRuntimeError(Exception):
    """An operation that has no meaning on the values it got (e.g. len(5), "a" + 1)."""


class NonFinite(ExprRuntimeError):
    """An ordering comparison of a number that is NaN or infinite: it has no answer, so
    the case is counted and named rather than decided (``reports.sink``)."""
