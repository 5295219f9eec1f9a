"""The words of a gate's result: failing items' messages, rules in words, diagnostics.

They are part of the result (``Row.message``, ``ReportResult.explain``), so the core
writes them once and every output (the terminal, Markdown, HTML, JSON, the pytest
items) shows the same text. A failing item reads in a few lines: the count against
the ceiling, where the ceiling is written, the report, the rule, and the first cases.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..base.formatting import one_line, plural, report_heading
from ..taxonomy.model import GROUP_PREFIX, TOTAL

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..ceilings.check import Check
    from ..ceilings.rewrite import Lowering
    from ..reports.model import Report
    from ..taxonomy import Taxonomy
    from .checked import ContractResult, GateConfig

FIRST_CASES = 10


def heading(report: Report) -> str:
    """The report's heading line (see ``formatting.report_heading``)."""
    return report_heading(report.name, report.n_cases, report.failed,
                          report.kind == "aggregate")


def ceiling_text(check: Check) -> str:
    """The ceiling as the summary table shows it."""
    if check.entry is None:
        return "none (0)"
    inherited = check.slice is not None and check.slice not in check.entry.loc
    return check.entry.ceiling.text(check.limit) + (" (report's)" if inherited else "")


def _scope_line(check: Check) -> str:
    line = heading(check.report)
    if check.slice is not None:
        line += f"; slice {one_line(check.slice)}: {plural(check.n_cases or 0, 'case')}"
    if check.population is not None:
        line += f"; counted among the {check.n_cases} cases where `{check.population}`"
    return line


def rule_text(name: str, taxonomy: Taxonomy) -> str:
    """The rule behind a countable name, in words."""
    if name == TOTAL:
        return "all failed cases together"
    if name.startswith(GROUP_PREFIX):
        return f"the group's categories together: {', '.join(taxonomy.members(name))}"
    return taxonomy.describe(name)


def _hint_line(name: str, taxonomy: Taxonomy) -> list[str]:
    rule = next((r for r in taxonomy.categories if r.name == name), None)
    return [f"  hint     {rule.hint}"] if rule is not None and rule.hint else []


def case_ids(report: Report, name: str, taxonomy: Taxonomy, slice_: str | None = None
              ) -> list[str]:
    """Every case id a count holds (of one slice, when given), in report order."""
    ids: dict[str, list[str]] = report.tally.ids if report.tally is not None else {}
    if slice_ is not None and report.tally is not None:
        field, value = slice_.split("=", 1)
        ids = report.tally.slices[field][value].ids
    return [i for category in taxonomy.members(name) for i in ids.get(category, [])]


def _cases_line(check: Check, taxonomy: Taxonomy) -> str:
    if check.report.kind == "aggregate":
        return "none listed: an aggregate records counts, not cases"
    ids = case_ids(check.report, check.name, taxonomy, check.slice)
    shown = ", ".join(map(one_line, ids[:FIRST_CASES]))
    more = len(ids) - FIRST_CASES
    text = shown + (f" (+{more} more)" if more > 0 else "") if ids else "none"
    return text + (" (in the whole report)" if check.population is not None else "")


def _ceiling_line(check: Check, source: str | None) -> str:
    entry = check.entry
    if entry is None:
        return (f"none set, so 0 is allowed; to accept this, add `{check.name}: {check.count}`"
                " under ceilings: (or under this report in reports:)")
    return f"{entry.ceiling.detail(check.n_cases)} at {source} ({entry.label})"


def check_message(
    check: Check,
    source: str | None,
    taxonomy: Taxonomy,
    slack: bool,
    config: GateConfig,
    lowerings: Sequence[Lowering],
) -> str:
    """The text of a failing item (empty when the check passes)."""
    label = one_line(f"{check.slice}::{check.name}" if check.slice else check.name)
    if check.verdict == "error":
        return (f"{label}: cannot be checked: {check.problem}\n"
                f"  report   {_scope_line(check)}")
    if check.verdict == "fail":
        if check.entry is None:
            head = f"{label}: {plural(check.count, 'case')}, and no ceiling is set"
        else:
            head = (f"{label}: {plural(check.count, 'case')}, {check.over} over the "
                    f"ceiling of {check.limit}")
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
        lowered = [low for low in lowerings if low.entry.loc == check.entry.loc]
        targets = "; ".join(f"{low.key} {low.new_text}" for low in lowered)
        return "\n".join([
            f"{label}: the ceiling has slack (count {check.count}), and strict mode "
            "wants gains committed",
            f"  ceiling  {_ceiling_line(check, source)}; a ratchet lowers it to {targets}",
            f"  report   {_scope_line(check)}",
            f"  fix      run {config.advice.ratchet} and commit {source.split(':')[0]}"
            if source else "",
        ]).rstrip()
    return ""


def members_within(check: Check, siblings: Sequence[Check], taxonomy: Taxonomy) -> str:
    """A failing ``total`` or group whose every category is within its own ceiling: a
    category's ceiling was raised and this one was not (the first-hour surprise of a
    raise that fails ``total``). Says so, and how far this ceiling must move too; empty
    when a category fails as well (that failure is the news)."""
    members = set(taxonomy.members(check.name))
    own = [s for s in siblings if s.name in members and s.slice == check.slice]
    if not own or any(s.verdict != "pass" for s in own):
        return ""
    return (f"\n  raise    every category it counts is within its own ceiling: a category's "
            f"ceiling was raised without this one; {check.name} must move too, to at least "
            f"{check.count} (or leave {check.name} out of ceilings: to gate the categories "
            "alone)")


def contract_message(result: ContractResult, source: str) -> str:
    """Why a contract failed or could not be checked (empty when it holds)."""
    contract = result.contract
    if result.holds is None:
        return (f"contract:{contract.name}: cannot be checked: {result.problem}\n"
                f"  contract `{contract.text}` at {source}")
    if result.holds:
        return ""
    shown = ", ".join(f"{name} = {json.dumps(value, sort_keys=True, default=str)}"
                      for name, value in result.values.items())
    return "\n".join([
        f"contract:{contract.name}: `{contract.text}` does not hold",
        f"  values   {shown}",
        f"  contract at {source}",
        f"  report   {heading(result.report)}",
    ])


def consistency_message(report: Report, differences: list[str]) -> str:
    """Where a report's recorded aggregates disagree with its cases (empty when they agree)."""
    if not differences:
        return ""
    return "\n".join([
        f"consistency: the report's recorded aggregates disagree with its "
        f"{report.n_cases} cases",
        *(f"  {line}" for line in differences),
        f"  report   {report.path.name}: the gate uses the recomputed counts",
    ])


def missing_field_warnings(report: Report) -> list[str]:
    if report.uncounted is not None:
        return [f"no category counted: {report.uncounted}"]
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


def id_notes(report: Report) -> list[str]:
    """The note naming the likely id field when no case has one (``reports.idnote``)."""
    from ..reports.idnote import id_field_note

    note = id_field_note(report)
    return [note] if note is not None else []


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
