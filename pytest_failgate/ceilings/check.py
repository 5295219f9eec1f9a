"""Verdicts: each (report, name) count against the ceiling that governs it.

All comparisons are on integers; a rate ceiling is compared as the exact
fraction ``count / cases <= max_rate``, and its allowance in whole cases is
``floor(max_rate * cases)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .load import TOTAL, Entry

if TYPE_CHECKING:
    from fractions import Fraction

    from ..reports.model import Report

Verdict = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class Limit:
    """What a ceiling allows for one report, in whole cases (``None``: no such limit)."""

    by_max: int | None
    by_rate: int | None

    @property
    def allowed(self) -> int:
        limits = [x for x in (self.by_max, self.by_rate) if x is not None]
        return min(limits)


@dataclass(frozen=True)
class Check:
    """One gate item's numbers and verdict, before any wording."""

    report: Report
    name: str
    count: int
    entry: Entry | None
    verdict: Verdict
    allowed: int | None  # most cases the ceiling allows here (None when undecidable)
    problem: str = ""  # why the verdict is "error"

    @property
    def is_total(self) -> bool:
        return self.name == TOTAL

    @property
    def over(self) -> int:
        return self.count - self.allowed if self.allowed is not None else 0


def rate_allowance(max_rate: Fraction, n_cases: int) -> int:
    return math.floor(max_rate * n_cases)


def evaluate(report: Report, name: str, count: int, entry: Entry | None) -> Check:
    """The verdict for one count; a missing entry means a ceiling of 0."""
    if entry is None:
        verdict: Verdict = "pass" if count == 0 else "fail"
        return Check(report, name, count, None, verdict, 0)
    ceiling = entry.ceiling
    by_rate = None
    if ceiling.max_rate is not None:
        if report.n_cases is None:
            return Check(
                report, name, count, entry, "error", None,
                "max_rate needs the report's case total, and this aggregate records no "
                "num_predictions; use max, or record num_predictions",
            )
        by_rate = rate_allowance(ceiling.max_rate, report.n_cases)
    limit = Limit(ceiling.max, by_rate)
    allowed = limit.allowed
    return Check(report, name, count, entry, "pass" if count <= allowed else "fail", allowed)


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
