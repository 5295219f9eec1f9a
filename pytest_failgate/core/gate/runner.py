"""One gate run, start to finish, with no knowledge of pytest.

Load the ceilings, find and load the reports, classify, check every count, and
plan the ratchet. A problem with one report is kept beside the others' results
(the run fails, but the summary still shows what could be read); a problem with
the ceilings file or the paths stops the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.advice import TAXONOMY_FILE
from ..base.classes import dataclass
from ..base.errors import FailgateError, display_path
from ..base.safeopen import byte_limit
from ..ceilings.check import Check, consistency_differences, evaluate, unmeasurable
from ..ceilings.load import Ceilings, ContractCheck, Entry, load_ceilings, nearby_ceilings
from ..ceilings.metrics import evaluate_metric
from ..ceilings.model import SLICE_SEPARATOR
from ..ceilings.rewrite import plan_ratchet, unconfirmed
from ..compare import DEFAULT_ALPHA
from ..engines.load import (
    check_engine,
    load_table,
    runs_in_engine,
)
from ..reports.builtin import builtin_readers
from ..reports.choice import TaxonomyChoice
from ..reports.model import Report, ReportFile, SkippedFile
from ..reports.read import ReadSpec, load_report
from ..reports.sink import UnfitTaxonomy
from ..taxonomy import Taxonomy, builtin_taxonomies
from ..taxonomy.expr import ExprRuntimeError
from ..taxonomy.files import taxonomy_by_name_or_path, taxonomy_from_yaml
from ..taxonomy.model import GROUP_PREFIX, TOTAL
from .checked import ContractResult, GateConfig, Mode, ReportGate
from .confirming import paired_drops
from .corrected import correct_counts, init_true_counts, labels_path
from .dated import dated, judge_baseline, refuse_confirm_baseline
from .family import decide
from .found import no_report, one_run_per_name, run_files
from .inconclusive import judge as judge_inconclusive
from .measured import compare_instruments, compare_recorded_instruments
from .noisy import measure_noise, noise_source
from .rows import build_result
from .run import GateRun
from .tooled import in_tools_words

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from fractions import Fraction
    from pathlib import Path

    from ..base.result import GateResult
    from ..ceilings.rewrite import Lowering
    from ..compare.baseline import BaselineRun
    from ..guard.loosening import GuardResult
    from ..reports.readers import ReportReader
    from .noisy import NoiseSource

__all__ = ["ContractResult", "Gate", "GateConfig", "GateContext", "Mode", "ReportGate",
           "byte_limit", "check", "classify", "judge", "load", "load_run", "load_run_or_raise",
           "run_counts", "run_gate", "taxonomy_choice"]


class Gate(GateRun):
    """A gate run as ``run_gate`` returns it: its data, and the result built from it."""

    def result(self) -> GateResult:
        """The serialisable outcome (item messages, summary data, ratchet plan), built once."""
        if self.built is None:
            self.built = build_result(self)
        return self.built


@dataclass(frozen=True)
class GateContext:
    """What every step of one run reads, fixed once the ceilings are loaded: the
    configuration, the taxonomies and readers it may use, the ceilings file (None for
    init, or a baseline alone), the run's taxonomy choice and what reading must measure.

    The steps (``load``, ``classify``, ``check``, ``judge``) take it instead of a growing
    list of parameters: a new input is one field here.
    """

    config: GateConfig
    taxonomies: Mapping[str, Taxonomy]
    readers: tuple[ReportReader, ...]
    ceilings: Ceilings | None
    choice: TaxonomyChoice
    spec: ReadSpec
    # a taxonomy a new ceilings file writes inline: the one compiled, and its mapping
    inline: tuple[Taxonomy, Mapping[str, Any]] | None = None

    @property
    def checking(self) -> bool:
        """Whether the run checks counts against written ceilings (not init, not free)."""
        return self.ceilings is not None and self.config.mode != "init"

    @property
    def budget(self) -> Fraction:
        """The run's significance budget: the ceilings file's, else the default."""
        alpha = self.ceilings.model.significance if self.ceilings is not None else None
        return alpha if alpha is not None else DEFAULT_ALPHA


def run_gate(config: GateConfig, taxonomies: Mapping[str, Taxonomy] | None = None,
             readers: Sequence[ReportReader] = ()) -> Gate:
    """Run the whole gate; raises ``FailgateError`` for problems that stop everything.

    ``taxonomies`` are those a ceilings file may name (default: the built-in ones);
    ``readers`` read formats beyond failgate's own JSON (default: the built-in ones).
    Four steps, each over one context: load the ceilings, classify the reports, check
    every count, judge the run (noise, baseline, significance, ratchet, guard).
    """
    context = load(config, taxonomies, readers)
    gate = classify(context)
    check(context, gate)
    judge(context, gate)
    in_tools_words(gate.reports, context.readers)  # each next step names the tool's run
    return gate


def load(config: GateConfig, taxonomies: Mapping[str, Taxonomy] | None = None,
         readers: Sequence[ReportReader] = ()) -> GateContext:
    """The run's inputs: its ceilings file (or none, for init or a baseline alone), the
    taxonomy choice made once for the run, and what reading must measure."""
    taxonomies = builtin_taxonomies() if taxonomies is None else taxonomies
    every_reader = (*readers, *builtin_readers())
    check_engine(config.engine)
    ceilings: Ceilings | None = None
    inline: tuple[Taxonomy, Mapping[str, Any]] | None = None  # written inline by init
    if config.mode == "init" or (config.baseline and not config.ceilings_path.exists()):
        # init, or a comparison with the baseline alone (no ceilings: every count is free)
        if config.mode == "init" and config.ceilings_path.exists() \
                and not config.replace_existing:
            raise FailgateError(
                "already exists; init only creates a new ceilings file (lower the ceilings of "
                f"an existing one with {config.advice.ratchet})", config.ceilings_path)
        given = (taxonomy_by_name_or_path(config.init_taxonomy, taxonomies)
                 if config.init_taxonomy is not None else None)
        if given is None and config.inline_taxonomy is not None:
            given = taxonomy_from_yaml(yaml_text(config.inline_taxonomy), "<init>")
            inline = (given, config.inline_taxonomy)
        if given is None and config.replace_existing and config.ceilings_path.exists():
            # ``init --force`` keeps the file's own taxonomy: a name, a file, or inline
            kept = load_ceilings(config.ceilings_path, taxonomies)
            given = kept.taxonomy
            if isinstance(kept.model.taxonomy, dict):
                inline = (given, kept.model.taxonomy)
    else:
        if not config.ceilings_path.exists():
            raise FailgateError(_not_found(config), config.ceilings_path)
        ceilings = load_ceilings(config.ceilings_path, taxonomies)
        if config.init_taxonomy is not None:
            _same_taxonomy(taxonomy_by_name_or_path(config.init_taxonomy, taxonomies),
                           ceilings.taxonomy, config.ceilings_path)
        given = None  # once the file exists, its taxonomy: decides (and its taxonomies:)
    choice = taxonomy_choice(taxonomies, given, ceilings)  # the run's: made here, once
    spec = _read_spec(ceilings, choice.run_taxonomy, config, every_reader)
    return GateContext(config, taxonomies, every_reader, ceilings, choice, spec, inline)


def _not_found(config: GateConfig) -> str:
    """The missing ceilings file's error: a file of its name near it (``nearby_ceilings``:
    run from its folder, or name it), else an init."""
    import os

    init = f"create it from the current counts with {config.advice.init}"
    found = nearby_ceilings(config.ceilings_path, config.paths)
    if found is None:
        return f"not found; {init}"
    where = os.path.relpath(found.parent)
    below = not where.startswith(os.pardir)  # gated from the repository's root, say
    action = f" (the Action's `working-directory: {where}`)" if below else ""
    return (f"not found here, but {os.path.relpath(found)} is: run the gate from {where}"
            f"{action}, or name that file with {config.advice.ceilings}; to start another "
            f"file here, {init}")


def classify(context: GateContext) -> Gate:
    """Find, read and classify every report of the run; the run's default taxonomy and
    the warnings about its reports' names. Checks, plan and verdicts come later."""
    config, ceilings = context.config, context.ceilings
    gated, skipped = load_run(config.paths, context.choice, context.spec, config.engine)
    _taxonomy_hints(gated, config, ceilings is not None)
    taxonomy = context.choice.run_taxonomy
    if ceilings is None:  # the taxonomy most reports use is the run's default
        taxonomy = _most_used([g.report for g in gated if g.report is not None], taxonomy)
    warnings = ceilings.check_report_names(  # the names readers gave (task@model), or files'
        g.report.name if g.report is not None else g.file.name for g in gated) if ceilings else []
    warnings += ceilings.deprecations() if ceilings is not None else []
    return Gate(config=config, taxonomy=taxonomy, ceilings=ceilings, reports=gated,
                skipped=skipped, lowerings=[], warnings=warnings, known=context.taxonomies,
                inline=context.inline)


def check(context: GateContext, gate: Gate) -> None:
    """Every count of every loaded report against its ceiling (in place), then which
    reports cannot be judged at all."""
    ceilings, mode = context.ceilings, context.config.mode
    for report_gate in gate.reports:
        if report_gate.report is not None:
            _check(report_gate, report_gate.report, ceilings, mode)
    labels = (labels_path(context.config, ceilings) if mode in ("gate", "strict", "ratchet")
              else None)
    if labels is not None:  # the true counts, from the judge's and gold labels
        gate.warnings += correct_counts(labels, gate.reports, ceilings,
                                        byte_limit(context.config.max_report_bytes))
    if mode == "init" and context.config.labels is not None:  # true_max beside each max
        gate.true_counts, notes = init_true_counts(
            context.config.labels, gate.reports, ceilings,
            byte_limit(context.config.max_report_bytes))
        gate.warnings += notes
    _refuse_nothing_gated(gate.reports)
    share = ceilings.model.inconclusive if ceilings is not None else None
    for report_gate in gate.reports:
        if report_gate.report is not None:
            report_gate.inconclusive = judge_inconclusive(  # (init has no ceilings yet)
                report_gate.report, report_gate.report.taxonomy or gate.taxonomy,
                report_gate.checks if mode != "init" else [], share)


def judge(context: GateContext, gate: Gate) -> None:
    """Settle the run (in place): the noise, a baseline, changed instruments, every
    significance test together, then the ratchet's plan and the guard."""
    source = noise_source(context.config, context.ceilings)
    _compare(context, gate, source)
    gate.baseline, gate.family = decide(gate.reports, gate.baseline, context.budget)
    gate.lowerings = _lowerings(context, gate, source)
    if context.config.guard_ref:
        gate.guard, gate.guard_error = _guard(context, gate)


def _compare(context: GateContext, gate: Gate, source: NoiseSource | None) -> None:
    """What the run is measured against beyond its ceilings: the noise, a baseline run,
    and the instruments its ceilings or its baseline were measured with."""
    config, ceilings, gated = context.config, context.ceilings, gate.reports
    if source is not None and (ceilings is not None or config.mode == "init"):
        gate.noise, notes = measure_noise(source, ceilings, gated, gate.taxonomy)
        gate.warnings += notes
    gate.times = dated(config, gated)
    if config.baseline and any(g.report is not None for g in gated):
        # (a run none of whose reports loaded fails on those errors, not on the pairing)
        noise_path = source.path if source is not None else None
        gate.baseline = _baseline(config, context.choice, context.spec, ceilings, gated,
                                  noise_path)
        gate.warnings += gate.baseline.notes()
    if context.checking:
        assert ceilings is not None
        compare_recorded_instruments(gated, ceilings)
    if gate.baseline is not None:
        compare_instruments(gated, gate.baseline, ceilings)
        # a baseline measured outside the window: inconclusive
        gate.warnings += judge_baseline(gate.times, gated, gate.baseline)


def _lowerings(context: GateContext, gate: Gate, source: NoiseSource | None) -> list[Lowering]:
    """The ratchet's plan: the ceilings to lower (none without a ceilings file), with what
    confirms a noisy drop in ratchet mode."""
    config, ceilings = context.config, context.ceilings
    if ceilings is None:
        return []
    # nothing is lowered from a report that cannot be judged
    checks = [check for g in gate.reports if g.inconclusive is None for check in g.checks]
    confirmed = paired = None
    if config.mode == "ratchet":
        confirmed = _confirmed(config, context.choice, context.spec, checks)
        if config.confirm_baseline:
            try:
                before = load_run_or_raise(config.confirm_baseline, context.choice,
                                           context.spec, config.engine)
            except FailgateError as exc:
                raise FailgateError(f"confirm-baseline: {exc}") from None
            assert gate.times is not None
            refused = refuse_confirm_baseline(gate.times, before, gate.reports)
            paired = {} if refused else paired_drops(
                before, gate.reports, ceilings.model.instruments,
                source.path if source is not None else None, context.budget)
            gate.warnings += [refused] if refused else []
        gate.warnings += _unconfirmed_notes(checks, confirmed, config, paired)
    refusals: list[str] = []
    lowerings = plan_ratchet(checks, gate.noise is not None, confirmed, paired, refusals)
    gate.warnings += refusals
    return lowerings


def _guard(context: GateContext, gate: Gate) -> tuple[GuardResult | None, str | None]:
    """The guard's comparison of the ceilings file with its ref, or why it could not
    compare. The guard, git and the comparison of versions are imported only if asked."""
    from ..guard.loosening import guard

    assert context.config.guard_ref is not None
    try:  # with this run's inputs: its reports' names, plugins and readers
        return guard(context.config.ceilings_path, context.config.guard_ref, **guard_inputs(
            run_reports(gate.reports), context.taxonomies, context.readers),
            options=context.config.guard_options), None
    except FailgateError as exc:  # the gate's result stands; the guard's is an error
        return None, str(exc)


def yaml_text(mapping: Mapping[str, Any]) -> str:
    """A taxonomy's mapping as the YAML it compiles from (an inline taxonomy, given whole)."""
    import yaml

    return yaml.safe_dump(dict(mapping), sort_keys=False, allow_unicode=True)


def taxonomy_choice(known: Mapping[str, Taxonomy], given: Taxonomy | None,
                    ceilings: Ceilings | None) -> TaxonomyChoice:
    """Which taxonomy classifies each report of a run: made once per run (``run_gate``, a
    command's ``Failgate``) and handed down to every read of it (its reports, a baseline, a
    confirming run). The ``given`` taxonomy (a command line's or the ini key's) for every
    report; else the ceilings file's ``taxonomy:`` and ``taxonomies:``; else each format's
    own (``choice.DEFAULT_TAXONOMY`` for failgate's own shapes)."""
    if given is not None or ceilings is None:
        return TaxonomyChoice(given, {}, known)
    return TaxonomyChoice(ceilings.taxonomy, ceilings.overrides, known)


def _taxonomy_hints(gated: Sequence[ReportGate], config: GateConfig, existing: bool) -> None:
    """How to give a taxonomy that fits, from where the user stands: the ``taxonomy:`` line
    of the ceilings file once it exists, else an init naming the taxonomy file."""
    for report_gate in gated:
        error = report_gate.error
        if not isinstance(error, UnfitTaxonomy):
            continue
        how = (f"in {config.ceilings_path.name} (taxonomy: {TAXONOMY_FILE})" if existing
               else f"with {config.advice.init_taxonomy}")
        report_gate.error = FailgateError(f"{error.message} {how}", error.path, error.line,
                                          error.col)


def _same_taxonomy(given: Taxonomy, written: Taxonomy, path: Path) -> None:
    """Once a ceilings file exists its ``taxonomy:`` decides (a change to it is reviewed:
    the guard compares it); a taxonomy setting naming another one is a mistake, not a way
    to classify differently."""
    if (given.name, given.source) == (written.name, written.source):
        return
    where = (f" ({display_path(given.source)})" if given.source is not None
             and given.name == written.name else "")
    raise FailgateError(
        f"the taxonomy setting names taxonomy {given.name}{where}, but this file's "
        f"taxonomy: is {written.name}; once the ceilings file exists its taxonomy: line "
        "decides: change that line (a reviewed change) or drop the setting", path)




def _confirmed(config: GateConfig, choice: TaxonomyChoice, spec: ReadSpec,
               checks: Sequence[Check]) -> dict[tuple[str, str], int] | None:
    """Each count of the confirming run (``confirm``), by (report, name); None without one.

    A report of it that failed outside the system (a provider or judge error) confirms
    nothing: its counts are left out.
    """
    if not config.confirm:
        return None
    try:
        reports = load_run_or_raise(config.confirm, choice, spec, config.engine)
    except FailgateError as exc:
        raise FailgateError(f"confirm: {exc}") from None
    found: dict[tuple[str, str], int] = {}
    for report in reports:
        taxonomy = report.taxonomy
        if any(report.counts.get(name) for name in taxonomy.outside):
            continue
        for check in checks:
            if check.report.name != report.name or check.slice is not None:
                continue
            if check.name == TOTAL:
                found[(report.name, TOTAL)] = report.failed or 0
            else:
                members = taxonomy.members(check.name) or [check.name]
                found[(report.name, check.name)] = sum(report.counts.get(m, 0) for m in members)
    return found


def _unconfirmed_notes(checks: Sequence[Check], confirmed: Mapping[tuple[str, str], int] | None,
                       config: GateConfig, paired: Mapping[tuple[str, str], int] | None = None
                       ) -> list[str]:
    """The drops past the noise that wait for a second run (the ratchet lowers none alone)."""
    waiting = [c for c in unconfirmed(checks)
               if (confirmed is None or (c.report.name, c.name) not in confirmed)
               and (paired is None or (c.report.name, c.name) not in paired)]
    if not waiting:
        return []
    names = ", ".join(f"{c.report.name}::{c.name} {c.count}" for c in waiting[:5])
    more = f" and {len(waiting) - 5} more" if len(waiting) > 5 else ""
    how = ("the confirming run does not measure them" if config.confirm
           else "the same-day run before the change does not confirm them (not significant "
                "and beyond the noise band, paired)" if config.confirm_baseline
           else "give a second, independent run of the same system with --confirm (main's "
                "previous run), or the system before the change re-run the same day with "
                "--confirm-baseline")
    return [f"ratchet: {names}{more} fell past the noise in this run alone; a noisy ceiling "
            f"is lowered only when a second run confirms the drop ({how})"]






def _refuse_nothing_gated(gated: Sequence[ReportGate]) -> None:
    """A run whose every report counts no category (Inspect logs without samples) and has
    no metric floor or contract would pass on nothing: an error saying why."""
    if not gated or any(g.report is None or g.report.uncounted is None or g.checks
                        or g.metrics or g.contracts for g in gated):
        return
    first = gated[0].report
    assert first is not None
    raise FailgateError(
        f"nothing to gate: no report counts a category ({display_path(first.path)}: "
        f"{first.uncounted}); a gate over nothing would pass vacuously")


def _most_used(reports: Sequence[Report], default: Taxonomy) -> Taxonomy:
    """The taxonomy most of the reports use (the first such on a tie)."""
    used: dict[str, tuple[int, Taxonomy]] = {}
    for report in reports:
        taxonomy = report.taxonomy
        used[taxonomy.name] = (used.get(taxonomy.name, (0, taxonomy))[0] + 1, taxonomy)
    return max(used.values(), key=lambda pair: pair[0])[1] if used else default


def _baseline(config: GateConfig, choice: TaxonomyChoice, spec: ReadSpec,
              ceilings: Ceilings | None, gated: list[ReportGate],
              noise_path: Path | None) -> BaselineRun:
    """Load the baseline run as this one was loaded, and pair the two."""
    from ..compare.baseline import compare_with_baseline, load_noise_bands
    from ..compare.noise import NoiseDocument

    try:
        base = load_run_or_raise(config.baseline, choice, spec, config.engine)
    except FailgateError as exc:
        raise FailgateError(f"baseline: {exc}") from None
    noise = load_noise_bands(noise_path) if noise_path is not None else NoiseDocument()
    alpha = ceilings.model.significance if ceilings is not None else None
    return compare_with_baseline(base, [g.report for g in gated if g.report is not None],
                                 noise, alpha, config.exclude_unstable)


def load_run(paths: tuple[Path, ...], choice: TaxonomyChoice,
             spec: ReadSpec | None = None, engine: str = "python"
             ) -> tuple[list[ReportGate], list[SkippedFile]]:
    """Find and load every report of one run; a run with no report at all is an error.

    Each file's taxonomy is picked by the run's ``choice`` (``taxonomy_choice``) once, as
    the file is read. Parquet files, dataset folders, globs, and JSON Lines under a SQL
    ``engine`` are classified by that engine; everything else by the Python readers.
    """
    spec = spec if spec is not None else ReadSpec(readers=builtin_readers())
    files, skipped = run_files(paths, spec)
    gated: list[ReportGate] = []
    for file in files:
        try:
            loaded = (load_table(file, choice, spec, engine)
                      if runs_in_engine(file.path, engine) else load_report(file, choice, spec))
        except FailgateError as exc:
            gated.append(ReportGate(file, error=exc))
            continue
        if isinstance(loaded, SkippedFile):
            if file.path in paths:
                raise FailgateError(f"not a report: {loaded.reason}", file.path)
            skipped.append(loaded)
            continue
        # under the name its reader gave it (a timestamp dropped, a HELM run folder)
        gated.append(ReportGate(ReportFile(file.path, loaded.name), report=loaded))
    gated = one_run_per_name(gated, skipped)
    if not gated:
        raise no_report(paths, skipped, spec.readers)
    skipped.sort(key=lambda s: s.path)
    return gated, skipped


def load_run_or_raise(paths: tuple[Path, ...], choice: TaxonomyChoice,
                      spec: ReadSpec | None = None, engine: str = "python") -> list[Report]:
    """A run every report of which must load (a baseline, a diff, a history entry):
    the first broken report's error is raised."""
    gated, _ = load_run(paths, choice, spec, engine)
    for loaded in gated:
        if loaded.error is not None:
            raise loaded.error
    return [loaded.report for loaded in gated if loaded.report is not None]


def run_counts(reports: Sequence[Report], taxonomy: Taxonomy) -> dict[str, int]:
    """Each category's count and the total, added up over one run's reports."""
    counts = dict.fromkeys((*taxonomy.category_names, TOTAL), 0)
    for report in reports:
        for name, count in report.counts.items():  # another taxonomy's names too
            counts[name] = counts.get(name, 0) + count
        counts[TOTAL] += report.failed or 0
    return counts


def _read_spec(ceilings: Ceilings | None, taxonomy: Taxonomy, config: GateConfig,
               readers: tuple[ReportReader, ...]) -> ReadSpec:
    """What reading must measure for these ceilings: populations, slices, recorded keys."""
    extra = {}
    if config.analyze:
        from .analyze import DEFAULT_SLICES, analysis_slicers

        extra = analysis_slicers(DEFAULT_SLICES)
    limit = byte_limit(config.max_report_bytes)
    # gold labels are checked against each case's content: keep its digest
    digests = config.labels is not None or (ceilings is not None
                                            and ceilings.model.labels is not None)
    if ceilings is None:
        return ReadSpec(slicers=extra, explain=config.explain, readers=readers, max_bytes=limit,
                        digests=digests)
    counted = {*taxonomy.category_names, TOTAL, "cases", "groups"}
    recorded = [key for c in ceilings.contracts.values() for key in c.recorded_keys(counted)]
    if ceilings.metrics:  # an aggregate's recorded metrics and their confidence blocks
        recorded += [*ceilings.metrics, "ci"]
    return ReadSpec(ceilings.populations, {**extra, **ceilings.slicers},
                    tuple(dict.fromkeys(recorded)),
                    config.explain, readers, ceilings.metrics, limit, digests)


def _check(gated: ReportGate, report: Report, ceilings: Ceilings | None, mode: Mode) -> None:
    """Every check of one report: categories, then total and groups when they have a
    ceiling, then each slice's, then the contracts (by the taxonomy it was read with)."""
    taxonomy = report.taxonomy
    if ceilings is None and mode != "init":
        # no ceilings, a baseline: the counts are free, the comparison decides
        for name in (*taxonomy.category_names, TOTAL):
            count = taxonomy.count(name, report.counts)
            gated.checks.append(Check(report, name, count, None, "pass", None,
                                      n_cases=report.n_cases))
        return
    names: list[str] = list(taxonomy.category_names)
    optional = [TOTAL, *(GROUP_PREFIX + group for group in taxonomy.groups)]
    if mode == "init":
        names.append(TOTAL)
    elif ceilings is not None:
        names += [n for n in optional if ceilings.entry(report.name, n) is not None]
    alpha = ceilings.model.significance if ceilings is not None else None
    if report.uncounted is not None:  # only a ceiling written for this report is checked
        names = []
        for name in (*taxonomy.category_names, *optional):
            entry = ceilings.entries.get(("reports", report.name, name)) if ceilings else None
            if entry is not None:
                gated.checks.append(unmeasurable(report, name, entry, report.uncounted))
    for name in names:
        entry = ceilings.entry(report.name, name) if ceilings is not None else None
        gated.checks.append(_measure(report, name, entry, alpha))
    if ceilings is not None:
        _check_slices(gated, report, ceilings, names, alpha)
        for contract in ceilings.contracts.values():
            if contract.reports is None or report.name in contract.reports:
                gated.contracts.append(_contract(report, contract))
        for name, floor in ceilings.model.floors.items():
            gated.metrics.append(evaluate_metric(report, name, floor, ceilings.metric_line(name)))
    if report.kind == "cases" and (report.recorded_counts is not None
                                   or report.contradictions is not None):
        gated.differences = [*consistency_differences(report), *(report.contradictions or [])]


def _check_slices(gated: ReportGate, report: Report, ceilings: Ceilings, names: Sequence[str],
                  alpha: Fraction | None) -> None:
    """Each slice's checks (a ceilings file's ``slices:``), for the names checked whole."""
    if report.tally is None:
        return
    taxonomy = report.taxonomy
    for field, values in report.tally.slices.items():
        if field not in ceilings.slicers:
            continue  # read for the analysis only
        for value, cases in values.items():
            slice_ = f"{field}{SLICE_SEPARATOR}{value}"
            for name in names:
                entry = ceilings.entry(report.name, name, slice_)
                count = taxonomy.count(name, cases.counts)
                if entry is not None and entry.ceiling.per is not None:
                    gated.checks.append(unmeasurable(
                        report, name, entry, "per: populations are not counted per slice",
                        slice_))
                else:
                    gated.checks.append(evaluate(report, name, count, entry,
                                                 cases.n_cases, slice_, significance=alpha))


def _measure(report: Report, name: str, entry: Entry | None, alpha: Fraction | None) -> Check:
    taxonomy = report.taxonomy
    per = entry.ceiling.per if entry is not None else None
    if per is None:
        return evaluate(report, name, taxonomy.count(name, report.counts), entry,
                        report.n_cases, significance=alpha)
    if report.tally is None:
        return unmeasurable(report, name, entry,
                            "per: counts a population among the cases, and an aggregate "
                            "records counts only")
    inside = report.tally.flagged.get(per, {})
    return evaluate(report, name, taxonomy.count(name, inside), entry,
                    report.tally.flags.get(per, 0), population=per, significance=alpha)


def _contract(report: Report, contract: ContractCheck) -> ContractResult:
    """Evaluate a contract over the report's counts and its recorded aggregates."""
    taxonomy = report.taxonomy
    namespace: dict[str, Any] = dict(report.counts)
    namespace[TOTAL] = report.failed
    namespace["cases"] = report.n_cases
    namespace["groups"] = {g: taxonomy.count(GROUP_PREFIX + g, report.counts)
                           for g in taxonomy.groups}
    missing = []
    for key in contract.recorded_keys(namespace):
        if key in report.recorded:
            namespace[key] = report.recorded[key]
        else:
            missing.append(key)
    if missing or (report.n_cases is None and "cases" in contract.compiled.reads):
        what = ", ".join(missing) if missing else "cases (num_predictions)"
        return ContractResult(report, contract, None,
                              f"the report does not record {what}, so it cannot be checked")
    try:
        holds = contract.compiled.holds(namespace)
    except ExprRuntimeError as exc:
        return ContractResult(report, contract, None, str(exc))
    shown = {name: namespace[name] for name in contract.compiled.reads}
    return ContractResult(report, contract, holds, "", shown)


def guard_inputs(reports: Iterable[RunReport], taxonomies: Mapping[str, Any] | None,
                 readers: Iterable[ReportReader]) -> dict[str, Any]:
    """What a run tells the guard beyond the files (``guard``'s keywords): its reports'
    names, the plugins its taxonomies came from, and the plugin readers that read it
    (``reports``: each report's name, format and file: ``run_reports`` of a gated run,
    ``probed.probe_run`` of one the guard is told of)."""
    from ..guard.routes import readers_in_use

    reports = list(reports)
    used = {form: path for _, form, path in reports if form is not None}
    return {"reports": [name for name, _, _ in reports],
            "origins": getattr(taxonomies, "origins", None),
            "readers": readers_in_use(readers, used)}


RunReport = tuple[str, "str | None", "Path"]  # a report's name, format (None: no report), file


def run_reports(gated: Iterable[ReportGate]) -> list[RunReport]:
    """Each gated report's name, format and file, for ``guard_inputs`` (a report that did
    not load: its file's name, no format)."""
    return [(g.report.name, g.report.format, g.file.path) if g.report is not None
            else (g.file.name, None, g.file.path) for g in gated]
