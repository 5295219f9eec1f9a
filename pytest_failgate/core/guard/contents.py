"""Evidence a setting names, compared by content: a baseline is the run it points at.

A setting whose row of the option table is ``evidence`` (``settings.looser``) names files
the verdict is computed from. Its value changing is named by ``settings``; but the same
value can name other evidence: ``baseline/run.jsonl`` overwritten with the regressed run
makes ``failgate check reports/ --baseline baseline/`` pass, and the setting still reads
``baseline/``. So the guard reads the files the value names (a file, or every file of a
folder) at the ref and now, and names the setting when their content differs, unless the
change writes a reason. The ceilings file, the noise band and the labels are compared by
what they say (``enforced``, ``evidence``, ``labelled``); every other evidence setting is
compared here, by the digest of its files, so a new evidence row is compared without a
route of its own. Evidence that was not in the repository at the ref (a baseline CI
downloads as an artifact of main's run) has no committed content to compare: only its
setting is compared.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from ..base.errors import FailgateError
from .enforced import Change
from .settings import COMPARED_BY_CONTENT

if TYPE_CHECKING:
    from ..base.inifile import IniFile
    from .gitref import Tree
    from .settings import Setting, Table

# compared by what they say, elsewhere (``enforced``, ``evidence``, ``labelled``)
COMPARED_BY_MEANING = (*COMPARED_BY_CONTENT, "noise", "labels")
_FILES_SHOWN = 3


def content_changes(table: Table, trees: tuple[Tree, Tree], inis: tuple[IniFile, IniFile],
                    reason: str | None, where: str) -> list[Change]:
    """Each evidence setting whose value is the same at the ref and now but whose files
    differ in content (``trees``, ``inis``: the ref's and the change's)."""
    base, work = trees
    old, new = inis
    changes = []
    for option in table.guarded:
        if option.effect != "evidence" or option.name in COMPARED_BY_MEANING:
            continue
        if option.kind not in ("path", "paths"):
            continue
        was, now = _places(base, old, option), _places(work, new, option)
        if was is None or now is None or was != now:
            continue  # not set on one side, or another value: ``settings`` names that
        before, after = _contents(base, was), _contents(work, now)
        if all(value == "missing" for value in before.values()):
            continue  # not in the repository at the ref: made by CI (an artifact), unreviewed
        differ = sorted(name for name in {*before, *after} if before.get(name) != after.get(name))
        if not differ:
            continue
        shown = ", ".join(differ[:_FILES_SHOWN]) + (", ..." if len(differ) > _FILES_SHOWN
                                                    else "")
        changes.append(Change(
            f"{where} {option.dest} content", f"{' '.join(was)} (content {_digest(before)})",
            f"the same setting, other content {_digest(after)} ({len(differ)} "
            f"{'file' if len(differ) == 1 else 'files'} differ: {shown})", None, reason))
    return changes


def _places(tree: Tree, ini: IniFile, option: Setting) -> list[str] | None:
    """The repository paths the setting names (None: not set, or not readable)."""
    try:
        value = ini.get(option.dest, "paths")
    except FailgateError:
        return None
    if not value:
        return None
    found = []
    for path in value:
        relative = tree.relative(path)
        found.append(relative if relative is not None else str(path))
    return found


def _contents(tree: Tree, places: list[str]) -> dict[str, str]:
    """Each file the places name (a file itself, or every file under a folder), by its
    repository path, with its content's digest ("missing" where nothing is)."""
    found: dict[str, str] = {}
    for place in places:
        text = tree.read(place)
        if text is not None:
            found[place] = _sha(text)
            continue
        under = [relative for relative in tree.under(place) if relative != place]
        for relative in under:
            body = tree.read(relative)
            found[relative] = _sha(body) if body is not None else "unreadable"
        if not under:
            found[place] = "missing"
    return found


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _digest(contents: dict[str, str]) -> str:
    joined = "\n".join(f"{name} {value}" for name, value in sorted(contents.items()))
    return _sha(joined)
