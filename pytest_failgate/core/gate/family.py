"""One false-alarm budget for every test a run makes: Holm over the run's items.

Reports that cannot be judged (``core.gate.inconclusive``) take no part. Where significance
decides (a count over a ``max_rate`` with a significance level, each
category and metric against a baseline run), the run's tests are decided together:
Holm's procedure (:mod:`.compare.holm`) at the run's budget, the ceilings file's
``significance`` (default 0.05), so that an unchanged system raises a false alarm in
at most that share of runs, however many reports and categories it has. A rate
ceiling's own ``significance`` stays a further limit on its own test. With a single
test this is the plain test at the budget, as before.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.formatting import format_number, plural
from ..ceilings.check import settle
from ..stats.holm import holm

if TYPE_CHECKING:
    from collections.abc import Sequence
    from fractions import Fraction

    from ..compare.baseline import BaselineRun
    from .checked import ReportGate


@dataclass(frozen=True)
class Family:
    """The run's tests, decided together."""

    budget: Fraction
    tests: int
    rejected: int

    def describe(self) -> str:
        return (f"significance: {plural(self.tests, 'test')} that could be significant, "
                "decided together (Holm): a false alarm in at most "
                f"{format_number(self.budget * 100)}% of runs; {self.rejected} significant")

    def phrase(self) -> str:
        """How one test's decision was made, for its message."""
        return (f"Holm over the run's {self.tests} tests that could be significant, at "
                f"{format_number(self.budget)}")


def decide(gated: Sequence[ReportGate], baseline: BaselineRun | None, budget: Fraction
           ) -> tuple[BaselineRun | None, Family | None]:
    """Settle every significance decision of the run together (checks in place).

    Returns the baseline with its tests decided, and the family (None: no test).
    """
    rates = [(report_gate, index) for report_gate in gated if report_gate.inconclusive is None
             for index, check in enumerate(report_gate.checks) if check.test is not None]
    unjudged = {g.report.name for g in gated if g.inconclusive is not None and g.report}
    paired = [(key, tail) for key, tail in (baseline.tests() if baseline is not None else [])
              if key[0] not in unjudged]
    tests = [report_gate.checks[index].test for report_gate, index in rates]
    tests += [tail for _, tail in paired]
    if not tests:
        return baseline, None
    rejected, counted = holm([test for test in tests if test is not None], budget)
    family = Family(budget, counted, sum(rejected))
    phrase = family.phrase() if counted > 1 else ""
    for (report_gate, index), significant in zip(rates, rejected, strict=False):
        check = report_gate.checks[index]
        assert check.test is not None
        assert check.level is not None
        own = significant and check.test.at_most(check.level)  # the entry's own level too
        report_gate.checks[index] = settle(check, own, phrase)
    decided = {key: significant for (key, _), significant
               in zip(paired, rejected[len(rates):], strict=True)}
    if baseline is not None:
        baseline = replace(baseline, decided=decided, family=phrase)
    return baseline, family
