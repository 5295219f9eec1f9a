"""A run gated on the true counts: the judge's counts corrected by gold labels.

With a labels file (the labels setting, else the ceilings file's ``labels:``, relative to
it) every count of a report's cases that a ceiling checks as a whole (a category, a
group, ``total``; not a slice's or a population's) is decided, for the verdict, on its
true count (``stats.ppi``); a count with no ceiling written (the default ceiling of 0)
keeps the judge's (such counts would only share out the budget).

**A ceiling bounds the true count, one-sided.** A count **fails** when the exact test of
``H0: true count <= ceiling`` rejects, and **passes** otherwise: the labels failing to
show a regression is a pass, as a judge's count at its ceiling is. The tests of the run's
``m`` corrected counts share its false-alarm budget ``alpha`` (the file's
``significance``, default 0.05) by Holm's step-down procedure (uniformly more powerful
than Bonferroni, still at most ``alpha`` for any false alarm in the run, whatever the
tests' dependence). Each count's interval is reported at the level its verdict was
decided at, so a failing count's lower end is over its ceiling and a passing one's is
not.

**Inconclusive** is for a run the labels cannot judge: drawn cases whose label cannot
be used (``Labels.unknown``: stale or changed) are decided both ways, each truly in the
category and each truly not, and a count whose two verdicts differ is inconclusive
(naming how many); with such cases and fewer usable labels than ``MIN_LABELS`` every
corrected count is. A category the judge finds (``J > 0``) with no labelled case in its
stratum is not corrected: the labels say nothing of the judge's wrong calls there, and
it is gated on the judge's count, saying so.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

from ..base.classes import dataclass
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
    from ..compare.labels import Label, Labels
    from ..reports.model import Report
    from ..stats.ppi import Corrected, Sample, StratifiedTest
    from .checked import GateConfig, ReportGate

CorrectedVerdict = Literal["pass", "fail", "inconclusive"]
# What ``init --labels`` writes as a count's true_max: the upper bound of its true count
# at one-sided 1/4. Measured (bench/judge_correction.py --only loop, unchanged reruns
# with fresh labels): the bound at the run's level keeps 99-100% of reruns green but
# catches a +50% regression in 25-57%; the rounded-up estimate catches 78-94% but keeps
# only 72-92% green; the bound at 1/4 keeps 93-100% green and catches 66-84%
# (docs/judge.md, "labels for power").
INIT_LEVEL = Fraction(1, 4)


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
    """The verdict the test decided (else: fail when the lower bound is over ``limit``)."""
    if corrected.verdict is not None:
        return corrected.verdict
    return "fail" if limit < corrected.lower else "pass"


def true_limit(check: Check) -> int | None:
    """The limit of a count's true count: the entry's ``true_max`` when it has one (the
    judge's ``max`` then limits the judge's count, between labellings), else the check's
    limit."""
    ceiling = check.entry.ceiling if check.entry is not None else None
    if ceiling is not None and ceiling.true_max is not None:
        return ceiling.true_max
    return check.limit


@dataclass(frozen=True)
class _Target:
    """One corrected count: where it is, and its labelled sample in each world (the
    unknown labels all in the category, then all out of it; one world without them)."""

    gate: ReportGate
    index: int
    worlds: tuple[Sample, ...]
    unknown: int


def correct_counts(path: Path, gated: Sequence[ReportGate], ceilings: Ceilings | None,
                   limit: int | None = None) -> list[str]:
    """Correct every whole count of the run's case reports (in place); the notes to show."""
    from ..compare.labels import MIN_LABELS, read_labels
    from ..stats.ppi import GAMMA_SHARE, StratifiedTest

    reports = [g.report for g in gated if g.report is not None and g.report.kind == "cases"]
    labels = read_labels(path, reports, limit)
    by_report, unknown = _by_report(labels)
    notes = labels.notes()
    _trust(gated, by_report)
    targets: list[_Target] = []
    uncorrected: list[str] = []
    for report_gate in gated:
        report = report_gate.report
        if report is None or report.kind != "cases" or report.n_cases is None:
            continue
        for index, check in enumerate(report_gate.checks):
            if not (check.slice is None and check.population is None
                    and check.limit is not None and check.entry is not None
                    and check.verdict != "error"):
                continue
            if not by_report.get(report.name) and not unknown.get(report.name):
                continue
            worlds = _worlds(report, check.name, check.count, by_report.get(report.name, []),
                             unknown.get(report.name, []))
            if check.count > 0 and worlds[0].in_judged == 0:
                uncorrected.append(f"{check.name} ({report.name})"
                                   if len(reports) > 1 else check.name)
                continue
            targets.append(_Target(report_gate, index, worlds,
                                   len(unknown.get(report.name, []))))
    if uncorrected:
        notes.append(f"labels: no labelled case among the judge's cases of "
                     f"{', '.join(uncorrected)}: gated on the judge's count there (label a "
                     "larger sample, or one stratified by the judge's label)")
    unlabelled = sorted({g.report.name for g in gated if g.report is not None
                         and g.report.kind == "cases" and g.report.name not in by_report
                         and g.report.name not in unknown})
    if unlabelled and targets:
        notes.append(f"labels: no labelled case of {', '.join(unlabelled)}: the judge's "
                     "counts are gated there, uncorrected")
    if not targets:
        return notes
    budget = (ceilings.model.significance if ceilings is not None
              and ceilings.model.significance is not None else DEFAULT_ALPHA)
    m = len(targets)
    gamma = budget / m * GAMMA_SHARE
    too_few = bool(labels.unknown) and len(labels.labels) < MIN_LABELS
    n_worlds = max(len(t.worlds) for t in targets)
    ceilings_of = [true_limit(t.gate.checks[t.index]) for t in targets]
    found = [decide_counts([(StratifiedTest(t.worlds[min(w, len(t.worlds) - 1)], gamma),
                             limit) for t, limit in zip(targets, ceilings_of, strict=True)
                            if limit is not None], budget) for w in range(n_worlds)]
    for number, target in enumerate(targets):
        results = [world[number] for world in found]
        corrected = _combine(results, target.unknown, too_few)
        check = target.gate.checks[target.index]
        if corrected.verdict == "pass" and check.verdict == "fail" and not labels.drawn:
            notes.append(f"labels: {check.report.name} {check.name}: the labels would pass "
                         f"it (judge {check.count}, corrected [{corrected.lower}, "
                         f"{corrected.upper}]), but they are not the seed's draw: the "
                         "judge's count fails it")
            continue
        target.gate.checks[target.index] = replace(
            check, verdict="pass" if corrected.verdict == "pass" else "fail", warning="",
            test=None, corrected=corrected)
    notes.append(f"labels: {plural(m, 'count')} corrected by "
                 f"{plural(len(labels.labels), 'gold label')}: exact one-sided tests of "
                 f"each true count against its ceiling at {format_number(budget)} for the "
                 f"run (Holm over {m}: a false alarm in at most "
                 f"{format_number(budget * 100)}% of runs)")
    if labels.unknown:
        notes.append(f"labels: {plural(len(labels.unknown), 'drawn case')} without a usable "
                     "label: each count decided both ways (those cases truly in it, and "
                     "truly not); a count whose verdicts differ is inconclusive"
                     + (f"; only {len(labels.labels)} usable labels, fewer than the "
                        f"{MIN_LABELS} a corrected count needs: every corrected count is "
                        "inconclusive" if too_few else ""))
    return notes


def _by_report(labels: Labels) -> tuple[dict[str, list[Label]], dict[str, list[str]]]:
    """Each report's usable labels, and its drawn cases without one."""
    by_report: dict[str, list[Label]] = {}
    for label in labels.labels:
        by_report.setdefault(label.report, []).append(label)
    unknown: dict[str, list[str]] = {}
    for report_name, case in labels.unknown:
        unknown.setdefault(report_name, []).append(case)
    return by_report, unknown


def _trust(gated: Sequence[ReportGate], by_report: dict[str, list[Label]]) -> None:
    """How far to trust the judge, beside what the labels correct (``core.gate.trust``)."""
    from .trust import judge_agreement

    for report_gate in gated:
        if report_gate.report is not None and report_gate.report.kind == "cases":
            report_gate.agreement = judge_agreement(
                report_gate.report, by_report.get(report_gate.report.name, []))


def init_true_counts(path: Path, gated: Sequence[ReportGate], ceilings: Ceilings | None,
                     limit: int | None = None) -> tuple[dict[tuple[str, str], int], list[str]]:
    """What ``init --labels`` writes as each count's ``true_max``: the upper bound of its
    true count at one-sided ``INIT_LEVEL`` (a labelled rerun of the unchanged system
    passes it in about 19 runs of 20, and a +50% regression still fails it: see
    ``INIT_LEVEL``); every category and ``total`` of each labelled case report."""
    from ..compare.labels import read_labels
    from ..stats.ppi import GAMMA_SHARE, StratifiedTest

    reports = [g.report for g in gated if g.report is not None and g.report.kind == "cases"]
    labels = read_labels(path, reports, limit)
    by_report, unknown = _by_report(labels)
    names = [(report, name) for report in reports if report.n_cases
             and (report.name in by_report or report.name in unknown)
             for name in (*report.taxonomy.category_names, TOTAL)]
    found: dict[tuple[str, str], int] = {}
    if not names:
        return found, ["labels: no labelled case of the run's reports: init writes the "
                       "judge's counts alone"]
    gamma = INIT_LEVEL * GAMMA_SHARE
    for report, name in names:
        count = report.taxonomy.count(name, report.counts)
        worlds = _worlds(report, name, count, by_report.get(report.name, []),
                         unknown.get(report.name, []))
        # with unknown labels, the world with each of them truly in the count: the higher
        found[(report.name, name)] = StratifiedTest(worlds[0], gamma).upper(INIT_LEVEL)
    notes = [note for note in (labels.note(),) if note is not None]
    notes.append(f"labels: true_max written beside each count from "
                 f"{plural(len(labels.labels), 'gold label')}: the largest true count the "
                 f"labels do not rule out at {format_number(INIT_LEVEL)} (a labelled run "
                 "is tested against true_max, a run without labels against max)")
    return found, notes


def _worlds(report: Report, name: str, count: int, labels: Sequence[Label],
            unknown: Sequence[str]) -> tuple[Sample, ...]:
    """The count's labelled sample; with unknown labels, in both extreme worlds."""
    from ..stats.ppi import Sample

    in_judged, in_other, missed, wrong, judged = _disagreements(report, name, labels)
    if not unknown:
        return (Sample(report.n_cases or 0, count, in_judged, in_other, missed, wrong),)
    unknown_judged = sum(1 for case in unknown if case in judged)
    unknown_other = len(unknown) - unknown_judged
    n1, n0 = in_judged + unknown_judged, in_other + unknown_other
    total = report.n_cases or 0
    return (Sample(total, count, n1, n0, missed + unknown_other, wrong),  # all truly in it
            Sample(total, count, n1, n0, missed, wrong + unknown_judged))  # all truly not


def decide_counts(tests: Sequence[tuple[StratifiedTest, int]], alpha: Fraction
                  ) -> list[Corrected]:
    """Holm's step-down over the counts' exact tests (each with its ceiling) at the run's
    ``alpha``, the tests' shared ``gamma`` below ``alpha / m``: each count's verdict, with its
    bounds at the level it was decided at (``core.stats.holm`` states the procedure; its
    tests are binomial tails, these Berger-Boos p-values, decided the same way: by the
    least step whose level rejects, found by bisection)."""
    from ..stats.ppi import summarize

    m = len(tests)

    def least_step(item: tuple[StratifiedTest, int]) -> int | None:
        test, ceiling = item
        if not test.rejects(ceiling, alpha):  # the largest level, at t = m
            return None
        low, high = 1, m
        while low < high:
            middle = (low + high) // 2
            if test.rejects(ceiling, alpha / (m - middle + 1)):
                high = middle
            else:
                low = middle + 1
        return low

    steps = [least_step(item) for item in tests]
    at_most = [0] * (m + 2)
    for step in steps:
        if step is not None:
            at_most[step] += 1
    rejected = running = 0
    for t in range(1, m + 1):
        running += at_most[t]
        if running < t:
            break
        rejected = t
    failing_level = alpha / (m - rejected + 1)  # every rejected p-value is within it
    passing_level = alpha / (m - rejected) if rejected < m else failing_level
    found = []
    for (test, ceiling), step in zip(tests, steps, strict=True):
        fails = step is not None and step <= rejected
        corrected = summarize(test, failing_level if fails else passing_level, ceiling)
        found.append(replace(corrected, verdict="fail" if fails else "pass"))
    return found


def _combine(results: Sequence[Corrected], unknown: int, too_few: bool) -> Corrected:
    """One verdict from the worlds: one world decides; two decide when they agree (the
    unknown labels cannot change it), else (or with too few usable labels) inconclusive."""
    if len(results) == 1 and not too_few:
        return results[0]
    high, low = results[0], results[-1]  # unknown cases all in the category, all out
    if high.verdict == low.verdict and not too_few:
        return replace(low if low.verdict == "fail" else high, unknown=unknown)
    lower, upper = min(low.lower, high.lower), max(low.upper, high.upper)
    estimate = min(max((low.estimate + high.estimate) / 2, Fraction(lower)), Fraction(upper))
    return replace(low, lower=lower, upper=upper, estimate=estimate, unknown=unknown,
                   verdict="inconclusive")


def _members(report: Report, name: str) -> set[str]:
    """The categories a count adds up: one, a group's, or every category (``total``)."""
    taxonomy = report.taxonomy
    if name == TOTAL:
        return set(taxonomy.category_names)
    if name.startswith(GROUP_PREFIX):
        return set(taxonomy.members(name))
    return {name}


def _disagreements(report: Report, name: str, labels: Sequence[Label]
                   ) -> tuple[int, int, int, int, set[str]]:
    """Of the labelled cases: those the judge counted in ``name``, those it did not, the
    latter that truly are (missed), the former that truly are not (wrong); and the ids
    the judge counted."""
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
    return in_judged, len(labels) - in_judged, missed, wrong, judged


def corrected_text(check: Check) -> str:
    """``judge 312, corrected 297 [271, 324]``."""
    corrected = check.corrected
    assert corrected is not None
    return (f"judge {check.count}, corrected {round(corrected.estimate)} "
            f"[{corrected.lower}, {corrected.upper}]")


def corrected_message(check: Check, source: str | None) -> str:
    """The text of a corrected count that fails or cannot be decided (empty: it passes):
    the estimate and interval, the largest true count the labels cannot rule out and the
    smallest regression the test would catch."""
    corrected = check.corrected
    assert corrected is not None
    limit = corrected.ceiling if corrected.ceiling is not None else check.limit
    assert limit is not None
    decided = verdict(corrected, limit)
    if decided == "pass":
        return ""
    label = check.name
    where = f" ({source})" if source else ""
    level = format_number(corrected.alpha * 100)
    if decided == "fail":
        head = (f"{label}: {corrected_text(check)}: the labels show the true count over "
                f"the ceiling of {limit}{where} (exact one-sided test at {level}%: "
                f"at least {corrected.lower})")
    else:
        head = (f"{label}: inconclusive: {corrected_text(check)} against the ceiling of "
                f"{limit}{where}: "
                + (f"{plural(corrected.unknown, 'drawn case')} without a usable label "
                   "decide it (all truly in the category and all truly not give different "
                   "verdicts)" if corrected.unknown else "too few usable labels")
                + " (not a pass, not a regression)")
    lines = [
        head,
        f"  labels   {plural(corrected.labelled, 'labelled case')} "
        f"({corrected.in_judged} the judge put in it): the judge missed {corrected.missed}, "
        f"wrongly counted {corrected.wrong}",
        f"  bounds   the largest true count the labels cannot rule out: {corrected.upper}"
        + (f"; the test catches a true count of about {corrected.caught} in 80% of runs"
           if corrected.caught is not None else ""),
    ]
    lines.append("  next     label the drawn cases again (`failgate sample`, the same seed)"
                 if decided == "inconclusive" else f"  report   {check.report.name}")
    return "\n".join(lines)
