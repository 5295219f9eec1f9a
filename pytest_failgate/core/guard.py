"""The loosening guard: did this change raise or drop a ceiling without saying why?

It compares ``ceilings.yaml`` with its version at a git ref by *effective*
ceiling: for the defaults and for every report named in either version, what
each name may count, in whole cases (``max``) and as a rate (``max_rate``). A
value loosens when it allows more than before: a raised number, a dropped
``total`` or ``max_rate`` (no longer limited), or an override removed or added
above what applied before. A loosening passes only when its entry now carries a
``reason`` that this change wrote (new, or different from the ref's). Lowered
ceilings and tightening additions always pass.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from .ceilings.load import validation_error
from .ceilings.model import Ceiling, CeilingsModel
from .errors import FailgateError, display_path
from .formatting import format_number
from .taxonomy.model import TOTAL
from .yamlsource import YamlDoc, load_yaml, read_text

if TYPE_CHECKING:
    from collections.abc import Iterator

Limit = int | Fraction | None  # None: not limited


@dataclass(frozen=True)
class Change:
    """One effective ceiling that allows more than it did at the ref."""

    scope: str  # "ceilings" or "reports.<name>"
    name: str
    key: str  # "max" or "max_rate"
    old: Limit
    new: Limit
    line: int | None  # where the entry is now (None when it was removed)
    reason: str | None  # the reason this change wrote, if any

    @property
    def excused(self) -> bool:
        return self.reason is not None

    def describe(self, path: str) -> str:
        where = f"{path}:{self.line}" if self.line else f"{path} (entry removed)"
        label = f"{self.scope}.{self.name}" + ("" if self.key == "max" else ".max_rate")
        text = f"{where} {label}: {_show(self.old)} -> {_show(self.new)}"
        return text + (f'  reason: "{self.reason}"' if self.reason else "  (no reason written)")


def _show(limit: Limit) -> str:
    if limit is None:
        return "not limited"
    return format_number(limit)


def _looser(old: Limit, new: Limit) -> bool:
    if new is None:
        return old is not None
    return old is not None and new > old


@dataclass(frozen=True)
class _Version:
    model: CeilingsModel
    doc: YamlDoc

    def entry(self, scope: str, name: str) -> Ceiling | None:
        if scope == "ceilings":
            return self.model.ceilings.get(name)
        return self.model.reports.get(scope.removeprefix("reports."), {}).get(name)

    def effective(self, scope: str, name: str) -> tuple[Limit, Limit]:
        """(count limit, rate limit) that apply to ``name`` in ``scope``."""
        ceiling = self.entry(scope, name)
        if ceiling is None and scope != "ceilings":
            ceiling = self.model.ceilings.get(name)
        if ceiling is None:
            return (None if name == TOTAL else 0), None
        return ceiling.max, ceiling.max_rate

    def names(self, scope: str) -> set[str]:
        """Names with an entry of their own in ``scope`` (a report inherits the rest)."""
        if scope == "ceilings":
            return set(self.model.ceilings)
        return set(self.model.reports.get(scope.removeprefix("reports."), {}))

    def line(self, scope: str, name: str) -> int | None:
        parts = ("ceilings", name) if scope == "ceilings" else (
            "reports", scope.removeprefix("reports."), name)
        span = self.doc.keys.get(parts)
        return span.line if span is not None else None


def _parse(path: Path, text: str, label: str) -> _Version:
    doc = load_yaml(path, text)
    try:
        return _Version(CeilingsModel.model_validate(doc.data), doc)
    except ValidationError as exc:
        error = validation_error(doc, exc)
        raise FailgateError(f"{label}: {error.message}", path, error.line, error.col) from None


def loosenings(old: _Version, new: _Version) -> list[Change]:
    """Every effective ceiling the new version loosens, in file order."""
    reports = {*old.model.reports, *new.model.reports}
    scopes = ["ceilings", *sorted(f"reports.{report}" for report in reports)]
    changes: list[Change] = []
    for scope in scopes:
        for name in sorted(old.names(scope) | new.names(scope)):
            before, after = old.effective(scope, name), new.effective(scope, name)
            for key, was, now in (("max", before[0], after[0]), ("max_rate", before[1], after[1])):
                if not _looser(was, now):
                    continue
                changes.append(Change(scope, name, key, was, now, new.line(scope, name),
                                      _written_reason(old, new, scope, name)))
    changes.sort(key=lambda c: (c.line is None, c.line or 0, c.scope, c.name, c.key))
    return changes


def _written_reason(old: _Version, new: _Version, scope: str, name: str) -> str | None:
    entry = new.entry(scope, name)
    if entry is None or not entry.reason:
        return None
    before = old.entry(scope, name)
    return entry.reason if before is None or before.reason != entry.reason else None


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              check=False)
    except FileNotFoundError:
        raise FailgateError("git is not installed; the guard reads the ref with git") from None


def text_at_ref(path: Path, ref: str) -> str | None:
    """The file's text at ``ref`` (``None`` if it did not exist there)."""
    directory = path.parent
    top = _git(["rev-parse", "--show-toplevel"], directory)
    if top.returncode != 0:
        raise FailgateError("not inside a git repository; the guard compares with a git ref",
                            path)
    if _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], directory).returncode:
        raise FailgateError(
            f"unknown git ref '{ref}'; in a shallow CI checkout fetch it first, e.g. "
            f"`git fetch --depth=1 origin {ref.removeprefix('origin/')}`"
        )
    relative = path.resolve().relative_to(Path(top.stdout.strip()).resolve()).as_posix()
    shown = _git(["show", f"{ref}:{relative}"], directory)
    if shown.returncode != 0:
        return None
    return shown.stdout


@dataclass(frozen=True)
class GuardResult:
    ref: str
    path: Path
    changes: list[Change]
    new_file: bool

    @property
    def passed(self) -> bool:
        return all(change.excused for change in self.changes)

    def lines(self) -> Iterator[str]:
        shown = display_path(self.path)
        if self.new_file:
            yield f"guard: {shown} did not exist at {self.ref}; nothing can have loosened"
            return
        unexcused = [c for c in self.changes if not c.excused]
        if not self.changes:
            yield f"guard: no ceiling in {shown} loosened since {self.ref}"
            return
        if unexcused:
            yield (f"guard: {len(unexcused)} of {len(self.changes)} loosened ceilings in {shown} "
                   f"since {self.ref} have no reason written in this change:")
        else:
            yield (f"guard: {len(self.changes)} ceilings in {shown} loosened since {self.ref}, "
                   "each with a reason written in this change:")
        for change in self.changes:
            yield "  " + change.describe(shown)
        if unexcused:
            yield ("  to accept a loosening, write it as {max: N, reason: \"why\"} in this change;"
                   " lowering, or adding a tighter ceiling, needs no reason")


def guard(path: Path, ref: str) -> GuardResult:
    """Compare the ceilings file with its version at ``ref``."""
    old_text = text_at_ref(path, ref)
    if old_text is None:
        return GuardResult(ref, path, [], new_file=True)
    new = _parse(path, read_text(path), "this version")
    old = _parse(path, old_text, f"the version at {ref}")
    return GuardResult(ref, path, loosenings(old, new), new_file=False)
