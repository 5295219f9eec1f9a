"""A noise band measured from repeated runs of one configuration (``failgate noise``).

Per run: each category's count (``mode:<category>``, and ``mode:correct`` for the
cases that passed, as the regression gate writes it), each metric's mean (the
taxonomy's metrics recomputed from the cases, where they apply; otherwise the
numbers a run folder's ``metrics.json`` records), and each case's outcome, from
which ``case_stability`` counts how many later runs moved a case away from the
first run's outcome, and per category how many cases moved in or out of it
(``moved``, ``discordant``: what noise-aware ceilings are made from). The result is
written in the gate's ``noise_band.json`` format (see :mod:`.noise`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from . import PASSED_MODE
from .noise import (
    NoiseDocument,
    ReportNoise,
    case_stability,
    measure_metrics,
    measure_noise,
    movement_counts,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..reports.model import Report
    from .noise import NoiseBand

_NOT_METRICS = {"num_predictions", "answerable_total", "retrieval_miss_count", "n_cases"}


def _outcomes(reports: Sequence[Report]) -> dict[str, str]:
    """Each case's category (``correct`` when it passed), ids prefixed when several reports."""
    outcomes: dict[str, str] = {}
    for report in reports:
        prefix = f"{report.name}::" if len(reports) > 1 else ""
        failed = {case: name for name in report.taxonomy.category_names
                  for case in report.case_ids(name)}
        for case in report.all_case_ids():
            outcomes[prefix + case] = failed.get(case, PASSED_MODE)
    return outcomes


def _metrics(reports: Sequence[Report]) -> dict[str, float]:
    """Metric means of a run: recomputed where the taxonomy defines them, else recorded."""
    values: dict[str, float] = {}
    if len(reports) == 1:
        for key, value in reports[0].recorded.items():
            if key not in _NOT_METRICS and type(value) in (int, float):
                values[key] = float(value)
    pooled: dict[str, list[float]] = {}
    for report in reports:
        for name, by_case in report.case_metrics.items():
            pooled.setdefault(name, []).extend(by_case.values())
    for name, found in pooled.items():
        if found:  # a mean over no case is not applicable: no band (docs/design.md)
            values[name] = sum(found) / len(found)
    return values


def run_identity(reports: Sequence[Report]) -> str:
    """What names a run in a band's ``run_ids``: the run id its report records (a run
    folder's header ``run_id``), else a digest of its cases' outcomes (``cases:<sha256>``,
    16 hex digits). Not the folder's name: ``init`` on one of the band's own runs must know
    it is one of them (its count is in the band's mean already), wherever it was copied."""
    recorded = reports[0].recorded if len(reports) == 1 else {}
    run_id = recorded.get("run_id")
    if isinstance(run_id, str) and run_id:
        return run_id
    outcomes = json.dumps(sorted(_outcomes(reports).items()), ensure_ascii=False)
    return "cases:" + hashlib.sha256(outcomes.encode("utf-8")).hexdigest()[:16]


def _count_bands(runs: Sequence[Sequence[Report]]) -> dict[str, NoiseBand]:
    """Each category's count band over runs (each run's reports pooled), with how many
    cases moved in or out of it."""
    names = dict.fromkeys(name for reports in runs for report in reports
                          for name in report.taxonomy.category_names)
    counts: list[dict[str, int]] = []
    for reports in runs:
        totals = {name: 0 for name in (*names, PASSED_MODE)}
        for report in reports:
            if report.failed is None:  # counts no category (an Inspect log without samples)
                continue
            for name, count in report.counts.items():
                totals[name] += count
            totals[PASSED_MODE] += (report.n_cases or 0) - report.failed
        counts.append(totals)
    moves = movement_counts([_outcomes(reports) for reports in runs], [*names, PASSED_MODE])
    return {name: replace(band, moved=moves[name][0], discordant=moves[name][1])
            if name in moves else band for name, band in measure_noise(counts).items()}


def _per_report(runs: Sequence[tuple[str, Sequence[Report]]]) -> dict[str, ReportNoise]:
    """Each report's own bands, where a run has several: a report's count moves by its own
    cases' noise, not the pool's (one report of three is not given the others' movement).
    A report needs two runs to have a band; one in fewer has none (not measured)."""
    if all(len(reports) < 2 for _, reports in runs):
        return {}
    names = dict.fromkeys(report.name for _, reports in runs for report in reports)
    found = {}
    for name in names:
        mine = [(label, [r for r in reports if r.name == name]) for label, reports in runs]
        mine = [(label, reports) for label, reports in mine if reports]
        if len(mine) >= 2:
            found[name] = ReportNoise(_count_bands([reports for _, reports in mine]),
                                      tuple(run_identity(reports) for _, reports in mine))
    return found


def noise_from_runs(runs: Sequence[tuple[str, Sequence[Report]]]) -> NoiseDocument:
    """The noise band of repeated runs, each ``(label, its reports)``; two runs at least.

    Each report counts under the taxonomy that classified it; a run mixing formats adds
    up each category its reports' taxonomies name (in the order they first name them).
    Runs of several reports also get each report's own bands (``reports``).
    """
    bands = _count_bands([reports for _, reports in runs])
    outcomes = [_outcomes(reports) for _, reports in runs]
    metric_bands = measure_metrics([_metrics(reports) for _, reports in runs])
    stability = case_stability(outcomes)
    configs = [report.config for _, reports in runs for report in reports]
    config: dict[str, Any] | None = configs[0] if configs and all(
        c == configs[0] for c in configs) else None
    return NoiseDocument(
        bands=bands, metric_bands=metric_bands, case_stability=stability,
        unstable_cases=tuple(case for case, moved in stability.items() if moved),
        n_runs=len(runs), config=config,
        run_ids=tuple(run_identity(reports) for _, reports in runs),
        reports=_per_report(runs))
