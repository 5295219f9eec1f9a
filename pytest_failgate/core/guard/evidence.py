"""The evidence that excuses failures, compared: the noise band a run is judged with.

A noise band widens what the gate accepts three ways: each count's **allowance** (how far
a ceiling stays above its count, and how far the ratchet keeps it there: computed from the
band's ``discordant``/``moved``/``std`` by the gate's own functions, ``compare.noisemodel``
and ``Movement.allowance``, at the file's budget shared by the band's counts), each category's
and metric's **band** in a baseline comparison (an increase must exceed it), and its
**unstable cases** (left out of every paired test when ``failgate_exclude_unstable`` is on).
The guard finds the band the gate reads at the ref and now (the ``failgate_noise`` setting,
else the ceilings file's ``noise:``, relative to it; a file repointed elsewhere is compared
by content with the one before) and names every count whose allowance grew, every band that
widened or was removed, every case newly excused as unstable, and every category of
failures outside the system whose tolerated error rate grew (``rate_changes``). A band
that narrows, a noise source removed (counts exact again) or a case no longer unstable
tightens.
"""

from __future__ import annotations

import posixpath
from fractions import Fraction
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..base.formatting import format_number
from ..compare import DEFAULT_ALPHA
from ..compare.noise import NoiseBand, NoiseDocument, read_noise_band
from ..compare.noisemodel import REPEATS, from_document
from ..compare.verdicts import band_cases
from ..reports.jsonfile import loads
from .enforced import Change, content_digest

if TYPE_CHECKING:
    from ..base.inifile import IniFile
    from .enforced import Version
    from .gitref import Tree

NOISE_KEY = "failgate_noise"
UNSTABLE_KEY = "failgate_exclude_unstable"
SHOWN = 5


@dataclass(frozen=True)
class Noise:
    """The noise source one side's gate reads: none, each report's repeats, or a band file."""

    label: str  # "none", "repeats", or the band file's repository path
    document: NoiseDocument | None = None
    exclude_unstable: bool = False
    budget: Fraction = DEFAULT_ALPHA
    # the categories of failures outside the system (their error rate is a tolerance);
    # None: not known (a plugin's taxonomy), so every category is compared as one
    outside: frozenset[str] | None = None

    @property
    def identity(self) -> str:
        if self.document is None:
            return "none (exact counts)" if self.label == "none" else self.label
        return f"{self.label} (content {content_digest(_raw(self.document))})"


def noise_of(tree: Tree, ini: IniFile, version: Version, ceilings: str) -> Noise:
    """The noise the gate reads in ``tree`` with configuration ``ini`` and the ceilings file
    ``version`` at ``ceilings`` (repository-relative): the setting first, then ``noise:``."""
    exclude = _flag(ini, UNSTABLE_KEY) or "--failgate-exclude-unstable" in ini.addopts()
    budget = version.model.significance or DEFAULT_ALPHA
    setting = _setting(ini, tree)
    if setting is not None:
        relative = setting
    elif version.model.noise is not None:
        if version.model.noise == REPEATS:
            return Noise(REPEATS, None, exclude, budget)
        relative = posixpath.normpath(posixpath.join(posixpath.dirname(ceilings),
                                                     version.model.noise))
    else:
        return Noise("none", None, exclude, budget)
    if relative == REPEATS and tree.read(relative) is None:
        return Noise(REPEATS, None, exclude, budget)
    text = tree.read(relative)
    if text is None:
        return Noise(f"{relative} (missing)", None, exclude, budget)
    try:
        document = read_noise_band(loads(text.encode("utf-8"), tree.top / relative))
    except ValueError as exc:
        raise FailgateError(f"{tree.label}: {exc}", tree.top / relative) from None
    return Noise(relative, document, exclude, budget, outside_names(tree, version, ceilings))


def outside_names(tree: Tree, version: Version, ceilings: str) -> frozenset[str] | None:
    """The categories whose counts are failures outside the system in any taxonomy this
    ceilings file's run may use: every built-in's (a report's format may choose one) and the
    file's own, read from ``tree``. None when a taxonomy cannot be read here (a plugin's, or
    one that does not compile): then every category's band is compared as a tolerance."""
    from ..base.yamlsource import load_yaml
    from ..taxonomy import builtin_taxonomies
    from ..taxonomy.files import names_a_file, taxonomy_from

    builtins = builtin_taxonomies()
    names = {name for taxonomy in builtins.values() for name in taxonomy.outside}
    chosen = [("taxonomy",), *(("taxonomies", key) for key in version.model.taxonomies)]
    for loc in chosen:
        value = version.doc.data_at(loc) if loc in version.doc.keys else None
        if value is None or (isinstance(value, str) and value in builtins):
            continue
        try:
            if isinstance(value, dict):
                taxonomy = taxonomy_from(version.doc, loc)
            elif isinstance(value, str) and names_a_file(value):
                relative = posixpath.normpath(posixpath.join(posixpath.dirname(ceilings),
                                                             value))
                text = tree.read(relative)
                if text is None:
                    return None
                taxonomy = taxonomy_from(load_yaml(tree.top / relative, text), ())
            else:
                return None
        except FailgateError:
            return None
        names.update(taxonomy.outside)
    return frozenset(names)


def _flag(ini: IniFile, key: str) -> bool:
    try:
        return bool(ini.get(key, "flag"))
    except FailgateError:
        return True  # unreadable: the gate refuses it; here, the stricter reading for "on"


def _setting(ini: IniFile, tree: Tree) -> str | None:
    try:
        value = ini.get(NOISE_KEY, "path")
    except FailgateError:
        return None
    if not value:
        return None
    return tree.relative(ini.folder / value) or str(value)


def noise_changes(old: Noise, new: Noise, reason: str | None, line: int | None
                  ) -> list[Change]:
    """What the new noise lets pass that the old did not (see the module docstring)."""
    if new.document is None:
        if new.label == old.label or new.label == "none":
            return []  # the same source, or exact counts again: nothing looser
        return [Change("noise", old.identity, new.identity, line, reason)]
    if old.document is None:
        if old.label == REPEATS:  # repeats and a band cannot be ranked: say why
            return [Change("noise", old.identity, new.identity, line, reason)]
        return [Change("noise", old.identity,
                       f"{new.identity}: allowances and bands where counts were exact",
                       line, reason)]
    where = new.label if new.label == old.label else f"{old.label} -> {new.label}"
    changes = _count_changes(old, new, where, reason, line)
    changes += rate_changes(old, new, where, reason, line)
    changes += _metric_changes(old.document, new.document, where, reason, line)
    if new.exclude_unstable:
        added = [case for case in new.document.unstable_cases
                 if case not in set(old.document.unstable_cases)]
        if added:
            shown = ", ".join(added[:SHOWN]) + (", ..." if len(added) > SHOWN else "")
            changes.append(Change(f"noise {where} unstable_cases",
                                  f"{len(old.document.unstable_cases)} cases",
                                  f"{len(added)} more left out of the paired tests ({shown})",
                                  line, reason))
    return changes


def allowances(noise: Noise) -> dict[tuple[str | None, str], int]:
    """Each count the band measures, with the allowance the gate gives it: its movement's
    (``Movement.allowance``, widened by the count's dispersion) at the file's budget shared
    equally by the band's counts (``gate.noisy``). Keyed by (report, count): a band with
    each report's own bands gives each report's (the gate reads those), else (None, count),
    one allowance every report gets."""
    document = noise.document
    if document is None or not document.bands:
        return {}
    model = from_document(document, noise.label)
    if model.reports:
        measured = sum(len(m.shared) for m in model.reports.values())
        level = noise.budget / max(1, measured)
        return {(report, name): movement.allowance(level)
                for report, own in model.reports.items()
                for name, movement in own.shared.items()}
    level = noise.budget / len(document.bands)
    return {(None, name): movement.allowance(level) for name, movement in model.shared.items()}


def _given(found: dict[tuple[str | None, str], int], report: str | None, name: str
           ) -> int | None:
    """The allowance one report's count gets: its own, else the one every report gets."""
    if report is not None and (report, name) in found:
        return found[(report, name)]
    return found.get((None, name))


def _count_changes(old: Noise, new: Noise, where: str, reason: str | None,
                   line: int | None) -> list[Change]:
    assert old.document is not None
    assert new.document is not None
    before, after = allowances(old), allowances(new)
    reports: list[str | None] = [*sorted(
        {report for report, _ in (*before, *after) if report is not None})] or [None]
    names = sorted({name for _, name in (*before, *after)})
    still = {name for _, name in after}  # a count some report's band still measures
    measured = {report for report, _ in after}
    changes = []
    for report in reports:
        prefix = "" if report is None else f"{report}::"
        for name in names:
            was, now = _given(before, report, name), _given(after, report, name)
            label = f"noise {where} {prefix}mode:{name}"
            gone = name not in still or (report is not None and None not in measured
                                         and report not in measured)
            if was is not None and now is None and gone:
                changes.append(Change(label, f"measured (allowance {was})",
                                      "removed: the ratchet never lowers its ceiling", line,
                                      reason))
            elif was is not None and now is not None and now > was:
                changes.append(Change(label + " allowance", was, now, line, reason))
    for name in sorted(old.document.bands):
        if name not in new.document.bands:
            continue
        was, now = band_cases(old.document.bands[name]), band_cases(new.document.bands[name])
        if now > was:
            changes.append(Change(f"noise {where} mode:{name} band", f"{was} cases",
                                  f"{now} cases", line, reason))
    for name in sorted(set(new.document.bands) - set(old.document.bands)):
        was, now = band_cases(None), band_cases(new.document.bands[name])
        if now > was:
            changes.append(Change(f"noise {where} mode:{name} band", f"{was} case (none)",
                                  f"{now} cases", line, reason))
    return changes


def rate_changes(old: Noise, new: Noise, where: str, reason: str | None, line: int | None
                 ) -> list[Change]:
    """Each category of failures outside the system whose tolerated error rate may grow.

    Such a count may also reach what its observed error rate allows
    (``compare.noisemodel.count_allowance``: the band's mean errors over the runs it names,
    ``run_ids``, with the run's own), so the band's errors per run and its number of runs
    are evidence too. The tolerated rate rises with the errors per run and with fewer runs
    (a wider bound); a band that says either is named. A mean removed is read as none over
    no runs: the run's own errors alone, the widest bound.
    """
    assert old.document is not None
    assert new.document is not None
    outside = None if old.outside is None or new.outside is None else (
        old.outside | new.outside)
    changes = []
    for prefix, now_side, was_side in _band_pairs(old.document, new.document):
        for name in sorted(set(was_side[0]) | set(now_side[0])):
            if outside is not None and name not in outside:
                continue
            was = _errors(was_side, name)
            now = _errors(now_side, name)
            if now[0] > was[0] or now[1] < was[1]:
                changes.append(Change(f"noise {where} {prefix}mode:{name} error rate",
                                      _show_errors(was), _show_errors(now), line, reason))
    return changes


_Side = tuple[dict[str, NoiseBand], tuple[str, ...]]  # a report's bands, the runs they are over


def _band_pairs(old: NoiseDocument, new: NoiseDocument) -> list[tuple[str, _Side, _Side]]:
    """The bands a report's counts are read from now, each with those read before: each
    report's own (``reports``) where the band has them, else the pooled ones (for every
    report the old band had its own bands for, too)."""
    pooled: tuple[_Side, _Side] = ((new.bands, new.run_ids), (old.bands, old.run_ids))
    if new.reports:
        return [(f"{report}::", (mine.bands, mine.run_ids),
                 (old.reports[report].bands, old.reports[report].run_ids)
                 if report in old.reports else pooled[1])
                for report, mine in sorted(new.reports.items())]
    return [("", *pooled), *((f"{report}::", pooled[0], (mine.bands, mine.run_ids))
                             for report, mine in sorted(old.reports.items()))]


def _errors(side: _Side, name: str) -> tuple[Fraction, int]:
    """A band's errors per run of ``name`` and the runs they are over, as
    ``count_allowance`` reads them (none over no runs: no mean, or no runs named)."""
    bands, run_ids = side
    band = bands.get(name)
    if band is None or band.mean is None or not run_ids:
        return Fraction(0), 0
    return Fraction(repr(band.mean)), len(run_ids)


def _show_errors(errors: tuple[Fraction, int]) -> str:
    mean, runs = errors
    if not runs:
        return "no band (the run's own errors)"
    return f"{format_number(mean)} per run over {runs} runs"


def _metric_changes(old: NoiseDocument, new: NoiseDocument, where: str, reason: str | None,
                    line: int | None) -> list[Change]:
    changes = []
    for name, band in sorted(new.metric_bands.items()):
        earlier = old.metric_bands.get(name)
        if earlier is None and band.width > 0:
            changes.append(Change(f"noise {where} {name} band", "none", band.width, line,
                                  reason))
        elif earlier is not None and band.width > earlier.width:
            changes.append(Change(f"noise {where} {name} band", earlier.width, band.width,
                                  line, reason))
    return changes


def _raw(document: NoiseDocument) -> object:
    from ..compare.noise import noise_band_document

    return noise_band_document(document)
