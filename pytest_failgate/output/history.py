"""Counts per category over a series of runs, for ``failgate history`` and the reports.

A history folder holds one entry per run, in name order (dated names sort in time):
a report file (``2026-05-19.aggregate.json``), or a folder of one run's reports,
whose counts are added up. The chart itself is ``history_chart``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.base.errors import FailgateError
from ..core.gate.runner import load_run_or_raise, run_counts
from ..core.reports.choice import TaxonomyChoice
from ..core.reports.discover import REPORT_SUFFIXES
from .chart import HistoryPoint, render_history_svg
from .markdown import code_span, plain_text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from ..core.reports.read import ReadSpec
    from ..core.taxonomy import Taxonomy

from ..core.taxonomy.model import TOTAL


def load_history(folder: Path, taxonomy: Taxonomy, spec: ReadSpec | None = None
                 ) -> list[HistoryPoint]:
    """One point per run in ``folder``, oldest (first by name) first, every report of it
    classified by ``taxonomy``: the points count the same categories."""
    one = TaxonomyChoice.only(taxonomy)
    if not folder.is_dir():
        raise FailgateError("a history is a folder of runs (report files or folders)", folder)
    entries = sorted(p for p in folder.iterdir() if not p.name.startswith(".")
                     and (p.is_dir() or p.suffix in REPORT_SUFFIXES))
    points = []
    for entry in entries:
        reports = load_run_or_raise((entry,), one, spec)
        points.append(HistoryPoint(_label(entry), run_counts(reports, taxonomy)))
    if not points:
        raise FailgateError("the history folder holds no run (report files or folders)", folder)
    return points


def _label(entry: Path) -> str:
    name = entry.name
    for suffix in (".aggregate.json", *REPORT_SUFFIXES):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def charted(points: Sequence[HistoryPoint], categories: Sequence[str]) -> list[str]:
    """The categories worth a line: those that were ever non-zero (``total`` first)."""
    shown = [c for c in categories if any(p.counts.get(c, 0) for p in points)]
    return [TOTAL, *shown] if any(p.counts.get(TOTAL, 0) for p in points) else shown


def history_svg(points: Sequence[HistoryPoint], categories: Sequence[str],
                ceilings: Mapping[str, int]) -> str:
    names = charted(points, categories) or list(categories[:1])
    return render_history_svg(points, names, {c: v for c, v in ceilings.items() if c in names})


def history_table(points: Sequence[HistoryPoint], categories: Sequence[str],
                  ceilings: Mapping[str, int]) -> list[str]:
    """A Markdown table: one row per run, one column per charted category."""
    names = charted(points, categories)
    lines = ["| run | " + " | ".join(code_span(n, cell=True) for n in names) + " |",
             "|---|" + "---:|" * len(names)]
    for point in points:
        cells = [str(point.counts.get(n, "")) for n in names]
        lines.append(f"| {plain_text(point.label)} | " + " | ".join(cells) + " |")
    if any(n in ceilings for n in names):
        lines.append("| *ceiling* | " + " | ".join(str(ceilings.get(n, "")) for n in names) + " |")
    return lines
