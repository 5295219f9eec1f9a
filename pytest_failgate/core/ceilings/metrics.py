"""Metric floors with conditional semantics (docs/design.md).

A quality metric is measured only where it applies: a case whose value is null is
left out of the numerator *and* the denominator, and ``effective_n`` says how many
cases the mean is over. A mean over no case is not applicable, which for a floor
is an error, never a pass. A non-substantive case (one that did not answer, per
the taxonomy's ``substantive`` rule) carrying 1.0 is the vacuous-truth trap
docs/design.md describes: it inflates the mean of pipelines that abstain more, so the floor
fails until the report stops doing it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.formatting import format_number, plural
from ..stats.intervals import wilson_interval

if TYPE_CHECKING:
    from ..base.verdict import CheckVerdict
    from ..reports.model import Report
    from .model import MetricFloor



@dataclass(frozen=True)
class MetricCheck:
    """A report's metric against its floor, before any wording."""

    report: Report
    name: str
    floor: MetricFloor
    line: int
    verdict: CheckVerdict
    mean: Fraction | None = None
    effective_n: int | None = None
    vacuous: int = 0
    problem: str = ""
    recorded: bool = False  # taken from an aggregate's recorded value, not recomputed

    @property
    def interval(self) -> tuple[float, float] | None:
        if self.mean is None or not self.effective_n:
            return None
        if not 0 <= self.mean <= 1:
            return None  # a Wilson interval is for proportions
        return wilson_interval(self.mean * self.effective_n, self.effective_n)


def evaluate_metric(report: Report, name: str, floor: MetricFloor, line: int) -> MetricCheck:
    """The verdict for one metric floor on one report (exact: sum >= min * n)."""
    if report.tally is None:
        return _recorded(report, name, floor, line)
    tally = report.tally.metrics[name]
    n = tally.n_values

    def check(verdict: CheckVerdict, problem: str = "") -> MetricCheck:
        return MetricCheck(report, name, floor, line, verdict, tally.mean, n, tally.vacuous,
                           problem)

    if n == 0:
        return check("error", f"not applicable: none of the {report.n_cases} cases has a "
                              f"value for {name}, so there is no mean to hold to a floor")
    if floor.min_n is not None and n < floor.min_n:
        return check("error", f"only {plural(n, 'case')} with a value for {name}; the floor "
                              f"needs at least min_n {floor.min_n}")
    if tally.vacuous:
        return check("fail", f"{plural(tally.vacuous, 'case')} that did not answer "
                             f"substantively carry {name} = 1.0, which inflates the mean "
                             "(a vacuous truth: a non-answer counted as a success); such "
                             "cases should carry null")
    return check("pass" if tally.total >= floor.min * n else "fail")


def _recorded(report: Report, name: str, floor: MetricFloor, line: int) -> MetricCheck:
    value = report.recorded.get(name)
    ci = report.recorded.get("ci")
    n: Any = ci.get(name, {}).get("n") if isinstance(ci, dict) else None
    n = n if type(n) is int else None
    if type(value) not in (int, float):
        return MetricCheck(report, name, floor, line, "error",
                           problem=f"this aggregate records no {name} to hold to a floor")
    mean = Fraction(repr(value))
    if n == 0:
        return MetricCheck(report, name, floor, line, "error", mean, 0, recorded=True,
                           problem=f"not applicable: the aggregate measured {name} over 0 cases")
    if floor.min_n is not None and (n is None or n < floor.min_n):
        return MetricCheck(report, name, floor, line, "error", mean, n, recorded=True,
                           problem=f"the aggregate does not show min_n {floor.min_n} cases "
                                   f"for {name} (ci.{name}.n is {n})")
    return MetricCheck(report, name, floor, line, "pass" if mean >= floor.min else "fail", mean,
                       n, recorded=True)


def metric_message(check: MetricCheck, source: str) -> str:
    """The text of a failing metric item."""
    label = f"metric:{check.name}"
    floor = format_number(check.floor.min)
    if check.verdict == "error":
        return f"{label}: cannot be checked: {check.problem}\n  floor    min {floor} at {source}"
    lines = [f"{label}: " + (check.problem or
                             f"mean {float(check.mean or 0):.4g} is below the floor {floor}")]
    if check.effective_n is not None:
        of = ("" if check.recorded else f" of {check.report.n_cases} cases; the rest have "
              "no value (not applicable)")
        lines.append(f"  measured over {check.effective_n} cases{of}")
    interval = check.interval
    if interval is not None:
        lines.append(f"  interval 95% Wilson {interval[0]:.3f} to {interval[1]:.3f}")
    lines.append(f"  floor    min {floor} at {source}")
    if check.recorded:
        lines.append("  report   recorded value, not recomputed from cases")
    return "\n".join(lines)
