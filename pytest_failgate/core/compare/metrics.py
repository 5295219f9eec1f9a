"""Per-case metrics against the baseline: paired by case id, tested exactly.

A taxonomy's metrics (``metrics:``) give each case a value, or null where the
metric does not apply (docs/design.md: an unanswerable case has no accuracy; it is left
out, never counted as a vacuous 1.0). Two runs are compared over the cases where
the metric applies in both: a case is *worse* when its value moved the wrong way,
*better* when it moved the right way. The test is the exact sign test on those
discordant pairs (for a true/false metric it is McNemar's exact test), and the
decline must also exceed the metric's noise band, with a floor of one case.
No resampling, no seed.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..stats.binomial import paired_increase
from .verdicts import paired_verdict

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from ..base.verdict import BaselineVerdict
    from ..taxonomy.model import CaseMetric
    from .noise import MetricBand


@dataclass(frozen=True)
class MetricChange:
    """One metric of one report, against the baseline's same cases."""

    name: str
    better: str  # "higher" or "lower"
    base_mean: Fraction | None  # over the baseline's applicable cases
    mean: Fraction | None  # over this run's applicable cases
    n_base: int
    n: int
    n_pairs: int  # cases where it applies in both runs
    worse: list[str]
    improved: list[str]
    decline: Fraction  # how far the paired sum fell, in the metric's units
    band: Fraction  # the decline it may show, in the same units (at least one case)
    p_value: float
    verdict: BaselineVerdict | None  # None: not applicable (no pair)


def _mean(values: Mapping[str, float]) -> Fraction | None:
    if not values:
        return None
    return sum((Fraction(v) for v in values.values()), Fraction(0)) / len(values)


def compare_metric(metric: CaseMetric, base: Mapping[str, float], candidate: Mapping[str, float],
                   band: MetricBand | None, alpha: Fraction,
                   exclude: Collection[str] = (), significant: bool | None = None
                   ) -> MetricChange:
    """Pair one metric's values by case id and judge the change (``significant``: the
    test's decision among the run's tests, when the run decided them together)."""
    sign = 1 if metric.better == "higher" else -1
    pairs = [(case, base[case], candidate[case]) for case in candidate
             if case in base and case not in exclude]
    worse = [case for case, b, c in pairs if sign * (c - b) < 0]
    improved = [case for case, b, c in pairs if sign * (c - b) > 0]
    decline = sum((sign * (Fraction(b) - Fraction(c)) for _, b, c in pairs), Fraction(0))
    n_pairs = len(pairs)
    width = max(Fraction(1), band.width * n_pairs) if band is not None else Fraction(1)
    verdict = (paired_verdict(len(worse), len(improved), decline, width, alpha, significant)
               if n_pairs else None)
    return MetricChange(
        metric.name, metric.better, _mean(base), _mean(candidate), len(base), len(candidate),
        n_pairs, worse, improved, decline, width,
        float(paired_increase(len(worse), len(improved))), verdict)
