"""What a ceilings file makes the gate enforce, compared between two versions.

The guard does not diff text: it asks, for every item the gate would build and
every other rule the file sets, whether the new version lets more pass than the
old one. An item is (report or the defaults, slice, name) and its ceiling is the
entry that governs it (the slice's own, else the report's, else the default; no
entry is 0 for a category and no item for ``total`` and groups), with the
significance and population that apply to its rate; an item newly decided by a
significance test joins the run's family of tests (Holm), which dilutes every other test's
share of the false-alarm budget, so it is a loosening even where its own limit is tighter.
Beside the items: the
taxonomy (by the content of its rules), the file-wide significance, the declared
slices, metric floors and contracts.

A change passes when it does not loosen, or when the entry that loosened carries
a ``reason`` this change wrote. What has no entry to carry a reason (the
taxonomy, the file-wide settings, a removed entry) takes the file's top-level
``reason``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.formatting import format_number
from ..base.reasons import reason_words
from ..ceilings.limit import UNLIMITED, Limit, show_alpha
from ..ceilings.model import (
    DEFAULT_SHARE,
    SLICE_SEPARATOR,
    Ceiling,
    CeilingsModel,
    Contract,
    MetricFloor,
    governing_locs,
)
from ..taxonomy.model import GROUP_PREFIX, TOTAL

if TYPE_CHECKING:
    from ..base.yamlsource import YamlDoc

Shown = int | Fraction | str | None  # None: not limited
FAMILY = ".significance_family"  # an item that joins the run's tests decided together


@dataclass(frozen=True)
class Version:
    """One version of a ceilings file, parsed, with its taxonomy identified by content."""

    model: CeilingsModel
    doc: YamlDoc
    taxonomy: str  # e.g. "rag (built-in)", "taxonomy.yaml (rules 1a2b3c4d5e6f)"
    taxonomies: dict[str, str]  # `taxonomies:` key (a format or a report) -> identity, as above

    def line(self, loc: tuple[str, ...]) -> int | None:
        span = self.doc.keys.get(loc)
        return span.line if span is not None else None

    def entry(self, loc: tuple[str, ...]) -> Ceiling | None:
        """The entry written at ``loc`` (not inherited)."""
        if loc[0] == "ceilings":
            section = self.model.ceilings if len(loc) == 2 else (
                self.model.slice_ceilings.get(loc[1], {}))
        else:
            section = self.model.reports.get(loc[1], {}) if len(loc) == 3 else (
                self.model.report_slices.get(loc[1], {}).get(loc[2], {}))
        return section.get(loc[-1])

    def governing(self, report: str | None, slice_: str | None, name: str
                  ) -> tuple[str, ...] | None:
        """Where the entry that governs ``name`` in ``report`` (and slice) is written."""
        return next((loc for loc in governing_locs(report, slice_, name)
                     if self.entry(loc) is not None), None)

    def item(self, report: str | None, slice_: str | None, name: str) -> Limit | None:
        """The limit the gate would apply to ``name`` (None: the gate builds no such item):
        the governing entry's, with the file's significance where it sets none."""
        if slice_ is not None and slice_.split(SLICE_SEPARATOR, 1)[0] not in self.model.slices:
            return None
        loc = self.governing(report, slice_, name)
        entry = self.entry(loc) if loc is not None else None
        if entry is None:
            optional = name == TOTAL or name.startswith(GROUP_PREFIX)
            return None if optional else Limit(max=0)
        return entry.under(self.model.significance)

    def item_locs(self) -> set[tuple[str, ...]]:
        """Every place an entry is written: ("ceilings"|"reports", [report,] [slice,] name)."""
        model = self.model
        locs: set[tuple[str, ...]] = {("ceilings", name) for name in model.ceilings}
        locs |= {("ceilings", s, name) for s, block in model.slice_ceilings.items()
                 for name in block}
        locs |= {("reports", r, name) for r, entries in model.reports.items() for name in entries}
        locs |= {("reports", r, s, name) for r, blocks in model.report_slices.items()
                 for s, block in blocks.items() for name in block}
        return locs


@dataclass(frozen=True)
class Change:
    """One thing the new version lets pass that the old one did not."""

    label: str  # e.g. "ceilings.unknown", "reports.a.query_type=x.total.max_rate", "taxonomy"
    old: Shown
    new: Shown
    line: int | None  # where it is set now (None: removed)
    reason: str | None  # the reason this change wrote for it, if any
    # the entry still carries the reason written for its old limit, which excuses nothing new
    kept_reason: bool = False

    @property
    def excused(self) -> bool:
        return self.reason is not None

    def describe(self, path: str) -> str:
        """``path:line label: old -> new`` and the reason; without a path (a route that is
        no entry of the file), the label says where."""
        where = (f"{path}:{self.line} " if self.line else f"{path} (entry removed) " if path
                 else "")
        text = f"{where}{self.label}: {show(self.old)} -> {show(self.new)}"
        if self.reason:
            return f'{text}  reason: "{self.reason}"'
        if self.kept_reason:
            return (f"{text}  (its reason is the one written for the old limit, which does "
                    "not cover this change: write why this change loosens it)")
        return f"{text}  (no reason written)"


def show(value: Shown) -> str:
    if value is None:
        return "not limited"
    if isinstance(value, str):
        return value
    return format_number(value)


def _reason(new_reason: str | None, old_reason: str | None) -> str | None:
    """A reason counts only when this change wrote it: words of its own, not the old
    reason again however it is re-spaced, re-cased or padded with invisible characters
    (``reason_words``), and not a reason of no words at all."""
    if not new_reason or not reason_words(new_reason):
        return None
    if old_reason is not None and reason_words(new_reason) == reason_words(old_reason):
        return None
    return new_reason


def written_reasons(version: Version) -> set[str]:
    """The words (``reason_words``) of every reason the version's file carries: on an
    entry, a contract, a floor, an ``instruments:`` change or the file itself."""
    found: set[str] = set()
    stack: list[Any] = [version.doc.data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            reason = node.get("reason")
            if isinstance(reason, str) and reason_words(reason):
                found.add(reason_words(reason))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def not_written(changes: list[Change], written: set[str]) -> list[Change]:
    """The changes, each reason that says what a reason at the ref already said taken away."""
    return [replace(change, reason=None) if change.reason is not None
            and reason_words(change.reason) in written else change for change in changes]


def entry_reason(new: str | None, old: Ceiling | None) -> str | None:
    """An entry's reason, when this change wrote it (``_reason`` against the old entry's)."""
    return _reason(new, old.reason if old is not None else None)


def file_reason(old: Version, new: Version) -> str | None:
    """The ceilings file's top-level reason, when this change wrote it."""
    return _reason(new.model.reason, old.model.reason)


def loosenings(old: Version, new: Version) -> list[Change]:
    """Everything the new version enforces less strictly than the old, in file order."""
    reason = file_reason(old, new)
    changes = _item_changes(old, new, reason)
    changes += _file_changes(old, new, reason)
    changes += _floor_changes(old, new, reason)
    changes += _contract_changes(old, new, reason)
    changes.sort(key=lambda c: (c.line is None, c.line or 0, c.label))
    return changes


def _item_changes(old: Version, new: Version, file_reason: str | None) -> list[Change]:
    """Every item either version could build, once: where its limit is set, or where what
    governs it switched (a slice block written for every report overrides a report's own)."""
    locs = old.item_locs() | new.item_locs()
    reports = sorted({loc[1] for loc in locs if loc[0] == "reports"})
    slices = sorted({loc[-2] for loc in locs if len(loc) == (3 if loc[0] == "ceilings" else 4)})
    names = sorted({loc[-1] for loc in locs})
    changes: list[Change] = []
    for report in [None, *reports]:
        for slice_ in [None, *slices]:
            if slice_ is not None and slice_.split(SLICE_SEPARATOR, 1)[0] not in (
                    new.model.slices):
                continue  # the slice field was dropped: one change for it, in _file_changes
            for name in names:
                changes += _item_change(old, new, report, slice_, name, file_reason)
    return changes


def _item_change(old: Version, new: Version, report: str | None, slice_: str | None, name: str,
                 file_reason: str | None) -> list[Change]:
    own = (*(("reports", report) if report is not None else ("ceilings",)),
           *((slice_,) if slice_ is not None else ()), name)
    was_at, now_at = old.governing(report, slice_, name), new.governing(report, slice_, name)
    if own not in (was_at, now_at) and (was_at is None or now_at is None or was_at == now_at):
        return []  # inherited the same way before and after: reported where it is written
    was_entry = old.entry(was_at) if was_at is not None else None
    now_entry = new.entry(now_at) if now_at is not None else None
    reason = None
    kept = False
    if now_entry is not None and now_at is not None:
        before = old.entry(now_at)
        reason = _reason(now_entry.reason, before.reason if before is not None else None)
        kept = reason is None and bool(now_entry.reason and now_entry.reason.strip())
    if reason is None and was_at is not None and new.entry(was_at) is None:
        reason = file_reason  # what governed it was removed: the file says why
    label, line = ".".join(own), new.line(now_at) if now_at is not None else None
    if own == was_at and new.entry(own) is None:
        line = None  # its own entry was removed (it may inherit another now)
    alphas = (was_entry.significance if was_entry else None,
              now_entry.significance if now_entry else None)
    changes = []
    for suffix, a, b in _item_loosenings(old.item(report, slice_, name),
                                         new.item(report, slice_, name)):
        if suffix == ".significance" and alphas[0] == alphas[1]:
            continue  # inherited from the file-wide level: reported there
        if suffix == FAMILY and alphas[1] is None and (
                old.model.significance != new.model.significance):
            continue  # tested by the file-wide level this change set: reported there
        changes.append(Change(label + suffix, a, b, line, reason, kept and reason is None))
    return changes


def _item_loosenings(old: Limit | None, new: Limit | None
                     ) -> list[tuple[str, Shown, Shown]]:
    joins = None
    if new is not None and _tested(new):
        joins = (FAMILY, "not in the run's significance family",
                 f"tested at {show_alpha(new.significance)}: joins the run's significance "
                 "family (Holm), diluting every test's share of the budget")
    if old is None:  # no item before: anything now is a new limit, but a test dilutes
        return [joins] if joins is not None else []
    found: list[tuple[str, Shown, Shown]] = []
    if joins is not None and old.max_rate is None:
        found.append(joins)
    return found + old.loosenings(new or UNLIMITED)


def _tested(item: Limit | None) -> bool:
    """Whether the gate decides the item by a significance test: a rate with a level, one
    test of the run's family (``gate.family``: Holm over every test of the run)."""
    return item is not None and item.tested


def _file_changes(old: Version, new: Version, reason: str | None) -> list[Change]:
    changes: list[Change] = []
    if old.taxonomy != new.taxonomy:
        changes.append(Change("taxonomy", old.taxonomy, new.taxonomy, new.line(("taxonomy",)),
                              reason))
    for key in sorted({*old.taxonomies, *new.taxonomies}):
        before = old.taxonomies.get(key, f"the file's taxonomy, {old.taxonomy}")
        after = new.taxonomies.get(key, f"the file's taxonomy, {new.taxonomy}")
        if before != after:
            changes.append(Change(f"taxonomies.{key}", before, after,
                                  new.line(("taxonomies", key)), reason))
    was, now = old.model.significance, new.model.significance
    if now is not None and (was is None or now < was):
        changes.append(Change("significance", show_alpha(was), show_alpha(now),
                              new.line(("significance",)), reason))
    shares = [DEFAULT_SHARE if v is None else v
              for v in (old.model.inconclusive, new.model.inconclusive)]
    if shares[1] > shares[0]:  # more failures outside the system judged as a pass
        changes.append(Change("inconclusive", shares[0], shares[1],
                              new.line(("inconclusive",)), reason))
    for report, recorded in sorted(old.model.instrument.items()):
        kept = new.model.instrument.get(report, {})
        for key, value in sorted(recorded.items()):
            if kept.get(key) != value:  # a run measured otherwise is judged, not inconclusive
                changes.append(Change(f"instrument.{report}.{key}", value,
                                      kept.get(key, "not recorded (any instrument is judged)"),
                                      new.line(("instrument", report)), reason))
    for key, accepted in sorted(new.model.instruments.items()):
        earlier = old.model.instruments.get(key)
        if earlier != accepted:  # a comparison across another judge is judged, not inconclusive
            changes.append(Change(
                f"instruments.{key}",
                "not accepted" if earlier is None else f"{earlier.from_} -> {earlier.to}",
                f"{accepted.from_} -> {accepted.to} accepted",
                new.line(("instruments", key)),
                _reason(accepted.reason, earlier.reason if earlier is not None else None)))
    for field in old.model.slices:
        if field not in new.model.slices:
            changes.append(Change(f"slices.{field}", "items per value", "removed",
                                  new.line(("slices",)), reason))
    return changes


def _floor_changes(old: Version, new: Version, file_reason: str | None) -> list[Change]:
    changes: list[Change] = []
    for name, was in old.model.floors.items():
        now: MetricFloor | None = new.model.floors.get(name)
        label, loc = f"{new.model.floors_key}.{name}", (new.model.floors_key, name)
        if now is None:  # named as the file that had it names it
            changes.append(Change(f"{old.model.floors_key}.{name}",
                                  f"min {format_number(was.min)}", "removed", None,
                                  file_reason))
            continue
        reason = _reason(now.reason, was.reason)
        line = new.line(loc)
        if now.min < was.min:
            changes.append(Change(label + ".min", was.min, now.min, line, reason))
        if was.min_n is not None and (now.min_n is None or now.min_n < was.min_n):
            changes.append(Change(label + ".min_n", was.min_n, now.min_n, line, reason))
        if now.substantive != was.substantive:
            changes.append(Change(label + ".substantive", was.substantive or "the taxonomy's",
                                  now.substantive or "the taxonomy's", line, reason))
    return changes


def _contract_changes(old: Version, new: Version, file_reason: str | None) -> list[Change]:
    changes: list[Change] = []
    for name, was in old.model.contracts.items():
        now: Contract | None = new.model.contracts.get(name)
        label = f"contracts.{name}"
        if now is None:
            changes.append(Change(label, was.check, "removed", None, file_reason))
            continue
        reason = _reason(now.reason, was.reason)
        line = new.line(("contracts", name))
        if now.check != was.check:
            changes.append(Change(label + ".check", was.check, now.check, line, reason))
        narrowed = (now.reports is not None
                    and (was.reports is None or set(was.reports) - set(now.reports)))
        if narrowed:
            changes.append(Change(label + ".reports", _reports(was.reports),
                                  _reports(now.reports), line, reason))
    return changes


def _reports(reports: list[str] | None) -> str:
    return "every report" if reports is None else ", ".join(reports) or "no report"


def content_digest(data: Any) -> str:
    """A digest of parsed YAML data: comments and layout do not count, order in lists does."""
    text = json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
