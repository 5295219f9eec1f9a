"""Gold labels are evidence: the guard compares them as it compares a noise band.

With labels the gate judges each count by its corrected true count (``core.gate.corrected``),
so a label decides verdicts as a ceiling does. The guard finds the labels file the gate
reads at the ref and now (the ``failgate_labels`` setting, else the ceilings file's
``labels:``, relative to it; a file moved elsewhere is compared by content) and names
what lets a run fail less:

- a label **removed** (fewer labels: wider intervals, and the case's evidence gone);
- a label **changed** from a category (that category's corrected count falls);
- labels **added where there were none**, or **all removed** (the gated counts change
  kind: the judge's, or corrected ones).

A label changed from null to a category only raises a count, and a label added to a
labelled file is more evidence: neither is a loosening. Each is excused by the ceilings
file's top-level ``reason:`` written in this change.
"""

from __future__ import annotations

import json
import posixpath
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.errors import FailgateError
from .enforced import Change

if TYPE_CHECKING:
    from ..base.inifile import IniFile
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
    return GoldLabels(relative, _cases(text))


def _cases(text: str) -> dict[Case, str | None]:
    """Each labelled case's category; lines the gate would refuse are left to it."""
    found: dict[Case, str | None] = {}
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(item, dict) and isinstance(item.get("id"), str | int):
            report = item.get("report")
            category = item.get("category")
            found[(report if isinstance(report, str) else "", str(item["id"]))] = (
                category if isinstance(category, str) else None)
    return found


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
    changes = []
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


def _shown(cases: list[Case]) -> str:
    return ", ".join(case for _, case in cases[:SHOWN]) + (", ..." if len(cases) > SHOWN
                                                           else "")
