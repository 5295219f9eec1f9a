"""The terminal summary: one table per report, warnings, and the closing ratchet line.

Free of pytest, so the plugin and the CLI print the same thing. It only reads the
``GateResult``: the verdicts and the items' messages are decided in the core
(``core/rows.py``, ``core/messages.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.formatting import plural, report_heading

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..core.result import GateResult, ReportResult


def headroom_text(headroom: int | None) -> str:
    """``+3``, ``-2`` or ``0``; empty when there is none (consistency checks)."""
    if headroom is None:
        return ""
    return f"{headroom:+d}" if headroom else "0"


def ratchet_status(result: GateResult, command: str) -> str | None:
    """The closing line of a gate run about ratcheting, or ``None`` when it has none.

    Nothing is claimed while a report did not load (its counts are unknown), nor
    beside failing items (their counts are above their ceilings, not at them).
    """
    if result.mode not in ("gate", "strict") or result.ceilings_sha256 is None:
        return None
    if result.load_errors:
        return (f"ratchet: not assessed while {plural(len(result.load_errors), 'report')} "
                "did not load")
    if result.lowerings:
        return (f"ratchet: {plural(len(result.lowerings), 'ceiling')} can be lowered; "
                f"run `{command}` and commit {result.ceilings_path}")
    over = [row for row in result.rows if row.verdict in ("fail", "error") and not row.slack]
    if over:  # a count above its ceiling is not "at its count"
        return None
    return "ratchet: every ceiling is at its count"


def summary_lines(result: GateResult, outcomes: Mapping[tuple[str, str, str], str]
                  ) -> list[str]:
    """The terminal summary: one table per report, then warnings and what a ratchet would do.

    ``outcomes`` maps (report, name) to how the item ended in this run ("passed",
    "failed", "skipped"); items that did not run show "not run".
    """
    n_reports = len(result.reports)
    cases = sum(r.n_cases or 0 for r in result.reports)
    source = (f"ceilings {result.ceilings_path}" if result.ceilings_sha256 is not None
              or result.mode == "init" else "baseline comparison (no ceilings file)")
    lines = [
        f"{source}, taxonomy {result.taxonomy}, "
        f"{plural(n_reports, 'report')} ({plural(cases, 'case')})"
        + (f", mode {result.mode}" if result.mode != "gate" else "")
    ]
    for report in result.reports:
        lines.append("")
        lines.extend(_report_table(report, outcomes))
    if result.guard is not None:
        lines.append("")
        lines.extend(result.guard.lines)
    if result.warnings:
        lines.append("")
        lines.extend(f"warning: {warning}" for warning in result.warnings)
    if result.skipped:
        lines.append("")
        lines.append(f"skipped {plural(len(result.skipped), 'file')}: "
                     + "; ".join(result.skipped[:10])
                     + (f"; +{len(result.skipped) - 10} more" if len(result.skipped) > 10 else ""))
    return lines


def _report_table(report: ReportResult, outcomes: Mapping[tuple[str, str, str], str]
                  ) -> list[str]:
    if report.error is not None:
        return [f"{report.name}: not loaded", f"  {report.error}"]
    head = report_heading(report.name, report.n_cases, report.failed,
                          report.kind == "aggregate", separator="  ")
    compared = any(row.baseline is not None or row.metric_baseline is not None
                   for row in report.rows)
    table: list[tuple[str, ...]] = [
        ("category", "count", "ceiling", "headroom", "status", "vs baseline")]
    for row in report.rows:
        status = outcomes.get(row.key, "not run")
        status = {"passed": "ok", "failed": "FAIL", "skipped": "recorded"
                  if row.verdict == "record" else "skipped"}.get(status, status)
        if row.slack and status == "FAIL":
            status = "FAIL (slack)"
        if row.slice is not None and not row.count and status in ("ok", "recorded"):
            continue  # a slice's empty categories would drown the table
        if row.warnings and status == "ok":
            status = "ok (warn)"
        count = "" if row.count is None else str(row.count)
        if row.kind == "metric" and row.value is not None:
            count = f"{row.value:.4g}"
        table.append((row.label, count, row.ceiling, headroom_text(row.headroom), status,
                      row.baseline_text))
    columns = 6 if compared else 5
    table = [cells[:columns] for cells in table]
    widths = [max(len(r[i]) for r in table) for i in range(columns)]
    lines = [head]
    if report.config_changes:
        lines.append("  what changed vs the baseline: "
                     + "; ".join(change.text for change in report.config_changes))
    for cells in table if len(table) > 1 else ():  # no row (a report that counts nothing)
        lines.append("  " + "  ".join(
            cell.rjust(width) if i in (1, 3) else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ).rstrip())
    if report.caveats:
        lines.append("  caveats: " + ", ".join(f"{name} {n}" for name, n in
                                               report.caveats.items()))
    lines.extend(f"  warning: {w}" for w in report.warnings)
    for row in report.rows:
        lines.extend(f"  warning: {w.splitlines()[0]}" for w in row.warnings)
    lines.extend(f"  {line}" for line in report.explain)
    return lines
