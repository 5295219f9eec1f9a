"""The commands that read runs without gating them: ``diff``, ``noise``, ``history``,
``analyze``; and the two that read the configuration only: ``guard``, ``sql``.

Each takes the run's ``Config`` (or the ``Failgate`` built on it) and returns a result
model. Every report is classified by its own taxonomy (the one given, else the ceilings
file's for its name or format, else its format's own), so runs mixing formats compare
report by report.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..core.base.errors import FailgateError, display_path
from .app import Failgate
from .results import (
    AnalyzeResult,
    Band,
    CategoryDiff,
    DiffResult,
    HistoryResult,
    HistoryRun,
    NoiseBandsResult,
    ReportDiff,
    SqlResult,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ..core.base.result import GuardResultModel
    from ..core.compare.noise import NoiseDocument
    from ..core.guard.loosening import GuardResult
    from ..core.reports.model import Report
    from .config import Config


def diff(config: Config | Failgate, base: Path, candidate: Path) -> DiffResult:
    """Per report and category, the cases that entered and left it between two runs."""
    from ..core.compare.pairing import compare_runs

    app = Failgate.of(config)
    runs = [app.load_all((path,)) for path in (base, candidate)]
    comparison = compare_runs(runs[0], runs[1])
    taxonomies = {report.name: report.taxonomy.name for report in runs[1]}
    return DiffResult(
        reports=[ReportDiff(
            name=report.name, taxonomy=taxonomies[report.name], paired=report.paired,
            n_both=report.n_both,
            changes=[CategoryDiff(category=c.category, base_count=c.base_count, count=c.count,
                                  new=c.new, fixed=c.fixed, n_new=c.new_count,
                                  n_fixed=c.fixed_count) for c in report.changes],
            only_base=report.only_base, only_candidate=report.only_candidate,
            n_only_base=report.only_base_count, n_only_candidate=report.only_candidate_count)
            for report in comparison.reports],
        only_base=comparison.only_base, only_candidate=comparison.only_candidate)


def noise(config: Config | Failgate, runs: Sequence[Path], out: Path) -> NoiseBandsResult:
    """Each category's and metric's noise band from repeated runs of one configuration,
    written to ``out`` in the regression gate's ``noise_band.json`` format, with the runs it
    was measured from (``measured_from``, relative to ``out``, each with when it ran) so it
    can be re-measured; a warning when they all ran within one day."""
    from ..core.compare.noise import noise_band_document
    from ..core.compare.provenance import MEASURED_FROM, runs_written
    from ..core.compare.ran import run_time, spread_warning, written

    loaded = _load_runs(config, runs)
    measured = _noise_of(loaded)
    times = [run_time(reports) for _, reports in loaded]
    entries: list[object] = [
        {"run": path, "ran": written(time[0]), "time_from": time[1]} if time else path
        for path, time in zip(runs_written(out, runs), times, strict=True)]
    document = {**noise_band_document(measured), MEASURED_FROM: entries}
    try:
        out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    except OSError as exc:
        raise FailgateError(f"cannot write: {exc.strerror}", out) from None
    warning = spread_warning([time[0] for time in times if time is not None])
    return NoiseBandsResult(
        out=display_path(out), n_runs=len(runs), document=document,
        bands={name: Band(min=b.min, max=b.max, std=b.std) for name, b in measured.bands.items()},
        metric_bands={name: Band(min=float(m.min), max=float(m.max), std=m.std)
                      for name, m in measured.metric_bands.items()},
        unstable_cases=list(measured.unstable_cases),
        warnings=[warning] if warning else [])


def remeasure(config: Config | Failgate, band: Path, runs: Sequence[Path] = ()
              ) -> tuple[list[Path], list[str]]:
    """Measure a noise band again from the runs it names (or ``runs``): the runs, and every
    number of the file they do not reproduce (none: the band is what those runs measure)."""
    from ..core.compare.baseline import load_noise_bands
    from ..core.compare.provenance import differences, recorded_runs

    recorded = load_noise_bands(band)
    runs = list(runs) or recorded_runs(band, recorded)
    for run in runs:
        if not run.exists():
            raise FailgateError("a run the band was measured from is not there", run)
    return runs, differences(recorded, _noise_of(_load_runs(config, runs)))


def _load_runs(config: Config | Failgate, runs: Sequence[Path]
               ) -> list[tuple[str, list[Report]]]:
    if len(runs) < 2:
        raise FailgateError("a noise band needs at least two runs of one configuration")
    app = Failgate.of(config)
    return [(run.name, app.load_all((run,))) for run in runs]


def _noise_of(runs: Sequence[tuple[str, Sequence[Report]]]) -> NoiseDocument:
    from ..core.compare.repeats import noise_from_runs

    return noise_from_runs(runs)


def history(config: Config | Failgate, folder: Path) -> HistoryResult:
    """Counts per category over a folder of runs (one entry per run, in name order)."""
    from ..core.ceilings.load import load_ceilings
    from ..output.history import charted, load_history

    app = Failgate.of(config)
    taxonomy = app.default_taxonomy()
    ceilings: dict[str, int] = {}
    if app.uses_ceilings:
        model = load_ceilings(app.config.ceilings, app.plugins.taxonomies).model
        ceilings = {n: c.max for n, c in model.ceilings.items() if c.max is not None}
    points = load_history(folder, taxonomy, app.read_spec())
    return HistoryResult(
        taxonomy=taxonomy.name, categories=list(taxonomy.category_names),
        charted=charted(points, taxonomy.category_names),
        points=[HistoryRun(label=p.label, counts=dict(p.counts)) for p in points],
        ceilings=ceilings)


def analyze(config: Config | Failgate, slices: Sequence[str] = ()) -> AnalyzeResult:
    """One run, no baseline: failures by stage, the weakest slices, what to look at first."""
    from ..core.gate.analyze import DEFAULT_SLICES, analysis_slicers, analyze_report

    app = Failgate.of(config)
    if not app.config.paths:
        raise FailgateError("no report to analyze: give the reports' paths, or set the ini "
                            "key failgate")
    fields = tuple(slices) or DEFAULT_SLICES
    reports = app.load_all(app.config.paths, app.read_spec(analysis_slicers(fields)))
    return AnalyzeResult(reports=[analyze_report(r, r.taxonomy, fields) for r in reports])


def guard(config: Config | Failgate, ref: str) -> GuardResultModel:
    """Whether anything the gate enforces was loosened since ``ref`` without a reason."""
    return compare_with_ref(config, ref).model()


def compare_with_ref(config: Config | Failgate, ref: str) -> GuardResult:
    """The guard's comparison, told the run's reports as the gate is given them (the
    command's arguments, else the ini key ``failgate``): an override naming none of them is
    caught, and the guard says when it was not told them."""
    from .. import options
    from ..core.gate.probed import probe_run
    from ..core.gate.runner import guard_inputs
    from ..core.guard.loosening import guard as compare

    app = Failgate.of(config)
    run: dict[str, Any] = {"origins": getattr(app.plugins.taxonomies, "origins", None)}
    if app.config.paths:  # the reports the overrides must still name, their readers: each
        # known by its head, as the gate would name it, none of their cases read
        found = probe_run(app.config.paths, app.choice(), app.read_spec(), app.config.engine)
        run = guard_inputs(found, app.plugins.taxonomies, app.plugins.readers)
    return compare(app.config.ceilings, ref, **run, options=options.OPTIONS)


def sql(config: Config | Failgate, dialect: str, table: str, sample: Path | None = None
        ) -> SqlResult:
    """The gate as one SQL query: counts per category and slice, from the ceilings file's
    taxonomy, slices, populations and metrics (the given taxonomy's alone without one)."""
    from ..core.ceilings.load import load_ceilings
    from ..core.engines.sqltext import declared_schema, gate_sql, sample_schema
    from ..core.reports.read import ReadSpec

    app = Failgate.of(config)
    taxonomy = app.default_taxonomy()
    spec = ReadSpec()
    if app.uses_ceilings:
        ceilings = load_ceilings(app.config.ceilings, app.plugins.taxonomies)
        spec = ReadSpec(ceilings.populations, ceilings.slicers, metrics=ceilings.metrics)
    schema = sample_schema(sample) if sample is not None else declared_schema(taxonomy, spec)
    return SqlResult(dialect=dialect, table=table,
                     sql=gate_sql(taxonomy, spec, dialect, table, schema))
