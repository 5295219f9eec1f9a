"""The one vocabulary of verdicts: ``pass``, ``warn``, ``fail``, ``error``, ``record``,
``inconclusive``, ``skip``.

A ceiling, metric or contract check decides pass, fail or error; a category against
a baseline run decides pass, warn or fail; a row (a gate item) carries its check's
verdict, or ``record`` when ``--failgate-init`` records a new ceiling. A report that
cannot be judged (failures outside the system under test, a run that did not finish, a
changed measuring instrument) has one ``inconclusive`` row, which fails the run without
being a regression, and its other rows are ``skip``: not judged. Each is a subset of the
same words, so a verdict reads the same wherever it travels (items, JSON, HTML).
"""

from __future__ import annotations

from typing import Literal

Verdict = Literal["pass", "warn", "fail", "error", "record", "inconclusive", "skip"]
CheckVerdict = Literal["pass", "fail", "error"]
BaselineVerdict = Literal["pass", "warn", "fail"]
RowVerdict = Literal["pass", "fail", "error", "record", "inconclusive", "skip"]
# a whole run: error when input did not load, inconclusive when a report cannot be judged
RunVerdict = Literal["pass", "fail", "error", "inconclusive"]

# The verdicts that fail a run: a count over its ceiling, a check that could not be made,
# a run that cannot be judged (not a regression: the command's exit code tells them apart).
FAILING: frozenset[Verdict] = frozenset({"fail", "error", "inconclusive"})
