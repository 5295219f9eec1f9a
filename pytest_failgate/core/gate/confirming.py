"""What confirms a noisy ratchet's drop from a same-day run of the system before the change.

``--confirm-baseline RUN`` (``failgate ratchet``, ``--failgate-confirm-baseline``) names a
run of the system before the change, made the same day as this run (main's previous
commit, re-run in the same CI job). Both are read as this run was, paired case by case
(``compare.improvement``), and each count whose drop is significant and beyond the noise
band is confirmed, by its drop in cases. A report of that run measured by another
instrument, or with failures outside the system under test, confirms nothing: its counts
are not the system's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..compare.instrument import instrument_changes

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from fractions import Fraction
    from pathlib import Path

    from ..ceilings.model import AcceptedChange as Accepted
    from ..reports.model import Report
    from .checked import ReportGate


def paired_drops(before: Sequence[Report], gated: Sequence[ReportGate],
                 accepted: Mapping[str, Accepted], noise_path: Path | None, budget: Fraction
                 ) -> dict[tuple[str, str], int]:
    """The drops the same-day run ``before`` confirms, by (report, name) (``accepted``: the
    instrument changes the ceilings file accepts)."""
    from ..compare.baseline import load_noise_bands
    from ..compare.improvement import confirmed_drops
    from ..compare.noise import NoiseDocument
    from ..compare.pairing import compare_runs

    judged = [g.report for g in gated if g.report is not None and g.inconclusive is None]
    by_name = {report.name: report for report in judged}
    left_out = {report.name for report in before
                if any(report.counts.get(name) for name in report.taxonomy.outside)
                or (report.name in by_name and any(
                    change.reason is None for change in instrument_changes(
                        report.instrument, by_name[report.name].instrument, accepted)))}
    noise = load_noise_bands(noise_path) if noise_path is not None else NoiseDocument()
    comparison = compare_runs(before, judged, with_total=True)
    return confirmed_drops(comparison, noise, budget, left_out)
