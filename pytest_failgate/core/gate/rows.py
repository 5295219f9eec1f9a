"""Each check of a gate run becomes a row with its verdict; the rows become the result.

The decisions (pass, fail, error, record; slack under ``--failgate-strict``; a baseline
that turns a pass into a fail) are made here, in the core, once. Every output only
reads the ``GateResult`` this builds.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..base.errors import display_path
from ..base.formatting import format_number, plural
from ..base.result import (
    CaseExample,
    FailingCase,
    GateResult,
    GuardResultModel,
    LoweringResult,
    MetricBaselineResult,
    NoiseResult,
    ReportResult,
    Row,
    RowKind,
)
from ..base.yamlsource import digest
from ..ceilings.metrics import metric_message
from ..ceilings.rewrite import InitNoise, init_text
from ..stats.allowance import detectable
from ..taxonomy.model import GROUP_PREFIX
from . import messages
from .corrected import corrected_message
from .corrected import verdict as corrected_verdict
from .inconclusive import message as inconclusive_message
from .messages import FIRST_CASES

# a row that cannot catch a regression smaller than this share of its cases is blind
BLIND_SHARE = Fraction(1, 5)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..base.analysis import ReportAnalysis
    from ..base.verdict import RowVerdict
    from ..ceilings.check import Check
    from ..ceilings.metrics import MetricCheck
    from ..compare.metrics import MetricChange
    from ..reports.model import Report
    from ..taxonomy import Taxonomy
    from .checked import ContractResult, ReportGate
    from .inconclusive import Inconclusive
    from .run import GateRun as Gate


def build_result(gate: Gate) -> GateResult:
    """The serialisable outcome of a gate run: every row with its verdict, the ratchet plan.

    The run's verdict and headline are not stored: ``GateResult.headline`` derives them
    from these rows, reports and guard, by one table, wherever the result is read."""
    slack = {lowering.entry.loc for lowering in gate.lowerings}
    reports = [_report_result(gate, gated, slack) for gated in gate.reports]
    loaded = [g.report for g in gate.reports if g.report is not None]
    judged = [g.report for g in gate.reports if g.report is not None and g.inconclusive is None]
    result = GateResult(
        ceilings_path=display_path(gate.config.ceilings_path),
        ceilings_sha256=digest(gate.ceilings.doc.text) if gate.ceilings else None,
        taxonomy=gate.taxonomy.name,
        mode=gate.config.mode,
        reports=reports,
        skipped=[f"{display_path(s.path)} ({s.reason})" for s in gate.skipped],
        warnings=gate.warnings,
        lowerings=_lowerings(gate),
        default_ceilings={name: ceiling.max for name, ceiling in
                          (gate.ceilings.model.ceilings.items() if gate.ceilings else ())
                          if ceiling.max is not None},
        guard=_guard(gate),
        init_text=(
            init_text(gate.taxonomy, [(r, r.taxonomy) for r in judged], gate.reference,
                      _init_noise(gate), gate.report_paths, gate.true_counts)
            if gate.config.mode == "init" and judged else None
        ),
        significance=(gate.family.describe() if gate.family is not None
                      and gate.family.tests else None),
        noise=None if gate.noise is None else NoiseResult(
            source=gate.noise.source.label, budget=float(gate.noise.budget),
            items=gate.noise.items, text=gate.noise.describe()),
        analysis=_analysis(loaded) if gate.config.analyze else None,
        ratchet_advice=gate.config.advice.ratchet,
        times=gate.times.result() if gate.times is not None else None,
    )
    if result.regressions or result.inconclusive or result.load_errors:
        # nothing is offered to lower from a run that is not judged: a count that fell beside
        # a regression may only have moved into it (the ratchet says why it writes nothing)
        result = result.model_copy(update={"lowerings": []})
    return result


def _report_result(gate: Gate, gated: ReportGate, slack: set[Any]) -> ReportResult:
    """One report's rows (its checks, contracts, floors, baseline metrics, consistency;
    not judged when it is inconclusive) and what the summary says of it."""
    if gated.report is None:
        assert gated.error is not None
        return ReportResult(name=gated.file.name, path=display_path(gated.file.path), kind=None,
                            n_cases=None, failed=None, error=str(gated.error))
    report = gated.report
    strict = gate.config.mode == "strict"
    rows = [_row(gate, check, strict and check.entry is not None and check.entry.loc in slack,
                 gated.checks) for check in gated.checks]
    assert gate.ceilings is not None or not gated.contracts
    rows += [contract_row(c, f"{display_path(gate.config.ceilings_path)}:{c.contract.line}")
             for c in gated.contracts]
    rows += [_metric_row(gate, m) for m in gated.metrics]
    changes = []
    if gate.baseline is not None:
        floors = {row.name for row in rows}
        rows += [_metric_baseline_row(gate, report, change)
                 for change in gate.baseline.metric_changes(report.name)
                 if change.verdict is not None and f"metric:{change.name}" not in floors]
        changes = gate.baseline.config_results(report.name)
    if gated.differences is not None:
        rows.append(consistency_row(report, gated.differences))
    if gated.inconclusive is not None:
        rows = unjudged(report.name, rows, gated.inconclusive)
    elif any(row.undecided for row in rows):
        rows = [undecided_row(report.name, rows), *rows]
    return ReportResult(
        name=report.name, path=display_path(report.path), kind=report.kind,
        n_cases=report.n_cases, failed=report.failed, rows=rows,
        taxonomy=report.taxonomy.name, format=report.format,
        warnings=[*messages.missing_field_warnings(report), *messages.id_notes(report)],
        caveats=messages.caveat_counts(report),
        explain=messages.explain_lines(report),
        config_changes=changes,
        inconclusive=gated.inconclusive.text if gated.inconclusive is not None else None,
        instrument_changes=[change.text + (f' (accepted: "{change.reason}")'
                                           if change.reason else "")
                            for change in gated.instrument],
        agreement=gated.agreement,
    )


def _lowerings(gate: Gate) -> list[LoweringResult]:
    """The ratchet's plan, each lowering with the items whose counts set it."""
    return [LoweringResult(
        label=lowering.entry.label, start=lowering.span.start, end=lowering.span.end,
        new_text=lowering.new_text, description=lowering.describe(),
        governs=[(c.report.name, c.slice or "", c.name) for c in gate.checks
                 if c.entry is not None and c.entry.loc == lowering.entry.loc])
        for lowering in gate.lowerings]


def _guard(gate: Gate) -> GuardResultModel | None:
    """The guard's verdict: its comparison, or why it could not compare."""
    if gate.guard_error is not None:
        ref = gate.config.guard_ref
        return GuardResultModel(ref=ref or "", passed=False, error=gate.guard_error,
                                lines=[f"guard: could not compare with {ref}: "
                                       f"{gate.guard_error}"])
    return None if gate.guard is None else gate.guard.model()


def _analysis(loaded: list[Report]) -> list[ReportAnalysis]:
    from .analyze import analyze_report  # only for an analysis: imported then

    return [analyze_report(r, r.taxonomy) for r in loaded]


def _init_noise(gate: Gate) -> InitNoise | None:
    """The allowances a noise-aware init writes (None: exact counts)."""
    if gate.noise is None:
        return None
    allowances = {(c.report.name, c.name): c.noise_allowance for c in gate.checks
                  if c.noise_allowance is not None}
    observed = {(c.report.name, c.name): init_observed(c) for c in gate.checks
                if c.noise_allowance is not None}
    return InitNoise(gate.noise.source.written, allowances, gate.noise.budget, gate.noise.items,
                     observed)


def init_observed(check: Check) -> int:
    """The count a new ceiling records as ``observed``: the noise band's evidence with this
    run where there is one (``core.gate.noisy.observed_center``), else this run's count."""
    return check.center if check.center is not None else check.count


def _power(check: Check, limit: int | None) -> dict[str, Any]:
    """The noise fields of a row: its parts, the noise, the smallest regression it catches.

    The regression is measured from the count the ceiling was set from (``observed``)
    when the file records it, else from this run's count.
    """
    ceiling = check.entry.ceiling if check.entry is not None else None
    fields: dict[str, Any] = {
        "observed": ceiling.observed if ceiling is not None else None,
        "allowance": ceiling.allowance if ceiling is not None else None,
        "noise_allowance": check.noise_allowance,
        "moving": check.movement.cases if check.movement is not None else None,
        "noise": check.movement.described if check.movement is not None else None,
    }
    if limit is None or check.verdict == "error":
        return fields
    center = fields["observed"] if fields["observed"] is not None else check.count
    caught = detectable(fields["moving"] or 0, limit - center)
    fields["detectable"] = caught
    fields["blind"] = check.n_cases is not None and caught > check.n_cases * BLIND_SHARE
    return fields


def _row(gate: Gate, check: Check, slack: bool, siblings: Sequence[Check] = ()) -> Row:
    ceilings = gate.ceilings
    source = None
    if check.entry is not None and ceilings is not None:
        source = f"{display_path(ceilings.path)}:{check.entry.line}"
    kind: RowKind = ("total" if check.is_total else "group"
                     if check.name.startswith(GROUP_PREFIX) else "category")
    taxonomy = check.report.taxonomy
    rule = messages.rule_text(check.name, taxonomy)
    first = first_cases(check.report, check.name, taxonomy, check.slice)
    examples = ([] if check.slice is not None
                else case_examples(check.report, check.name, taxonomy))
    if gate.config.mode == "init":
        observed = init_observed(check)
        limit = observed + (check.noise_allowance or 0)
        written = (f"{limit} ({observed} + {check.noise_allowance}, new)"
                   if check.noise_allowance is not None else f"{check.count} (new)")
        noisy = _power(check, limit)
        if check.noise_allowance is not None:
            noisy.update(observed=observed, allowance=check.noise_allowance)
        return Row(report=check.report.name, slice=check.slice, name=check.name, kind=kind,
                   count=check.count, limit=limit, ceiling=written,
                   source=None, line=None, verdict="record", rule=rule, first_cases=first,
                   examples=examples, **noisy)
    verdict: RowVerdict = "fail" if slack and check.verdict == "pass" else check.verdict
    message = messages.check_message(check, source, taxonomy, slack, gate.config,
                                     gate.lowerings) if ceilings is not None else ""
    if message and check.verdict == "fail" and kind != "category":  # one raise, two edits?
        message += messages.members_within(check, siblings, taxonomy)
    if check.corrected is not None and check.limit is not None:  # gold labels decided it
        verdict = "fail" if slack else corrected_verdict(check.corrected, check.limit)
        message = message if slack else corrected_message(check, source)
    warnings = [check.warning] if check.warning else []
    compared = None
    if gate.baseline is not None and check.slice is None and kind in ("category", "total"):
        compared = gate.baseline.judge(check.report.name, check.name)
    if compared is not None and compared.verdict != "pass":
        from ..compare.baseline import baseline_message  # a run with a baseline only

        text = baseline_message(check.name, compared, gate.baseline.alpha,  # type: ignore[union-attr]
                                gate.baseline.family)  # type: ignore[union-attr]
        if compared.verdict == "fail":
            verdict = "fail" if verdict == "pass" else verdict
            message = f"{message}\n{text}" if message else text
        else:
            warnings.append(text)
    return Row(
        report=check.report.name,
        slice=check.slice,
        name=check.name,
        kind=kind,
        count=check.count,
        limit=(check.corrected.ceiling if check.corrected is not None
               and check.corrected.ceiling is not None else check.limit),  # the true one
        cases=_failing_cases(gate, check, first, taxonomy),
        ceiling=messages.ceiling_text(check) if ceilings is not None else "baseline only",
        source=source,
        line=_line(gate, check),
        verdict=verdict,
        slack=slack,
        rule=rule,
        first_cases=first,
        examples=examples,
        message=message,
        baseline=compared,
        warnings=warnings,
        **{**_power(check, check.limit), **_corrected(check)},
    )


def _corrected(check: Check) -> dict[str, Any]:
    """A corrected count's estimate and interval (gold labels), beside the judge's count."""
    corrected = check.corrected
    if corrected is None:
        return {}
    fields: dict[str, Any] = {"estimate": float(corrected.estimate),
                              "lower": corrected.lower, "upper": corrected.upper}
    if corrected.caught is not None:  # the true count's rise the exact test catches
        fields["detectable"] = max(1, corrected.caught - math.floor(corrected.estimate))
        fields["blind"] = (check.n_cases is not None
                           and fields["detectable"] > check.n_cases * BLIND_SHARE)
    return fields

def unjudged(report: str, rows: list[Row], why: Inconclusive) -> list[Row]:
    """A report that cannot be judged: one failing ``inconclusive`` row naming the cause and
    the count, and every other row not judged (``skip``), but the file's own consistency."""
    head = Row(report=report, name="inconclusive", kind="inconclusive", count=why.count,
               limit=None, ceiling="a run that can be judged",
               source=None, line=None, verdict="inconclusive", rule=why.cause,
               message=inconclusive_message(report, why))
    skipped = [row if row.kind == "consistency" else row.model_copy(update={
        "verdict": "skip", "slack": False, "warnings": [],
        "message": f"{row.label}: not judged: {report} is inconclusive ({why.cause})"})
        for row in rows]
    return [head, *skipped]


def undecided_row(report: str, rows: list[Row]) -> Row:
    """The one failing ``inconclusive`` row of a report whose labels cannot decide some of
    its corrected counts: those counts' rows stay inconclusive, not failing, so pytest
    fails this one item where the command, the CI step and MCP fail it (DESIGN 3.1). It
    says, for each, why (its own message's first line: the labels left unusable)."""
    undecided = [row for row in rows if row.undecided]
    return Row(report=report, name="inconclusive", kind="inconclusive", count=None,
               limit=None, ceiling="a run that can be judged", source=None, line=None,
               verdict="inconclusive", rule="corrected counts the labels cannot decide",
               message="\n".join([
                   f"{report}: inconclusive: the labels cannot decide "
                   f"{plural(len(undecided), 'corrected count')} (not a pass, not a "
                   "regression)",
                   *(f"  {row.message.splitlines()[0]}" for row in undecided),
                   "  next     label every drawn case of this run's sample again (`failgate "
                   "sample` records what each label is for), or draw a larger one"]))


def _metric_row(gate: Gate, check: MetricCheck) -> Row:
    source = f"{display_path(gate.config.ceilings_path)}:{check.line}"
    interval = check.interval
    return Row(
        report=check.report.name, name=f"metric:{check.name}", kind="metric", count=None,
        limit=None, ceiling=f"min {format_number(check.floor.min)}", source=source,
        line=check.line, verdict=check.verdict,
        rule=f"mean of {check.name} over the cases where it applies (nulls excluded)",
        message=metric_message(check, source) if check.verdict != "pass" else "",
        value=float(check.mean) if check.mean is not None else None,
        effective_n=check.effective_n,
        interval=list(interval) if interval is not None else None,
    )


def _metric_baseline_row(gate: Gate, report: Report, change: MetricChange) -> Row:
    """A taxonomy metric against the baseline: FAIL fails the item, WARN warns."""
    assert gate.baseline is not None
    assert change.verdict is not None
    from ..compare.baseline import SHOWN_IDS as FIRST_IDS
    from ..compare.baseline import metric_baseline_message

    hint = gate.baseline.metric_hint(report.name, change)
    text = metric_baseline_message(change, gate.baseline.alpha, hint, gate.baseline.family)
    model = MetricBaselineResult(
        better="lower" if change.better == "lower" else "higher",
        base_value=None if change.base_mean is None else float(change.base_mean),
        value=None if change.mean is None else float(change.mean),
        n_base=change.n_base, n=change.n, paired=change.n_pairs,
        worse=change.worse[:FIRST_IDS], improved=change.improved[:FIRST_IDS],
        n_worse=len(change.worse), n_improved=len(change.improved),
        p_value=change.p_value, band=float(change.band), verdict=change.verdict, hint=hint)
    return Row(
        report=report.name, name=f"metric:{change.name}", kind="metric", count=None,
        limit=None, ceiling="baseline", source=None, line=None,
        verdict="fail" if change.verdict == "fail" else "pass",
        rule=next((m.description for m in report.taxonomy.metrics if m.name == change.name),
                  change.name),
        message=text if change.verdict == "fail" else "",
        warnings=[text] if change.verdict == "warn" else [],
        value=model.value, effective_n=change.n, metric_baseline=model)


def _line(gate: Gate, check: Check) -> int | None:
    if gate.ceilings is None:
        return None
    if check.entry is not None:
        return check.entry.line
    span = gate.ceilings.doc.keys.get(("ceilings",))
    return span.line if span is not None else 1


def contract_row(result: ContractResult, source: str) -> Row:
    """The item of one contract on one report."""
    contract = result.contract
    verdict: RowVerdict = "error" if result.holds is None else "pass" if result.holds else "fail"
    message = messages.contract_message(result, source)
    return Row(report=result.report.name, name=f"contract:{contract.name}", kind="contract",
               count=None, limit=None, ceiling=contract.text, source=source,
               line=contract.line, verdict=verdict, rule=contract.text, message=message)


def consistency_row(report: Report, differences: list[str]) -> Row:
    """The item that compares a report's recorded aggregates with its recomputed cases."""
    message = messages.consistency_message(report, differences)
    return Row(
        report=report.name, name="consistency", kind="consistency", count=None, limit=None,
        ceiling="recorded = recomputed", source=None, line=None,
        verdict="fail" if differences else "pass",
        rule="recorded failure_category_counts equal the recomputed counts", message=message,
    )


def _failing_cases(gate: Gate, check: Check, first: list[str], taxonomy: Taxonomy
                   ) -> list[FailingCase]:
    """The first cases of a count with the report's reason for each (the ``reason`` field,
    where the taxonomy declares it) and, against a baseline run, whether each is new: not in
    this category there, or not in that run at all. Against a baseline the new ones come
    first (the first of them, then the first already failing), so a pull request's one new
    failure is never hidden behind ten old ones."""
    reasons: dict[str, str] = {}
    if REASON in taxonomy.field_index and check.report.tally is not None:
        for category in taxonomy.members(check.name):
            for case_id, case in check.report.tally.examples.get(category, []):
                if isinstance(case.get(REASON), str) and case[REASON]:
                    reasons.setdefault(case_id, case[REASON])
    compared = gate.baseline.comparison if gate.baseline is not None else None
    found = next((r for r in compared.reports if r.name == check.report.name),
                 None) if compared is not None and check.slice is None else None
    if found is None or not found.paired:
        return [FailingCase(id=case_id, reason=reasons.get(case_id)) for case_id in first]
    changes = {change.category: change for change in found.changes}
    names = [check.name] if check.name in changes else taxonomy.members(check.name)
    held = messages.case_ids(check.report, check.name, taxonomy)
    entered = {case_id for name in names if name in changes for case_id in changes[name].new}
    entered |= set(found.only_candidate)
    new = [case_id for case_id in held if case_id in entered]
    old = [case_id for case_id in held if case_id not in entered]
    return [FailingCase(id=case_id, reason=reasons.get(case_id), new=case_id in entered)
            for case_id in [*new, *old][:FIRST_CASES]]


# the case field a taxonomy declares for the report's own reason a case failed (the failed
# assertion's or metric's): shown beside each failing case
REASON = "reason"


def case_examples(report: Report, name: str, taxonomy: Taxonomy) -> list[CaseExample]:
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
        found = [e for c in taxonomy.members(name)
                 for e in report.tally.examples[c]][:FIRST_CASES]
    fields = list(dict.fromkeys(reads))
    return [CaseExample(id=case_id, fields={f: case.get(f) for f in fields})
            for case_id, case in found]


def first_cases(report: Report, name: str, taxonomy: Taxonomy, slice_: str | None = None
                ) -> list[str]:
    """The first case ids a count holds."""
    return messages.case_ids(report, name, taxonomy, slice_)[:FIRST_CASES]
