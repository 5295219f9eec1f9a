"""One run, no baseline: where it fails, and what to look at first.

For each report: failures by the taxonomy's ``stage`` (retrieval, generation, ...)
and the bottleneck stage (the one with the most failed cases); the weakest slices
(the values of a slice field such as ``slice`` or ``query_type``, by failure rate,
each with its exact Clopper-Pearson 95% interval, so a 3-of-4 slice is not taken
for more than it is); the taxonomy's metrics over the cases where they apply
(docs/design.md: never over the others); and an ordered list of what to look at first:
the categories by count, each with its stage, the taxonomy's hint, the settings its
catalogue says usually move it, and the slice where it is most frequent. All of it
is counting and rules; nothing is generated, and it claims no improvement: the
operator changes something and the baseline comparison checks the result.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from ..base.analysis import MetricSummary, Priority, ReportAnalysis, SliceWeakness, StageCount
from ..base.errors import FailgateError
from ..stats.intervals import exact_interval
from ..taxonomy.expr import ExprError, compile_expr

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..reports.model import Report
    from ..taxonomy import Taxonomy
    from ..taxonomy.expr import Compiled

# Slice fields analysed by default: the regression gate's `slice`, the rag taxonomy's `query_type`.
DEFAULT_SLICES = ("slice", "query_type")
WEAKEST = 5
UNSTAGED = "unstaged"


def analysis_slicers(fields: Sequence[str]) -> dict[str, Compiled]:
    """The slice fields to read, as the rule language reads a field; one that is not an
    expression is a ``FailgateError`` naming it."""
    slicers = {}
    for field in fields:
        try:
            slicers[field] = compile_expr(field)
        except ExprError as exc:
            raise FailgateError(f"slice {field!r} is not a field or an expression: "
                                f"{exc.message} (at column {exc.col})") from None
    return slicers


def _stages(report: Report, taxonomy: Taxonomy) -> list[StageCount]:
    found: dict[str, list[str]] = {}
    for name in taxonomy.category_names:
        rule = taxonomy.category(name)
        stage = rule.stage if rule is not None and rule.stage else UNSTAGED
        found.setdefault(stage, []).append(name)
    stages = [StageCount(stage=stage, count=sum(report.counts.get(n, 0) for n in names),
                         categories=names) for stage, names in found.items()]
    return sorted(stages, key=lambda s: -s.count)  # stable: taxonomy order on ties


def _slices(report: Report, fields: Sequence[str]) -> list[SliceWeakness]:
    if report.tally is None:
        return []
    weak = []
    for field in fields:
        for value, cases in report.tally.slices.get(field, {}).items():
            if value in ("None", "null") or not cases.n_cases:
                continue
            counts = cases.counts
            failed = sum(counts.values())
            top = max(counts, key=lambda c: counts[c]) if failed else None
            weak.append(SliceWeakness(
                field=field, value=value, n_cases=cases.n_cases, failed=failed,
                rate=failed / cases.n_cases,
                interval=list(exact_interval(failed, cases.n_cases)), top_category=top))
    return sorted(weak, key=lambda s: (-Fraction(s.failed, s.n_cases), -s.n_cases))


def _metrics(report: Report, taxonomy: Taxonomy) -> list[MetricSummary]:
    summaries = []
    for metric in taxonomy.metrics:
        values = report.case_metrics.get(metric.name, {})
        n = len(values)
        if not n:  # not applicable: no case where it applies (never a vacuous 1.0)
            summaries.append(MetricSummary(name=metric.name, value=None, n=0, interval=None,
                                           better=metric.better))
            continue
        total = sum(values.values())
        binary = all(v in (0.0, 1.0) for v in values.values())
        summaries.append(MetricSummary(
            name=metric.name, value=total / n, n=n, better=metric.better,
            interval=list(exact_interval(int(total), n)) if binary else None))
    return summaries


def _priorities(report: Report, taxonomy: Taxonomy, slices: Sequence[SliceWeakness]
                ) -> list[Priority]:
    failed = report.failed or 0
    ranked = sorted((name for name in taxonomy.category_names if report.counts.get(name)),
                    key=lambda name: -report.counts[name])
    priorities = []
    for rank, name in enumerate(ranked, start=1):
        rule = taxonomy.category(name)
        where = None
        if report.tally is not None:
            best = None
            for weak in slices:
                cases = report.tally.slices[weak.field][weak.value]
                share = Fraction(cases.counts.get(name, 0), cases.n_cases)
                if cases.counts.get(name) and (best is None or share > best[0]):
                    best = (share, f"{weak.field}={weak.value} ({cases.counts[name]} of "
                                   f"{cases.n_cases})")
            where = best[1] if best is not None else None
        priorities.append(Priority(
            rank=rank, category=name, count=report.counts[name], share=report.counts[name] / failed,
            stage=rule.stage if rule is not None else None,
            hint=rule.hint if rule is not None else None,
            settings=list(rule.settings) if rule is not None else [], where=where))
    return priorities


def analyze_report(report: Report, taxonomy: Taxonomy,
                   slice_fields: Sequence[str] = DEFAULT_SLICES) -> ReportAnalysis:
    """The single-run diagnosis of one report (see the module docstring)."""
    stages = _stages(report, taxonomy)
    slices = _slices(report, slice_fields)
    bottleneck = stages[0].stage if stages and stages[0].count else None
    return ReportAnalysis(
        report=report.name, taxonomy=taxonomy.name, n_cases=report.n_cases,
        failed=report.failed or 0, stages=stages, bottleneck=bottleneck, slices=slices[:WEAKEST],
        metrics=_metrics(report, taxonomy),
        priorities=_priorities(report, taxonomy, slices[:WEAKEST]))
