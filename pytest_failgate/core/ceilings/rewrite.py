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
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..base.formatting import format_number
from ..taxonomy.model import TOTAL
from .limit import rate_limit, refuse_unhandled
from .load import Entry, parse_ceilings, validate_ceilings

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from pathlib import Path

    from ..base.yamlsource import Loc, Span
    from ..reports.model import Report
    from ..taxonomy import Taxonomy
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
    """One number in the file that a ratchet rewrites: a ceiling it lowers, or the parts
    of a noisy ceiling (``observed``, ``allowance``) that change with it."""

    entry: Entry
    key: Literal["max", "max_rate", "observed", "allowance", "true_max"]
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


def ratchet_rate(least: Fraction, largest_n: int) -> Fraction:
    """The smallest decimal rate >= ``least`` with one more digit than ``largest_n`` has.

    With ``10**digits > n`` the decimal exceeds ``count / n`` by less than ``1 / n``,
    so it allows exactly ``count`` cases: a ratcheted rate has no slack.
    """
    scale = 10 ** len(str(largest_n))
    return Fraction(math.ceil(least * scale), scale)


# The limit keys the ratchet decides about: it lowers max (with observed and allowance,
# its parts on a noisy pipeline) and max_rate; per and significance say how a count is
# taken and judged, and are never lowered. A key it does not know is refused, not left
# as written while the others come down.
# true_max: lowered by the labelled ratchet only (``core.gate.corrected``), to the true
# count's upper bound; a judge's count says nothing of it
RATCHETED = frozenset({"max", "observed", "allowance", "max_rate", "per", "significance",
                       "true_max"})


def plan_ratchet(checks: Iterable[Check], noisy: bool = False,
                 confirmed: Mapping[tuple[str, str], int] | None = None,
                 paired: Mapping[tuple[str, str], int] | None = None,
                 refusals: list[str] | None = None) -> list[Lowering]:
    """Every number that can come down; none ever goes up.

    An entry under ``ceilings:`` governs that name in every report without an
    override, so it can only fall to the largest of their counts. An entry with an
    undecidable check (a rate over an aggregate without a case total) is left alone.

    On a noisy run (``noisy``) a count is not the truth, and a ratchet to it would lock
    in a lucky run. There each count has an allowance ``a`` (the one the noise asks
    for, else the one the entry records): the entry falls only when the count fell
    more than ``a`` below the count the ceiling was set from (``observed``, else
    ``max - a``), and then to the count plus ``a``, its parts rewritten with it. An
    entry with no noise measured for it is left alone there. Without noise ``a`` is
    0 and this is the exact ratchet.

    On a noisy run one low count is not evidence enough: on a lenient day every count is
    low, and a ceiling set from it fails the unchanged system on every ordinary day
    after. A drop lowers a noisy entry only when it is **confirmed** by a second,
    independent run of the same system (``confirmed``: its count per ``(report,
    name)``, e.g. main's previous run), whose count fell past the allowance too; the
    entry's ``observed`` is then the mean of the two counts (rounded half up), never the
    one low run's. Under day-level drift the allowance carries the day-to-day spread, and a
    real fix rarely gets past it in two runs of two days: ``paired`` holds the drops a run
    of the system before the change, made the same day, confirms case by case
    (``compare.improvement.confirmed_drops``: significant and beyond the noise band; the
    day's shift cancels), by ``(report, name)``. A paired drop lowers the entry's
    ``observed`` by the drop, from the count it was set from (never from this run's
    count, which carries the day). Given both kinds of evidence, both must confirm (under
    drift either one alone lowered an unchanged system now and then, and a false lowering
    stays in the file), and the entry falls to the higher of the two (the smaller
    lowering); a ``paired`` run refused (measured outside the window, ``gate.dated``) is
    given and confirms nothing. Without either a noisy
    entry is never lowered (:func:`unconfirmed` names the drops that wait for one).

    Whatever the evidence, an entry is never lowered below what this run has: its new
    ``max`` (the confirmed ``observed`` plus the allowance) must hold this run's count, or
    the same run would fail its own gate. Evidence that says otherwise (a confirming run
    far below this one, a "run before the change" with far more failures than the
    ceiling was set from: a crafted one, or not the system this run changed) disagrees
    with the run, and confirms nothing: the entry is kept, and ``refusals`` gets a line
    naming it.

    A category of cases that failed outside the system under test (``outside: true``) is
    a tolerance, not a quality: its ceiling says when a run is inconclusive, and a ratchet
    to a run with no provider error would make the next one inconclusive. It is kept.
    """
    refuse_unhandled("the ratchet (ceilings/rewrite.py)", RATCHETED)
    governed: dict[tuple[str, ...], list[Check]] = {}
    for check in checks:
        taxonomy = check.report.taxonomy
        if taxonomy is not None and check.name in taxonomy.outside:
            continue  # a tolerance for failures outside the system, not a quality: kept
        if check.entry is not None:
            governed.setdefault(check.entry.loc, []).append(check)
    plan: list[Lowering] = []
    for group in governed.values():
        if any(check.verdict == "error" for check in group):
            continue
        entry = group[0].entry
        assert entry is not None
        plan += _lower_true_max(entry, group)
        needs = [c.noise_allowance for c in group if c.noise_allowance is not None]
        if noisy and not needs and entry.ceiling.allowance is None:
            continue  # no noise measured for it: its count may be a lucky one
        allowance = max(needs) if needs else entry.ceiling.allowance
        if noisy or entry.ceiling.allowance is not None:  # a noisy ceiling: confirmed only
            plan += _lower_confirmed(entry, group, allowance or 0, confirmed, paired,
                                     refusals)
            if confirmed is not None or paired:
                plan += _lower_rate(entry, group, max(needs, default=0))
            continue
        plan += _lower_max(entry, group, allowance)
        plan += _lower_rate(entry, group, max(needs, default=0))
    plan.sort(key=lambda lowering: lowering.span.start)
    return plan


def _lower_true_max(entry: Entry, group: Sequence[Check]) -> list[Lowering]:
    """With gold labels: an entry's ``true_max`` falls only when the labels show every
    true count it governs below it (their upper bounds, at the level the labelled gate
    decided them, all under it), and then to the highest of those bounds; a run without
    labels, or a count the labels did not correct, leaves it."""
    true_max = entry.ceiling.true_max
    if true_max is None or entry.true_max_span is None:
        return []
    bounds = [check.corrected.upper if check.corrected is not None
              and check.corrected.verdict == "pass" else None for check in group]
    if any(bound is None for bound in bounds):
        return []
    highest = max(bound for bound in bounds if bound is not None)
    if highest >= true_max:
        return []
    return [Lowering(entry, "true_max", true_max, highest, entry.true_max_span)]


def _lower_max(entry: Entry, group: Sequence[Check], allowance: int | None) -> list[Lowering]:
    ceiling = entry.ceiling
    if ceiling.max is None or entry.max_span is None:
        return []
    a = allowance or 0
    highest = max(check.count for check in group)
    reference = ceiling.observed if ceiling.observed is not None else ceiling.max - a
    if reference - highest <= a or highest + a >= ceiling.max:
        return []
    return _lowered_to(entry, highest, a)


def _lowered_to(entry: Entry, observed: int, allowance: int) -> list[Lowering]:
    """The lowerings that set an entry to ``observed`` plus ``allowance``: its ``max``, and
    the ``observed`` and ``allowance`` it writes beside it, where it writes them."""
    ceiling = entry.ceiling
    assert ceiling.max is not None
    assert entry.max_span is not None
    plan = [Lowering(entry, "max", ceiling.max, observed + allowance, entry.max_span)]
    if ceiling.observed is not None and entry.observed_span is not None:
        plan.append(Lowering(entry, "observed", ceiling.observed, observed, entry.observed_span))
    if ceiling.allowance not in (None, allowance) and entry.allowance_span is not None:
        assert ceiling.allowance is not None
        plan.append(Lowering(entry, "allowance", ceiling.allowance, allowance,
                             entry.allowance_span))
    return plan


def _evidence(group: Sequence[Check], confirmed: Mapping[tuple[str, str], int] | None
              ) -> int | None:
    """The count the confirming evidence gives a group: the highest of its checks' means of
    this run and the confirming run (rounded half up); None when a check is unconfirmed."""
    if confirmed is None:
        return None
    means = []
    for check in group:
        other = confirmed.get((check.report.name, check.name))
        if other is None:
            return None
        means.append((check.count + other + 1) // 2)
    return max(means)


def _lower_confirmed(entry: Entry, group: Sequence[Check], allowance: int,
                     confirmed: Mapping[tuple[str, str], int] | None,
                     paired: Mapping[tuple[str, str], int] | None = None,
                     refusals: list[str] | None = None) -> list[Lowering]:
    """A noisy entry's lowering, only where a second run, or a same-day run of the system
    before the change, confirms the drop, and never below this run's count (see
    :func:`plan_ratchet`)."""
    ceiling = entry.ceiling
    if ceiling.max is None or entry.max_span is None:
        return []
    reference = ceiling.observed if ceiling.observed is not None else ceiling.max - allowance
    given = [evidence for evidence in (confirmed, paired) if evidence is not None]
    found = [observed for observed in (_by_second_run(group, reference, allowance, confirmed),
                                       _by_pairing(group, reference, paired))
             if observed is not None]
    if len(found) < len(given):  # each kind of evidence given must confirm the drop
        return []
    if not found or max(found) + allowance >= ceiling.max:
        return []
    highest = max(group, key=lambda check: check.count)
    if max(found) + allowance < highest.count:  # the evidence disagrees with this run
        if refusals is not None:
            evidence = ("the run before the change (--confirm-baseline)" if paired
                        else "the confirming run (--confirm)")
            refusals.append(
                f"ratchet: {highest.report.name}::{highest.name} not lowered: "
                f"{evidence} would set it to {max(found) + allowance} (observed "
                f"{max(found)} + allowance {allowance}), below this run's count "
                f"{highest.count}, so this run would fail its own gate; evidence that "
                "disagrees with the run confirms nothing")
        return []
    return _lowered_to(entry, max(found), allowance)


def _by_second_run(group: Sequence[Check], reference: int, allowance: int,
                   confirmed: Mapping[tuple[str, str], int] | None) -> int | None:
    """The ``observed`` a second run of the same system confirms: the means of the two
    counts, where both fell past the allowance (None: not confirmed)."""
    if confirmed is None:
        return None
    for check in group:
        other = confirmed.get((check.report.name, check.name))
        if other is None or reference - max(check.count, other) <= allowance:
            return None  # not past the noise in both runs
    return _evidence(group, confirmed)


def _by_pairing(group: Sequence[Check], reference: int,
                paired: Mapping[tuple[str, str], int] | None) -> int | None:
    """The ``observed`` a same-day paired run confirms: the count the ceiling was set from,
    less the smallest confirmed drop of its checks (None: one is not confirmed)."""
    if not paired:
        return None
    drops = [paired.get((check.report.name, check.name)) for check in group]
    if any(drop is None for drop in drops):
        return None
    return max(0, reference - min(drop for drop in drops if drop is not None))


def unconfirmed(checks: Iterable[Check]) -> list[Check]:
    """Noisy counts that fell past their allowance in this run alone: a ratchet lowers them
    only when a second run confirms the drop (:func:`plan_ratchet`)."""
    found = []
    for check in checks:
        entry = check.entry
        taxonomy = check.report.taxonomy
        allowance = check.noise_allowance if check.noise_allowance is not None else (
            entry.ceiling.allowance if entry is not None else None)
        top = entry.ceiling.max if entry is not None else None
        if (entry is None or allowance is None or top is None
                or (taxonomy is not None and check.name in taxonomy.outside)):
            continue
        ceiling = entry.ceiling
        reference = ceiling.observed if ceiling.observed is not None else top - allowance
        if reference - check.count > allowance:
            found.append(check)
    return found


def _lower_rate(entry: Entry, group: Sequence[Check], allowance: int) -> list[Lowering]:
    ceiling = entry.ceiling
    if ceiling.max_rate is None or entry.rate_span is None:
        return []
    if allowance and any(rate_limit(ceiling.max_rate, c.n_cases or 1) - c.count
                         <= 2 * allowance for c in group):
        return []  # not beyond the noise (see plan_ratchet)
    least = max(Fraction(c.count + allowance, c.n_cases or 1) for c in group)
    largest_n = max(c.n_cases or 1 for c in group)
    rate = ratchet_rate(least, largest_n)
    if rate >= ceiling.max_rate:
        return []
    return [Lowering(entry, "max_rate", ceiling.max_rate, rate, entry.rate_span)]


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
    try:
        _write_atomic(path, text, exclusive)
    except FailgateError:
        raise
    except OSError as exc:  # a read-only folder, a full disk: the file is left as it was
        raise FailgateError(f"cannot write: {exc.strerror or exc}", path) from None


def _write_atomic(path: Path, text: str, exclusive: bool) -> None:
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
            raise FailgateError("already exists; init never overwrites a ceilings file",
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
# Failure-category ceilings, enforced by `pytest {pytest}` (or `failgate check {cli}`).
# After a fix, lower them with a ratchet: `failgate ratchet {cli}` (or --failgate-ratchet).
# Raising one is a reviewed change: write it as {{max: N, reason: "..."}}.
version: 1
taxonomy:{taxonomy}
"""

NOISY_HEADER = """\
# Failure-category ceilings, enforced by `pytest {pytest}` (or `failgate check {cli}`).
# On this noisy evaluation each ceiling is max = observed + allowance: the count this run
# had, and how far an unchanged system's count rises by chance (from the noise source
# below; at most {budget} of unchanged runs fail any of these {items} counts by chance).
# The ratchet (`failgate ratchet`, --failgate-ratchet) lowers one only when a count fell past its
# allowance. Raising one is a reviewed change: write {{max: N, reason: "..."}}.
version: 1
taxonomy:{taxonomy}
noise: {noise}
"""


@dataclass(frozen=True)
class InitNoise:
    """What a new noise-aware ceilings file is made from: the allowance of each count."""

    source: str  # the `noise:` value written: a path relative to the file, or "repeats"
    allowances: Mapping[tuple[str, str], int]  # (report, name) -> allowance
    budget: Fraction  # the run's false-alarm budget the allowances share
    items: int  # how many counts share it
    observed: Mapping[tuple[str, str], int] | None = None  # (report, name) -> the count set


def init_text(default: Taxonomy, reports: Sequence[tuple[Report, Taxonomy]],
              reference: Callable[[Taxonomy], str | Mapping[str, Any]],
              noise: InitNoise | None = None,
              paths: Sequence[str] = ("REPORTS",),
              true_max: Mapping[tuple[str, str], int] | None = None) -> str:
    """A new ceilings file holding today's counts exactly, or with their noise allowances.

    ``taxonomy:`` is ``default``; a report classified by another taxonomy gets a line
    under ``taxonomies:``, by its format when every report of that format uses it,
    else by its name. Defaults are the highest count of each name across the reports
    that have it; a report whose count is lower gets an override, so every report is
    gated at its own count. ``reference`` writes a taxonomy as the file names it (a
    known name, or a path relative to the ceilings file).

    With ``noise`` a count that has an allowance is written as ``max``, ``observed``
    and ``allowance`` (one number a line), ``observed`` from the noise's evidence where it
    gives one (``noise.observed``: the band's mean with this run): a default takes the
    highest count and the largest allowance of the reports it governs (as a ratchet
    lowers it).

    ``paths`` are the reports' paths as the header's commands name them (relative to the
    ceilings file's folder, where the commands run).

    With ``true_max`` (init with gold labels: (report, name) -> the true count's upper
    bound) a count is written as a mapping with ``max`` (the judge's count, for runs
    without labels) and ``true_max`` (what the labelled gate tests the true count
    against, plus the count's noise allowance on a noisy pipeline); a default takes the
    highest of the reports it governs.
    """
    trues = true_max or {}
    words = {"pytest": " ".join(f"--failgate={path}" for path in paths),
             "cli": " ".join(paths)}
    names = list(dict.fromkeys(
        name for _, taxonomy in [(None, default), *reports]
        for name in (*taxonomy.category_names, TOTAL)))
    allowances = noise.allowances if noise is not None else {}
    centers = noise.observed or {} if noise is not None else {}

    def count(report: Report, name: str) -> int | None:
        if (report.name, name) in centers:  # the noise's evidence, not this run alone
            return centers[(report.name, name)]
        return report.failed if name == TOTAL else report.counts.get(name)

    def parts(name: str, governed: Sequence[Report]) -> tuple[int, int | None]:
        counts = [c for report in governed if (c := count(report, name)) is not None]
        given = [allowances[(r.name, name)] for r in governed if (r.name, name) in allowances]
        return max(counts, default=0), max(given) if given else None

    def true_of(name: str, governed: Sequence[Report]) -> int | None:
        # on a noisy pipeline the true count moves between runs as the judge's does: the
        # same allowance on top of the bound
        given = [trues[(r.name, name)] + allowances.get((r.name, name), 0)
                 for r in governed if (r.name, name) in trues]
        return max(given) if given else None

    def entry(name: str, observed: int, allowance: int | None, indent: str,
              true: int | None = None) -> list[str]:
        truth = [] if true is None else [f"{indent}  true_max: {true}"]
        if allowance is None and true is None:
            return [f"{indent}{name}: {observed}"]
        if allowance is None:
            return [f"{indent}{name}:", f"{indent}  max: {observed}", *truth]
        return [f"{indent}{name}:", f"{indent}  max: {observed + allowance}",
                f"{indent}  observed: {observed}", f"{indent}  allowance: {allowance}",
                *truth]

    loaded = [report for report, _ in reports]
    defaults = {name: parts(name, loaded) for name in names}
    if noise is None:
        lines = [INIT_HEADER.format(taxonomy=_taxonomy_value(reference(default)), **words
                                   ).rstrip("\n")]
    else:
        budget = f"{format_number(noise.budget * 100)}%"
        lines = [NOISY_HEADER.format(taxonomy=_taxonomy_value(reference(default)), budget=budget,
                                     items=noise.items, noise=_yaml_key(noise.source),
                                     **words).rstrip("\n")]
    lines += _taxonomy_lines(default, reports, reference)
    lines += instrument_lines(loaded)
    lines.append("ceilings:")
    for name in names:
        lines += entry(name, *defaults[name], "  ", true_of(name, loaded))
    overrides = []
    for report in sorted(loaded, key=lambda report: report.name):
        lower = [(name, own) for name in names if count(report, name) is not None
                 and _ceiling(own := parts(name, [report])) < _ceiling(defaults[name])]
        if lower:
            overrides.append(f"  {_yaml_key(report.name)}:")
            for name, (observed, allowance) in lower:
                overrides += entry(name, observed, allowance, "    ",
                                   true_of(name, [report]))
    if overrides:
        lines += ["reports:", *overrides]
    return "\n".join(lines) + "\n"


def instrument_lines(reports: Sequence[Report]) -> list[str]:
    """The ``instrument:`` block: what measured each report the file is set from (its judge,
    scorer options, thresholds, grader, dataset, as its format records them), one flow
    mapping a report. A later run measured otherwise is inconclusive, baseline or not,
    unless ``instruments:`` accepts the change with a reason (``core.compare.instrument``).
    Values are report content: written as JSON strings (valid YAML), never as markup."""
    measured = [(report.name, {**(report.instrument or {}), **case_set(report)})
                for report in sorted(reports, key=lambda report: report.name)]
    measured = [(name, instrument) for name, instrument in measured if instrument]
    if not measured:
        return []
    lines = ["# what measured the runs these ceilings were set from: a run measured otherwise",
             "# is inconclusive unless `instruments:` accepts the change with its reason; a",
             "# run with fewer `cases` stopped part way, and is inconclusive",
             "instrument:"]
    for name, instrument in measured:
        entries = ", ".join(f"{_yaml_key(key)}: {json.dumps(value, ensure_ascii=False)}"
                            for key, value in sorted(instrument.items()))
        lines.append(f"  {_yaml_key(name)}: {{{entries}}}")
    return lines


CASES = "cases"  # the instrument entry: how many cases the ceilings were set from


def case_set(report: Report) -> dict[str, str]:
    """The size of the case set a report's ceilings are set from, as an ``instrument:``
    entry (``cases: "20"``): a later run with fewer cases is missing some, whatever its
    format says of itself (a promptfoo JSON Lines file cut short says nothing), and is
    inconclusive (``gate.runner``). Only a report of cases has one."""
    if report.kind != "cases" or not report.n_cases:
        return {}
    return {CASES: str(report.n_cases)}


def _ceiling(parts: tuple[int, int | None]) -> int:
    return parts[0] + (parts[1] or 0)


def _taxonomy_lines(default: Taxonomy, reports: Sequence[tuple[Report, Taxonomy]],
                    reference: Callable[[Taxonomy], str | Mapping[str, Any]]) -> list[str]:
    """The ``taxonomies:`` block for reports the default taxonomy does not classify."""
    by_format: dict[str, set[str]] = {}
    for report, taxonomy in reports:
        by_format.setdefault(report.format, set()).add(taxonomy.name)
    lines = []
    for report, taxonomy in sorted(reports, key=lambda pair: pair[0].name):
        if taxonomy.name == default.name:
            continue
        key = report.format if len(by_format[report.format]) == 1 else report.name
        line = f"  {_yaml_key(key)}:{_taxonomy_value(reference(taxonomy), 2)}"
        if line not in lines:
            lines.append(line)
    return ["taxonomies:", *lines] if lines else []


def _taxonomy_value(value: str | Mapping[str, Any], indent: int = 0) -> str:
    """A taxonomy as a ceilings file's value, after its key's colon: a name or path on the
    line, or an inline taxonomy as a block below it (``init --force`` keeps one)."""
    if isinstance(value, str):
        return f" {_yaml_key(value)}"
    import yaml

    block = yaml.safe_dump(dict(value), sort_keys=False, allow_unicode=True,
                           default_flow_style=False, width=100)
    pad = " " * (indent + 2)
    return "\n" + "\n".join(pad + line for line in block.rstrip("\n").split("\n"))


def _yaml_key(name: str) -> str:
    """A report name as a YAML key: plain when safe, else double-quoted (JSON is valid YAML)."""
    return name if _PLAIN_KEY.fullmatch(name) else json.dumps(name)


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*")
