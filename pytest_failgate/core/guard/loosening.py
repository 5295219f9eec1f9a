"""The loosening guard: does this change let the gate pass more, without saying why?

It compares what the gate would enforce now with what it enforced at a git ref
(``enforced.py`` says what counts as looser). The files are found at the ref as
the gate finds them: the ceilings file at the same place, and the one the ref's
ini configuration names (or ``ceilings.yaml`` in its rootdir), so moving the
ceilings to another file, pointing ``failgate_ceilings`` elsewhere or replacing
the file by a symbolic link is compared with what applied before. "Nothing
existed at the ref" is the answer only when no ceilings file existed there.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.errors import FailgateError, display_path
from ..base.formatting import plural
from ..base.yamlsource import load_yaml, read_text
from ..ceilings.load import parse_ceilings, validate_ceilings
from ..taxonomy import builtin_taxonomies
from ..taxonomy.files import names_a_file
from .cifiles import ci_origins
from .contents import content_changes
from .enforced import (
    Change,
    Shown,
    Version,
    content_digest,
    entry_reason,
    file_reason,
    loosenings,
    not_written,
    written_reasons,
)
from .evidence import noise_changes, noise_of
from .gitref import Tree, git, once
from .hooks import hook_changes
from .labelled import label_changes, labels_of
from .plans import plan_changes
from .routes import (
    config_changes,
    digest,
    in_repository,
    outside,
    plugin_changes,
    plugin_files,
    replaced_builtins,
    replaced_readers,
    report_files,
    shadow_changes,
    vanished,
)
from .settings import Table
from .steps import gate_steps, step_changes
from .workflows import ceilings_place, contexts

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Mapping, Sequence

    from ..base.inifile import IniFile
    from ..base.result import GuardResultModel
    from .settings import Setting


__all__ = ["Change", "Comparison", "GuardResult", "guard", "loosenings", "parse_version"]


@dataclass(frozen=True)
class Comparison:
    """One ceilings file now against one the gate used at the ref."""

    now: str  # as displayed
    base: str  # repository-relative path at the ref
    same_place: bool
    changes: list[Change]
    context: str = ""  # the CI file whose settings name the file now ("": the ini)
    origin: str = ""  # the line of that file that names it ("": none found)


@dataclass(frozen=True)
class GuardResult:
    ref: str
    path: Path
    comparisons: list[Comparison]
    routes: list[Change] = field(default_factory=list)  # beyond the file's numbers
    told: bool = True  # the guard was told the run's reports

    @property
    def new_file(self) -> bool:
        return not self.comparisons and not self.routes

    @property
    def changes(self) -> list[Change]:
        return [*(change for comparison in self.comparisons for change in comparison.changes),
                *self.routes]

    @property
    def passed(self) -> bool:
        return all(change.excused for change in self.changes)

    def lines(self) -> Iterator[str]:
        shown = display_path(self.path)
        if self.new_file:
            yield (f"guard: no ceilings file existed at {self.ref} (neither {shown} nor the one "
                   "its configuration names); nothing can have loosened")
            return
        changes = self.changes
        unexcused = [c for c in changes if not c.excused]
        if not changes:
            yield f"guard: nothing in {shown} is looser than at {self.ref}"
        elif unexcused:
            have = "has" if len(unexcused) == 1 else "have"
            yield (f"guard: {len(unexcused)} of {plural(len(changes), 'loosening')} in {shown} "
                   f"since {self.ref} {have} no reason written in this change:")
        else:
            each = "with a" if len(changes) == 1 else "each with a"
            yield (f"guard: {plural(len(changes), 'loosening')} in {shown} since {self.ref}, "
                   f"{each} reason written in this change:")
        for comparison in self.comparisons:
            if not comparison.same_place:
                named = (f" ({comparison.origin or comparison.context} names "
                         f"{comparison.now})" if comparison.context else "")
                yield f"  compared with {comparison.base} at {self.ref}{named}"
            for change in comparison.changes:
                yield "  " + change.describe(comparison.now)
        for change in self.routes:
            yield "  " + change.describe(shown if change.line else "")
        if not self.told:
            yield ("  the guard was not told the run's reports: the reports: overrides were "
                   "checked against the report files of the repository only (give them as "
                   "the gate is given them: failgate guard --base REF REPORTS...)")
        if unexcused:
            yield ("  to accept a loosening, write {max: N, reason: \"why\"} on its entry (a "
                   "contract's or floor's `reason`), or for the taxonomy, significance, slices or"
                   " a removed entry, the noise band or the configuration a top-level "
                   "`reason: \"why\"`; tightening needs no reason")
        if any(change.label.startswith("noise ") for change in changes):
            yield ("  a noise band is evidence measured from runs: `failgate noise --check "
                   "BAND` measures it again from the runs it names (measured_from) and lists "
                   "what differs")
        if any(change.label == "location" for change in unexcused):
            yield ("  a ceilings file outside the repository cannot be excused: no review sees "
                   "it; put the file itself back in the repository")

    def model(self) -> GuardResultModel:
        """The verdict as every output renders it: the lines, and each loosening without a
        reason at its place in the ceilings file (the CI step's annotations)."""
        from ..base.result import GuardResultModel, Loosened

        return GuardResultModel(
            ref=self.ref, passed=self.passed, lines=list(self.lines()),
            loosened=[Loosened(file=comparison.now, line=change.line,
                               text=change.describe(comparison.now))
                      for comparison in self.comparisons for change in comparison.changes
                      if not change.excused])


def guard(path: Path, ref: str, cwd: Path | None = None, *,
          reports: Collection[str] | None = None,
          origins: Mapping[str, tuple[str, str | None]] | None = None,
          readers: Mapping[str, tuple[str | None, bool]] | None = None,
          options: Sequence[Setting]) -> GuardResult:
    """``_guard``, each of its reading git commands run once (``gitref.once``)."""
    with once():
        return _guard(path, ref, cwd, reports=reports, origins=origins, readers=readers,
                      options=options)


def _guard(path: Path, ref: str, cwd: Path | None = None, *,
           reports: Collection[str] | None = None,
           origins: Mapping[str, tuple[str, str | None]] | None = None,
           readers: Mapping[str, tuple[str | None, bool]] | None = None,
           options: Sequence[Setting]) -> GuardResult:
    """Compare the ceilings file (and the one the configuration names) with the ref's, and
    every other route to a looser gate (``routes``), every setting the option table
    (``options``: the front ends' ``options.OPTIONS``) says moves a verdict (``settings``)
    and the plans of sequential runs (``plans``).

    ``reports``: the names of this run's reports, when known (an override naming none of
    them no longer applies); ``origins``: which plugin defines each taxonomy (``Taxonomies``);
    ``readers``: the plugin readers that read this run (``routes.readers_in_use``).
    """
    written = Path(os.path.abspath(path))  # as configured: a link is kept
    real_path = Path(os.path.realpath(written))  # a loop of links: refused by read_text
    work, base = _open(written, cwd or Path.cwd(), ref)
    read_text(real_path)  # the file the gate reads must exist and be text
    link = work.relative(written)
    here = work.relative(cwd or Path.cwd())
    start = here if here is not None else posixpath.dirname(link) if link is not None else "."
    table = Table(options)
    now_contexts, base_contexts = contexts(work, start, table), contexts(base, start, table)
    configured = {name: ceilings_place(work, ini) for name, ini in now_contexts.items()}
    routes: list[Change] = []
    for place, where in ((link, written), *((c, work.top / c) for c in configured.values())):
        moved = outside(work, None if place is None or place.startswith("../") else place,
                        where)
        if moved is not None and moved not in routes:
            routes.append(moved)
    routes += shadow_changes(work, base)  # a copy of failgate that would replace it
    given = work.relative(real_path)
    # each ceilings file the gate may read now, with the context that names it
    now_places: list[tuple[str, str]] = []
    for name, candidate in [("", given), *configured.items()]:
        real = work.real(candidate) if candidate is not None else None
        if real is not None and real not in {work.real(p) for _, p in now_places}:
            now_places.append((name, candidate))  # type: ignore[arg-type]
    base_configured = {name: ceilings_place(base, ini) for name, ini in base_contexts.items()}
    comparisons: list[Comparison] = []
    pairs: list[Pair] = []
    written_at = ci_origins(work, table)
    ceilings_key = table.by_name["ceilings"].dest if "ceilings" in table.by_name else ""
    for name, place in now_places:
        real = work.real(place) or place
        new = _version(work, real, f"{display_path(work.top / place)}")
        seen: set[str] = set()
        for candidate in (place, real, base_configured.get(name, base_configured[""])):
            found = base.real(candidate)
            text = base.read(candidate)
            if found is None or text is None or found in seen:
                continue
            seen.add(found)
            old = _version(base, found, f"the version at {ref}", text)
            pairs.append(Pair(old, new, found, real, name))
            comparisons.append(Comparison(display_path(work.top / place), found,
                                          found in (place, real), loosenings(old, new),
                                          name, written_at.get(name, {}).get(ceilings_key,
                                                                             "")))
    routes += _routes(work, base, (base_contexts, now_contexts), pairs, reports, origins,
                      readers, table)
    # a reason excuses only in words this change wrote: not one the ref's files already
    # carry anywhere (an instruments: entry's reason copied onto a raised ceiling)
    said = {words for pair in pairs for words in written_reasons(pair.old)}
    comparisons = [replace(c, changes=not_written(c.changes, said)) for c in comparisons]
    routes = not_written(routes, said)
    told = reports is not None or not any(pair.new.model.reports for pair in pairs)
    return GuardResult(ref, real_path, comparisons, routes, told=told)


@dataclass(frozen=True)
class Pair:
    """A ceilings file now and the one it is compared with at the ref, with their places
    and the configuration context that names the file now (``workflows.contexts``)."""

    old: Version
    new: Version
    base: str
    now: str
    context: str


def _open(written: Path, cwd: Path, ref: str) -> tuple[Tree, Tree]:
    """The repository holding the ceilings file where it is written (a link's folder),
    else, when that is in none (an ini path leading out of it), the one the guard runs in."""
    if written.parent.is_dir() and git(["rev-parse", "--show-toplevel"],
                                       written.parent).returncode == 0:
        return Tree.open(written.parent, ref)
    return Tree.open(cwd, ref)


def _routes(work: Tree, base: Tree, both: tuple[dict[str, IniFile], dict[str, IniFile]],
            pairs: list[Pair], reports: Collection[str] | None,
            origins: Mapping[str, tuple[str, str | None]] | None,
            readers: Mapping[str, tuple[str | None, bool]] | None, table: Table
            ) -> list[Change]:
    """What else decides the outcome, compared (``routes``, ``evidence``, ``settings``,
    ``plans``); excused by the ceilings file's top-level reason when this change wrote it."""
    base_contexts, now_contexts = both
    old_ini, new_ini = base_contexts[""], now_contexts[""]
    reason = file_reason(pairs[0].old, pairs[0].new) if pairs else None
    found: list[Change] = []
    written_at = ci_origins(work, table)
    seen: set[tuple[str, Shown, Shown]] = set()
    for name, ini in now_contexts.items():
        where = f"{name} (with {_shown_ini(ini)})" if name else _shown_ini(ini)
        before = base_contexts.get(name, old_ini)
        for change in [*config_changes(table, before, ini, reason, where),
                       *content_changes(table, (base, work), (before, ini), reason, where)]:
            # the same setting, from the same value to the same value, through another
            # context is one change; a CI file's is named by the line that sets it
            key = change.label[len(where) + 1:]
            if (key, change.old, change.new) in seen:
                continue
            seen.add((key, change.old, change.new))
            place = written_at.get(name, {}).get(key.split(" ", 1)[0])
            found.append(replace(change, label=f"{place} {key}") if place else change)
    for pair in pairs:
        line = pair.new.line(("noise",))
        for name, ini in now_contexts.items():
            if name != pair.context and pair.context:
                continue
            was = noise_of(base, base_contexts.get(name, old_ini), pair.old, pair.base)
            _add(found, noise_changes(was, noise_of(work, ini, pair.new, pair.now), reason,
                                      line), 0)
            labelled = labels_of(base, base_contexts.get(name, old_ini), pair.old, pair.base)
            _add(found, label_changes(labelled, labels_of(work, ini, pair.new, pair.now),
                                      reason, pair.new.line(("labels",))), 0)
    now_plugins, base_plugins = plugin_files(work, new_ini), plugin_files(base, old_ini)
    # the files the run's plugins came from, as the session loaded them (a conftest.py
    # whose hooks its text does not name, a module the ini file names by package)
    sources = [source for _, source in (origins or {}).values()]
    sources += [source for source, _ in (readers or {}).values()]
    for relative in in_repository(sources, work.top):
        for tree, files in ((work, now_plugins), (base, base_plugins)):
            text = tree.read(relative)
            if relative not in files and text is not None:
                files[relative] = digest(text)
    found += plugin_changes(base_plugins, now_plugins, reason)
    found += hook_changes((base, work), now_contexts.values(), reason)
    if pairs and origins:
        model = pairs[0].new.model
        used = {model.taxonomy, *model.taxonomies.values()}
        found += replaced_builtins({u for u in used if isinstance(u, str)}, origins,
                                   set(builtin_taxonomies()), now_plugins, work.top, reason)
    if readers:
        found += replaced_readers(readers, now_plugins, work.top, reason)
    if pairs:
        found += _vanished(work, base, pairs[0], reports, reason)
    found += plan_changes(base, work, reason)
    gate_on = "failgate" in old_ini.values  # a plain ``pytest`` step runs the gate
    found += step_changes(gate_steps(base, gate_on), gate_steps(work, gate_on), reason)
    return found


def _shown_ini(ini: IniFile) -> str:
    return display_path(ini.path) if ini.path is not None else "the pytest configuration"


def _add(found: list[Change], more: list[Change], where: int) -> None:
    """Add changes not already named: the same setting (the label after its first
    ``where`` characters, which say where it is set), from the same value to the same
    value, through another configuration context is one change."""
    for change in more:
        if not any((c.label[where:], c.old, c.new) == (change.label[where:], change.old,
                                                       change.new) for c in found):
            found.append(change)


def _vanished(work: Tree, base: Tree, pair: Pair, reports: Collection[str] | None,
              reason: str | None) -> list[Change]:
    """``reports:`` overrides and ``instrument:`` records that no longer name a report: of
    the run's reports when the guard was told them, else of the report files of the
    repository (one of that name there at the ref and gone now was renamed or removed: the
    gate may have read it)."""
    old, new = pair.old, pair.new
    overrides = {name: new.line(("reports", name)) for name in new.model.reports
                 if name in old.model.reports}
    excuses = {name: next((r for entry, ceiling in new.model.reports[name].items()
                           if (r := entry_reason(ceiling.reason, old.model.reports[name].get(
                               entry))) is not None), None) for name in overrides}
    # the case set and instrument recorded for a report (``instrument:``), kept as it was
    recorded = {name: new.line(("instrument", name)) for name in new.model.instrument
                if old.model.instrument.get(name) == new.model.instrument[name]}
    if reports is not None:
        return [*vanished(overrides, excuses, set(reports), reason),
                *vanished(recorded, {}, set(reports), reason, "instrument")]
    found = []
    for section, entries in (("reports", overrides), ("instrument", recorded)):
        then, now = report_files(base, entries), report_files(work, entries)
        gone = {name: line for name, line in entries.items() if then[name] - now[name]}
        found += vanished(gone, excuses if section == "reports" else {}, set(), reason,
                          section)
    return found


def parse_version(path: Path) -> Version:
    """A ceilings file on disk as the guard sees it (its taxonomy file beside it)."""
    return _version(Tree(path.parent), path.name, display_path(path))


def _version(tree: Tree, relative: str, label: str, text: str | None = None) -> Version:
    path = tree.top / relative
    if text is None:
        text = read_text(path)
    try:  # the ref's version may predate the refusal of aliases: read it, bounded
        doc = parse_ceilings(path, text) if tree.ref is None else load_yaml(path, text)
        model = validate_ceilings(doc)
    except FailgateError as exc:
        if tree.ref is None:
            raise
        raise FailgateError(f"{label}: {exc.message}", path, exc.line, exc.col) from None
    return Version(model, doc, _taxonomy(model.taxonomy, tree, relative),
                   {key: _taxonomy(value, tree, relative)
                    for key, value in model.taxonomies.items()})


def _taxonomy(value: str | dict[str, Any], tree: Tree, ceilings: str) -> str:
    """The taxonomy by what it is: a built-in's name, or the digest of its rules' content."""
    if isinstance(value, dict):
        return f"inline (rules {content_digest(value)})"
    if value in builtin_taxonomies():
        return f"{value} (built-in)"
    if not names_a_file(value):
        return f"{value} (contributed by a plugin)"
    # by the file's place in the repository, not the text naming it: a ceilings file moved
    # to another folder names the same taxonomy file with another relative path
    relative = posixpath.normpath(posixpath.join(posixpath.dirname(ceilings), value))
    text = tree.read(relative)
    if text is None:
        return f"{relative} (missing)"
    try:
        digest = content_digest(load_yaml(tree.top / relative, text).data)
    except FailgateError:
        digest = content_digest(text)
    return f"{relative} (rules {digest})"
