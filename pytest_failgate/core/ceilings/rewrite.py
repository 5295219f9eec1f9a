"""Changing ``ceilings.yaml``: the ratchet plan, the text edits, a new file for init.

A rewrite replaces only the characters of the numbers that change, so comments,
key order, quoting and line endings survive and a reviewer's diff shows exactly
the lowered numbers. The new text is read back and compared with the intended
result before anything is written, and it is written to a temporary file beside
the target and renamed over it, so a crash never leaves half a ceilings file.
"""

from __future__ import annotations

import copy
import glob
import json
import math
import os
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..errors import FailgateError
from ..formatting import format_number
from ..taxonomy.model import TOTAL
from .load import Entry, parse_ceilings, validate_ceilings

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from pathlib import Path

    from ..reports.model import Report
    from ..taxonomy import Taxonomy
    from ..yamlsource import Loc, Span
    from .check import Check
    from .load import Entry


class Replacement(Protocol):
    """New characters for one number of the file (a ``Lowering``, or its serialised form)."""

    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def new_text(self) -> str: ...


@dataclass(frozen=True)
class Lowering:
    """One number in the file that a ratchet lowers."""

    entry: Entry
    key: Literal["max", "max_rate"]
    old: int | Fraction
    new: int | Fraction
    span: Span

    @property
    def new_text(self) -> str:
        return format_number(self.new)

    @property
    def start(self) -> int:
        return self.span.start

    @property
    def end(self) -> int:
        return self.span.end

    def describe(self) -> str:
        what = self.entry.label + (f".{self.key}" if self.entry.mapping else "")
        return f"{what} {format_number(self.old)} -> {self.new_text} (line {self.span.line})"


def ratchet_rate(needed: Fraction, largest_n: int) -> Fraction:
    """The smallest decimal rate >= ``needed`` with one more digit than ``largest_n`` has.

    With ``10**digits > n`` the decimal exceeds ``count / n`` by less than ``1 / n``,
    so it allows exactly ``count`` cases: a ratcheted rate has no slack.
    """
    scale = 10 ** len(str(largest_n))
    return Fraction(math.ceil(needed * scale), scale)


def plan_ratchet(checks: Iterable[Check]) -> list[Lowering]:
    """Every number that can come down to the highest count it governs; none ever goes up.

    An entry under ``ceilings:`` governs that name in every report without an
    override, so it can only fall to the largest of their counts. An entry with an
    undecidable check (a rate over an aggregate without a case total) is left alone.
    """
    governed: dict[tuple[str, ...], list[Check]] = {}
    for check in checks:
        if check.entry is not None:
            governed.setdefault(check.entry.loc, []).append(check)
    plan: list[Lowering] = []
    for group in governed.values():
        if any(check.verdict == "error" for check in group):
            continue
        entry = group[0].entry
        assert entry is not None
        ceiling = entry.ceiling
        if ceiling.max is not None and entry.max_span is not None:
            highest = max(check.count for check in group)
            if highest < ceiling.max:
                plan.append(Lowering(entry, "max", ceiling.max, highest, entry.max_span))
        if ceiling.max_rate is not None and entry.rate_span is not None:
            needed = max(Fraction(c.count, c.n_cases or 1) for c in group)
            largest_n = max(c.n_cases or 1 for c in group)
            rate = ratchet_rate(needed, largest_n)
            if rate < ceiling.max_rate:
                plan.append(Lowering(entry, "max_rate", ceiling.max_rate, rate, entry.rate_span))
    plan.sort(key=lambda lowering: lowering.span.start)
    return plan


def apply(text: str, replacements: Sequence[Replacement]) -> str:
    """The file text with each replaced number written in place."""
    for item in sorted(replacements, key=lambda item: item.start, reverse=True):
        text = text[: item.start] + item.new_text + text[item.end:]
    return text


def rewrite(path: Path, text: str, replacements: Sequence[Replacement]) -> str:
    """``apply``, read back: the new text, or an error if it would not say what we meant.

    The intended result is the old file's data with exactly the replaced numbers
    changed; the new text must parse (aliases refused, as always), validate, and
    hold exactly that data. A span that is not one number of the file, or any
    surprise of the YAML, stops the write instead of corrupting the file.
    """
    old = parse_ceilings(path, text)
    numbers = {(span.start, span.end): loc for loc, span in old.values.items()
               if isinstance(old.data_at(loc), (int, Fraction))}
    intended = copy.deepcopy(old.data)
    for item in replacements:
        loc = numbers.get((item.start, item.end))
        if loc is None:
            raise FailgateError(f"not written: characters {item.start}-{item.end} are not a "
                                "number of this file (did it change?)", path)
        _set(intended, loc, Fraction(item.new_text))
    new_text = apply(text, replacements)
    try:
        new = parse_ceilings(path, new_text)
        validate_ceilings(new)
    except FailgateError as exc:
        raise FailgateError(f"not written: the rewritten file would not read back "
                            f"({exc})", path) from None
    if new.data != intended:
        raise FailgateError("not written: the rewritten file would not read back as the "
                            "intended ceilings", path)
    return new_text


def _set(data: Any, loc: Loc, value: object) -> None:
    for part in loc[:-1]:
        data = data[part]
    data[loc[-1]] = value


def temp_path(path: Path) -> Path:
    """The one temporary file a write of ``path`` uses (a killed write's is reused)."""
    return path.with_name(f".{path.name}.failgate.tmp")


def remove_stale_temps(path: Path) -> None:
    """Delete temporary files that killed writes of ``path`` left (ours, and older names)."""
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        stale.unlink(missing_ok=True)


def write_atomic(path: Path, text: str, *, exclusive: bool = False) -> None:
    """Write via a temporary file and a rename; ``exclusive`` refuses to replace a file.

    Where Linux allows it the data goes to an unnamed file (``O_TMPFILE``) that
    vanishes with a killed process, and takes a name only for the instant before the
    rename; elsewhere a temporary file with one fixed name is written. Any leftover
    of a killed write (under that name, or the random names of older versions) is
    removed first, so kills never accumulate temporary files.
    """
    remove_stale_temps(path)
    if path.exists():
        mode = path.stat().st_mode & 0o7777
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    temp = temp_path(path)
    fd = _open_unnamed(path.parent)
    named = fd is None
    if fd is None:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(fd, data):]
        os.fsync(fd)
        os.fchmod(fd, mode)
        target = path if exclusive else temp
        if not named and not exclusive:
            temp.unlink(missing_ok=True)  # a concurrent leftover; the rename replaces anyway
        try:
            if not named:
                _link_unnamed(fd, target)
            elif exclusive:
                os.link(temp, path)
        except FileExistsError:
            raise FailgateError("already exists; --failgate-init never overwrites",
                                path) from None
        if not exclusive:
            os.replace(temp, path)
        _fsync_directory(path.parent)
    finally:
        os.close(fd)
        temp.unlink(missing_ok=True)


def _open_unnamed(directory: Path) -> int | None:
    """An unnamed file in ``directory`` (Linux ``O_TMPFILE``), or None where unsupported."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(directory, flag | os.O_WRONLY, 0o600)
    except OSError:  # a file system without O_TMPFILE
        return None


def _link_unnamed(fd: int, target: Path) -> None:
    """Give the unnamed file a name (``linkat`` with ``AT_SYMLINK_FOLLOW``, as open(2) says)."""
    directory = os.open(target.parent, os.O_RDONLY)
    try:  # a directory fd makes os.link use linkat(), which follows /proc/self/fd/N
        os.link(f"/proc/self/fd/{fd}", target, src_dir_fd=directory)
    finally:
        os.close(directory)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


INIT_HEADER = """\
# Failure-category ceilings, enforced by `pytest --failgate=REPORTS`.
# After a fix, lower them with `pytest --failgate=REPORTS --failgate-ratchet`.
# Raising one is a reviewed change: write it as {{max: N, reason: "..."}}.
version: 1
taxonomy: {taxonomy}
"""


def init_text(default: Taxonomy, reports: Sequence[tuple[Report, Taxonomy]],
              reference: Callable[[Taxonomy], str]) -> str:
    """A new ceilings file holding today's counts exactly.

    ``taxonomy:`` is ``default``; a report classified by another taxonomy gets a line
    under ``taxonomies:``, by its format when every report of that format uses it,
    else by its name. Defaults are the highest count of each name across the reports
    that have it; a report whose count is lower gets an override, so every report is
    gated at its own count. ``reference`` writes a taxonomy as the file names it (a
    known name, or a path relative to the ceilings file).
    """
    names = list(dict.fromkeys(
        name for _, taxonomy in [(None, default), *reports]
        for name in (*taxonomy.category_names, TOTAL)))

    def count(report: Report, name: str) -> int | None:
        return report.failed if name == TOTAL else report.counts.get(name)

    defaults = {name: max((c for report, _ in reports if (c := count(report, name)) is not None),
                          default=0) for name in names}
    lines = [INIT_HEADER.format(taxonomy=_yaml_key(reference(default))).rstrip("\n")]
    lines += _taxonomy_lines(default, reports, reference)
    lines.append("ceilings:")
    lines += [f"  {name}: {defaults[name]}" for name in names]
    overrides = []
    for report, _ in sorted(reports, key=lambda pair: pair[0].name):
        lower = [(name, c) for name in names
                 if (c := count(report, name)) is not None and c < defaults[name]]
        if lower:
            overrides.append(f"  {_yaml_key(report.name)}:")
            overrides += [f"    {name}: {value}" for name, value in lower]
    if overrides:
        lines += ["reports:", *overrides]
    return "\n".join(lines) + "\n"


def _taxonomy_lines(default: Taxonomy, reports: Sequence[tuple[Report, Taxonomy]],
                    reference: Callable[[Taxonomy], str]) -> list[str]:
    """The ``taxonomies:`` block for reports the default taxonomy does not classify."""
    by_format: dict[str, set[str]] = {}
    for report, taxonomy in reports:
        by_format.setdefault(report.format, set()).add(taxonomy.name)
    lines = []
    for report, taxonomy in sorted(reports, key=lambda pair: pair[0].name):
        if taxonomy.name == default.name:
            continue
        key = report.format if len(by_format[report.format]) == 1 else report.name
        line = f"  {_yaml_key(key)}: {_yaml_key(reference(taxonomy))}"
        if line not in lines:
            lines.append(line)
    return ["taxonomies:", *lines] if lines else []


def _yaml_key(name: str) -> str:
    """A report name as a YAML key: plain when safe, else double-quoted (JSON is valid YAML)."""
    return name if _PLAIN_KEY.fullmatch(name) else json.dumps(name)


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*")
