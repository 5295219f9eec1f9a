"""The terminal summary: one table per report, warnings, and the closing ratchet line.

Free of pytest, so the plugin and the CLI print the same thing. It only reads the
``GateResult``: the verdicts and the items' messages are decided in the core
(``core/gate/rows.py``, ``core/gate/messages.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.base.formatting import inert_lines, one_line, plural, report_heading
from ..core.base.result import ceilings_lowered

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..commands.results import ShowResult
    from ..core.base.result import GateResult, ReportAnalysis, ReportResult, Row


def headroom_text(headroom: int | None) -> str:
    """``+3``, ``-2`` or ``0``; empty when there is none (consistency checks)."""
    if headroom is None:
        return ""
    return f"{headroom:+d}" if headroom else "0"


def catches_text(row: Row) -> str:
    """The smallest regression a row catches with 80% probability (``+13``; ``blind``)."""
    if row.detectable is None:
        return ""
    return f"+{row.detectable}" + (" blind" if row.blind else "")


def item_id(ceilings_path: str, row: Row) -> str:
    """``ceilings.yaml::report::slice=x::category``: a check named as pytest names its item
    (the item tree's ``row_id``)."""
    from ..core.base.items import row_id

    return row_id(ceilings_path, row)


def ratchet_status(result: GateResult) -> str | None:
    """The closing line of a gate run about ratcheting, or ``None`` when it has none.

    Nothing is claimed while a report did not load (its counts are unknown), nor
    beside failing items (their counts are above their ceilings, not at them).
    """
    if (result.mode not in ("gate", "strict") or result.ceilings_sha256 is None
            or result.sequential is not None):  # a run's first cases lower nothing
        return None
    if result.load_errors:
        return (f"ratchet: not assessed while {plural(len(result.load_errors), 'report')} "
                "did not load")
    if result.inconclusive:
        return "ratchet: not assessed: the run is inconclusive"
    if result.lowerings:
        return (f"ratchet: {plural(ceilings_lowered(result.lowerings), 'ceiling')} can be lowered; "
                f"run {result.ratchet_advice} and commit {result.ceilings_path}")
    over = [row for row in result.rows if row.failing and not row.slack]
    if over:  # a count above its ceiling is not "at its count"
        return None
    if result.noise is not None:
        return "ratchet: no count fell past its allowance; nothing to lower"
    return "ratchet: every ceiling is at its count"


def summary_lines(result: GateResult, outcomes: Mapping[tuple[str, str, str], str]
                  ) -> list[str]:
    """The terminal summary: one table per report, then warnings, then the run's verdict
    and headline as the core decided them (``GateResult.headline``).

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
    if result.noise is not None:
        lines.append(result.noise.text)
    if result.significance is not None:
        lines.append(result.significance)
    for report in result.reports:
        lines.append("")
        lines.extend(_report_table(report, outcomes, result.noise is not None))
    if result.guard is not None:
        lines.append("")
        lines.extend(result.guard.lines)
    if result.warnings:
        lines.append("")
        lines.extend(f"warning: {inert_lines(warning)}" for warning in result.warnings)
    if result.skipped:
        lines.append("")
        lines.append(f"skipped {plural(len(result.skipped), 'file')}: "
                     + "; ".join(map(one_line, result.skipped[:10]))
                     + (f"; +{len(result.skipped) - 10} more" if len(result.skipped) > 10 else ""))
    for analysis in result.analysis or ():
        lines.append("")
        lines.extend(analysis_lines(analysis))
    headline = result.headline
    return [*lines, "", f"verdict {headline.verdict}: {headline.text}"]


def _percent(low: float, high: float) -> str:
    return f"[{low:.0%}, {high:.0%}]"


def analysis_lines(analysis: ReportAnalysis) -> list[str]:
    """``failgate analyze`` (and ``--failgate-analyze``): one report's diagnosis."""
    total = "?" if analysis.n_cases is None else str(analysis.n_cases)
    lines = [f"analysis of {one_line(analysis.report)}  {total} cases, {analysis.failed} failed "
             f"(taxonomy {analysis.taxonomy})"]
    if not analysis.failed:
        lines.append("  nothing failed: no stage, slice or category to look at")
    staged = [s for s in analysis.stages if s.count]
    if staged:
        lines.append("  by stage: " + ", ".join(
            f"{s.stage} {s.count} ({s.count / analysis.failed:.0%})" for s in staged))
        lines.append(f"  bottleneck: {analysis.bottleneck}")
    if analysis.slices:
        lines.append("  weakest slices (failure rate, exact 95% interval):")
        labels = [one_line(f"{s.field}={s.value}") for s in analysis.slices]
        width = max(map(len, labels))
        for weak, label in zip(analysis.slices, labels, strict=True):
            top = f"  mostly {one_line(weak.top_category)}" if weak.top_category else ""
            lines.append(f"    {label:<{width}}  {weak.failed:>4} of {weak.n_cases:<4} "
                         f"{weak.rate:>4.0%} {_percent(*weak.interval)}{top}")
    if analysis.metrics:
        shown = []
        for metric in analysis.metrics:
            if metric.value is None:
                shown.append(f"{metric.name} n/a (applies to no case)")
                continue
            interval = f" {_percent(*metric.interval)}" if metric.interval else ""
            shown.append(f"{metric.name} {metric.value:.3g}{interval} over {metric.n}")
        lines.append("  metrics: " + "; ".join(shown))
    if analysis.priorities:
        lines.append("  look at first:")
        for item in analysis.priorities:
            where = f", most in {one_line(item.where)}" if item.where else ""
            stage = f" [{item.stage}]" if item.stage else ""
            lines.append(f"    {item.rank}. {one_line(item.category)}{stage}: {item.count} "
                         f"({item.share:.0%} of failures{where})")
            if item.hint:
                lines.append(f"       {item.hint}")
            if item.settings:
                lines.append(f"       settings that usually move it: {', '.join(item.settings)}")
        lines.append("  (hints from the taxonomy's rules; after a change, compare with this run "
                     "as the baseline)")
    return lines


def _report_table(report: ReportResult, outcomes: Mapping[tuple[str, str, str], str],
                  noisy: bool = False) -> list[str]:
    if report.error is not None:
        return [f"{one_line(report.name)}: not loaded", f"  {inert_lines(report.error)}"]
    inconclusive = ([f"  INCONCLUSIVE: {report.inconclusive}; its items are not judged"]
                    if report.inconclusive is not None else [])
    head = report_heading(report.name, report.n_cases, report.failed,
                          report.kind == "aggregate", separator="  ")
    compared = any(row.baseline is not None or row.metric_baseline is not None
                   for row in report.rows)
    table: list[tuple[str, ...]] = [
        ("category", "count", "ceiling", "headroom", "status", "catches", "vs baseline")]
    for row in report.rows:
        status = outcomes.get(row.key, "not run")
        status = {"passed": "ok", "failed": "FAIL", "skipped": "recorded"
                  if row.verdict == "record" else "skipped"}.get(status, status)
        if row.slack and status == "FAIL":
            status = "FAIL (slack)"
        if row.verdict in ("inconclusive", "skip"):
            status = "INCONCLUSIVE" if row.verdict == "inconclusive" else "not judged"
        if row.slice is not None and not row.count and status in ("ok", "recorded"):
            continue  # a slice's empty categories would drown the table
        if row.warnings and status == "ok":
            status = "ok (warn)"
        count = row.count_text
        if row.kind == "metric" and row.value is not None:
            count = f"{row.value:.4g}"
        table.append((one_line(row.label), count, row.ceiling, headroom_text(row.headroom), status,
                      catches_text(row), row.baseline_text))
    shown = [i for i in range(7) if i < 5 or (i == 5 and noisy) or (i == 6 and compared)]
    table = [tuple(cells[i] for i in shown) for cells in table]
    columns = len(shown)
    widths = [max(len(r[i]) for r in table) for i in range(columns)]
    lines = [head, *inconclusive]
    if report.config_changes:
        lines.append("  what changed vs the baseline: "
                     + "; ".join(one_line(change.text) for change in report.config_changes))
    if report.instrument_changes:
        lines.append("  measured differently from the baseline: "
                     + "; ".join(map(one_line, report.instrument_changes)))
    for cells in table if len(table) > 1 else ():  # no row (a report that counts nothing)
        lines.append("  " + "  ".join(
            cell.rjust(width) if shown[i] in (1, 3, 5) else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ).rstrip())
    if report.caveats:
        lines.append("  caveats: " + ", ".join(f"{one_line(name)} {n}" for name, n in
                                               report.caveats.items()))
    lines.extend(f"  warning: {inert_lines(w)}" for w in report.warnings)
    for row in report.rows:
        lines.extend(f"  warning: {one_line(w.splitlines()[0])}" for w in row.warnings)
    lines.extend(f"  {inert_lines(line)}" for line in report.explain)
    return lines


BAR_WIDTH = 30


def _bar(count: int, largest: int) -> str:
    if largest == 0 or count == 0:
        return ""
    eighths = round(count * BAR_WIDTH * 8 / largest) or 1
    return "█" * (eighths // 8) + " ▏▎▍▌▋▊▉"[eighths % 8].strip()


def show_lines(shown: ShowResult) -> list[str]:
    """``failgate show``: each report's categories with bars, ceilings and first case ids."""
    lines: list[str] = []
    for index, report in enumerate(shown.reports):
        if index:
            lines.append("")
        if report.error is not None:
            lines.append(f"{report.name}: not loaded: {report.error}")
            continue
        names = {c.name: one_line(c.name) for c in report.categories}  # a report's names
        width = max(map(len, names.values()))
        lines.append(report_heading(report.name, report.n_cases, report.failed,
                                    report.kind == "aggregate", separator="  "))
        largest = max(c.count for c in report.categories)
        for category in report.categories:
            count = category.count
            bar = _bar(count, largest)
            line = f"  {names[category.name]:<{width}}  {count:>6}  {bar:<{BAR_WIDTH}}"
            if category.ceiling is not None:
                line += (f"  ceiling {category.ceiling:<8} headroom "
                         f"{headroom_text(category.headroom)}")
            if category.first_cases:
                line += "  " + ", ".join(map(one_line, category.first_cases)) + (
                    " …" if count > len(category.first_cases) else "")
            lines.append(line.rstrip())
    if shown.skipped:
        lines += ["", f"skipped: {', '.join(map(one_line, shown.skipped))}"]
    return lines
