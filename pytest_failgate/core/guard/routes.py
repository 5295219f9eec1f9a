"""The guard's routes beyond the ceilings file: everything else that decides the outcome.

A pull request can loosen the gate without touching a number in ``ceilings.yaml``. The
guard compares, between the ref and the change, each of these as the gate finds it:

- **the pytest configuration that selects gate items**: ``addopts`` options that select,
  deselect or switch plugins (``-m "not failgate"``, ``--deselect ceilings.yaml::...``,
  ``-p no:failgate``, ``--ignore``, ``--lf``...), every ``failgate_*`` setting whose row of
  the option table moves a verdict, compared by its effect (``settings``: the reports,
  ``strict`` turned off, a futility margin raised, a baseline or noise band changed...),
  and ``required_plugins`` dropping pytest-failgate. An option added or a setting loosened
  is a loosening unless the ceilings file's top-level ``reason`` says why; an option
  removed, or a setting tightened, is not;
- **plugins**: every plugin file in the repository that can define taxonomies or readers
  (a ``failgate_plugins`` module or file, a ``conftest.py`` defining a failgate hook, and
  every file of the repository the run loaded a taxonomy or reader from), by its source's
  digest: one added, changed or removed needs a reason (what code does cannot be ranked
  looser or tighter). A plugin from outside the repository (an installed package's entry
  point) that replaces a built-in taxonomy the ceilings file uses, or whose reader took
  reports a built-in reader reads, is named with its module and source digest, every time
  (which readers are built-in: ``reports.builtin.reader_identity``, on every front end);
- **the ceilings file's real place**: a link, or an ini path, leading outside the
  repository is a loosening no reason excuses (no review sees that file);
- **the gate's own code**: a ``pytest_failgate`` package or module the change adds to the
  repository, which ``python -m`` would run in place of the installed failgate (the gate
  refuses to run as one, ``install.checkout_copy``): a loosening no reason excuses;
- **the reports each override applies to**: a ``reports:`` entry naming no report of this
  run (the report was renamed or removed, so a looser default governs it) needs a reason;
  when the guard is not told the run's reports, one whose name a report file of the
  repository had at the ref that is gone now.

A reason counts only when this change wrote it: new words, not an old reason re-spaced,
re-cased or padded with invisible characters (``base.reasons.reason_words``).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import shlex
from typing import TYPE_CHECKING

from ..base.errors import FailgateError, display_path
from ..base.inifile import IniFile, locate
from .cifiles import AUTOLOAD_OFF
from .enforced import Change
from .settings import setting_changes

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping
    from pathlib import Path

    from ..reports.readers import ReportReader
    from .gitref import Tree
    from .settings import Table

# addopts options that choose which items run, or which plugins load (value-taking first)
_WITH_VALUE = ("-m", "-k", "--deselect", "-p", "--ignore", "--ignore-glob",
               # another configuration file or rootdir (PYTEST_ADDOPTS is read before them)
               "-c", "--config-file", "--rootdir", "--confcutdir")
_FLAGS = ("--lf", "--last-failed", "--sw", "--stepwise", "--co", "--collect-only",
          "--noconftest")
PLUGIN_PACKAGE = "pytest-failgate"


def config_at(tree: Tree, start: str) -> IniFile:
    """The configuration pytest would use from ``start`` in ``tree``."""
    try:
        return locate(tree.top / start, tree.read_path)
    except FailgateError as exc:
        raise FailgateError(f"{tree.label}: {exc}") from None


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


# --------------------------------------------------------------------------- configuration


def selection(ini: IniFile, table: Table) -> list[str]:
    """The ``addopts`` options that select or deselect items or switch plugins, each as
    ``option value`` (``-m not failgate``); an option of failgate's table is a setting
    (``settings``), and an unknown ``--failgate...`` word is named."""
    known = table.flags()
    raw = ini.values.get("addopts")
    if raw is None:
        return []
    try:
        tokens = shlex.split(raw) if isinstance(raw, str) else [str(t) for t in raw]
    except ValueError:
        return [f"addopts {raw}"]  # unparsable: compared as written
    found: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        name, equals, value = token.partition("=")
        if name in known:
            continue  # compared as the setting it beats, by effect (``settings``)
        if name.startswith("--failgate"):
            found.append(token)
            continue
        # @file: more arguments, read there; plugin autoloading off: failgate's too
        if token in _FLAGS or token == AUTOLOAD_OFF or token.startswith("@"):
            found.append(token)
            continue
        for option in _WITH_VALUE:
            if name == option and equals:
                found.append(f"{option} {value}")
            elif token == option and index < len(tokens):
                found.append(f"{option} {tokens[index]}")
                index += 1
            elif option in ("-m", "-k", "-p", "-c") and token.startswith(option) and \
                    len(token) > 2:
                found.append(f"{option} {token[2:]}")
            else:
                continue
            break
    return found


def config_changes(table: Table, old: IniFile, new: IniFile, reason: str | None,
                   where: str | None = None) -> list[Change]:
    """What the change's pytest configuration selects or settles more loosely (``where``:
    what the labels call it, by default the ini file)."""
    if where is None:
        where = display_path(new.path) if new.path is not None else "the pytest configuration"
    changes: list[Change] = []
    before, after = selection(old, table), selection(new, table)
    added = [option for option in after if option not in before]
    if added:
        changes.append(Change(f"{where} addopts", " ".join(before) or "none",
                              " ".join(after), None, reason))
    changes += setting_changes(table, old, new, reason, where)
    if _requires_plugin(old) and not _requires_plugin(new):
        changes.append(Change(f"{where} required_plugins", _shown(old.values.get(
            "required_plugins")), _shown(new.values.get("required_plugins")), None, reason))
    return changes


def _shown(value: object) -> str:
    if value is None:
        return "not set"
    return " ".join(value) if isinstance(value, list) else str(value)


def _requires_plugin(ini: IniFile) -> bool:
    value = ini.values.get("required_plugins")
    words = value.split() if isinstance(value, str) else list(value or ())
    return any(str(word).startswith(PLUGIN_PACKAGE) for word in words)


# --------------------------------------------------------------------------- plugins


def plugin_files(tree: Tree, ini: IniFile) -> dict[str, str]:
    """The repository's plugin files in ``tree`` (relative path -> source digest): the
    ``failgate_plugins`` entries that are files of the repository, every ``conftest.py``
    that names failgate (a hook, or options it sets), and ``addopts``' arguments files."""
    found: dict[str, str] = {}
    for spec in _plugin_specs(ini, tree):
        relative = _plugin_path(tree, ini, spec)
        if relative is not None:
            text = tree.read(relative)
            found[relative] = digest(text) if text is not None else "missing"
    for relative in tree.files("conftest.py"):
        text = tree.read(relative)
        # a failgate hook, or any mention of failgate (``config.option.failgate_ceilings``)
        if text is not None and "failgate" in text:
            found[relative] = digest(text)
    for word in ini.addopts():  # an arguments file (``addopts = @gate.args``) by content
        relative = tree.relative(ini.folder / word[1:]) if word.startswith("@") else None
        if relative is not None:
            text = tree.read(relative)
            found[relative] = digest(text) if text is not None else "missing"
    return found


def _plugin_specs(ini: IniFile, tree: Tree) -> list[str]:
    try:
        return [str(word) for word in ini.get("failgate_plugins", "names") or ()]
    except FailgateError as exc:
        raise FailgateError(f"{tree.label}: {exc}") from None


def _plugin_path(tree: Tree, ini: IniFile, spec: str) -> str | None:
    """A plugin as a file of the repository (None: installed outside it)."""
    if spec.endswith(".py"):
        return tree.relative(ini.folder / spec)
    module = spec.replace(".", "/")
    for base in (ini.folder, tree.top, tree.top / "src"):
        for candidate in (base / f"{module}.py", base / module / "__init__.py"):
            relative = tree.relative(candidate)
            if relative is not None and tree.read(relative) is not None:
                return relative
    return None


def plugin_changes(old: Mapping[str, str], new: Mapping[str, str],
                   reason: str | None) -> list[Change]:
    """Plugin files added, changed or removed: each needs the file's reason."""
    changes = []
    for relative in sorted({*old, *new}):
        was, now = old.get(relative), new.get(relative)
        if was != now:
            changes.append(Change(f"plugin {relative}", f"source {was}" if was else "none",
                                  f"source {now}" if now else "removed", None, reason))
    return changes


def replaced_builtins(used: Collection[str], origins: Mapping[str, tuple[str, str | None]],
                      builtins: Collection[str], repo_files: Collection[str],
                      top: Path, reason: str | None) -> list[Change]:
    """Taxonomies the ceilings file uses that a plugin from outside the repository
    replaces (a built-in name): named with the plugin's module and source digest."""
    changes = []
    for name in sorted(used):
        if name not in origins or name not in builtins:
            continue
        label, source = origins[name]
        relative = _inside(source, top)
        if relative is not None and relative in repo_files:
            continue  # a repository plugin: compared by its source above
        shown = f"{name} (replaced by plugin {label}"
        if source is not None:
            shown += f", {source}, source {_file_digest(source)}"
        changes.append(Change(f"taxonomy {name}", f"{name} (built-in)", shown + ")", None,
                              reason))
    return changes


def source_of(plugin: object) -> str | None:
    """The file of a plugin's code (``reports.builtin.reader_identity``'s, for a reader
    too): a module's, else its class's module's; an adapted reader's, the object it wraps."""
    from ..reports.builtin import code_file

    return code_file(getattr(plugin, "_reader", plugin))


def readers_in_use(readers: Iterable[ReportReader], used: Mapping[str, Path]
                   ) -> dict[str, tuple[str | None, bool]]:
    """The plugin readers that read reports of this run (``used``: format name -> one of
    its files), each with its source and whether it took a built-in format's file (its
    name is a built-in reader's, or a built-in reader claims that file). Which readers are
    built-in is ``reader_identity``'s answer, the same on every front end, whatever list
    of readers (with the built-in ones or without) it was given."""
    from ..base.safeopen import open_regular
    from ..reports.builtin import builtin_readers, reader_identity

    builtin = builtin_readers()
    found: dict[str, tuple[str | None, bool]] = {}
    for reader in readers:
        identity = reader_identity(reader)
        if identity.builtin or reader.name not in used or reader.name in found:
            continue  # a built-in format; or a reader not used; or an earlier one took it
        path = used[reader.name]
        replaces = reader.name in {b.name for b in builtin}
        if not replaces:
            try:
                with open_regular(path) as handle:
                    head = handle.read(65536)
            except (OSError, FailgateError):
                head = b""
            replaces = any(path.suffix in b.suffixes and b.claims(head) for b in builtin)
        found[reader.name] = (identity.source, replaces)
    return found


def replaced_readers(readers: Mapping[str, tuple[str | None, bool]],
                     repo_files: Collection[str], top: Path,
                     reason: str | None) -> list[Change]:
    """Plugin readers from outside the repository that took a built-in format's reports:
    named with their module and source digest (what they drop no ref can show)."""
    changes = []
    for name, (source, replaces) in sorted(readers.items()):
        relative = _inside(source, top)
        if not replaces or (relative is not None and relative in repo_files):
            continue
        shown = f"read by plugin {name}"
        if source is not None:
            shown += f" ({source}, source {_file_digest(source)})"
        changes.append(Change(f"reader {name}", "a built-in reader", shown, None, reason))
    return changes


def in_repository(sources: Iterable[str | None], top: Path) -> list[str]:
    """The sources (plugin code files) that are files of the repository, relative."""
    return sorted({r for s in sources if (r := _inside(s, top)) is not None})


def _inside(source: str | None, top: Path) -> str | None:
    if source is None:
        return None
    real, root = os.path.realpath(source), os.path.realpath(top)
    relative = os.path.relpath(real, root)
    return None if relative.startswith("..") else relative.replace(os.sep, "/")


def _file_digest(source: str) -> str:
    try:
        with open(source, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()[:12]
    except OSError:
        return "unreadable"


# --------------------------------------------------------------------------- place, reports


def outside(tree: Tree, place: str | None, path: Path) -> Change | None:
    """The ceilings file leading outside the repository (a link, an ini path): a loosening
    no reason excuses."""
    if place is not None and tree.real(place) is not None:
        return None
    real = os.path.realpath(path)
    if not os.path.exists(real):
        return None
    shown = place if place is not None else display_path(path)
    return Change("location", f"{shown} in the repository",
                  f"{real} (outside the repository: no review sees it; no reason excuses it)",
                  None, None)


def report_files(tree: Tree, names: Collection[str]) -> dict[str, set[str]]:
    """For each report name, the files of the repository that may be that report: their
    path without the suffix is the name, or ends with ``/`` and the name (a report's name is
    its path relative to the folder the gate is given, without the suffix)."""
    found: dict[str, set[str]] = {name: set() for name in names}
    for relative in tree.under("."):
        folder, _, file = relative.rpartition("/")
        stem = file.split(".", 1)[0] if not file.startswith(".") else file
        stem = f"{folder}/{stem}" if folder else stem
        for name in names:
            if stem == name or stem.endswith("/" + name):
                found[name].add(relative)
    return found


# what an entry keyed by a report's name no longer does when it names none
_UNAPPLIED = {
    "reports": "the defaults govern it now",
    # the case count and instrument a run is held to: a run cut short is judged now
    "instrument": "a run of it with fewer cases, or measured otherwise, is judged now, not "
                  "inconclusive",
}


def vanished(overrides: Mapping[str, int | None], reasons: Mapping[str, str | None],
             names: Collection[str], reason: str | None, section: str = "reports"
             ) -> list[Change]:
    """``reports:`` (or ``instrument:``, ``section``) entries that existed at the ref and
    name no report of this run: the report was renamed or removed, so a looser default
    governs it now (or no recorded case set holds a run cut short to account)."""
    changes = []
    for report, line in sorted(overrides.items()):
        if report in names:
            continue
        excuse = reasons.get(report) or reason
        changes.append(Change(f"{section}.{report}", "applies to a report of the run",
                              f"applies to no report (renamed or removed? "
                              f"{_UNAPPLIED[section]})", line, excuse))
    return changes



# --------------------------------------------------------------------------- the gate's code


def shadowing_copies(tree: Tree) -> set[str]:
    """The ``pytest_failgate`` packages and modules of the repository, which ``python -m``
    (or a ``pythonpath`` setting) can put in place of the installed failgate: tracked, or
    untracked outside an installer's folder (a ``.venv`` inside the project is installed,
    ``install.checkout_copy``)."""
    from ..base.install import SITE_FOLDERS
    from .gitref import git

    tracked = (["ls-files", "-z", "--cached"] if tree.ref is None else
               ["ls-tree", "-r", "-z", "--name-only", str(tree.ref)])
    listings = [(git(tracked, tree.top), False)]
    if tree.ref is None:
        listings.append((git(["ls-files", "-z", "--others", "--exclude-standard"],
                             tree.top), True))
    found = set()
    for listed, untracked in listings:
        for path in listed.stdout.split("\0") if listed.returncode == 0 else []:
            parts = path.split("/")
            if untracked and any(part in SITE_FOLDERS for part in parts):
                continue
            if parts[-1] == "pytest_failgate.py":
                found.add(path)
            elif parts[-2:-1] == ["pytest_failgate"] and parts[-1] == "__init__.py":
                found.add(posixpath.dirname(path) + "/")
    return found


def shadow_changes(work: Tree, base: Tree) -> list[Change]:
    """A ``pytest_failgate`` package or module the change adds: it would replace the
    installed gate (the gate refuses to run as one; no reason excuses it)."""
    was = shadowing_copies(base)
    return [Change(f"failgate {path}", "the installed failgate",
                   f"{path} (a copy of failgate in the repository, which `python -m` runs in "
                   "place of the installed one; no reason excuses it)", None, None)
            for path in sorted(shadowing_copies(work) - was)]
