"""Every sentence failgate prints: item failures, warnings, the summary table.

Kept in one place, free of pytest, so the plugin and the CLI say the same thing.
A failing item reads in a few lines: the count against the ceiling, where the
ceiling is written, the report, the rule, and the first cases to look at.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..core.ceilings.check import rate_allowance
from ..core.ceilings.rewrite import format_number
from ..core.errors import display_path, plural
from ..core.result import CaseExample, GateResult, ReportResult, Row, RowVerdict
from ..core.taxonomy.model import GROUP_PREFIX

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..core.ceilings.check import Check
    from ..core.ceilings.rewrite import Lowering
    from ..core.gate import ContractResult, GateConfig
    from ..core.reports.model import Report
    from ..core.taxonomy import Taxonomy

FIRST_CASES = 10


def headroom_text(headroom: int | None) -> str:
    """``+3``, ``-2`` or ``0``; empty when there is none (consistency checks)."""
    if headroom is None:
        return ""
    return f"{headroom:+d}" if headroom else "0"


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
        per = f" per {ceiling.per}" if ceiling.per else ""
        parts.append(f"rate {rate}{per}" + (f" ({check.allowed})" if check.allowed is not None
                                            and ceiling.max is None else ""))
    inherited = check.slice is not None and check.slice not in check.entry.loc
    return ", ".join(parts) + (" (report's)" if inherited else "")


def categories_of(name: str, taxonomy: Taxonomy) -> tuple[str, ...]:
    """The categories a name counts: itself, a group's, or every one for ``total``."""
    if name == "total":
        return taxonomy.category_names
    if name.startswith(GROUP_PREFIX):
        return taxonomy.groups[name[len(GROUP_PREFIX):]]
    return (name,)


def _report_line(report: Report) -> str:
    total = "unknown number of" if report.n_cases is None else str(report.n_cases)
    line = f"{report.name}: {total} cases, {report.failed} failed"
    if report.kind == "aggregate":
        line += " (recorded counts, not recomputed)"
    return line


def _scope_line(check: Check) -> str:
    line = _report_line(check.report)
    if check.slice is not None:
        line += f"; slice {check.slice}: {plural(check.n_cases or 0, 'case')}"
    if check.population is not None:
        line += f"; counted among the {check.n_cases} cases where `{check.population}`"
    return line


def rule_text(name: str, taxonomy: Taxonomy) -> str:
    if name == "total":
        return "all failed cases together"
    if name.startswith(GROUP_PREFIX):
        return f"the group's categories together: {', '.join(categories_of(name, taxonomy))}"
    return taxonomy.describe(name)


def _hint_line(name: str, taxonomy: Taxonomy) -> list[str]:
    rule = next((r for r in taxonomy.categories if r.name == name), None)
    return [f"  hint     {rule.hint}"] if rule is not None and rule.hint else []


def _case_ids(report: Report, name: str, taxonomy: Taxonomy, slice_: str | None = None
              ) -> list[str]:
    ids: dict[str, list[str]] = report.tally.ids if report.tally is not None else {}
    if slice_ is not None and report.tally is not None:
        field, value = slice_.split("=", 1)
        ids = report.tally.slices[field][value].ids
    return [i for category in categories_of(name, taxonomy) for i in ids.get(category, [])]


def examples(report: Report, name: str, taxonomy: Taxonomy) -> list[CaseExample]:
    """The first cases of a category with the fields that decided it: the ``failed``
    rule's and the category rule's (every rule's for the fallback, groups and ``total``)."""
    if report.tally is None:
        return []
    rules = {rule.name: rule for rule in taxonomy.categories}
    if name in rules:
        reads = [*taxonomy.failed.reads, *rules[name].reads]
        found = report.tally.examples[name]
    else:
        reads = [field for rule in taxonomy.rules for field in rule.reads]
        found = [e for c in categories_of(name, taxonomy)
                 for e in report.tally.examples[c]][:FIRST_CASES]
    fields = list(dict.fromkeys(reads))
    return [CaseExample(id=case_id, fields={f: case.get(f) for f in fields})
            for case_id, case in found]


def first_cases(report: Report, name: str, taxonomy: Taxonomy, slice_: str | None = None
                ) -> list[str]:
    """The first case ids a count holds."""
    return _case_ids(report, name, taxonomy, slice_)[:FIRST_CASES]


def _cases_line(check: Check, taxonomy: Taxonomy) -> str:
    if check.report.kind == "aggregate":
        return "none listed: an aggregate records counts, not cases"
    ids = _case_ids(check.report, check.name, taxonomy, check.slice)
    shown = ", ".join(ids[:FIRST_CASES])
    more = len(ids) - FIRST_CASES
    text = shown + (f" (+{more} more)" if more > 0 else "") if ids else "none"
    return text + (" (in the whole report)" if check.population is not None else "")


def _ceiling_line(check: Check, source: str | None) -> str:
    entry = check.entry
    if entry is None:
        return (f"none set, so 0 is allowed; to accept this, add `{check.name}: {check.count}`"
                " under ceilings: (or under this report in reports:)")
    ceiling = entry.ceiling
    parts = []
    if ceiling.max is not None:
        parts.append(f"max {ceiling.max}")
    if ceiling.max_rate is not None and check.n_cases is not None:
        allows = rate_allowance(ceiling.max_rate, check.n_cases)
        of = f"the {check.n_cases} cases where `{ceiling.per}`" if ceiling.per else (
            f"{check.n_cases} cases")
        parts.append(f"max_rate {format_number(ceiling.max_rate)} (allows {allows} of {of})")
    return f"{', '.join(parts)} at {source} ({entry.label})"


def ratchet_command(config: GateConfig) -> str:
    args = " ".join(f"--failgate={display_path(path)}" for path in config.paths)
    return f"pytest {args} --failgate-ratchet"


def ratchet_status(result: GateResult, command: str) -> str | None:
    """The closing line of a gate run about ratcheting, or ``None`` when it has none.

    Nothing is claimed while a report did not load: its counts are unknown.
    """
    if result.mode not in ("gate", "strict"):
        return None
    if result.load_errors:
        return (f"ratchet: not assessed while {plural(len(result.load_errors), 'report')} "
                "did not load")
    if result.lowerings:
        return (f"ratchet: {plural(len(result.lowerings), 'ceiling')} can be lowered; "
                f"run `{command}` and commit {result.ceilings_path}")
    return "ratchet: every ceiling is at its count"


def check_message(
    check: Check,
    source: str | None,
    taxonomy: Taxonomy,
    slack: bool,
    config: GateConfig,
    plan: Sequence[Lowering],
) -> str:
    """The text of a failing item (empty when the check passes)."""
    label = f"{check.slice}::{check.name}" if check.slice else check.name
    if check.verdict == "error":
        return (f"{label}: cannot be checked: {check.problem}\n"
                f"  report   {_scope_line(check)}")
    if check.verdict == "fail":
        if check.entry is None:
            head = f"{label}: {plural(check.count, 'case')}, and no ceiling is set"
        else:
            head = (f"{label}: {plural(check.count, 'case')}, {check.over} over the "
                    f"ceiling of {check.allowed}")
        return "\n".join([
            head,
            f"  ceiling  {_ceiling_line(check, source)}",
            f"  report   {_scope_line(check)}",
            f"  rule     {rule_text(check.name, taxonomy)}",
            *_hint_line(check.name, taxonomy),
            f"  cases    {_cases_line(check, taxonomy)}",
        ])
    if slack:
        assert check.entry is not None
        lowered = [low for low in plan if low.entry.loc == check.entry.loc]
        targets = "; ".join(f"{low.key} {low.new_text}" for low in lowered)
        return "\n".join([
            f"{label}: the ceiling has slack (count {check.count}), and "
            "--failgate-strict wants gains committed",
            f"  ceiling  {_ceiling_line(check, source)}; a ratchet lowers it to {targets}",
            f"  report   {_scope_line(check)}",
            f"  fix      run `{ratchet_command(config)}` and commit {source.split(':')[0]}"
            if source else "",
        ]).rstrip()
    return ""


def contract_row(result: ContractResult, source: str) -> Row:
    """The item of one contract on one report."""
    contract = result.contract
    shown = ", ".join(f"{name} = {json.dumps(value, sort_keys=True, default=str)}"
                      for name, value in result.values.items())
    if result.holds is None:
        verdict: RowVerdict = "error"
        message = (f"contract:{contract.name}: cannot be checked: {result.problem}\n"
                   f"  contract `{contract.text}` at {source}")
    elif result.holds:
        verdict, message = "pass", ""
    else:
        verdict = "fail"
        message = "\n".join([
            f"contract:{contract.name}: `{contract.text}` does not hold",
            f"  values   {shown}",
            f"  contract at {source}",
            f"  report   {_report_line(result.report)}",
        ])
    return Row(report=result.report.name, name=f"contract:{contract.name}", kind="contract",
               count=None, allowed=None, ceiling=contract.text, source=source,
               line=contract.line, verdict=verdict, rule=contract.text, message=message)


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


def caveat_counts(report: Report) -> dict[str, int]:
    """How many cases each of the taxonomy's caveats flagged (informational)."""
    if report.tally is None:
        return {}
    return {c.name: report.tally.flags.get(c.name, 0) for c in report.tally.taxonomy.caveats}


def explain_lines(report: Report) -> list[str]:
    """Rule diagnostics: what first-match hid, unused rules, missing fields, the fallback."""
    tally = report.tally
    if tally is None or tally.explanation is None:
        return []
    explanation = tally.explanation
    taxonomy = tally.taxonomy
    lines = ["categories, and what first-match hid (cases a later rule also matched):"]
    for name in taxonomy.category_names:
        hidden = explanation.hidden.get(name, {})
        shown = ", ".join(f"{rule} {n}" for rule, n in hidden.items())
        lines.append(f"  {name}: {tally.counts[name]}" + (f"; also {shown}" if shown else ""))
    unused = [rule.name for rule in taxonomy.categories
              if rule.enabled and explanation.matched.get(rule.name, 0) == 0]
    if unused:
        lines.append("rules that matched no failed case: " + ", ".join(unused))
    lines.append("fields each rule read: absent in the cases it examined / in all cases:")
    for rule in taxonomy.rules:
        if not rule.reads:
            continue
        parts = [f"{field} {tally.missing[rule.name].get(field, 0)}/{tally.examined[rule.name]}"
                 f" ({tally.absent.get(field, 0)}/{tally.n_cases})" for field in rule.reads]
        lines.append(f"  {rule.name}: " + ", ".join(parts))
    groups = explanation.fallback_groups.most_common(5)
    if groups:
        lines.append(f"{taxonomy.fallback} ({tally.counts[taxonomy.fallback]} cases), most "
                     "common field values:")
        for signature, count in groups:
            values = ", ".join(f"{name}={value}" for name, value in signature)
            lines.append(f"  {count} x {values}")
    return lines


def _jsonable(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def summary_lines(result: GateResult, outcomes: Mapping[tuple[str, str, str], str]
                  ) -> list[str]:
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


def _report_table(report: ReportResult, outcomes: Mapping[tuple[str, str, str], str]
                  ) -> list[str]:
    if report.error is not None:
        return [f"{report.name}: not loaded", f"  {report.error}"]
    head = f"{report.name}  {report.n_cases if report.n_cases is not None else '?'} cases, " \
           f"{report.failed} failed" + (" (recorded)" if report.kind == "aggregate" else "")
    compared = any(row.baseline is not None for row in report.rows)
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
    for cells in table:
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
