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

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping

Verdict = Literal["pass", "warn", "fail", "error", "record", "inconclusive", "skip"]
CheckVerdict = Literal["pass", "fail", "error"]
BaselineVerdict = Literal["pass", "warn", "fail"]
RowVerdict = Literal["pass", "fail", "error", "record", "inconclusive", "skip"]
# a whole run: error when input did not load, inconclusive when a report cannot be judged
RunVerdict = Literal["pass", "fail", "error", "inconclusive"]
# the loosening guard: nothing loosened without a reason, a loosening, or it could not compare
GuardVerdict = Literal["pass", "fail", "error"]

# The verdicts that fail a run: a count over its ceiling, a check that could not be made,
# a run that cannot be judged (not a regression: the command's exit code tells them apart).
FAILING: frozenset[Verdict] = frozenset({"fail", "error", "inconclusive"})


# The run's verdict: the first case that holds, in this order; none holds: "pass". A
# report that did not load or a guard that could not compare leaves the run unjudged
# (error) whatever else happened; a regression or a loosening (fail) outranks a report
# that cannot be judged, which is only the run's verdict when nothing else failed.
RUN_CASES: tuple[tuple[str, RunVerdict], ...] = (
    ("not_loaded", "error"),  # reports that did not load: their counts are unknown
    ("guard_error", "error"),  # the guard could not compare with its ref
    ("failed", "fail"),  # items over their ceiling, or a check that could not be made
    ("guard_failed", "fail"),  # something loosened without a reason
    ("inconclusive", "inconclusive"),  # reports that cannot be judged
)


# Each run verdict's exit code, for every front end that exits (the failgate command, the
# CI step, watch): stated here beside the verdicts, not in one front end the others import.
EXIT_PASS, EXIT_FAIL, EXIT_INPUT, EXIT_INCONCLUSIVE = 0, 1, 2, 3
EXIT: dict[RunVerdict, int] = {"pass": EXIT_PASS, "fail": EXIT_FAIL, "error": EXIT_INPUT,
                               "inconclusive": EXIT_INCONCLUSIVE}


def run_verdict(facts: Mapping[str, int]) -> RunVerdict:
    """The run's verdict from its facts (each a count, 0 when it does not hold), by the
    one table every front end and output renders (``RUN_CASES``)."""
    return next((verdict for fact, verdict in RUN_CASES if facts.get(fact)), "pass")
