"""A drop confirmed by pairing: this run against the system before it, re-run the same day.

On a noisy pipeline the ratchet lowers a ceiling only when the drop is confirmed. A second
run of the same system confirms it when both counts fell past the allowance; under
day-level drift (a judge harsher on some days, every flaky case moving together) that
allowance is widened by the day-to-day spread, and a real fix of a few percent of the
cases never gets past it. A run of the system *before* the change, made on the same day
as this one (main's previous commit, in the same CI job), shares the day's shift: paired
case by case, the shift cancels, and what is left is the change.

A count's drop is confirmed when the regression rule of a baseline comparison
(:func:`.verdicts.regression_verdict`) fails it with the two runs swapped: the cases that
left the count (``fixed``) outnumber those that entered it (``new``) significantly (the
one-sided exact McNemar test) **and** by more than the noise band (the range of the count
over the band's runs, at least one case). The drop is ``fixed - new``, in whole cases: the
day's shift is in neither, so the ceiling's ``observed`` falls by it
(``ceilings.rewrite.plan_ratchet``). No float decides anything.

The level is the **square** of the budget, the run's drop tests decided together with Holm
at it. A pull request's false alarm costs one rerun; a false lowering stays in the file and
makes every later run of the unchanged system fail more often, so over hundreds of merges
the ratchet must lower an unchanged system practically never. The two-run confirmation asks
two independent runs to fall past an allowance each exceeds with at most the budget's
share: together at most its square. One paired test is held to the same: at 0.05, 0.0025
for the run's drops together (measured in ``bench/noise_heldout.py``: with Holm at the
budget itself, 5 to 11 of 300 unchanged merges lowered the file, and the false alarms
crept up after them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..stats.binomial import paired_increase
from ..stats.holm import holm
from .verdicts import band_of, regression_verdict

if TYPE_CHECKING:
    from collections.abc import Collection
    from fractions import Fraction

    from .noise import NoiseDocument
    from .pairing import RunComparison


def confirmed_drops(comparison: RunComparison, noise: NoiseDocument, budget: Fraction,
                    left_out: Collection[str] = ()) -> dict[tuple[str, str], int]:
    """Each count whose drop the pairing confirms, by (report, name): the drop in cases.

    ``comparison`` pairs the run before the change (its baseline side) with this run;
    reports in ``left_out`` (not comparable: another instrument, errors outside the
    system in the earlier run) confirm nothing. Every paired count of the other reports
    is one test of the family, decided together at ``budget`` squared.
    """
    tests = [(report.name, change) for report in comparison.reports
             if report.paired and report.name not in left_out for change in report.changes]
    level = budget * budget
    decided, _ = holm([paired_increase(change.fixed_count, change.new_count)
                       for _, change in tests], level)
    found: dict[tuple[str, str], int] = {}
    for (report, change), significant in zip(tests, decided, strict=True):
        dropped, entered = change.fixed_count, change.new_count
        band = band_of(noise.bands, change.category)
        if regression_verdict(dropped, entered, band, level, significant) == "fail":
            found[(report, change.category)] = dropped - entered
    return found
