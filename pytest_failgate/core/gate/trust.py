"""How far to trust the judge, per labelled report: its figures as the result carries them.

The figures are computed in ``stats.agreement`` from the report's labelled cases, each
the judge's category (the report's own classification) against its gold label; this
turns them into the record every output renders (``JudgeAgreement``), once, in the core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.result import ClassAgreementResult, JudgeAgreement, ShareResult
from ..stats.agreement import CONFIDENCE, PASS, TRUST_LEVEL, agreement

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..compare.labels import Label
    from ..reports.model import Report
    from ..stats.agreement import Share


def judge_agreement(report: Report, labels: Sequence[Label]) -> JudgeAgreement | None:
    """The judge's figures over ``labels`` (the report's usable ones); None when there are
    none, or the report does not keep every case's category (a SQL engine keeps the first
    ids of each: the correction says so)."""
    if not labels:
        return None
    categories = report.taxonomy.category_names
    judged: dict[str, str] = {}
    for category in categories:
        ids = report.case_ids(category)
        if len(ids) != report.counts.get(category, 0):
            return None
        judged.update((case, category) for case in ids)
    passing = PASS if PASS not in categories else f"({PASS})"  # a category may be "pass"
    figures = agreement(((judged.get(label.id), label.category) for label in labels),
                        categories, passing)
    kappa = figures.kappa
    return JudgeAgreement(
        labelled=figures.labelled, agreed=figures.agreed, classes=list(figures.classes),
        matrix=[list(row) for row in figures.matrix],
        kappa=None if kappa is None else float(kappa),
        kappa_exact=None if kappa is None else f"{kappa.numerator}/{kappa.denominator}",
        confidence=float(CONFIDENCE), trust_level=float(TRUST_LEVEL),
        categories=[ClassAgreementResult(
            name=one.name, judged=one.judged, gold=one.gold, agreed=one.agreed,
            precision=_share(one.precision), recall=_share(one.recall), trust=one.trust)
            for one in figures.per_class])


def _share(found: Share | None) -> ShareResult | None:
    if found is None:
        return None
    return ShareResult(hits=found.hits, of=found.of, value=float(found.value),
                       interval=[found.lower, found.upper])
