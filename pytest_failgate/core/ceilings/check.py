"""Verdicts: each (report, name) count against the ceiling that governs it.

All comparisons are on integers; a rate ceiling is compared as the exact
fraction ``count / cases <= max_rate``, and its allowance in whole cases is
``floor(max_rate * cases)``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..taxonomy.model import TOTAL
from .limit import refuse_unhandled

if TYPE_CHECKING:
    from fractions import Fraction

    from ..base.verdict import CheckVerdict
    from ..reports.model import Report
    from ..stats.allowance import Movement
    from ..stats.binomial import TailProbability
    from ..stats.ppi import Corrected
    from .load import Entry
from ..stats.binomial import binomial_upper_tail

# The limit keys the check decides about: max and max_rate through ``Limit.allows``,
# significance by the exact test below, per by the population the caller counted in,
# observed and allowance as the parts of max.
# true_max: the labelled gate's (``core.gate.corrected``), which reads it from the entry
CHECKED = frozenset({"max", "max_rate", "significance", "per", "observed", "allowance",
                     "true_max"})


@dataclass(frozen=True)
class Check:
    """One gate item's numbers and verdict, before any wording."""

    report: Report
    name: str
    count: int
    entry: Entry | None
    verdict: CheckVerdict
    limit: int | None  # the most cases the ceiling allows here (None when undecidable)
    problem: str = ""  # why the verdict is "error"
    n_cases: int | None = None  # what a rate is a fraction of: the report, slice or population
    slice: str | None = None
    population: str | None = None  # the ``per:`` expression the count was taken within
    warning: str = ""  # above the rate but not significantly so: passes, noted
    # on a noisy run: how the count moves between runs, and the allowance that keeps an
    # unchanged system under its ceiling at the run's false-alarm budget (None: exact)
    movement: Movement | None = None
    noise_allowance: int | None = None
    # the count a new noisy ceiling is set from: the band's mean with this run (None: count)
    center: int | None = None
    # over a max_rate with a significance level: the exact test, and that level (the run's
    # family of tests settles the verdict, see ``core.gate.family``)
    test: TailProbability | None = None
    level: Fraction | None = None
    # with gold labels: the true count's estimate and interval that decided the verdict
    # (``core.gate.corrected``; a verdict of "fail" is inconclusive when its interval
    # holds the limit)
    corrected: Corrected | None = None

    @property
    def is_total(self) -> bool:
        return self.name == TOTAL

    @property
    def over(self) -> int:
        return self.count - self.limit if self.limit is not None else 0


def evaluate(report: Report, name: str, count: int, entry: Entry | None,
             n_cases: int | None, slice_: str | None = None,
             population: str | None = None, significance: Fraction | None = None) -> Check:
    """The verdict for one count; a missing entry means a ceiling of 0.

    ``n_cases`` is what a ``max_rate`` is a fraction of: the report's cases, the
    slice's, or the size of the ``per:`` population the count was taken within.
    With a ``significance`` level (the ceiling's own, else the file's), a count over
    the rate fails only when it is significantly over it (an exact binomial upper
    tail at the ceiling rate); over but not significantly passes with a warning.
    """
    def check(verdict: CheckVerdict, limit: int | None, problem: str = "",
              warning: str = "") -> Check:
        return Check(report, name, count, entry, verdict, limit, problem, n_cases, slice_,
                     population, warning)

    if entry is None:
        return check("pass" if count == 0 else "fail", 0)
    ceiling = entry.ceiling
    if ceiling.max_rate is not None:
        if n_cases is None:
            return check("error", None,
                         "max_rate needs the report's case total, and this aggregate records no "
                         "num_predictions; use max, or record num_predictions")
        if n_cases == 0:
            return check("error", None,
                         f"the population `{population}` holds no case, so a rate over it "
                         "means nothing" if population else "a rate over zero cases")
    refuse_unhandled("the check (ceilings/check.py)", CHECKED)
    applied = ceiling.under(significance)  # the ceiling's own level, else the file's
    limit = applied.allows(n_cases)
    assert limit is not None  # a rate has its case total here
    if count <= limit:
        return check("pass", limit)
    alpha = applied.significance
    over_max = ceiling.max is not None and count > ceiling.max
    if ceiling.max_rate is None or alpha is None or over_max:
        return check("fail", limit)
    assert n_cases is not None
    tail = binomial_upper_tail(count, n_cases, ceiling.max_rate)
    tested = replace(check("fail", limit), test=tail, level=alpha)
    return settle(tested, tail.at_most(alpha))


def settle(check: Check, significant: bool, family: str = "") -> Check:
    """A rate check over its ceiling, once its test is decided: fail when significant,
    else pass with a warning that says why (``family``: how the run's tests shared the
    budget, when more than one test decided together)."""
    assert check.test is not None
    assert check.level is not None
    assert check.entry is not None
    if significant:
        return replace(check, verdict="fail", warning="")
    rate = check.entry.ceiling.max_rate
    assert rate is not None
    return replace(check, verdict="pass", warning=(
        f"{check.name}: {check.count} of {check.n_cases} cases is above max_rate "
        f"{float(rate):g}, but not significantly (exact binomial p = {float(check.test):.4g}"
        + (f"; {family})" if family else f" > {float(check.level):g})")))


def unmeasurable(report: Report, name: str, entry: Entry | None, problem: str,
                 slice_: str | None = None) -> Check:
    """A check that cannot be made (e.g. a population rate over an aggregate): an error."""
    return Check(report, name, 0, entry, "error", None, problem, None, slice_)


def consistency_differences(report: Report) -> list[str]:
    """How a report's recorded aggregates disagree with its recomputed cases."""
    recorded = report.recorded_counts
    differences: list[str] = []
    if recorded is not None:
        for name in report.counts:
            if name not in recorded:
                differences.append(f"{name}: not recorded, recomputed {report.counts[name]}")
            elif recorded[name] != report.counts[name]:
                differences.append(
                    f"{name}: recorded {recorded[name]}, recomputed {report.counts[name]}"
                )
        for name in recorded:
            if name not in report.counts:
                differences.append(f"{name}: recorded {recorded[name]}, not a category")
    n = report.recorded.get("num_predictions")
    if n is not None and n != report.n_cases:
        differences.append(f"num_predictions: recorded {n}, the report has {report.n_cases} cases")
    return differences
