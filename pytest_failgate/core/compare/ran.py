"""When each run of a noise band ran: day-level drift is seen only between days.

A judge or provider harsher on some days moves every flaky case together; repeats made
within one hour (or one day) all fall on the same day and cannot see it. ``failgate
noise`` therefore records, for each run it measured, when it ran: from the report's own
time where its format records one (Inspect ``eval.created``, promptfoo ``timestamp`` /
``createdAt``, the regression gate's header ``timestamp``; lm-eval's and DeepEval's file
names carry the time they were written, without a zone: taken as UTC), else the file's
modification time, labelled as such (a copy or a checkout changes it). A band whose runs
all ran within one hour, or one day, is said to be so: correlated drift is not sampled.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from ..base.formatting import plural

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ..reports.model import Report

# A reader records when its run was made as ``recorded["ran"] = (value, field)``: the value
# as the report writes it (an ISO time, or seconds since the epoch) and the field it is in
RAN = "ran"
UTC = timezone.utc
MTIME = "file mtime"
# lm-eval: results_2026-01-21T03-44-18.458309.json; DeepEval: test_run_20261130_111552.json
_NAMED = (
    (re.compile(r"_(\d{4})-(\d\d)-(\d\d)T(\d\d)-(\d\d)-(\d\d)(?:\.\d+)?\.jsonl?$"),
     "file name (lm-eval)"),
    (re.compile(r"^test_run_(\d{4})(\d\d)(\d\d)_(\d\d)(\d\d)(\d\d)\.json$"),
     "file name (DeepEval)"),
)


def _parse(value: object) -> datetime | None:
    """An ISO 8601 time (``Z`` or an offset; naive taken as UTC) or seconds since the epoch."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            found = datetime.fromtimestamp(value / 1000 if value > 1e11 else value, UTC)
        elif isinstance(value, str) and len(value) <= 64:
            found = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


def report_time(report: Report) -> tuple[datetime, str]:
    """When one report's run was made, and where that is read from."""
    recorded = report.recorded.get(RAN)
    if isinstance(recorded, tuple) and len(recorded) == 2:
        found = _parse(recorded[0])
        if found is not None:
            return found, str(recorded[1])
    return file_time(report.path)


def file_time(path: Path) -> tuple[datetime, str]:
    """When a file's run was made, from the file alone: the time its name carries, else its
    modification time (``MTIME``: a last resort; raises ``OSError`` when there is no file)."""
    for pattern, label in _NAMED:
        match = pattern.search(path.name)
        if match:
            try:
                year, month, day, hour, minute, second = map(int, match.groups())
                return datetime(year, month, day, hour, minute, second, tzinfo=UTC), label
            except ValueError:
                break
    return datetime.fromtimestamp(path.stat().st_mtime, UTC), MTIME


def run_time(reports: Sequence[Report]) -> tuple[datetime, str] | None:
    """When a run was made: its reports' earliest time (None: a run of no report)."""
    found = [report_time(report) for report in reports]
    return min(found, key=lambda pair: pair[0]) if found else None


def written(time: datetime) -> str:
    """A time as the band records it: UTC, to the second, ISO 8601."""
    return time.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def spread_warning(times: Sequence[datetime]) -> str | None:
    """The warning for runs made too close together to sample day-to-day drift."""
    if len(times) < 2:
        return None
    spread = max(times) - min(times)
    if spread >= timedelta(days=1):
        return None
    within = "one hour" if spread < timedelta(hours=1) else "one day"
    return (f"all {plural(len(times), 'run')} ran within {within}: a judge or provider that "
            "is harsher on some days moves every case together, and runs of one day cannot "
            "see it (correlated drift is not sampled); run the repeats on different days")
