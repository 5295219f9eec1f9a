"""One gate run, start to finish, with no knowledge of pytest.

Load the ceilings, find and load the reports, classify, check every count, and
plan the ratchet. A problem with one report is kept beside the others' results
(the run fails, but the summary still shows what could be read); a problem with
the ceilings file or the paths stops the run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from . import render
from .ceilings.check import Check, consistency_differences, evaluate
from .ceilings.load import TOTAL, Ceilings, load_ceilings
from .ceilings.rewrite import Lowering, init_text, plan_ratchet
from .errors import FailgateError, display_path
from .guard import GuardResult, guard
from .reports.discover import discover
from .reports.model import Report, ReportFile, SkippedFile
from .reports.read import load_report
from .result import GateResult, GuardResultModel, LoweringResult, ReportResult, Row
from .taxonomy import Taxonomy, builtin_taxonomies

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

Mode = Literal["gate", "strict", "ratchet", "init"]


@dataclass(frozen=True)
class GateConfig:
    """What to gate: report paths, the ceilings file, and how strictly."""

    paths: tuple[Path, ...]
    ceilings_path: Path
    mode: Mode = "gate"
    init_taxonomy: str = "rag"
    guard_ref: str | None = None  # compare the ceilings file with this git ref


@dataclass
class ReportGate:
    """One report's outcome: loaded with its checks, or the error that stopped it."""

    file: ReportFile
    report: Report | None = None
    error: FailgateError | None = None
    checks: list[Check] = field(default_factory=list)
    differences: list[str] | None = None  # consistency; None when nothing to cross-check


@dataclass
class Gate:
    config: GateConfig
    taxonomy: Taxonomy
    ceilings: Ceilings | None
    reports: list[ReportGate]
    skipped: list[SkippedFile]
    plan: list[Lowering]
    warnings: list[str] = field(default_factory=list)
    guard: GuardResult | None = None

    @property
    def checks(self) -> list[Check]:
        return [check for report in self.reports for check in report.checks]

    def result(self) -> GateResult:
        """The serialisable outcome (item messages, summary data, ratchet plan)."""
        slack = {lowering.entry.loc for lowering in self.plan}
        strict = self.config.mode == "strict"
        reports = []
        for gated in self.reports:
            if gated.report is None:
                assert gated.error is not None
                reports.append(ReportResult(
                    name=gated.file.name, path=display_path(gated.file.path), kind=None,
                    n_cases=None, failed=None, error=str(gated.error),
                ))
                continue
            rows = [self._row(check, strict and check.entry is not None
                              and check.entry.loc in slack) for check in gated.checks]
            if gated.differences is not None:
                rows.append(render.consistency_row(gated.report, gated.differences))
            reports.append(ReportResult(
                name=gated.report.name, path=display_path(gated.report.path),
                kind=gated.report.kind, n_cases=gated.report.n_cases,
                failed=gated.report.failed, rows=rows,
                warnings=render.missing_field_warnings(gated.report),
            ))
        loaded = [g.report for g in self.reports if g.report is not None]
        return GateResult(
            ceilings_path=display_path(self.config.ceilings_path),
            ceilings_sha256=_sha256(self.ceilings.doc.text) if self.ceilings else None,
            taxonomy=self.taxonomy.name,
            mode=self.config.mode,
            reports=reports,
            skipped=[f"{display_path(s.path)} ({s.reason})" for s in self.skipped],
            warnings=self.warnings,
            lowerings=[
                LoweringResult(
                    label=lowering.entry.label, start=lowering.span.start,
                    end=lowering.span.end, new_text=lowering.new_text,
                    description=lowering.describe(),
                    governs=[(c.report.name, c.name) for c in self.checks
                             if c.entry is not None and c.entry.loc == lowering.entry.loc],
                )
                for lowering in self.plan
            ],
            guard=None if self.guard is None else GuardResultModel(
                ref=self.guard.ref, passed=self.guard.passed, lines=list(self.guard.lines())),
            init_text=(
                init_text(self.taxonomy.name, self.taxonomy.category_names, loaded)
                if self.config.mode == "init" and loaded else None
            ),
        )

    def _row(self, check: Check, slack: bool) -> Row:
        ceilings = self.ceilings
        source = None
        if check.entry is not None and ceilings is not None:
            source = f"{display_path(ceilings.path)}:{check.entry.line}"
        kind: Literal["total", "category"] = "total" if check.is_total else "category"
        rule = "all failed cases together" if check.is_total else self.taxonomy.describe(check.name)
        first = render.first_cases(check.report, check.name, self.taxonomy)
        examples = render.examples(check.report, check.name, self.taxonomy)
        if self.config.mode == "init":
            return Row(report=check.report.name, name=check.name, kind=kind, count=check.count,
                       allowed=check.count, ceiling=f"{check.count} (new)", source=None,
                       line=None, verdict="record", rule=rule, first_cases=first,
                       examples=examples)
        verdict = "fail" if slack and check.verdict == "pass" else check.verdict
        return Row(
            report=check.report.name,
            name=check.name,
            kind=kind,
            count=check.count,
            allowed=check.allowed,
            ceiling=render.ceiling_text(check),
            source=source,
            line=self._line(check),
            verdict=verdict,
            slack=slack,
            rule=rule,
            first_cases=first,
            examples=examples,
            message=render.check_message(check, source, self.taxonomy, slack,
                                         self.config, self.plan),
        )


    def _line(self, check: Check) -> int | None:
        if self.ceilings is None:
            return None
        if check.entry is not None:
            return check.entry.line
        span = self.ceilings.doc.keys.get(("ceilings",))
        return span.line if span is not None else 1


def run_gate(config: GateConfig, taxonomies: Mapping[str, Taxonomy] | None = None) -> Gate:
    """Run the whole gate; raises ``FailgateError`` for problems that stop everything.

    ``taxonomies`` are those a ceilings file may name (default: the built-in ones).
    """
    taxonomies = builtin_taxonomies() if taxonomies is None else taxonomies
    ceilings: Ceilings | None = None
    if config.mode == "init":
        if config.ceilings_path.exists():
            raise FailgateError(
                "already exists; --failgate-init only creates a new file "
                "(use --failgate-ratchet to lower an existing one)",
                config.ceilings_path,
            )
        taxonomy = taxonomies[config.init_taxonomy]
    else:
        if not config.ceilings_path.exists():
            raise FailgateError(
                "not found; create it from the current counts with --failgate-init",
                config.ceilings_path,
            )
        ceilings = load_ceilings(config.ceilings_path, taxonomies)
        taxonomy = ceilings.taxonomy
    gated, skipped = load_run(config.paths, taxonomy)
    warnings = ceilings.check_report_names(g.file.name for g in gated) if ceilings else []
    for report_gate in gated:
        if report_gate.report is not None:
            _check(report_gate, report_gate.report, taxonomy, ceilings, config.mode)
    checks = [check for g in gated for check in g.checks]
    plan = plan_ratchet(checks) if ceilings is not None else []
    loosened = guard(config.ceilings_path, config.guard_ref) if config.guard_ref else None
    return Gate(config, taxonomy, ceilings, gated, skipped, plan, warnings, loosened)


def load_run(paths: tuple[Path, ...], taxonomy: Taxonomy
             ) -> tuple[list[ReportGate], list[SkippedFile]]:
    """Find and load every report of one run; a run with no report at all is an error."""
    files, skipped = discover(paths)
    gated: list[ReportGate] = []
    for file in files:
        try:
            loaded = load_report(file, taxonomy)
        except FailgateError as exc:
            gated.append(ReportGate(file, error=exc))
            continue
        if isinstance(loaded, SkippedFile):
            if file.path in paths:
                raise FailgateError(f"not a report: {loaded.reason}", file.path)
            skipped.append(loaded)
            continue
        gated.append(ReportGate(file, report=loaded))
    if not gated:
        where = ", ".join(display_path(p) for p in paths)
        raise FailgateError(
            f"no report found under {where}: a gate over nothing would pass vacuously"
            + (f" ({len(skipped)} file(s) skipped, see the summary)" if skipped else "")
        )
    skipped.sort(key=lambda s: s.path)
    return gated, skipped


def _check(gated: ReportGate, report: Report, taxonomy: Taxonomy, ceilings: Ceilings | None,
           mode: Mode) -> None:
    names: list[str] = list(taxonomy.category_names)
    if mode == "init" or (ceilings is not None and ceilings.entry(report.name, TOTAL)):
        names.append(TOTAL)
    for name in names:
        count = report.failed if name == TOTAL else report.counts[name]
        entry = ceilings.entry(report.name, name) if ceilings is not None else None
        gated.checks.append(evaluate(report, name, count, entry))
    if report.kind == "cases" and report.recorded_counts is not None:
        gated.differences = consistency_differences(report)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


