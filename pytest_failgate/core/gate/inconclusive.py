"""Inconclusive runs: not a pass, not a regression.

A case that failed because a provider errored, a quota or rate limit ran out, a judge's
output could not be parsed or a score is missing says nothing about the system under
test; each format's taxonomy marks such categories ``outside: true`` (promptfoo's
``provider_error``, ``failureReason`` 2; Inspect's sample ``error`` and ``unscored``;
DeepEval's ``metric_error``; karenina's retry group and ``parsing``; ...). A few are
tolerated, as their categories' ceilings say. Beyond that a report cannot be judged,
and it is **inconclusive** when

- its run did not finish: the reader saw it crash or be cancelled (Inspect's ``status``);
- a category of such cases (or a group of only such categories) is over its ceiling; or
- more than the ceilings file's ``inconclusive`` share of its cases (default 1/4) failed
  outside the system under test, whatever their ceilings say (``init`` has none yet).

Its items are not judged (``skip``), one ``inconclusive`` item names the cause and the
count, ``init`` and the ratchet record nothing from the run, and the ``failgate``
command exits 3. A baseline comparison whose measuring instrument changed is
inconclusive too (see ``compare.instrument``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.formatting import format_number, plural
from ..ceilings.model import DEFAULT_SHARE
from ..taxonomy.model import TOTAL

if TYPE_CHECKING:
    from collections.abc import Sequence
    from fractions import Fraction

    from ..ceilings.check import Check
    from ..reports.model import Report
    from ..taxonomy import Taxonomy


UNFINISHED = "the run did not finish"  # the cause of a run its reader saw stop part way
FIX = "fix what failed (the provider, the quota, the judge) and run the evaluation again"
RECORDS_NOTHING = "init and the ratchet record nothing from this run"
NEXT = f"{FIX}; {RECORDS_NOTHING}"  # the next step, in no tool's words


@dataclass(frozen=True)
class Inconclusive:
    """Why a report cannot be judged: the cause in a few words, the sentence, the count."""

    cause: str  # "outside the system under test", "the run did not finish", ...
    text: str
    count: int | None = None  # the cases that failed outside the system under test
    next: str = NEXT


def outside_counts(report: Report, taxonomy: Taxonomy) -> dict[str, int]:
    """The report's cases per category that failed outside the system under test."""
    return {name: report.counts[name] for name in taxonomy.outside
            if report.counts.get(name)}


def _is_outside(name: str, taxonomy: Taxonomy) -> bool:
    """A category marked ``outside``, or a group all of whose categories are (karenina's
    ``retry``); never ``total``."""
    if name == TOTAL:
        return False
    members = taxonomy.members(name)
    return bool(members) and all(member in taxonomy.outside for member in members)


def judge(report: Report, taxonomy: Taxonomy, checks: Sequence[Check],
          share: Fraction | None) -> Inconclusive | None:
    """Whether a report is inconclusive (None: it can be judged)."""
    outside = outside_counts(report, taxonomy)
    count = sum(outside.values())
    parts = ", ".join(f"{name} {n}" for name, n in outside.items())
    cases = (f"{count} of {plural(report.n_cases, 'case')}" if report.n_cases is not None
             else plural(count, "case"))
    failed_outside = (f"{cases} failed outside the system under test ({parts})"
                      if count else "")
    if report.interrupted is not None:
        text = f"the run did not finish: {report.interrupted}"
        return Inconclusive(UNFINISHED,
                            text + (f"; {failed_outside}" if failed_outside else ""), count)
    over = [c for c in checks if c.slice is None and c.verdict == "fail" and c.limit is not None
            and c.count and _is_outside(c.name, taxonomy)]
    if over:
        limits = ", ".join(f"{c.name} {c.count} > its ceiling {c.limit}" for c in over)
        return Inconclusive("outside the system under test",
                            f"{failed_outside}: {limits}", count)
    limit = DEFAULT_SHARE if share is None else share
    if count and report.n_cases and count > limit * report.n_cases:
        return Inconclusive("outside the system under test",
                            f"{failed_outside}: more than the {format_number(limit * 100)}% "
                            "of its cases the ceilings file allows (inconclusive:)", count)
    return None


def message(report: str, why: Inconclusive) -> str:
    """The failing ``inconclusive`` item's text."""
    return "\n".join([
        f"{report}: inconclusive, {why.cause}: not a pass, not a regression",
        f"  cause    {why.text}",
        "  items    not judged: the counts of this run say nothing about the system",
        f"  next     {why.next}",
    ])
