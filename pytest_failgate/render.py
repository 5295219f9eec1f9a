"""Every sentence failgate prints: item failures, warnings, the summary table.

Kept in one place, free of pytest, so the plugin and the CLI say the same thing.
A failing item reads in a few lines: the count against the ceiling, where the
ceiling is written, the report, the rule, and the first cases to look at.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .ceilings.check import rate_allowance
from .ceilings.rewrite import format_number
from .errors import display_path
from .result import CaseExample, GateResult, ReportResult, Row

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .ceilings.check import Check
    from .ceilings.rewrite import Lowering
    from .gate import GateConfig
    from .reports.model import Report
    from .taxonomy import Taxonomy

FIRST_CASES = 10


def headroom_text(headroom: int | None) -> str:
    """``+3``, ``-2`` or ``0``; empty when there is none (consistency checks)."""
    if headroom is None:
        return ""
    return f"{headroom:+d}" if headroom else "0"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def ceiling_text(check: Check) -> str:
    """The ceiling as the summary table shows it."""
    if check.entry is None:
        return "none (0)"
    ceiling = check.entry.ceiling
    parts = []
    if ceiling.max is not None:
        parts.append(str(ceiling.max))
    if ceiling.max_rate is not None:
        rate = format_number(ceiling.max_rate)
        parts.append(f"rate {rate}" + (f" ({check.allowed})" if check.allowed is not None
                                       and ceiling.max is None else ""))
    return ", ".join(parts)


def _report_line(report: Report) -> str:
    total = "unknown number of" if report.n_cases is None else str(report.n_cases)
    line = f"{report.name}: {total} cases, {report.failed} failed"
    if report.kind == "aggregate":
        line += " (recorded counts, not recomputed)"
    return line


def _case_ids(report: Report, name: str, taxonomy: Taxonomy) -> list[str]:
    if name == "total":
        return [i for category in taxonomy.category_names for i in report.case_ids(category)]
    return report.case_ids(name)


def examples(report: Report, name: str, taxonomy: Taxonomy) -> list[CaseExample]:
    """The first cases of a category with the fields that decided it: the ``failed``
    rule's and the category rule's (every rule's for the fallback and for ``total``)."""
    if report.tally is None:
        return []
    rules = {rule.name: rule for rule in taxonomy.categories}
    if name in rules:
        reads = [*taxonomy.failed.reads, *rules[name].reads]
        found = report.tally.examples[name]
    else:
        reads = [field for rule in taxonomy.rules for field in rule.reads]
        categories = taxonomy.category_names if name == "total" else [name]
        found = [e for c in categories for e in report.tally.examples[c]][:FIRST_CASES]
    fields = list(dict.fromkeys(reads))
    return [CaseExample(id=case_id, fields={f: case.get(f) for f in fields})
            for case_id, case in found]


def first_cases(report: Report, name: str, taxonomy: Taxonomy) -> list[str]:
    """The first case ids of a category (or of all failures, for ``total``)."""
    return _case_ids(report, name, taxonomy)[:FIRST_CASES]


def _cases_line(report: Report, name: str, taxonomy: Taxonomy) -> str:
    if report.kind == "aggregate":
        return "none listed: an aggregate records counts, not cases"
    ids = _case_ids(report, name, taxonomy)
    shown = ", ".join(ids[:FIRST_CASES])
    more = len(ids) - FIRST_CASES
    return shown + (f" (+{more} more)" if more > 0 else "") if ids else "none"


def _ceiling_line(check: Check, source: str | None) -> str:
    entry = check.entry
    if entry is None:
        return (f"none set, so 0 is allowed; to accept this, add `{check.name}: {check.count}`"
                " under ceilings: (or under this report in reports:)")
    ceiling = entry.ceiling
    parts = []
    if ceiling.max is not None:
        parts.append(f"max {ceiling.max}")
    if ceiling.max_rate is not None and check.report.n_cases is not None:
        allows = rate_allowance(ceiling.max_rate, check.report.n_cases)
        parts.append(f"max_rate {format_number(ceiling.max_rate)} "
                     f"(allows {allows} of {check.report.n_cases} cases)")
    return f"{', '.join(parts)} at {source} ({entry.label})"


def ratchet_command(config: GateConfig) -> str:
    args = " ".join(f"--failgate={display_path(path)}" for path in config.paths)
    return f"pytest {args} --failgate-ratchet"


def check_message(
    check: Check,
    source: str | None,
    taxonomy: Taxonomy,
    slack: bool,
    config: GateConfig,
    plan: Sequence[Lowering],
) -> str:
    """The text of a failing item (empty when the check passes)."""
    report = check.report
    if check.verdict == "error":
        return (f"{check.name}: cannot be checked: {check.problem}\n"
                f"  report   {_report_line(report)}")
    rule = "all failed cases together" if check.is_total else taxonomy.describe(check.name)
    if check.verdict == "fail":
        if check.entry is None:
            head = f"{check.name}: {plural(check.count, 'case')}, and no ceiling is set"
        else:
            head = (f"{check.name}: {plural(check.count, 'case')}, {check.over} over the "
                    f"ceiling of {check.allowed}")
        return "\n".join([
            head,
            f"  ceiling  {_ceiling_line(check, source)}",
            f"  report   {_report_line(report)}",
            f"  rule     {rule}",
            f"  cases    {_cases_line(report, check.name, taxonomy)}",
        ])
    if slack:
        assert check.entry is not None
        lowered = [low for low in plan if low.entry.loc == check.entry.loc]
        targets = "; ".join(f"{low.key} {low.new_text}" for low in lowered)
        return "\n".join([
            f"{check.name}: the ceiling has slack (count {check.count}), and "
            "--failgate-strict wants gains committed",
            f"  ceiling  {_ceiling_line(check, source)}; a ratchet lowers it to {targets}",
            f"  report   {_report_line(report)}",
            f"  fix      run `{ratchet_command(config)}` and commit {source.split(':')[0]}"
            if source else "",
        ]).rstrip()
    return ""


def consistency_row(report: Report, differences: list[str]) -> Row:
    """The item that compares a report's recorded aggregates with its recomputed cases."""
    message = ""
    if differences:
        message = "\n".join([
            f"consistency: the report's recorded aggregates disagree with its "
            f"{report.n_cases} cases",
            *(f"  {line}" for line in differences),
            f"  report   {report.path.name}: the gate uses the recomputed counts",
        ])
    return Row(
        report=report.name, name="consistency", kind="consistency", count=None, allowed=None,
        ceiling="recorded = recomputed", source=None, line=None,
        verdict="fail" if differences else "pass",
        rule="recorded failure_category_counts equal the recomputed counts", message=message,
    )


def missing_field_warnings(report: Report) -> list[str]:
    if report.tally is None:
        return []
    warnings = []
    for item in report.tally.missing_fields():
        rule = "deciding failed" if item.rule == "failed" else f"rule {item.rule}"
        warnings.append(
            f"{rule}: '{item.field}' absent in {item.missing} of the {item.examined} cases "
            f"it examined (read as {json.dumps(_jsonable(item.default))})"
        )
    return warnings


def _jsonable(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def summary_lines(result: GateResult, outcomes: dict[tuple[str, str], str]) -> list[str]:
    """The terminal summary: one table per report, then warnings and what a ratchet would do.

    ``outcomes`` maps (report, name) to how the item ended in this run ("passed",
    "failed", "skipped"); items that did not run show "not run".
    """
    n_reports = len(result.reports)
    cases = sum(r.n_cases or 0 for r in result.reports)
    lines = [
        f"ceilings {result.ceilings_path}, taxonomy {result.taxonomy}, "
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


def _report_table(report: ReportResult, outcomes: dict[tuple[str, str], str]) -> list[str]:
    if report.error is not None:
        return [f"{report.name}: not loaded", f"  {report.error}"]
    head = f"{report.name}  {report.n_cases if report.n_cases is not None else '?'} cases, " \
           f"{report.failed} failed" + (" (recorded)" if report.kind == "aggregate" else "")
    table = [("category", "count", "ceiling", "headroom", "status")]
    for row in report.rows:
        status = outcomes.get((row.report, row.name), "not run")
        status = {"passed": "ok", "failed": "FAIL", "skipped": "recorded"
                  if row.verdict == "record" else "skipped"}.get(status, status)
        if row.slack and status == "FAIL":
            status = "FAIL (slack)"
        count = "" if row.count is None else str(row.count)
        table.append((row.name, count, row.ceiling, headroom_text(row.headroom), status))
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    lines = [head]
    for cells in table:
        lines.append("  " + "  ".join(
            cell.rjust(width) if i in (1, 3) else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ).rstrip())
    lines.extend(f"  warning: {w}" for w in report.warnings)
    return lines
