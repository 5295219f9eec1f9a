"""A run gated on the true counts: the judge's counts corrected by gold labels.

With a labels file (the labels setting, else the ceilings file's ``labels:``, relative to
it) every count of a report's cases that a ceiling checks as a whole (a category, a
group, ``total``; not a slice's or a population's) is replaced, for the verdict, by its
corrected count (``stats.ppi``); a count with no ceiling written (the default
ceiling of 0) keeps the judge's: a true count of 0 is never shown by a sample, and those
counts would only share out the budget: the estimate and an exact interval at ``1 - alpha / m``,
``alpha`` the run's false-alarm budget (the file's ``significance``, default 0.05) and
``m`` the corrected counts of the run, so that all their intervals hold together with
probability at least ``1 - alpha`` (Bonferroni).

A count **fails** when the interval's lower end is over its ceiling (the true count is,
at that confidence), **passes** when the upper end is within it, and is
**inconclusive** between: the labels cannot tell, which is neither a pass nor a
regression (the run's verdict is ``inconclusive`` when nothing fails). Each comparison is
between integers. The ratchet and init keep the judge's counts: the labels correct a
check, they do not set ceilings.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

from ..base.confine import check_inside
from ..base.errors import FailgateError
from ..base.formatting import format_number, plural
from ..compare import DEFAULT_ALPHA
from ..taxonomy.model import GROUP_PREFIX, TOTAL

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ..ceilings.check import Check
    from ..ceilings.load import Ceilings
    from ..compare.labels import Label
    from ..reports.model import Report
    from ..stats.ppi import Corrected
    from .checked import GateConfig, ReportGate

CorrectedVerdict = Literal["pass", "fail", "inconclusive"]


def labels_path(config: GateConfig, ceilings: Ceilings | None) -> Path | None:
    """The run's labels file: the setting, else the ceilings file's ``labels:``."""
    if config.labels is not None:
        return config.labels
    if ceilings is None or ceilings.model.labels is None:
        return None
    path = (ceilings.path.parent / ceilings.model.labels).resolve()
    check_inside(path)
    if not path.is_file():
        raise ceilings.doc.error(f"labels: {ceilings.model.labels} is not a file (gold labels "
                                 "in JSON Lines, relative to this file)", ("labels",))
    return path


def verdict(corrected: Corrected, limit: int) -> CorrectedVerdict:
    """Fail above the ceiling with confidence, pass within it, else inconclusive."""
    if corrected.lower > limit:
        return "fail"
    return "pass" if corrected.upper <= limit else "inconclusive"


def correct_counts(path: Path, gated: Sequence[ReportGate], ceilings: Ceilings | None,
                   limit: int | None = None) -> list[str]:
    """Correct every whole count of the run's case reports (in place); the notes to show."""
    from ..compare.labels import read_labels

    reports = [g.report for g in gated if g.report is not None and g.report.kind == "cases"]
    labels = read_labels(path, reports, limit)
    by_report: dict[str, list[Label]] = {}
    for label in labels.labels:
        by_report.setdefault(label.report, []).append(label)
    targets = [(g, index) for g in gated if g.report is not None and g.report.kind == "cases"
               for index, check in enumerate(g.checks)
               if check.slice is None and check.population is None and check.limit is not None
               and check.entry is not None and check.verdict != "error"]
    notes = labels.notes()
    from .trust import judge_agreement

    for report_gate in gated:  # how far to trust the judge, beside what it corrects
        if report_gate.report is not None and report_gate.report.kind == "cases":
            report_gate.agreement = judge_agreement(
                report_gate.report, by_report.get(report_gate.report.name, []))
    if not targets:
        return notes
    budget = (ceilings.model.significance if ceilings is not None
              and ceilings.model.significance is not None else DEFAULT_ALPHA)
    alpha = budget / len(targets)
    unknown: dict[str, list[str]] = {}
    for report_name, case in labels.unknown:
        unknown.setdefault(report_name, []).append(case)
    for report_gate, index in targets:
        check = report_gate.checks[index]
        report = check.report
        mine = by_report.get(report.name, [])
        if report.n_cases is None or not (mine or unknown.get(report.name)):
            continue
        corrected = _corrected(report, check, mine, unknown.get(report.name, []), alpha)
        assert check.limit is not None
        decided = verdict(corrected, check.limit)
        if decided == "pass" and check.verdict == "fail" and not labels.drawn:
            notes.append(f"labels: {report.name} {check.name}: the labels would pass it "
                         f"(judge {check.count}, corrected [{corrected.lower}, "
                         f"{corrected.upper}]), but they are not the seed's draw: the "
                         "judge's count fails it")
            continue
        report_gate.checks[index] = replace(
            check, verdict="pass" if decided == "pass" else "fail", warning="", test=None,
            corrected=corrected)
    unlabelled = sorted({g.report.name for g, _ in targets if g.report is not None
                         and g.report.name not in by_report and g.report.name not in unknown})
    if unlabelled:
        notes.append(f"labels: no labelled case of {', '.join(unlabelled)}: the judge's "
                     "counts are gated there, uncorrected")
    notes.append(f"labels: {plural(len(targets), 'count')} corrected by "
                 f"{plural(len(labels.labels), 'gold label')}, intervals at "
                 f"{format_number(budget)}/{len(targets)} each (all hold together with "
                 f"probability at least {format_number((1 - budget) * 100)}%)")
    return notes


def _corrected(report: Report, check: Check, labels: Sequence[Label], unknown: Sequence[str],
               alpha: Fraction) -> Corrected:
    """The count's corrected interval; with drawn cases that have no usable label, the
    widest of the two extremes (every one of them in the count, or none), so that a
    count passes or fails only if it would whichever way they were labelled."""
    from ..compare.labels import Label
    from ..stats.ppi import Corrected, correct

    assert report.n_cases is not None
    if not unknown:
        return correct(report.n_cases, check.count,
                       *_disagreements(report, check.name, labels), alpha=alpha)
    member = sorted(_members(report, check.name))[0]
    extremes = [correct(report.n_cases, check.count,
                        *_disagreements(report, check.name, [
                            *labels, *(Label(report.name, case, category, 0)
                                       for case in unknown)]), alpha=alpha)
                for category in (None, member)]
    _, _, missed, wrong = _disagreements(report, check.name, labels)
    return Corrected(check.count, sum((e.estimate for e in extremes), Fraction(0)) / 2,
                     min(e.lower for e in extremes), max(e.upper for e in extremes), missed,
                     wrong, len(labels), alpha)


def _members(report: Report, name: str) -> set[str]:
    """The categories a count adds up: one, a group's, or every category (``total``)."""
    taxonomy = report.taxonomy
    if name == TOTAL:
        return set(taxonomy.category_names)
    if name.startswith(GROUP_PREFIX):
        return set(taxonomy.members(name))
    return {name}


def _disagreements(report: Report, name: str, labels: Sequence[Label]
                   ) -> tuple[int, int, int, int]:
    """Of the labelled cases: those the judge counted in ``name``, those it did not, the
    latter that truly are (missed), the former that truly are not (wrong)."""
    members = _members(report, name)
    judged = {case for category in members for case in report.case_ids(category)}
    if len(judged) != report.taxonomy.count(name, report.counts):
        raise FailgateError(
            f"labels: report '{report.name}' does not keep every case's category (a SQL "
            "engine keeps the first ids of each): gold labels correct reports classified "
            "by the python engine")
    in_judged = sum(1 for label in labels if label.id in judged)
    wrong = sum(1 for label in labels if label.id in judged and label.category not in members)
    missed = sum(1 for label in labels if label.id not in judged and label.category in members)
    return in_judged, len(labels) - in_judged, missed, wrong


def corrected_text(check: Check) -> str:
    """``judge 312, corrected 297 [271, 324]``."""
    corrected = check.corrected
    assert corrected is not None
    return (f"judge {check.count}, corrected {round(corrected.estimate)} "
            f"[{corrected.lower}, {corrected.upper}]")


def corrected_message(check: Check, source: str | None) -> str:
    """The text of a corrected count that fails or cannot be decided (empty: it passes)."""
    corrected = check.corrected
    assert corrected is not None
    assert check.limit is not None
    decided = verdict(corrected, check.limit)
    if decided == "pass":
        return ""
    label = check.name
    where = f" ({source})" if source else ""
    confidence = format_number((1 - corrected.alpha) * 100)
    if decided == "fail":
        head = (f"{label}: {corrected_text(check)}: the true count is over the ceiling of "
                f"{check.limit}{where} (interval at {confidence}%)")
    else:
        head = (f"{label}: inconclusive: {corrected_text(check)} holds the ceiling of "
                f"{check.limit}{where}: the labels cannot tell whether the true count is "
                "over it (not a pass, not a regression)")
    return "\n".join([
        head,
        f"  labels   {plural(corrected.labelled, 'labelled case')}: the judge missed "
        f"{corrected.missed}, wrongly counted {corrected.wrong}",
        "  next     label more cases (a larger `failgate sample`) to narrow the interval"
        if decided == "inconclusive" else f"  report   {check.report.name}",
    ])
