"""Reading ``ceilings.yaml`` and resolving which entry governs each (report, name).

A report's ceiling for a name is its own override under ``reports:`` if there is
one, else the default under ``ceilings:``; a category with neither has ceiling 0,
so a new failure mode fails the gate until someone decides otherwise. A name is a
category, ``total``, or ``group:<group>``. A slice item (``query_type=comparison``)
takes the slice's own ceiling if one is written, else its report's: a slice never
holds more cases than its report, so the report's ceiling bounds it already.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.errors import FailgateError, closest, did_you_mean, display_path
from ..base.yamlsource import Loc, Span, YamlDoc, load_yaml
from ..reports.model import MetricSpec
from ..taxonomy.expr import Compiled, ExprError, compile_expr
from ..taxonomy.files import resolve_taxonomy
from ..taxonomy.model import GROUP_PREFIX, TOTAL
from .model import (
    OLD_FLOORS,
    SLICE_SEPARATOR,
    Ceiling,
    CeilingsModel,
    CeilingsShapeError,
    Problem,
    governing_locs,
    read_model,
    yaml_loc,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from ..taxonomy import Taxonomy

# Why a ceilings file has no aliases: ``b: *v`` would make one written number two ceilings.
NO_ALIASES = ("a ratchet lowers each ceiling where it is written, so write every value out "
              "instead of aliasing it")


@dataclass(frozen=True)
class Entry:
    """One ceiling written in the file, with the spans a rewrite edits."""

    loc: tuple[str, ...]  # ("ceilings", [slice,] name) or ("reports", report, [slice,] name)
    name: str
    ceiling: Ceiling
    line: int
    max_span: Span | None
    rate_span: Span | None
    mapping: bool  # written as {max: ..., ...} rather than a bare count
    observed_span: Span | None = None  # a noisy ceiling's parts (max = observed + allowance)
    allowance_span: Span | None = None
    true_max_span: Span | None = None  # the true count's limit (gold labels)

    @property
    def label(self) -> str:
        return ".".join(self.loc)


@dataclass
class Ceilings:
    """A validated ceilings file bound to its taxonomy."""

    path: Path
    doc: YamlDoc
    model: CeilingsModel
    taxonomy: Taxonomy
    # ``taxonomies:``: report name or format -> the taxonomy that classifies it instead
    overrides: dict[str, Taxonomy]
    entries: dict[tuple[str, ...], Entry]
    populations: dict[str, Compiled]  # ``per:`` text -> its predicate
    contracts: dict[str, ContractCheck]
    slicers: dict[str, Compiled]  # slice field -> its value
    # metric -> its value in a case, and which cases answered (the floor's or the taxonomy's)
    metrics: dict[str, MetricSpec]

    def deprecations(self) -> list[str]:
        """Old spellings the file still uses, each with its new one (read as before)."""
        if not self.model.old_floors_key:
            return []
        line = self.doc.keys[(OLD_FLOORS,)].line
        return [f"{display_path(self.path)}:{line}: '{OLD_FLOORS}:' is the old name of "
                "'floors:' (the metric floors); rename it, it is read as 'floors:' until then"]

    def metric_line(self, name: str) -> int:
        return self.doc.keys[(self.model.floors_key, name)].line

    def entry(self, report: str, name: str, slice_: str | None = None) -> Entry | None:
        """The entry governing ``name`` in ``report`` (and slice), or ``None`` (0 / ungated)."""
        return next((self.entries[loc] for loc in governing_locs(report, slice_, name)
                     if loc in self.entries), None)

    def check_report_names(self, names: Iterable[str]) -> list[str]:
        """Overrides for reports that were not found: a typo is an error, others a warning.

        An override close to a report that exists is almost surely a typo that would
        silently leave the report on the defaults, so it stops the run. One that
        resembles nothing belongs to reports this run was not given (another CI
        job's, or another Inspect task's: ``keywords@mockllm/model`` is no typo of
        ``capitals@mockllm/model``), and is listed so a stale entry does not go unnoticed.
        """
        known = sorted(set(names))
        warnings = []
        for report in self.model.reports:
            if report in known:
                continue
            guess = typo_of(report, known)
            if guess is not None:
                raise self.doc.error(
                    f"reports: '{report}' matches no report; did you mean '{guess}'?",
                    ("reports", report), at_key=True,
                )
            line = self.doc.keys[("reports", report)].line
            warnings.append(
                f"{display_path(self.path)}:{line}: reports: '{report}' matches no report "
                "in this run; its ceilings were not used"
            )
        return warnings


_PARTS = re.compile(r"([/@])")


def typo_of(name: str, known: Iterable[str]) -> str | None:
    """The report name ``name`` is most likely a typo of, if any.

    Report names are made of parts (``folder/task@model``); a typo changes one part, so
    the part that differs is compared, not the whole name, whose shared parts would
    make two tasks of one model look alike. Names of another shape are compared whole.
    """
    parts = _PARTS.split(name)
    candidates = []
    for other in known:
        others = _PARTS.split(other)
        if len(others) != len(parts) or others[1::2] != parts[1::2]:
            candidates.append(other)
            continue
        differ = [(a, b) for a, b in zip(parts, others, strict=True) if a != b]
        if len(differ) == 1 and closest(differ[0][0], [differ[0][1]]) is not None:
            candidates.append(other)
    return closest(name, candidates)


@dataclass(frozen=True)
class ContractCheck:
    """A compiled contract: which names it reads from counts and from recorded aggregates."""

    name: str
    text: str
    compiled: Compiled
    reports: tuple[str, ...] | None
    line: int

    def recorded_keys(self, count_names: Iterable[str]) -> list[str]:
        counts = set(count_names)
        return [name for name in self.compiled.reads if name not in counts]


def nearby_ceilings(ceilings: Path, reports: Iterable[Path]) -> Path | None:
    """A file of the missing ceilings file's name near it: in a folder between it and the
    reports (theirs and those above, below the ceilings file's), else in a folder above it
    within its git repository. A project nested in its repository (``apps/bot/``) gated
    from the repository's root or from a subfolder finds its file named, not an init that
    would write a second one beside the first."""
    import os
    from pathlib import Path

    home = Path(os.path.abspath(ceilings.parent))
    for report in reports:
        folder = Path(os.path.abspath(report))
        folder = folder if folder.is_dir() else folder.parent
        while folder != home and home in folder.parents:
            if (folder / ceilings.name).is_file():
                return folder / ceilings.name
            folder = folder.parent
    above = [home, *home.parents]
    top = next((n for n, folder in enumerate(above) if (folder / ".git").exists()), None)
    for folder in above[1:top + 1] if top is not None else []:
        if (folder / ceilings.name).is_file():
            return folder / ceilings.name
    return None


def load_ceilings(path: Path, taxonomies: Mapping[str, Taxonomy]) -> Ceilings:
    """Parse and validate a ceilings file; every problem names its line."""
    doc = parse_ceilings(path)
    model = validate_ceilings(doc)
    taxonomy = resolve_taxonomy(model.taxonomy, doc, taxonomies)
    overrides = {key: resolve_taxonomy(value, doc, taxonomies, ("taxonomies", key))
                 for key, value in model.taxonomies.items()}
    used = [taxonomy, *overrides.values()]
    valid = tuple(dict.fromkeys(
        name for t in used
        for name in (*t.category_names, TOTAL, *(GROUP_PREFIX + g for g in t.groups))))
    named = " or ".join(dict.fromkeys(t.name for t in used))
    entries: dict[tuple[str, ...], Entry] = {}
    populations: dict[str, Compiled] = {}
    sections: list[tuple[tuple[str, ...], dict[str, Ceiling]]] = [(("ceilings",), model.ceilings)]
    sections += [(("ceilings", s), names) for s, names in model.slice_ceilings.items()]
    for report, names in model.reports.items():
        sections.append((("reports", report), names))
        sections += [(("reports", report, s), block)
                     for s, block in model.report_slices.get(report, {}).items()]
    for prefix, section in sections:
        if len(prefix) in (2, 3) and SLICE_SEPARATOR in prefix[-1]:
            _check_slice(doc, model.slices, prefix)
        for name, ceiling in section.items():
            loc = (*prefix, name)
            if name not in valid:
                kind = "group" if name.startswith(GROUP_PREFIX) else "category"
                raise doc.error(
                    f"'{name}' is not a {kind} of taxonomy {named}"
                    + (" (nor 'total' or 'group:<name>')" if kind == "category" else "")
                    + did_you_mean(name, valid),
                    loc, at_key=True,
                )
            if ceiling.per is not None and ceiling.per not in populations:
                populations[ceiling.per] = _compile(doc, ceiling.per, (*loc, "per"))
            entries[loc] = _entry(doc, loc, name, ceiling)
    slicers = {field: _compile(doc, field, ("slices", index))
               for index, field in enumerate(model.slices)}
    counted = {*valid, TOTAL, "cases", "groups"}
    contracts = {}
    for name, contract in model.contracts.items():
        loc = ("contracts", name) if isinstance(doc.data_at(("contracts", name)), str) else (
            "contracts", name, "check")
        compiled = _compile(doc, contract.check, loc)
        contracts[name] = ContractCheck(
            name, contract.check, compiled,
            tuple(contract.reports) if contract.reports is not None else None,
            doc.keys[("contracts", name)].line)
        if not set(compiled.reads) & counted:
            raise doc.error(f"contract '{name}' reads no count (a category, total, cases or "
                            "groups); it would compare recorded numbers only", loc)
    metrics: dict[str, MetricSpec] = {}
    for name, floor in model.floors.items():
        value = _compile(doc, name, (model.floors_key, name))
        if floor.substantive is not None:
            rule = _compile(doc, floor.substantive, (model.floors_key, name, "substantive"))
            metrics[name] = MetricSpec(value, rule.holds, rule.reads, rule.text)
        elif taxonomy.substantive is not None:
            metrics[name] = MetricSpec(value, taxonomy.substantive.predicate,
                                       taxonomy.substantive.reads, taxonomy.substantive.text)
        else:
            metrics[name] = MetricSpec(value)
    return Ceilings(path, doc, model, taxonomy, overrides, entries, populations, contracts,
                    slicers, metrics)


def parse_ceilings(path: Path, text: str | None = None) -> YamlDoc:
    """A ceilings file's YAML (aliases refused: see ``NO_ALIASES``)."""
    return load_yaml(path, text, aliases=NO_ALIASES)


def validate_ceilings(doc: YamlDoc) -> CeilingsModel:
    """The file's model; a shape error names its line."""
    try:
        return read_model(doc.data)
    except CeilingsShapeError as exc:
        raise validation_error(doc, exc.problems) from None


def _check_slice(doc: YamlDoc, declared: list[str], loc: tuple[str, ...]) -> None:
    field = loc[-1].split(SLICE_SEPARATOR, 1)[0]
    if field not in declared:
        raise doc.error(
            f"'{loc[-1]}' is a slice of '{field}', which is not declared in slices:"
            + (did_you_mean(field, declared) if declared else " (add `slices: [" + field + "]`)"),
            loc, at_key=True)


def _compile(doc: YamlDoc, text: str, loc: Loc) -> Compiled:
    """An expression written in the ceilings file, compiled; errors point into the file."""
    try:
        return compile_expr(text)
    except ExprError as exc:
        span = doc.where(loc)
        message = f"{exc.message}\n{exc.caret(text)}"
        if span is None:
            raise FailgateError(message, doc.path) from None
        column = span.col + exc.col - 1 + (0 if span.style is None else 1)
        raise FailgateError(message, doc.path, span.line, column) from None


def _entry(doc: YamlDoc, loc: tuple[str, ...], name: str, ceiling: Ceiling) -> Entry:
    key = doc.keys[loc]
    mapping = isinstance(doc.data_at(loc), dict)
    if not mapping:
        return Entry(loc, name, ceiling, key.line, doc.values[loc], None, False)
    return Entry(loc, name, ceiling, key.line, doc.values.get((*loc, "max")),
                 doc.values.get((*loc, "max_rate")), True, doc.values.get((*loc, "observed")),
                 doc.values.get((*loc, "allowance")), doc.values.get((*loc, "true_max")))


def validation_error(doc: YamlDoc, found: list[Problem]) -> FailgateError:
    """The earliest problem in the file, as one message (with a count of the others)."""
    problems: list[tuple[int, int, str, Loc]] = []
    for problem in found:
        loc: Loc = yaml_loc(problem.loc)
        if loc[:1] == ("floors",) and (OLD_FLOORS,) in doc.keys:  # as the file writes it
            loc = (OLD_FLOORS, *loc[1:])
        span = doc.key_span(loc) if problem.at_key else doc.where(loc)
        line, col = (span.line, span.col) if span else (0, 0)
        problems.append((line, col, problem.message, loc))
    problems.sort(key=lambda p: (p[0], p[1]))
    line, col, message, loc = problems[0]
    if problems[0][2].startswith("unknown key"):
        loc = loc[:-1]
    where = ".".join(str(part) for part in loc)
    text = f"{where}: {message}" if where else message
    if len(problems) > 1:
        text += f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})"
    return FailgateError(text, doc.path, line or None, col or None)
