"""The gate's side of when runs were measured: the window of every case-by-case pairing.

``run_gate`` hands this module the run, its baseline and its ratchet's ``confirm-baseline``
run (``compare.window`` says why a pairing is only believed within a window):

- a report whose baseline counterpart was measured outside the window is **inconclusive**
  (not a pass, not a regression), naming the two times, unless the ``accept-baseline-gap``
  setting gives a reason (then it is judged, and the summary says the gap was accepted);
- a ``confirm-baseline`` run outside the window confirms nothing (the ratchet lowers none
  of its drops: a lowering stays in the file), whatever the acceptance; ``confirm`` (an
  independent run, main's previous) may come from any day: that is its point;
- a run with no time at all is named in the summary.

The times go into the result (``GateResult.times``) whichever way the decision went.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.result import RunTimeResult, RunTimes
from ..compare.ran import written
from ..compare.window import (
    ACCEPT_OPTION,
    WINDOW_OPTION,
    RunTime,
    Window,
    gap,
    parse_window,
    run_time,
)
from .inconclusive import Inconclusive

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ..compare.baseline import BaselineRun
    from ..reports.model import Report
    from .checked import GateConfig, ReportGate

CAUSE = "the baseline was measured outside the window"
NEXT = (f"re-run the baseline (main's head) in the same job as this run; or, knowing the "
        f"day-to-day drift is in the comparison, accept the gap with {ACCEPT_OPTION} REASON "
        f"(reviewed by the guard), or widen {WINDOW_OPTION}")


@dataclass
class Dated:
    """The run's times and the window they are held to."""

    window: Window
    run: RunTime
    accepted: str | None
    baseline: RunTime | None = None
    confirm_baseline: RunTime | None = None
    gaps: tuple[str, ...] = ()

    def result(self) -> RunTimes:
        return RunTimes(
            window=self.window.text, run=_result(self.run),
            baseline=_result(self.baseline) if self.baseline is not None else None,
            confirm_baseline=(_result(self.confirm_baseline)
                              if self.confirm_baseline is not None else None),
            gaps=list(self.gaps), accepted=self.accepted)


def _result(time: RunTime) -> RunTimeResult:
    return RunTimeResult(ran=written(time.time) if time.time is not None else None,
                         time_from=time.source)


def dated(config: GateConfig, gated: Sequence[ReportGate]) -> Dated:
    """When this run was measured, and the window its pairings are held to."""
    accepted = (config.accept_baseline_gap or "").strip() or None
    return Dated(parse_window(config.baseline_window),
                 run_time([g.report for g in gated if g.report is not None]), accepted)


def judge_baseline(times: Dated, gated: Sequence[ReportGate], baseline: BaselineRun
                   ) -> list[str]:
    """Each report paired with a baseline report measured outside the window becomes
    inconclusive (unless accepted); returns the summary's notes."""
    times.baseline = run_time(list(baseline.base.values()))
    notes: list[str] = []
    unmeasured: list[str] = []
    for report_gate in gated:
        report = report_gate.report
        base = baseline.base.get(report.name) if report is not None else None
        if report is None or base is None:
            continue
        found = gap("the baseline", run_time([base]), run_time([report]), times.window)
        if found is None:
            continue
        if not found.measured:
            unmeasured.append(found.text)
            continue
        times.gaps = (*times.gaps, f"{report.name}: {found.text}")
        if times.accepted is not None:
            notes.append(f"baseline: {report.name}: {found.text}; accepted ({ACCEPT_OPTION}: "
                         f"{times.accepted}): the day-to-day drift is in this comparison")
        elif report_gate.inconclusive is None:
            report_gate.inconclusive = Inconclusive(CAUSE, found.text, next=NEXT)
    notes += [f"baseline: {text}" for text in dict.fromkeys(unmeasured)]
    return notes


def refuse_confirm_baseline(times: Dated, before: Sequence[Report],
                            gated: Sequence[ReportGate]) -> str | None:
    """Why the ratchet's ``confirm-baseline`` run confirms nothing (None: it may).

    Outside the window its pairing carries two days' shifts, and a false lowering stays in
    the file: refused whatever ``accept-baseline-gap`` says (that acceptance is a check's)."""
    times.confirm_baseline = run_time(before)
    this = run_time([g.report for g in gated if g.report is not None])
    found = gap("the confirm-baseline run", times.confirm_baseline, this, times.window)
    if found is None:
        return None
    times.gaps = (*times.gaps, found.text)
    return (f"ratchet: {found.text}; it confirms no drop (a same-day pairing only cancels "
            "a shift the two runs share): re-run the system before the change in this job")


def refuse_sequential_baseline(window: str | None, accepted: str | None, baseline: Path,
                               replayed: Path | None = None) -> None:
    """A paired sequential run (``watch --baseline``, ``--failgate-sequential`` with a
    baseline) against a baseline report measured outside the window is refused before any
    case is paid for, naming both times, unless the gap is accepted. This run's time is now
    (a live run), or the replayed report's."""
    from ..base.errors import FailgateError
    from ..compare.ran import file_time
    from ..compare.window import now

    held = parse_window(window)
    try:
        earlier = RunTime(*file_time(baseline))
        this = RunTime(*file_time(replayed)) if replayed is not None else now()
    except OSError:
        return  # the file's own error comes where it is read
    found = gap("the baseline", earlier, this, held)
    if found is None or (accepted or "").strip():
        return
    raise FailgateError(f"{found.text}; a pairing cancels only a shift the two runs share: "
                        f"{NEXT}", baseline)
