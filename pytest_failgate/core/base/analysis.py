"""``failgate analyze``'s records: one report's failures by stage, its weakest slices, its
metrics and what to look at first.

Apart from ``result.py`` because they are a diagnosis beside the gate, not the gate's items;
``GateResult.analysis`` holds them when the analyze setting asks.
"""

from __future__ import annotations

from typing import Literal

from .classes import dataclass
from .records import Record, described


@dataclass(frozen=True, slots=True, kw_only=True)
class StageCount(Record):
    """Failed cases whose category belongs to one pipeline stage."""

    stage: str
    count: int
    categories: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class SliceWeakness(Record):
    """A slice's failure rate with its exact (Clopper-Pearson) 95% interval."""

    field: str
    value: str
    n_cases: int
    failed: int
    rate: float
    interval: list[float]
    top_category: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricSummary(Record):
    """A taxonomy metric's mean over the cases where it applies (None: it applies to none)."""

    name: str
    value: float | None
    n: int
    better: Literal["higher", "lower"]
    interval: list[float] | None = described(default=None, text=(
        "exact 95% interval, for a true/false metric"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Priority(Record):
    """One entry of what to look at first: a category, by count, with the taxonomy's hint."""

    rank: int
    category: str
    count: int
    share: float = described(text="of the report's failed cases")
    stage: str | None
    hint: str | None
    settings: list[str] = described(default_factory=list, text="settings that usually move it")
    where: str | None = described(default=None, text="the slice where it is most frequent")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportAnalysis(Record):
    """``failgate analyze``: one report's failures by stage, weakest slices, priorities."""

    report: str
    taxonomy: str
    n_cases: int | None
    failed: int
    stages: list[StageCount]
    bottleneck: str | None = described(text="the stage with the most failed cases")
    slices: list[SliceWeakness] = described(text="the weakest slices, worst first")
    metrics: list[MetricSummary]
    priorities: list[Priority]
