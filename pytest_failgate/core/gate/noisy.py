"""A gate run on a noisy pipeline: its noise source, each count's allowance, the budget.

The noise source is the ``--noise`` option (a ``noise_band.json``), else each
report's own repeats when asked for (``repeats``), else the ceilings file's
``noise:`` key (a path relative to it, or ``repeats``). Without one the run is exact,
as on a deterministic pipeline: nothing here changes a verdict or a number.

With one, every count the noise measures (a category, a group, ``total``; not a
slice's or a population's, which no source measures) gets the allowance that keeps
an unchanged system under its ceiling: the run's false-alarm budget (the file's
``significance``, default 0.05) is shared equally by those counts (Bonferroni: the
chance that any of them fails by chance is at most the budget). ``init`` writes
``max = observed + allowance``, ``observed`` from the band's mean with this run
(:func:`observed_center`); the ratchet lowers only past the allowance, in this run and a
confirming one (``ceilings.rewrite.plan_ratchet``); each row says the smallest regression
it catches, and the noise line which model the allowances rest on.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.confine import check_inside
from ..base.errors import FailgateError, display_path
from ..base.formatting import format_number, plural
from ..compare import DEFAULT_ALPHA
from ..stats.dispersion import CONFIDENCE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..ceilings.check import Check
    from ..ceilings.load import Ceilings
    from ..compare.noisemodel import NoiseModel
    from ..stats.allowance import Movement
    from ..taxonomy import Taxonomy
    from .checked import GateConfig, ReportGate


@dataclass(frozen=True)
class NoiseSource:
    """Where the noise is read from: a noise band file, or each report's repeats."""

    path: Path | None  # a noise_band.json
    repeats: bool  # each report's own repeated cases
    written: str  # how a new ceilings file names it (`noise:`)

    @property
    def label(self) -> str:
        from ..compare.noisemodel import REPEATS

        return REPEATS if self.path is None else display_path(self.path)


@dataclass(frozen=True)
class NoiseRun:
    """This run's noise: the model, and the budget its counts share."""

    source: NoiseSource
    model: NoiseModel
    budget: Fraction  # family-wise: the chance any count fails by chance, at most
    items: int  # the counts that share it
    movements: tuple[Movement, ...] = ()  # each of those counts' movement
    unmeasured: tuple[str, ...] = ()  # reports of the run none of whose counts it measures

    @property
    def level(self) -> Fraction:
        """Each count's share of the budget."""
        return self.budget / self.items

    def describe(self) -> str:
        text = (f"noise from {self.source.label}: an unchanged system fails any of "
                f"{plural(self.items, 'count')} by chance in at most "
                f"{format_number(self.budget * 100)}% of runs (allowances at "
                f"{format_number(self.budget)}/{self.items} each, Bonferroni)")
        parts = [text, self.model_text()]
        if self.unmeasured:
            them = "them" if len(self.unmeasured) > 1 else "it"
            parts.append(f"not covered: {', '.join(self.unmeasured)} (no noise source "
                         f"measures {them}: its ceilings are exact, and the rate above "
                         "leaves out how often they fail by chance)")
        return "; ".join(parts)

    def model_text(self) -> str:
        """Which noise model the allowances rest on (the band's line says it)."""
        widened = [m for m in self.movements if m.dispersion > 1]
        if widened:
            largest = max(m.dispersion for m in widened)
            return (f"model: {plural(len(widened), 'count')} spread beyond independent case "
                    f"moves, widened by their dispersion (up to x{format_number(largest)}, "
                    f"chi-square bound at {format_number(CONFIDENCE * 100)}%), the rest "
                    "independent")
        measured = [m.runs for m in self.movements if m.runs is not None]
        if measured:
            return (f"model: independent case moves (no count spread beyond them over "
                    f"{min(measured)} runs)")
        return "model: independent case moves (day-to-day drift not measured)"


def noise_source(config: GateConfig, ceilings: Ceilings | None) -> NoiseSource | None:
    """The run's noise source, by precedence (see the module docstring). The noise model's
    module is imported only for a run that has one."""
    base = config.ceilings_path.parent
    if config.noise is None and not config.noise_repeats and (
            ceilings is None or ceilings.model.noise is None):
        return None
    from ..compare.noisemodel import REPEATS

    if config.noise is not None:
        return NoiseSource(config.noise, False, _relative(config.noise, base))
    if config.noise_repeats:
        return NoiseSource(None, True, REPEATS)
    if ceilings is None or ceilings.model.noise is None:
        return None
    written = ceilings.model.noise
    if written == REPEATS:
        return NoiseSource(None, True, REPEATS)
    path = (ceilings.path.parent / written).resolve()
    check_inside(path)  # a confined run answers "outside" before it looks
    if not path.is_file():
        raise ceilings.doc.error(f"noise: {written} is not a file (a noise_band.json from "
                                 f"`failgate noise`, relative to this file, or '{REPEATS}')",
                                 ("noise",))
    return NoiseSource(path, False, written)


def _relative(path: Path, base: Path) -> str:
    try:
        return PurePath(path.resolve().relative_to(base.resolve())).as_posix()
    except ValueError:
        return PurePath(path.resolve()).as_posix()


def measure_noise(source: NoiseSource, ceilings: Ceilings | None, gated: Sequence[ReportGate],
                  default: Taxonomy) -> tuple[NoiseRun | None, list[str]]:
    """Give every count the noise measures its movement and allowance (in place).

    A source that measures none of the run's counts leaves the run exact, and says so.
    """
    from ..compare.noisemodel import count_allowance, from_document, from_repeats

    loaded = [g.report for g in gated if g.report is not None]
    taxonomy_of = {r.name: r.taxonomy or default for r in loaded}
    if source.path is not None:
        from ..compare.baseline import load_noise_bands

        try:
            model = from_document(load_noise_bands(source.path), source.label)
        except FailgateError as exc:
            raise FailgateError(f"noise: {exc}") from None
    else:
        model = from_repeats(loaded, taxonomy_of)
    found = []
    for report_gate in gated:
        report = report_gate.report
        own = None if report is None else model.of(report.name)
        if report is None or own is None:
            continue
        for index, check in enumerate(report_gate.checks):
            if check.slice is not None or check.population is not None:
                continue  # no source measures a slice's or a population's noise
            movement = own.movement(report.name, check.name, taxonomy_of[report.name])
            if movement is not None:
                found.append((report_gate, index, movement))
    if not found and not loaded:  # each report's own error says why (a taxonomy to give)
        return None, []
    if not found:
        what = ("no report repeats its cases" if source.repeats
                else "it measures none of this run's counts")
        return None, [f"noise: {source.label}: {what}; the ceilings are exact (give a noise "
                      "band measured on these reports with `failgate noise`)"]
    budget = DEFAULT_ALPHA if ceilings is None or ceilings.model.significance is None else (
        ceilings.model.significance)
    covered = {report_gate.report.name for report_gate, _, _ in found
               if report_gate.report is not None}
    unmeasured = tuple(r.name for r in loaded if r.name not in covered)
    run = NoiseRun(source, model, budget, len(found), tuple(m for _, _, m in found), unmeasured)
    stale = []
    for report_gate, index, movement in found:
        check = report_gate.checks[index]
        own = model.of(check.report.name)
        assert own is not None  # found above
        allowance = count_allowance(own, check, movement, run.level,
                                    taxonomy_of[check.report.name])
        center = None
        if own is not model or len(loaded) == 1:  # a pooled band's mean is no one report's
            center = observed_center(own, check, taxonomy_of[check.report.name],
                                     allowance)
            if center is None:
                stale.append(check.name if len(loaded) == 1
                             else f"{check.report.name}::{check.name}")
        report_gate.checks[index] = replace(check, movement=movement,
                                            noise_allowance=allowance, center=center)
    notes = _short_allowances([c for g in gated for c in g.checks], run)
    if stale and ceilings is None:  # init: the ceilings are set from this run
        notes.append(f"noise: this run's {', '.join(stale)} differ from the mean of "
                     f"{source.label} by more than the noise allows: a new ceiling is set "
                     "from this run's count; measure the noise again on this system")
    elif stale:  # a check or a ratchet sets nothing: a count far from the band is news
        notes.append(f"noise: this run's {', '.join(stale)} differ from the mean of "
                     f"{source.label} by more than the noise allows: either the system "
                     "changed since the band was measured (a regression fails its ceiling "
                     "above) or the band measured another system")
    return run, notes


def observed_center(model: NoiseModel, check: Check, taxonomy: Taxonomy,
                    allowance: int) -> int | None:
    """The count a new noisy ceiling is set from: all the evidence, not one run.

    The mean of the band's runs, with this run added when it is not one of them (by its
    ``run_id``, else its cases' digest: ``compare.repeats.run_identity``), rounded half
    up. Without a band mean it is this run's count; when this run's count is further
    from the band's mean than the allowance, the band measured another system: None
    (the caller sets the ceiling from this run and says so).
    """
    from ..compare.repeats import run_identity  # an init with a noise band only

    mean = model.mean(check.name, taxonomy, check.report.n_cases)
    if mean is None:
        return check.count
    if abs(check.count - mean) > allowance:
        return None
    runs = len(model.run_ids)
    if runs and run_identity([check.report]) not in model.run_ids:
        mean = (runs * mean + check.count) / (runs + 1)
    return math.floor(mean + Fraction(1, 2))


def _short_allowances(checks: Sequence[Check], run: NoiseRun) -> list[str]:
    """Ceilings that allow less than the noise asks: they fail by chance too often."""
    short = [(c, c.entry.ceiling.allowance or 0) for c in checks
             if c.noise_allowance is not None and c.entry is not None
             and c.entry.ceiling.max is not None
             and (c.entry.ceiling.allowance or 0) < c.noise_allowance]
    if not short:
        return []
    shown = ", ".join(f"{c.report.name}::{c.name} {have} < {c.noise_allowance}"
                      for c, have in short[:5])
    more = f" and {len(short) - 5} more" if len(short) > 5 else ""
    return [f"noise: {plural(len(short), 'ceiling')} allow less than {run.source.label} asks "
            f"({shown}{more}): an unchanged system fails them by chance more often than the "
            f"{format_number(run.budget * 100)}% budget; ratchet or init with the noise to "
            "set their allowances"]
