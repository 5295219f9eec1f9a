"""Whether a run was measured as its ceilings and its baseline were: the same instrument
(judge, scorer, dataset) and, for the ceilings, every case they were set from. Either
difference makes the report inconclusive (DESIGN 4.9, 4.14), not a regression."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ceilings.rewrite import CASES
from ..compare.instrument import NEXT as INSTRUMENT_NEXT
from ..compare.instrument import SINCE_INIT, instrument_changes, unaccepted_text
from .inconclusive import UNFINISHED, Inconclusive

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..ceilings.load import Ceilings
    from ..compare.baseline import BaselineRun
    from ..reports.model import Report
    from .checked import ReportGate


def compare_instruments(gated: Sequence[ReportGate], baseline: BaselineRun,
                         ceilings: Ceilings | None) -> None:
    """A report measured differently from its baseline (another judge, scorer, dataset) is
    inconclusive, unless the ceilings file accepts that change (``compare.instrument``)."""
    accepted = ceilings.model.instruments if ceilings is not None else {}
    for report_gate in gated:
        report = report_gate.report
        base = baseline.base.get(report.name) if report is not None else None
        if report is None or base is None:
            continue
        changes = instrument_changes(base.instrument, report.instrument, accepted)
        report_gate.instrument = [*report_gate.instrument, *(
            change for change in changes if change not in report_gate.instrument)]
        unaccepted = [change for change in changes if change.reason is None]
        if unaccepted and report_gate.inconclusive is None:
            report_gate.inconclusive = Inconclusive(
                "the measuring instrument changed", unaccepted_text(unaccepted),
                next=INSTRUMENT_NEXT.replace("KEY", unaccepted[0].key))


def compare_recorded_instruments(gated: Sequence[ReportGate], ceilings: Ceilings) -> None:
    """A report measured otherwise than the runs its ceilings were set from (the file's
    ``instrument:``) is inconclusive, unless ``instruments:`` accepts the change."""
    recorded = ceilings.model.instrument
    accepted = ceilings.model.instruments
    for report_gate in gated:
        report = report_gate.report
        if report is None or report.name not in recorded:
            continue
        measured = dict(recorded[report.name])
        missing = missing_cases(measured.pop(CASES, None), report)
        if missing is not None and report_gate.inconclusive is None:
            report_gate.inconclusive = Inconclusive(UNFINISHED, missing)
        report_gate.instrument = instrument_changes(measured, report.instrument, accepted)
        unaccepted = [change for change in report_gate.instrument if change.reason is None]
        if unaccepted and report_gate.inconclusive is None:
            report_gate.inconclusive = Inconclusive(
                "the measuring instrument changed", unaccepted_text(unaccepted, SINCE_INIT),
                next=INSTRUMENT_NEXT.replace("KEY", unaccepted[0].key))


def missing_cases(recorded: str | None, report: Report) -> str | None:
    """Why a report with fewer cases than the ceilings were set from (the file's
    ``instrument: {REPORT: {cases: N}}``) cannot be judged: the run stopped part way."""
    if recorded is None or not recorded.isdigit() or report.n_cases is None:
        return None
    expected = int(recorded)
    if report.n_cases >= expected:
        return None
    return (f"it holds {report.n_cases} of the {expected} cases the ceilings were set from "
            f"({expected - report.n_cases} missing): a run that stopped part way, or a "
            "smaller case set (init it anew for one)")
