"""When two paired runs were measured, and whether their pairing cancels the day's shift.

A comparison case by case (a baseline, the ratchet's ``confirm-baseline``, a paired
sequential run) cancels a shift the two runs share: the same judge, the same provider
state, runs made close together. A judge or provider that is harsher on some days moves
every flaky case of a day together; two runs of two days carry two days' shifts, and the
pairing then sees their difference as a change of the system: every flaky case moved one
way, McNemar's test finds it significant (issue: yesterday's main as the baseline failed a
quarter of unchanged pull requests). So the pairing is only believed within a **window**:
by default both runs made within :data:`DEFAULT_HOURS` hours of each other (the same CI
job, the same working day), or ``day`` (the same calendar day, UTC), or a stated number of
hours (the ``baseline-window`` setting). Outside it the comparison says nothing about the
change: the report is inconclusive, naming both times, unless the user accepts the gap
explicitly (the ``accept-baseline-gap`` setting, with its reason; the guard compares that
setting, so the acceptance is reviewed like any loosening).

When each run was measured is read by :mod:`.ran` (the report's own time, else a file
name's, else the file's modification time, marked as such: a copy or a checkout changes
it). A run whose reports record no time at all (read from standard input, a table of a
SQL engine) is named as such: its window cannot be checked.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.defaults import DEFAULT_WINDOW_HOURS
from ..base.errors import FailgateError
from .ran import MTIME, UTC, report_time, written

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..reports.model import Report

DEFAULT_HOURS = DEFAULT_WINDOW_HOURS  # the shared default (``core.base.defaults``)
DEFAULT_WINDOW = str(DEFAULT_HOURS)
SAME_DAY = "day"
NO_TIME = "no time recorded"
WINDOW_OPTION = "baseline-window"
ACCEPT_OPTION = "accept-baseline-gap"


@dataclass(frozen=True)
class RunTime:
    """When one run was measured (its reports' earliest time) and where that is read from;
    ``time`` None: none of its reports records one."""

    time: datetime | None
    source: str

    @property
    def text(self) -> str:
        """The time as the messages say it: ``2026-11-10T00:30:00Z (run.jsonl timestamp)``."""
        if self.time is None:
            return NO_TIME
        marked = (f"{MTIME}: a copy or a checkout changes it" if self.source == MTIME
                  else self.source)
        return f"{written(self.time)} ({marked})"


@dataclass(frozen=True)
class Window:
    """How close two paired runs must be: within ``hours``, or on one UTC calendar day."""

    hours: int | None  # None: the same calendar day (UTC)

    @property
    def text(self) -> str:
        return ("the same calendar day (UTC)" if self.hours is None
                else f"{self.hours} hour{'s' if self.hours != 1 else ''} of each other")

    def holds(self, first: datetime, second: datetime) -> bool:
        if self.hours is None:
            return first.astimezone(UTC).date() == second.astimezone(UTC).date()
        return abs(first - second) <= timedelta(hours=self.hours)


def parse_window(text: str | None) -> Window:
    """The ``baseline-window`` setting: a whole number of hours (``12``, ``24h``) or ``day``."""
    value = (text if text is not None else DEFAULT_WINDOW).strip().lower()
    if value == SAME_DAY:
        return Window(None)
    found = re.fullmatch(r"(\d{1,5})\s*h?", value)
    if found is None or int(found.group(1)) == 0:
        raise FailgateError(f"{WINDOW_OPTION}: '{text}' is not a window; write a whole number "
                            f"of hours (12, 24h) or '{SAME_DAY}' (the same calendar day, UTC)")
    return Window(int(found.group(1)))


def run_time(reports: Sequence[Report]) -> RunTime:
    """When a run was measured: its reports' earliest time (by :func:`.ran.report_time`)."""
    found = []
    for report in reports:
        try:
            found.append(report_time(report))
        except OSError:  # no file to ask (standard input), or it is gone
            continue
    if not found:
        return RunTime(None, NO_TIME)
    time, source = min(found, key=lambda pair: pair[0])
    return RunTime(time, source)


def now() -> RunTime:
    """A run being made now (a sequential run's cases arriving)."""
    return RunTime(datetime.now(UTC).replace(microsecond=0), "this run, now")


@dataclass(frozen=True)
class Gap:
    """Two paired runs outside the window (or without a time): why, in words."""

    text: str
    measured: bool  # both runs record a time (else the window could not be checked)


def gap(what: str, earlier: RunTime, this: RunTime, window: Window) -> Gap | None:
    """Whether ``what`` (``the baseline``) was measured outside the window of this run."""
    if earlier.time is None or this.time is None:
        missing = [name for name, t in ((what, earlier), ("this run", this)) if t.time is None]
        return Gap(f"{' and '.join(missing)} record{'s' if len(missing) == 1 else ''} no time "
                   f"of measurement ({what} {earlier.text}; this run {this.text}): whether the "
                   f"two were made within {window.text} cannot be checked", measured=False)
    if window.holds(earlier.time, this.time):
        return None
    hours = abs(this.time - earlier.time).total_seconds() / 3600
    return Gap(f"{what} was measured {_span(hours)} apart from this run, outside the window "
               f"of {window.text}: {what} {earlier.text}, this run {this.text}", measured=True)


def _span(hours: float) -> str:
    if hours < 48:
        return f"{hours:.1f} hours"
    return f"{hours / 24:.1f} days"
