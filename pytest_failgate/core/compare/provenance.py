"""A noise band is evidence measured from runs: it says which, and can be measured again.

``failgate noise`` records the runs it measured in the band (``measured_from``: their paths
relative to the band file), so a reviewer of a change to the band, or of the allowances it
yields, can re-measure it from those runs (``failgate noise --check noise_band.json``) and
see every number that differs from what the file says. A band edited by hand, or measured
from other runs than it names, does not re-measure to itself.
"""

from __future__ import annotations

import posixpath
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from ..base.errors import FailgateError
from .noise import noise_band_document

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .noise import NoiseDocument

MEASURED_FROM = "measured_from"
# what re-measuring reproduces: the bands (each report's too), the cases' stability, how many
# runs, their ids
_COMPARED = ("n_runs", "run_ids", "metric_band", "case_stability", "unstable_cases",
             "reports")
SHOWN = 5


def recorded_runs(band: Path, document: NoiseDocument) -> list[Path]:
    """The runs a band says it was measured from, as paths (relative to the band's folder)."""
    found = document.extra.get(MEASURED_FROM)
    # each run a path, or {"run": path, "ran": time, "time_from": where the time is from}
    runs = [r.get("run") if isinstance(r, dict) else r
            for r in (found if isinstance(found, list) else [])]
    if not runs or not all(isinstance(r, str) and r for r in runs):
        raise FailgateError(f"the band does not say which runs it was measured from (no "
                            f"'{MEASURED_FROM}' list); give the runs: failgate noise --check "
                            f"{band.name} RUN RUN...", band)
    return [band.parent / run for run in runs if isinstance(run, str)]


def runs_written(out: Path, runs: Sequence[Path]) -> list[str]:
    """How a band written to ``out`` names its runs: relative to its folder, POSIX."""
    folder = Path(posixpath.abspath(out.parent.resolve().as_posix()))
    written = []
    for run in runs:
        try:
            written.append(PurePath(posixpath.relpath(run.resolve().as_posix(),
                                                      folder.as_posix())).as_posix())
        except ValueError:  # another drive on Windows
            written.append(run.resolve().as_posix())
    return written


def differences(recorded: NoiseDocument, measured: NoiseDocument) -> list[str]:
    """Every number of the band file that the runs do not reproduce, one line each."""
    was, now = _compared(recorded), _compared(measured)
    lines: list[str] = []
    for key in _COMPARED:
        before, after = was.get(key), now.get(key)
        if before == after:
            continue
        if key == "metric_band":
            lines += _band_lines(before or {}, after or {})
        elif key == "reports":
            lines += _report_lines(before or {}, after or {})
        elif key == "case_stability":
            changed = sorted(k for k in {*(before or {}), *(after or {})}
                             if (before or {}).get(k) != (after or {}).get(k))
            lines.append(f"case_stability: {len(changed)} cases differ ("
                         + ", ".join(changed[:SHOWN]) + (", ..." if len(changed) > SHOWN
                                                         else "") + ")")
        else:
            lines.append(f"{key}: the file says {before!r}, the runs give {after!r}")
    return lines


def _compared(document: NoiseDocument) -> dict[str, Any]:
    return {key: value for key, value in noise_band_document(document).items()
            if key in _COMPARED}


def _report_lines(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Each report's own bands (``reports``) that the runs do not reproduce."""
    lines = []
    for name in sorted({*before, *after}):
        was, now = before.get(name), after.get(name)
        if was is None or now is None:
            lines.append(f"reports[{name}]: the file " + ("lacks it" if was is None
                                                          else "has it, the runs do not"))
        elif was != now:
            if was.get("run_ids") != now.get("run_ids"):
                lines.append(f"reports[{name}]: run_ids: the file says {was.get('run_ids')!r}, "
                             f"the runs give {now.get('run_ids')!r}")
            lines += [f"reports[{name}] {line}" for line in _band_lines(
                was.get("metric_band") or {}, now.get("metric_band") or {})]
    return lines


def _band_lines(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    lines = []
    for name in sorted({*before, *after}):
        was, now = before.get(name), after.get(name)
        if was == now:
            continue
        if was is None or now is None:
            lines.append(f"metric_band[{name}]: the file " + ("lacks it" if was is None
                                                               else "has it, the runs do not"))
            continue
        fields = [f"{field} {was.get(field)!r} -> {now.get(field)!r}"
                  for field in sorted({*was, *now}) if was.get(field) != now.get(field)]
        lines.append(f"metric_band[{name}]: file -> runs: " + ", ".join(fields))
    return lines
