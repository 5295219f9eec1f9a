"""Which files of a run are its reports: the candidates under its paths, one report per
name (the latest of a tool's runs in one folder), and the error of a run with none, which
would otherwise pass vacuously (DESIGN 3.4). Shared by the gate (``runner.load_run``) and
the guard's probe (``probed``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.errors import FailgateError, display_path
from ..engines import is_glob
from ..engines.load import TABLE_SUFFIXES, datasets, glob_name, is_dataset
from ..reports.builtin import tool_notes
from ..reports.discover import REPORT_SUFFIXES, discover
from ..reports.model import ReportFile, SkippedFile

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ..reports.read import ReadSpec
    from ..reports.readers import ReportReader
    from .checked import ReportGate


def run_files(paths: tuple[Path, ...], spec: ReadSpec
              ) -> tuple[list[ReportFile], list[SkippedFile]]:
    """The candidate report files of a run's paths (tables, datasets and globs first), and
    the files that are not candidates: what ``load_run`` (and the guard's ``probe_run``)
    reads."""
    suffixes = (*REPORT_SUFFIXES, *TABLE_SUFFIXES,
                *(s for reader in spec.readers for s in reader.suffixes))
    tables = tuple(p for p in paths if is_glob(p) or is_dataset(p))
    files, skipped = discover(tuple(p for p in paths if p not in tables), suffixes)
    return [*(ReportFile(p, glob_name(p)) for p in tables), *datasets(files)], skipped


def no_report(paths: tuple[Path, ...], skipped: list[SkippedFile],
              readers: Sequence[ReportReader]) -> FailgateError:
    """A run with no report at all: an error (a gate over nothing would pass), with what
    the tools of the files it skipped say of writing one."""
    where = ", ".join(display_path(p) for p in paths)
    return FailgateError(
        f"no report found under {where}: a gate over nothing would pass vacuously"
        + (f"; skipped: {_skipped_text(skipped)}" if skipped else "")
        + "".join(f"; {note}" for note in tool_notes(skipped, readers)))


def one_run_per_name(gated: list[ReportGate], skipped: list[SkippedFile]) -> list[ReportGate]:
    """One report per name: of the same-named files of one folder that their reader orders
    (``run_order``: Inspect's log folder keeps every run, DeepEval writes one run to
    several files), the latest; the others are listed as skipped, naming the one gated.
    Any other two files of one name (a report and a broken file included) would share
    ceilings and items: an error naming both."""
    groups: dict[str, list[ReportGate]] = {}
    for loaded in gated:
        name = loaded.report.name if loaded.report is not None else loaded.file.name
        groups.setdefault(name, []).append(loaded)
    left_out: set[int] = set()
    for name, group in groups.items():
        if len(group) == 1:
            continue
        reports = [g.report for g in group]
        ordered = [r for r in reports if r is not None and r.run_order is not None]
        if len(ordered) == len(group) and len({(r.format, r.path.parent) for r in ordered}) == 1:
            latest = max(ordered, key=lambda r: (r.run_order or (), r.path.name))
            for report in ordered:
                if report is not latest:
                    left_out.add(id(report))
                    skipped.append(SkippedFile(report.path, (
                        f"{display_path(latest.path)} is gated instead: the latest {report.format} "
                        f"file of report '{name}' in this folder")))
            continue
        first, second = (g.report.path if g.report is not None else g.file.path
                         for g in group[:2])
        raise FailgateError(
            f"two reports are both named '{name}': {display_path(first)} and "
            f"{display_path(second)}; gate one run at a time (one report path per "
            "run's folder)")
    return [g for g in gated if g.report is None or id(g.report) not in left_out]


def _skipped_text(skipped: Sequence[SkippedFile]) -> str:
    """The skipped files and why, for an error that stops the run before any summary."""
    shown = [f"{display_path(s.path)} ({s.reason})" for s in skipped[:5]]
    return ", ".join(shown) + (f" and {len(skipped) - 5} more" if len(skipped) > 5 else "")
