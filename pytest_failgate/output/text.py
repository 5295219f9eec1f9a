"""The terminal summary: one table per report, warnings, and the closing ratchet line.

Free of pytest, so the plugin and the CLI print the same thing. It only reads the
``GateResult``: the verdicts and the items' messages are decided in the core
(``core/gate/rows.py``, ``core/gate/messages.py``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..core.base.formatting import inert_lines, one_line, plural, report_heading
from ..core.base.result import ceilings_lowered

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..commands.results import ShowResult
    from ..core.base.analysis import ReportAnalysis
    from ..core.base.result import (
        GateResult,
        JudgeAgreement,
        ReportResult,
        Row,
        ShareResult,
    )


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
    if report.agreement is not None:
        lines.extend(f"  {line}" for line in agreement_lines(report.agreement))
    return lines


def _percent_floor(value: float) -> str:
    """A lower bound in percent to 0.1, rounded down (never shown above what it is)."""
    return f"{math.floor(value * 1000 + 1e-9) / 10:g}%"


def _percent_ceil(value: float) -> str:
    """An upper bound in percent to 0.1, rounded up."""
    return f"{math.ceil(value * 1000 - 1e-9) / 10:g}%"


def share_text(share: ShareResult | None) -> str:
    """``30/32 (93%) [79.1%, 99.3%]``: the share rounded down, the bounds outward (none is
    shown better than it is); ``n/a`` over no case."""
    if share is None:
        return "n/a"
    low, high = share.interval
    share_down = share.hits * 100 // share.of  # exact: the share in whole percent, down
    return (f"{share.hits}/{share.of} ({share_down}%) "
            f"[{_percent_floor(low)}, {_percent_ceil(high)}]")


def kappa_text(agreement: JudgeAgreement) -> str:
    """``kappa 0.912 (= 1234/1353)``, or ``kappa n/a`` when chance agreement is certain."""
    if agreement.kappa is None:
        return "kappa n/a (judge and labels put every case in one class)"
    return f"kappa {agreement.kappa:.3f} (= {agreement.kappa_exact})"


def agreement_head(agreement: JudgeAgreement) -> str:
    """The sentence that opens every output's account of how far to trust the judge."""
    return (f"how far to trust the judge: {agreement.agreed} of "
            f"{plural(agreement.labelled, 'labelled case')} agree, {kappa_text(agreement)}; "
            f"{agreement.confidence:.0%} exact intervals, trusted when both lower bounds are "
            f"at least {agreement.trust_level:.0%}")


def shown_classes(agreement: JudgeAgreement) -> list[int]:
    """The matrix's classes any labelled case is in (by the judge or the label): the rest
    have nothing to show (the JSON keeps them all)."""
    return [i for i, one in enumerate(agreement.categories) if one.judged or one.gold]


def agreement_lines(agreement: JudgeAgreement) -> list[str]:
    """The judge against the labels: per class precision, recall, trust; the matrix."""
    shown = shown_classes(agreement)
    names = [one_line(agreement.classes[i]) for i in shown]
    table = [("class", "precision", "recall", "trust")]
    table += [(names[n], share_text(agreement.categories[i].precision),
               share_text(agreement.categories[i].recall), agreement.categories[i].trust)
              for n, i in enumerate(shown)]
    widths = [max(len(cells[c]) for cells in table) for c in range(4)]
    lines = [agreement_head(agreement)]
    lines += ["  " + "  ".join(cell.ljust(width) for cell, width in
                               zip(cells, widths, strict=True)).rstrip() for cells in table]
    labels = [f"{n + 1} {name}" for n, name in enumerate(names)]
    first = max(len(label) for label in [*labels, "judge \\ label"])
    cell = max(len(str(agreement.matrix[i][j])) for i in shown for j in shown) + 1
    cell = max(cell, len(str(len(shown))) + 1)
    lines.append("  " + "judge \\ label".ljust(first)
                 + "".join(str(n + 1).rjust(cell) for n in range(len(shown))))
    lines += ["  " + label.ljust(first) + "".join(str(agreement.matrix[i][j]).rjust(cell)
                                                  for j in shown)
              for label, i in zip(labels, shown, strict=True)]
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
