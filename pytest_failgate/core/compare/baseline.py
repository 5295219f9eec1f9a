"""Comparing a run with a baseline run: paired cases, an exact test, and the noise band.

A category regresses (FAIL) only when the increase is both significant (a one-sided
exact McNemar test on the cases that moved in or out of it) and beyond the noise
band measured from repeated runs of one configuration, in whole cases with a floor
of one. Exactly one of the two gives WARN; neither, PASS. This is the seed
regression gate's rule, computed exactly: no resampling, no seed.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..base.formatting import one_line, plural
from ..base.result import BaselineResult, ConfigChangeResult
from ..reports.jsonfile import load_json
from ..stats.binomial import paired_increase
from . import DEFAULT_ALPHA
from .config import ConfigChange, diff_config, hint_line
from .metrics import MetricChange, compare_metric
from .noise import NoiseDocument, read_noise_band
from .pairing import RunComparison, compare_runs
from .verdicts import band_cases, band_of, regression_verdict

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from fractions import Fraction
    from pathlib import Path

    from ..reports.model import Report
    from ..stats.binomial import TailProbability

SHOWN_IDS = 50


@dataclass(frozen=True)
class BaselineRun:
    """The baseline's comparison with this run, and how to judge each change."""

    comparison: RunComparison
    noise: NoiseDocument
    alpha: Fraction
    base: dict[str, Report] = field(default_factory=dict)
    candidate: dict[str, Report] = field(default_factory=dict)
    excluded: tuple[str, ...] = ()  # unstable cases left out of every paired test
    # each test's decision among all of the run's tests (Holm, ``core.gate.family``), by
    # (report, name) and (report, "metric:<name>"); a test not in it is decided alone
    decided: Mapping[tuple[str, str], bool] = field(default_factory=dict)
    family: str = ""  # how the decisions were made together, for the messages

    def tests(self) -> list[tuple[tuple[str, str], TailProbability]]:
        """Every paired test of the comparison: each category and ``total`` of each paired
        report (McNemar), and each metric that applies to some pair (the sign test)."""
        found: list[tuple[tuple[str, str], TailProbability]] = []
        for report in self.comparison.reports:
            if not report.paired:
                continue
            for change in report.changes:
                found.append(((report.name, change.category),
                              paired_increase(change.new_count, change.fixed_count)))
            for metric in self.metric_changes(report.name):
                if metric.verdict is not None:
                    found.append(((report.name, f"metric:{metric.name}"),
                                  paired_increase(len(metric.worse), len(metric.improved))))
        return found

    def judge(self, report: str, name: str) -> BaselineResult | None:
        """The verdict on one report's name (a category or ``total``), if it was paired."""
        found = next((r for r in self.comparison.reports if r.name == report), None)
        if found is None or not found.paired:
            return None
        change = found.change(name)
        new, fixed = change.new_count, change.fixed_count
        band = band_of(self.noise.bands, name)
        tail = paired_increase(new, fixed)
        decided = self.decided.get((report, name))
        verdict = regression_verdict(new, fixed, band, self.alpha, decided)
        rule = self.candidate[report].taxonomy.category(name)
        hint = None
        if verdict != "pass" and rule is not None:
            hint = hint_line(name, self.config_changes(report), rule.settings)
        return BaselineResult(
            base_count=change.base_count,
            new=change.new[:SHOWN_IDS],
            fixed=change.fixed[:SHOWN_IDS],
            n_new=new,
            n_fixed=fixed,
            p_value=float(tail),
            significant=new > fixed and (tail.at_most(self.alpha) if decided is None
                                         else decided),
            band=band_cases(band),
            beyond_band=new - fixed > band_cases(band),
            verdict=verdict,
            paired=found.n_both,
            hint=hint,
        )

    def config_changes(self, report: str) -> list[ConfigChange]:
        """The configuration settings that differ between the two runs of a report."""
        base, candidate = self.base.get(report), self.candidate.get(report)
        if base is None or candidate is None:
            return []
        return diff_config(base.config, candidate.config)

    def config_results(self, report: str) -> list[ConfigChangeResult]:
        return [ConfigChangeResult(key=c.key, before=c.before, after=c.after, text=c.text)
                for c in self.config_changes(report)]

    def metric_changes(self, report: str) -> list[MetricChange]:
        """Each taxonomy metric of a report, paired with the baseline's same cases."""
        base, candidate = self.base.get(report), self.candidate.get(report)
        if base is None or candidate is None:
            return []
        return [compare_metric(metric, base.case_metrics.get(metric.name, {}),
                               candidate.case_metrics.get(metric.name, {}),
                               self.noise.metric_bands.get(metric.name), self.alpha,
                               self.excluded, self.decided.get((report, f"metric:{metric.name}")))
                for metric in candidate.taxonomy.metrics
                if metric.name in base.case_metrics or metric.name in candidate.case_metrics]

    def metric_hint(self, report: str, change: MetricChange) -> str | None:
        metrics = self.candidate[report].taxonomy.metrics
        metric = next((m for m in metrics if m.name == change.name), None)
        if metric is None or change.verdict in (None, "pass"):
            return None
        return hint_line(change.name, self.config_changes(report), metric.settings)

    def notes(self) -> list[str]:
        """What the comparison could not pair, or left out, for the summary."""
        lines = []
        for names, where in ((self.comparison.only_base, "only in the baseline"),
                             (self.comparison.only_candidate, "only in this run")):
            if names:
                lines.append(f"baseline: reports {where}: {', '.join(map(one_line, names))}")
        unstable = self.noise.unstable_cases
        if unstable:
            shown = (", ".join(map(one_line, unstable[:10]))
                     + (", ..." if len(unstable) > 10 else ""))
            runs = f" across {self.noise.n_runs} runs" if self.noise.n_runs else ""
            what = ("left out of the paired tests" if self.excluded
                    else "kept in the paired tests (the exclude-unstable option leaves them out)")
            lines.append(f"noise: {plural(len(unstable), 'unstable case')}"
                         f"{runs} ({shown}), {what}")
        for report in self.comparison.reports:
            if not report.paired:
                lines.append(f"baseline: {report.name} records counts only; no cases to pair")
            for ids, n, where in (
                    (report.only_base, report.only_base_count, "only in the baseline"),
                    (report.only_candidate, report.only_candidate_count, "only in this run")):
                if n:
                    shown = ", ".join(map(one_line, ids[:5])) + (", ..." if n > 5 else "")
                    lines.append(f"baseline: {report.name}: {plural(n, 'case')} {where} ({shown})")
            for change in self.metric_changes(report.name):
                if change.verdict is None:
                    lines.append(f"baseline: {report.name}: metric {change.name} is not "
                                 "applicable: no case where it applies in both runs")
        return lines


def load_noise_bands(path: Path) -> NoiseDocument:
    """A ``noise_band.json`` in the regression gate's format (see ``noise``)."""
    document = load_json(path)
    try:
        return read_noise_band(document)
    except ValueError as exc:
        raise FailgateError(str(exc), path) from None


def compare_with_baseline(base: Sequence[Report], candidate: Sequence[Report],
                          noise: NoiseDocument, alpha: Fraction | None,
                          exclude_unstable: bool = False) -> BaselineRun:
    """Pair the runs report by report, each under the taxonomy that classified it."""
    excluded = noise.unstable_cases if exclude_unstable else ()
    comparison = compare_runs(base, candidate, with_total=True, exclude=excluded)
    return BaselineRun(comparison, noise, alpha if alpha is not None else DEFAULT_ALPHA,
                       {r.name: r for r in base}, {r.name: r for r in candidate}, excluded)


def baseline_message(name: str, result: BaselineResult, alpha: Fraction, family: str = "") -> str:
    """Why a category regressed (or nearly did) against the baseline."""
    increase = result.n_new - result.n_fixed
    head = {
        "fail": "regressed against the baseline: significant and beyond the noise band",
        "warn": ("changed against the baseline, "
                 + ("significant but within the noise band" if result.significant
                    else "beyond the noise band but not significant")),
        "pass": "no regression against the baseline",
    }[result.verdict]
    lines = [
        f"{name}: {head}",
        f"  baseline {result.base_count} -> {result.base_count + increase}: "
        f"+{result.n_new} new, -{result.n_fixed} fixed among {result.paired} paired cases",
        f"  test     one-sided exact McNemar p = {result.p_value:.4g} "
        f"({family or f'alpha {float(alpha):g}'})",
        f"  band     {result.band} case{'s' if result.band != 1 else ''}"
        " (an increase must exceed it)",
    ]
    if result.new:
        lines.append("  new      " + ", ".join(map(one_line, result.new[:10]))
                     + (f" (+{result.n_new - 10} more)" if result.n_new > 10 else ""))
    if result.hint:
        lines.append(f"  {result.hint}")
    return "\n".join(lines)


def metric_baseline_message(change: MetricChange, alpha: Fraction, hint: str | None,
                            family: str = "") -> str:
    """Why a metric fell (or nearly did) against the baseline."""
    head = {
        "fail": "fell against the baseline: significant and beyond the noise band",
        "warn": "changed against the baseline, significant or beyond the band, not both",
        "pass": "no decline against the baseline",
    }[change.verdict or "pass"]
    arrow = "higher" if change.better == "higher" else "lower"
    lines = [
        f"metric:{change.name}: {head}",
        f"  baseline {_show(change.base_mean)} over {change.n_base} cases -> "
        f"{_show(change.mean)} over {change.n} ({arrow} is better; cases where it does not "
        "apply are left out)",
        f"  paired   {len(change.worse)} worse, {len(change.improved)} better among "
        f"{change.n_pairs} cases where it applies in both runs",
        f"  test     one-sided exact sign test (McNemar for true/false) p = "
        f"{change.p_value:.4g} ({family or f'alpha {float(alpha):g}'})",
        f"  band     {float(change.band):g} case(s) (a decline must exceed it)",
    ]
    if change.worse:
        lines.append("  worse    " + ", ".join(change.worse[:10])
                     + (f" (+{len(change.worse) - 10} more)" if len(change.worse) > 10 else ""))
    if hint:
        lines.append(f"  {hint}")
    return "\n".join(lines)


def _show(value: Fraction | None) -> str:
    return "n/a" if value is None else f"{float(value):.4g}"
