"""What each command returns: records every front end renders or returns as they are.

``check`` returns the core's ``GateResult`` (the document ``--json`` writes, with its
top-level ``verdict``); the other commands' results are here. The CLI prints them, the
MCP server returns them as structured content: one computation, two renderings.
"""

from __future__ import annotations

from typing import Literal

from ..core.base.analysis import ReportAnalysis  # noqa: TC001 (pydantic reads the annotations)
from ..core.base.classes import dataclass
from ..core.base.records import Record, described
from ..core.base.result import GateResult, GuardResultModel

__all__ = [
    "AnalyzeResult",
    "Band",
    "CategoryDiff",
    "DiffResult",
    "GuardResultModel",
    "HistoryResult",
    "HistoryRun",
    "InitResult",
    "NoiseBandsResult",
    "RatchetResult",
    "ReportDiff",
    "ShowResult",
    "ShownCategory",
    "ShownReport",
    "SqlResult",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class InitResult(Record):
    """``init``: the gate run that recorded the counts, and what was written."""

    result: GateResult
    lines: list[str] = described(text="what was written, or why not")
    written: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class RatchetResult(Record):
    """``ratchet``: the gate run, and what was lowered (or why nothing was)."""

    result: GateResult
    lines: list[str] = described(text="what was lowered, or why nothing was")
    written: bool = described(text="the ceilings file was rewritten")


@dataclass(frozen=True, slots=True, kw_only=True)
class ShownCategory(Record):
    name: str
    count: int
    ceiling: str | None = described(default=None, text="as written, when a gate ran")
    headroom: int | None = None
    first_cases: list[str] = described(text="the first case ids in the category")


@dataclass(frozen=True, slots=True, kw_only=True)
class ShownReport(Record):
    name: str
    error: str | None = None
    kind: Literal["cases", "aggregate"] | None = None
    n_cases: int | None = None
    failed: int | None = None
    taxonomy: str | None = described(default=None, text="the taxonomy that classified it")
    categories: list[ShownCategory] = described(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class ShowResult(Record):
    """``show``: each report's count per category (with its ceiling when a gate ran)."""

    reports: list[ShownReport]
    skipped: list[str]
    gated: bool = described(text="the ceilings file's gate ran (ceilings, headroom)")


@dataclass(frozen=True, slots=True, kw_only=True)
class CategoryDiff(Record):
    category: str
    base_count: int
    count: int
    new: list[str] = described(text="paired cases that entered the category")
    fixed: list[str] = described(text="paired cases that left it")
    n_new: int
    n_fixed: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportDiff(Record):
    name: str
    taxonomy: str
    paired: bool = described(text="false for aggregates: counts only")
    n_both: int
    changes: list[CategoryDiff]
    only_base: list[str]
    only_candidate: list[str]
    n_only_base: int
    n_only_candidate: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffResult(Record):
    """``diff``: per report and category, the cases that entered and left it."""

    reports: list[ReportDiff]
    only_base: list[str] = described(text="reports only in the baseline")
    only_candidate: list[str] = described(text="reports only in the candidate")


@dataclass(frozen=True, slots=True, kw_only=True)
class Band(Record):
    """A count's (or a metric's) spread over the repeated runs."""

    min: int | float
    max: int | float
    std: float


@dataclass(frozen=True, slots=True, kw_only=True)
class NoiseBandsResult(Record):
    """``noise``: the bands measured from repeated runs, as written to ``out``."""

    out: str
    n_runs: int
    bands: dict[str, Band] = described(text="each category's count, and correct cases")
    metric_bands: dict[str, Band]
    unstable_cases: list[str]
    document: dict[str, object] = described(text="the noise_band.json document")
    warnings: list[str] = described(default_factory=list, text=(
        "what the band cannot see (its runs all ran within one day: no day-to-day drift)"))


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryRun(Record):
    """One run of the history: its label and its count per category."""

    label: str
    counts: dict[str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryResult(Record):
    """``history``: counts per category over a folder of runs."""

    taxonomy: str
    categories: list[str] = described(text="the taxonomy's categories, in order")
    charted: list[str] = described(text="those worth a line: ever non-zero, total first")
    points: list[HistoryRun]
    ceilings: dict[str, int] = described(text="the default ceilings, when a file exists")


@dataclass(frozen=True, slots=True, kw_only=True)
class AnalyzeResult(Record):
    """``analyze``: one run's diagnosis, per report."""

    reports: list[ReportAnalysis]


@dataclass(frozen=True, slots=True, kw_only=True)
class SqlResult(Record):
    """``sql``: the gate as one SQL query."""

    dialect: str
    table: str
    sql: str
