"""Finding report files under the ``--failgate`` paths and naming them.

A report's name is its path relative to the ``--failgate`` root without the last
suffix (``real100/eval_summary``), so ceilings keep working when the reports
folder moves. Hidden files and folders are read too (DeepEval writes to
``.deepeval/``), except the folders of version control, caches and environments.
Files are visited in sorted order so every run, and every xdist worker, sees the
same reports in the same order.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.confine import check_inside
from ..base.errors import FailgateError
from .model import ReportFile, SkippedFile

if TYPE_CHECKING:
    from collections.abc import Sequence

REPORT_SUFFIXES = (".json", ".jsonl")


def report_name(path: Path, root: Path) -> str:
    relative = path.relative_to(root)
    return relative.with_suffix("").as_posix()


def discover(paths: Sequence[Path], suffixes: Sequence[str] = REPORT_SUFFIXES
             ) -> tuple[list[ReportFile], list[SkippedFile]]:
    """Every candidate report under ``paths`` (files with a suffix some reader reads),
    and the files that are not candidates."""
    found: list[ReportFile] = []
    skipped: list[SkippedFile] = []
    for given in paths:
        check_inside(given)
        if given.is_file() or (given.exists() and not given.is_dir()):
            # a FIFO or device named on purpose: its reader refuses it with a clear message
            if given.suffix not in suffixes:
                raise FailgateError(
                    f"not a report: failgate reads {', '.join(sorted(set(suffixes)))} files",
                    given)
            found.append(ReportFile(given, report_name(given, given.parent)))
        elif given.is_dir():
            _walk(given, found, skipped, suffixes)
        else:
            raise FailgateError(
                "no such file or directory (a report path given on the command line is "
                f"relative to the working directory, {_here()}; one in the ini file, to the "
                "ini file's folder)", given)
    found = _once(found)
    skipped = list({s.path: s for s in skipped}.values())
    return found, skipped


def _here() -> str:
    """The working directory, as the user knows it: its name, with its parent's."""
    cwd = Path.cwd()
    return f"{cwd.parent.name}/{cwd.name}" if cwd.parent.name else str(cwd)


def _once(found: list[ReportFile]) -> list[ReportFile]:
    """Each file once, under the name it was first found by (``reports reports`` gates once)."""
    seen: set[Path] = set()
    unique = []
    for report in found:
        real = report.path.resolve()
        if real not in seen:
            seen.add(real)
            unique.append(report)
    return unique


# Folders that hold tools' state, never reports. Other dot folders are read: DeepEval
# writes its runs to `.deepeval/.latest_test_run.json`.
NOT_REPORTS = frozenset({".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules",
                         "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                         ".ipynb_checkpoints", ".idea", ".vscode"})


# Files that sit beside reports and are never one (a licence, a readme, a folder's
# placeholder): not listed as skipped, which would read as a report failgate missed.
NOT_REPORT_STEMS = frozenset({"LICENSE", "LICENCE", "COPYING", "NOTICE", "README", "AUTHORS",
                              "CHANGELOG", "CITATION"})
NOT_REPORT_SUFFIXES = frozenset({".md", ".rst", ".txt", ".cff"})
NOT_REPORT_NAMES = frozenset({".gitignore", ".gitkeep", ".gitattributes", ".DS_Store"})


def _beside_reports(path: Path) -> bool:
    """A licence, readme or placeholder file in a reports folder, by its name: ``LICENSE``,
    ``README.md``, ``.gitkeep`` (a reader that reads ``.txt`` still gets its files)."""
    stem = path.name.split(".", 1)[0].upper()
    return path.name in NOT_REPORT_NAMES or (
        stem in NOT_REPORT_STEMS and (path.suffix in NOT_REPORT_SUFFIXES or not path.suffix))


def _walk(root: Path, found: list[ReportFile], skipped: list[SkippedFile],
          suffixes: Sequence[str]) -> None:
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in NOT_REPORTS)
        for filename in sorted(files):
            path = Path(directory, filename)
            check_inside(path)  # a link in the folder leading out of a confined run
            if path.suffix in suffixes:
                found.append(ReportFile(path, report_name(path, root)))
            elif not _beside_reports(path):
                skipped.append(SkippedFile(path, "no reader for this kind of file"))
