"""Comparing a run with a baseline run: paired cases, an exact test, and the noise band.

A category regresses (FAIL) only when the increase is both significant (a one-sided
exact McNemar test on the cases that moved in or out of it) and beyond the noise
band measured from repeated runs of one configuration, in whole cases with a floor
of one. Exactly one of the two gives WARN; neither, PASS. This is the seed
regression gate's rule, computed exactly: no resampling, no seed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from ..errors import FailgateError
from ..result import BaselineResult
from ..taxonomy.model import TOTAL
from .binomial import paired_increase
from .noise import NoiseBand, read_noise_band
from .pairing import RunComparison, compare_runs
from .verdicts import band_cases, regression_verdict

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ..reports.model import Report
    from ..taxonomy import Taxonomy

DEFAULT_ALPHA = Fraction(1, 20)
SHOWN_IDS = 50


@dataclass(frozen=True)
class BaselineRun:
    """The baseline's comparison with this run, and how to judge each change."""

    comparison: RunComparison
    bands: dict[str, NoiseBand]
    alpha: Fraction

    def judge(self, report: str, name: str) -> BaselineResult | None:
        """The verdict on one report's name (a category or ``total``), if it was paired."""
        found = next((r for r in self.comparison.reports if r.name == report), None)
        if found is None or not found.paired:
            return None
        change = found.change(name)
        new, fixed = len(change.new), len(change.fixed)
        band = self.bands.get(name)
        tail = paired_increase(new, fixed)
        return BaselineResult(
            base_count=change.base_count,
            new=change.new[:SHOWN_IDS],
            fixed=change.fixed[:SHOWN_IDS],
            n_new=new,
            n_fixed=fixed,
            p_value=float(tail),
            significant=new > fixed and tail.at_most(self.alpha),
            band=band_cases(band),
            beyond_band=new - fixed > band_cases(band),
            verdict=regression_verdict(new, fixed, band, self.alpha),
            paired=found.n_both,
        )

    def notes(self) -> list[str]:
        """What the comparison could not pair, for the summary."""
        lines = []
        for names, where in ((self.comparison.only_base, "only in the baseline"),
                             (self.comparison.only_candidate, "only in this run")):
            if names:
                lines.append(f"baseline: reports {where}: {', '.join(names)}")
        for report in self.comparison.reports:
            if not report.paired:
                lines.append(f"baseline: {report.name} records counts only; no cases to pair")
            for ids, where in ((report.only_base, "only in the baseline"),
                               (report.only_candidate, "only in this run")):
                if ids:
                    shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
                    lines.append(f"baseline: {report.name}: {len(ids)} cases {where} ({shown})")
        return lines


def load_noise_bands(path: Path) -> dict[str, NoiseBand]:
    """A ``noise_band.json``: ``metric_band["mode:<category>"]`` with std, min, max, n."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FailgateError(f"cannot read: {exc.strerror}", path) from None
    except json.JSONDecodeError as exc:
        raise FailgateError(f"invalid JSON: {exc.msg}", path, exc.lineno, exc.colno) from None
    try:
        return read_noise_band(document)
    except ValueError as exc:
        raise FailgateError(str(exc), path) from None


def compare_with_baseline(base: Sequence[Report], candidate: Sequence[Report],
                          taxonomy: Taxonomy, bands: dict[str, NoiseBand],
                          alpha: Fraction | None) -> BaselineRun:
    names = [*taxonomy.category_names, TOTAL]
    comparison = compare_runs(base, candidate, names, taxonomy.members)
    return BaselineRun(comparison, bands, alpha if alpha is not None else DEFAULT_ALPHA)


def baseline_message(name: str, result: BaselineResult, alpha: Fraction) -> str:
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
        f"  test     one-sided exact McNemar p = {result.p_value:.4g} (alpha {float(alpha):g})",
        f"  band     {result.band} case{'s' if result.band != 1 else ''}"
        " (an increase must exceed it)",
    ]
    if result.new:
        lines.append("  new      " + ", ".join(result.new[:10])
                     + (f" (+{result.n_new - 10} more)" if result.n_new > 10 else ""))
    return "\n".join(lines)
