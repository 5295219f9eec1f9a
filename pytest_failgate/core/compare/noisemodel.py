"""Where a run's noise is known from: each count's movement, by noise source.

Two sources, each a documented input and neither needed on a deterministic pipeline:

- **a noise band** from repeated runs of one configuration (``failgate noise``, the
  regression gate's ``noise_band.json``): its ``mode:`` entries say how many cases
  moved in or out of each category (``discordant``); a band of runs of several reports
  has each report's own (``reports``), and each report's count moves as its own do (the
  pool's movement would give one report of three the others' noise too); a band without
  them (one report a run, or an older file) is one model shared by every report;
  a file another tool wrote without them gives ``2 std**2`` (the variance of a count
  is half the expected movement between two runs), a rougher estimate, said so;
- **repeats inside the run** (Inspect epochs, karenina replicates, HELM trials): a
  report whose reader groups its cases into units (a sample and its epochs) carries
  its own stability, per report.

``total`` moves as the passed cases do (``mode:correct``); a group, or ``total``
without a passed band, moves at most as its categories together.

A band also says how far each count spread over its runs: a count that spread more than
its movement explains (a shared shift: a harsher judge on some days) gets the upper bound
of its dispersion factor (:mod:`..stats.dispersion`); a group takes its categories'
largest. Repeats inside one run were all made at once: they cannot see day-to-day drift,
and their model says so.
"""

from __future__ import annotations

import math
from dataclasses import field, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.formatting import plural
from ..stats.allowance import Movement, rate_allowance
from ..stats.dispersion import dispersion_bound
from ..taxonomy.model import TOTAL
from . import PASSED_MODE

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..ceilings.check import Check
    from ..reports.model import Report
    from ..taxonomy import Taxonomy
    from .noise import NoiseBand, NoiseDocument

REPEATS = "repeats"  # the noise source's name for repeats inside each run


@dataclass(frozen=True)
class NoiseModel:
    """Every count's movement between two runs, from one noise source."""

    source: str  # what the messages call it: the noise file's name, or "repeats"
    shared: Mapping[str, Movement] = field(default_factory=dict)  # one for every report
    per_report: Mapping[str, Mapping[str, Movement]] = field(default_factory=dict)
    means: Mapping[str, Fraction] = field(default_factory=dict)  # each count's band mean
    run_ids: tuple[str, ...] = ()  # the runs the band was measured from
    reports: Mapping[str, NoiseModel] = field(default_factory=dict)  # each report's own band

    def of(self, report: str) -> NoiseModel | None:
        """The model a report's counts move by: its own band where the band has one per
        report (None: the band does not measure this report), else this one."""
        if self.reports:
            return self.reports.get(report)
        return self

    def mean(self, name: str, taxonomy: Taxonomy, n_cases: int | None) -> Fraction | None:
        """A count's mean over the band's runs (None: the band does not record it).

        ``total`` is the cases less the passed ones' mean; a group, its categories'.
        """
        if name in self.means:
            return self.means[name]
        if name == TOTAL:
            passed = self.means.get(PASSED_MODE)
            return None if passed is None or n_cases is None else n_cases - passed
        members = [self.means.get(member) for member in taxonomy.members(name)]
        if name in taxonomy.category_names or not members or None in members:
            return None
        return sum((m for m in members if m is not None), Fraction(0))

    def movement(self, report: str, name: str, taxonomy: Taxonomy) -> Movement | None:
        """How a report's count of ``name`` (a category, a group, ``total``) moves."""
        known = self.per_report.get(report, self.shared)
        if name in known:
            return known[name]
        if name == TOTAL and PASSED_MODE in known:
            return known[PASSED_MODE]  # a case leaves the passed ones as it fails
        members = [known.get(member) for member in taxonomy.members(name)]
        if name in taxonomy.category_names or not members or None in members:
            return None
        parts = [m for m in members if m is not None]
        measured = [m.runs for m in parts if m.runs is not None]
        return Movement(sum((m.expected for m in parts), Fraction(0)),
                        f"{self.source}: its categories' movement together",
                        max(m.dispersion for m in parts), min(measured, default=None))


def band_movement(band: NoiseBand, label: str) -> Movement:
    """A band's expected movement between two runs and its dispersion (see the module
    docstring)."""
    std = Fraction(repr(band.std))
    if band.discordant is not None:
        pairs = band.n * (band.n - 1) // 2
        moved = f", {plural(band.moved, 'case')} moved" if band.moved is not None else ""
        expected = Fraction(band.discordant, pairs)
        what = f"{label}: {band.n} runs{moved}"
    else:
        expected = 2 * std * std
        what = f"{label}: {band.n} runs, from the count's std only"
    return Movement(expected, what, dispersion_bound(std * std, expected, band.n), band.n)


def _band_model(bands: Mapping[str, NoiseBand], label: str, run_ids: tuple[str, ...]
                ) -> NoiseModel:
    return NoiseModel(label, {name: band_movement(band, label) for name, band in bands.items()},
                      means={name: Fraction(repr(band.mean)) for name, band in bands.items()
                             if band.mean is not None},
                      run_ids=run_ids)


def from_document(noise: NoiseDocument, label: str) -> NoiseModel:
    """The model of a noise band file (``label``: its name, for the messages)."""
    pooled = _band_model(noise.bands, label, noise.run_ids)
    return replace(pooled, reports={
        name: _band_model(report.bands, f"{label} ({name})", report.run_ids)
        for name, report in noise.reports.items()})


def repeat_movements(report: Report, taxonomy: Taxonomy) -> dict[str, Movement]:
    """A report's movement from its own repeats; empty when it has none.

    A unit (a sample) with ``k`` of its ``r`` repeats in a count is expected to have
    ``2 k (r - k) / (r - 1)`` of them move between two runs (unbiased).
    """
    unit_of = report.repeat_unit
    if unit_of is None or report.tally is None:
        return {}
    units: dict[str, list[str]] = {}
    for case in report.all_case_ids():
        units.setdefault(unit_of(case), []).append(case)
    repeated = {unit: cases for unit, cases in units.items() if len(cases) > 1}
    if not repeated:
        return {}
    category_of = {case: name for name in taxonomy.category_names
                   for case in report.case_ids(name)}
    expected = dict.fromkeys((*taxonomy.category_names, PASSED_MODE), Fraction(0))
    for cases in repeated.values():
        r = len(cases)
        seen: dict[str, int] = {}
        for case in cases:
            name = category_of.get(case, PASSED_MODE)
            seen[name] = seen.get(name, 0) + 1
        for name, k in seen.items():
            expected[name] += Fraction(2 * k * (r - k), r - 1)
    what = f"{REPEATS}: {plural(len(repeated), 'unit')} repeated in {report.name}"
    return {name: Movement(value, what) for name, value in expected.items()}


def from_repeats(reports: list[Report], taxonomy_of: Mapping[str, Taxonomy]) -> NoiseModel:
    """The model of each report's own repeats (reports without repeats have none)."""
    per_report = {}
    for report in reports:
        found = repeat_movements(report, taxonomy_of[report.name])
        if found:
            per_report[report.name] = found
    return NoiseModel(REPEATS, {}, per_report)


def count_allowance(model: NoiseModel, check: Check, movement: Movement, level: Fraction,
                    taxonomy: Taxonomy) -> int:
    """The allowance of one count of a run at ``level``: the one function every allowance of
    a gate run comes from (``core.gate.noisy``; the guard compares what it gives).

    A count moves as its noise measures (:meth:`Movement.allowance`, widened by its
    dispersion). A category of failures outside the system under test (provider or judge
    errors) is a tolerance: it may also reach what its observed error rate gives
    (:func:`rate_allowance`: the band's runs with this one), whichever is larger.
    """
    allowance = movement.allowance(level)
    if check.name not in taxonomy.outside or not check.report.n_cases:
        return allowance
    n = check.report.n_cases
    seen, trials = check.count, n
    mean = model.mean(check.name, taxonomy, n)
    runs = len(model.run_ids)
    if mean is not None and runs:
        seen += math.floor(mean * runs + Fraction(1, 2))  # the band's errors, all its runs
        trials += runs * n
    return max(allowance, rate_allowance(seen, trials, n, check.count, level))
