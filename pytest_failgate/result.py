"""The outcome of a gate run as plain, serialisable data.

Both adapters work from this one model: the pytest plugin builds items from it,
prints its summary from it (on the xdist controller, from the copy a worker
sends back) and rewrites the ceilings file from its plan; the CLI prints it.
That is how the two give identical numbers.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

RowKind = Literal["category", "total", "consistency"]
RowVerdict = Literal["pass", "fail", "error", "record"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Row(_Model):
    """One gate item: a category, the total, or a report's consistency check."""

    report: str
    name: str
    kind: RowKind
    count: int | None
    allowed: int | None
    ceiling: str
    source: str | None
    verdict: RowVerdict
    slack: bool = False
    message: str = ""

    @property
    def headroom(self) -> int | None:
        if self.count is None or self.allowed is None:
            return None
        return self.allowed - self.count


class ReportResult(_Model):
    name: str
    path: str
    kind: Literal["cases", "aggregate"] | None
    n_cases: int | None
    failed: int | None
    error: str | None = None
    rows: list[Row] = []
    warnings: list[str] = []


class LoweringResult(_Model):
    label: str
    start: int
    end: int
    new_text: str
    description: str
    governs: list[tuple[str, str]]  # the (report, name) items whose counts set it


class GateResult(_Model):
    ceilings_path: str
    ceilings_sha256: str | None
    taxonomy: str
    mode: Literal["gate", "strict", "ratchet", "init"]
    reports: list[ReportResult]
    skipped: list[str]
    warnings: list[str]
    lowerings: list[LoweringResult]
    init_text: str | None = None

    @property
    def rows(self) -> list[Row]:
        return [row for report in self.reports for row in report.rows]

    @property
    def load_errors(self) -> list[str]:
        return [report.error for report in self.reports if report.error is not None]
