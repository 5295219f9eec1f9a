"""The one vocabulary of verdicts: ``pass``, ``warn``, ``fail``, ``error``, ``record``.

A ceiling, metric or contract check decides pass, fail or error; a category against
a baseline run decides pass, warn or fail; a row (a gate item) carries its check's
verdict, or ``record`` when ``--failgate-init`` records a new ceiling. Each is a subset
of the same words, so a verdict reads the same wherever it travels (items, JSON, HTML).
"""

from __future__ import annotations

from typing import Literal

Verdict = Literal["pass", "warn", "fail", "error", "record"]
CheckVerdict = Literal["pass", "fail", "error"]
BaselineVerdict = Literal["pass", "warn", "fail"]
RowVerdict = Literal["pass", "fail", "error", "record"]
RunVerdict = Literal["pass", "fail", "error"]  # a whole run: error when input did not load

# The verdicts that fail a run: a count over its ceiling, or a check that could not be made.
FAILING: frozenset[Verdict] = frozenset({"fail", "error"})
