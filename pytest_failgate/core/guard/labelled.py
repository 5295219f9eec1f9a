"""Gold labels are evidence: the guard compares them as it compares a noise band.

With labels the gate judges each count by its corrected true count (``core.gate.corrected``),
so a label decides verdicts as a ceiling does. The guard finds the labels file the gate
reads at the ref and now (the ``failgate_labels`` setting, else the ceilings file's
``labels:``, relative to it; a file moved elsewhere is compared by content), reads it with
the gate's own reader (``compare.labelfile``: JSON Lines or CSV; what the gate refuses,
the guard refuses, naming the file and line), and names what lets a run fail less:

- a label **removed** (fewer labels: wider intervals, and the case's evidence gone);
- a label **changed** from a category (that category's corrected count falls);
- a label **added outside the draw**: a case the file did not list before, under the same
  header (the draw is fixed by its seed, size and run, so a new case is not of it: the
  cherry-picker's route; the gate does not use it, the guard names it);
- the **draw changed or dropped**: the header's seed, size or run changed or removed;
- labels **added where there were none**, or **all removed** (the gated counts change
  kind: the judge's, or corrected ones).

A label changed from null to a category only raises a count, and a label filled in on a
drawn case's line is the sample's evidence: neither is a loosening. Each is excused by
the ceilings file's top-level ``reason:`` written in this change. The guard reads no
report: it compares the file at two refs.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..compare.labelfile import parse_labels
from .enforced import Change

if TYPE_CHECKING:
    from ..base.inifile import IniFile
    from ..compare.labelfile import Header
    from .enforced import Version
    from .gitref import Tree

LABELS_KEY = "failgate_labels"
SHOWN = 5
Case = tuple[str, str]  # (report, or "" when the file names none; case id)


@dataclass(frozen=True)
class GoldLabels:
    """The labels one side's gate reads: none, or a file's labelled cases."""

    label: str  # "none", or the file's repository path
    cases: dict[Case, str | None] | None = None  # None: no file (or none readable)
    listed: frozenset[Case] = frozenset()  # every case the file lists, labelled or not
    header: Header | None = None  # what its sample drew from (None: no header)

    @property
    def identity(self) -> str:
        if self.cases is None:
            return "none (the judge's counts)" if self.label == "none" else self.label
        return f"{self.label} ({len(self.cases)} labels)"


def labels_of(tree: Tree, ini: IniFile, version: Version, ceilings: str) -> GoldLabels:
    """The labels the gate reads in ``tree`` (the setting first, then ``labels:``)."""
    try:
        setting = ini.get(LABELS_KEY, "path")
    except FailgateError:
        setting = None
    if setting:
        relative = tree.relative(ini.folder / setting) or str(setting)
    elif version.model.labels is not None:
        relative = posixpath.normpath(posixpath.join(posixpath.dirname(ceilings),
                                                     version.model.labels))
    else:
        return GoldLabels("none")
    text = tree.read(relative)
    if text is None:
        return GoldLabels(f"{relative} (missing)")
    return _read(relative, text)


def _read(relative: str, text: str) -> GoldLabels:
    """The file's labelled cases, read as the gate reads them (``parse_labels``)."""
    parsed = parse_labels(text.encode("utf-8"), Path(relative))  # (named, never opened)
    cases = {(row.report or "", row.id): row.category for row in parsed.labelled}
    listed = frozenset((row.report or "", row.id) for row in parsed.rows)
    return GoldLabels(relative, cases, listed, parsed.header)


def label_changes(old: GoldLabels, new: GoldLabels, reason: str | None, line: int | None
                  ) -> list[Change]:
    """What the new labels let pass that the old did not (see the module docstring)."""
    if old.cases is None and new.cases is None:
        return [] if old.label == new.label or new.label == "none" else [
            Change("labels", old.identity, new.identity, line, reason)]
    if old.cases is None or new.cases is None:
        what = ("corrected counts where the judge's were gated" if old.cases is None
                else "the judge's counts where corrected ones were gated")
        return [Change("labels", old.identity, f"{new.identity}: {what}", line, reason)]
    where = new.label if new.label == old.label else f"{old.label} -> {new.label}"
    removed = [case for case in old.cases if case not in new.cases]
    changed = [case for case, category in old.cases.items()
               if case in new.cases and category is not None and new.cases[case] != category]
    changes = _draw_changes(old, new, where, line, reason)
    if removed:
        changes.append(Change(f"labels {where}", f"{len(old.cases)} labels",
                              f"{len(removed)} removed ({_shown(removed)})", line, reason))
    if changed:
        shown = ", ".join(f"{case}: {old.cases[(report, case)]} -> "
                          f"{new.cases[(report, case)] or 'null'}"
                          for report, case in changed[:SHOWN])
        more = ", ..." if len(changed) > SHOWN else ""
        changes.append(Change(f"labels {where}", f"{len(old.cases)} labels",
                              f"{len(changed)} changed from a category ({shown}{more})", line,
                              reason))
    return changes


def _draw_changes(old: GoldLabels, new: GoldLabels, where: str, line: int | None,
                  reason: str | None) -> list[Change]:
    """A header changed or dropped, else the labels added for cases the file did not list
    (not of its draw: see the module docstring)."""
    assert old.cases is not None
    assert new.cases is not None
    if old.header is not None and (new.header is None or _drawn(old.header)
                                   != _drawn(new.header)):
        after = _header_text(new.header) if new.header is not None else "no seed header"
        return [Change(f"labels {where}", _header_text(old.header),
                       f"{after}: the draw the labels are checked against changed", line,
                       reason)]
    added = [case for case in new.cases if case not in old.listed]
    if not added:
        return []
    drawn = (f"the draw of seed {new.header.seed}" if new.header is not None
             else "the file's sample")
    return [Change(f"labels {where}", f"{len(old.cases)} labels",
                   f"{len(added)} added outside {drawn} ({_shown(added)}): labels the seed "
                   "did not draw", line, reason)]


def _drawn(header: Header) -> tuple[int, int | None, str | None]:
    return header.seed, header.n, header.run


def _header_text(header: Header) -> str:
    parts = [f"seed {header.seed}"] + ([f"n {header.n}"] if header.n is not None else []) + (
        [f"run {header.run}"] if header.run is not None else [])
    return ", ".join(parts)


def _shown(cases: list[Case]) -> str:
    return ", ".join(case for _, case in cases[:SHOWN]) + (", ..." if len(cases) > SHOWN
                                                           else "")
