"""What each command returns: pydantic models every front end renders or returns as they are.

``check`` returns the core's ``GateResult`` (the document ``--json`` writes, with its
top-level ``verdict``); the other commands' results are here. The CLI prints them, the
MCP server returns them as structured content: one computation, two renderings.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..core.base.result import GateResult, GuardResultModel, ReportAnalysis

__all__ = [
    "AnalyzeResult",
    "Band",
    "CategoryDiff",
    "DiffResult",
    "GuardResultModel",
    "HistoryPoint",
    "HistoryResult",
    "InitResult",
    "NoiseResult",
    "RatchetResult",
    "ReportDiff",
    "ShowResult",
    "ShownCategory",
    "ShownReport",
    "SqlResult",
]


class _Model(BaseModel):
    # built when first used: a command builds its own result's validator, not every one's
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class InitResult(_Model):
    """``init``: the gate run that recorded the counts, and what was written."""

    result: GateResult
    lines: list[str] = Field(description="what was written, or why not")
    written: bool


class RatchetResult(_Model):
    """``ratchet``: the gate run, and what was lowered (or why nothing was)."""

    result: GateResult
    lines: list[str] = Field(description="what was lowered, or why nothing was")
    written: bool = Field(description="the ceilings file was rewritten")


class ShownCategory(_Model):
    name: str
    count: int
    ceiling: str | None = Field(default=None, description="as written, when a gate ran")
    headroom: int | None = None
    first_cases: list[str] = Field(description="the first case ids in the category")


class ShownReport(_Model):
    name: str
    error: str | None = None
    kind: Literal["cases", "aggregate"] | None = None
    n_cases: int | None = None
    failed: int | None = None
    taxonomy: str | None = Field(default=None, description="the taxonomy that classified it")
    categories: list[ShownCategory] = []


class ShowResult(_Model):
    """``show``: each report's count per category (with its ceiling when a gate ran)."""

    reports: list[ShownReport]
    skipped: list[str]
    gated: bool = Field(description="the ceilings file's gate ran (ceilings, headroom)")


class CategoryDiff(_Model):
    category: str
    base_count: int
    count: int
    new: list[str] = Field(description="paired cases that entered the category")
    fixed: list[str] = Field(description="paired cases that left it")
    n_new: int
    n_fixed: int


class ReportDiff(_Model):
    name: str
    taxonomy: str
    paired: bool = Field(description="false for aggregates: counts only")
    n_both: int
    changes: list[CategoryDiff]
    only_base: list[str]
    only_candidate: list[str]
    n_only_base: int
    n_only_candidate: int


class DiffResult(_Model):
    """``diff``: per report and category, the cases that entered and left it."""

    reports: list[ReportDiff]
    only_base: list[str] = Field(description="reports only in the baseline")
    only_candidate: list[str] = Field(description="reports only in the candidate")


class Band(_Model):
    """A count's (or a metric's) spread over the repeated runs."""

    min: int | float
    max: int | float
    std: float


class NoiseResult(_Model):
    """``noise``: the bands measured from repeated runs, as written to ``out``."""

    out: str
    n_runs: int
    bands: dict[str, Band] = Field(description="each category's count, and correct cases")
    metric_bands: dict[str, Band]
    unstable_cases: list[str]
    document: dict[str, object] = Field(description="the noise_band.json document")
    warnings: list[str] = Field(default=[], description=(
        "what the band cannot see (its runs all ran within one day: no day-to-day drift)"))


class HistoryPoint(_Model):
    label: str
    counts: dict[str, int]


class HistoryResult(_Model):
    """``history``: counts per category over a folder of runs."""

    taxonomy: str
    categories: list[str] = Field(description="the taxonomy's categories, in order")
    charted: list[str] = Field(description="those worth a line: ever non-zero, total first")
    points: list[HistoryPoint]
    ceilings: dict[str, int] = Field(description="the default ceilings, when a file exists")


class AnalyzeResult(_Model):
    """``analyze``: one run's diagnosis, per report."""

    reports: list[ReportAnalysis]


class SqlResult(_Model):
    """``sql``: the gate as one SQL query."""

    dialect: str
    table: str
    sql: str
