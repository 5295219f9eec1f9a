"""Where a run's noise is known from: each count's movement, by noise source.

Two sources, each a documented input and neither needed on a deterministic pipeline:

- **a noise band** from repeated runs of one configuration (``failgate noise``, the
  regression gate's ``noise_band.json``): its ``mode:`` entries say how many cases
  moved in or out of each category (``discordant``), pooled over the run's reports;
  a file another tool wrote without them gives ``2 std**2`` (the variance of a count
  is half the expected movement between two runs), a rougher estimate, said so;
- **repeats inside the run** (Inspect epochs, karenina replicates, HELM trials): a
  report whose reader groups its cases into units (a sample and its epochs) carries
  its own stability, per report.

``total`` moves as the passed cases do (``mode:correct``); a group, or ``total``
without a passed band, moves at most as its categories together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from ..base.formatting import plural
from ..stats.allowance import Movement
from ..taxonomy.model import TOTAL
from .noise import PASSED_MODE

if TYPE_CHECKING:
    from collections.abc import Mapping

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

    def movement(self, report: str, name: str, taxonomy: Taxonomy) -> Movement | None:
        """How a report's count of ``name`` (a category, a group, ``total``) moves."""
        known = self.per_report.get(report, self.shared)
        if name in known:
            return known[name]
        if name == TOTAL and PASSED_MODE in known:
            passed = known[PASSED_MODE]  # a case leaves the passed ones as it fails
            return Movement(passed.expected, passed.source)
        members = [known.get(member) for member in taxonomy.members(name)]
        if name in taxonomy.category_names or not members or None in members:
            return None
        parts = [m for m in members if m is not None]
        return Movement(sum((m.expected for m in parts), Fraction(0)),
                        f"{self.source}: its categories' movement together")

    def covers(self, report: str) -> bool:
        return bool(self.per_report.get(report, self.shared))


def band_movement(band: NoiseBand, label: str) -> Movement:
    """A band's expected movement between two runs (see the module docstring)."""
    if band.discordant is not None:
        pairs = band.n * (band.n - 1) // 2
        moved = f", {plural(band.moved, 'case')} moved" if band.moved is not None else ""
        return Movement(Fraction(band.discordant, pairs), f"{label}: {band.n} runs{moved}")
    std = Fraction(repr(band.std))
    return Movement(2 * std * std, f"{label}: {band.n} runs, from the count's std only")


def from_document(noise: NoiseDocument, label: str) -> NoiseModel:
    """The model of a noise band file (``label``: its name, for the messages)."""
    return NoiseModel(label, {name: band_movement(band, label)
                              for name, band in noise.bands.items()})


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
