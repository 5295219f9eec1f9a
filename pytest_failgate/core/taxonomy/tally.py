"""First-match classification and the per-category counts of one report.

Besides the counts, a tally keeps what a reviewer needs to trust them: the case
ids in each category with a few examples, and for every rule how many of the
cases it examined lacked a field it reads (in the rag classifier's data ``attempt_latency`` was
often absent, which silently turned every comparison query into
``planner_under_decomposition``). A rule examines a case when the case failed
and no earlier rule matched it.

Flags are predicates counted over every case: the taxonomy's caveats, and the
populations that rate ceilings are measured per (``per:``). With ``explain`` on,
every rule is also tried on every failed case, to show what first-match hid.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

from ..base.classes import dataclass
from .expr.errors import NonFinite
from .model import Case, metric_number

if TYPE_CHECKING:
    from .model import Predicate, Taxonomy

EXAMPLES = 10  # cases kept per category with their fields



class Decision(NamedTuple):
    """What ``Tallier.decide`` says of a case (pure: a caller may cache it by the case)."""

    decided: int  # 0 passed; else the 1-based position of the deciding rule (fallback last)
    flags: int  # a bit per caveat (and ``per:`` population) that holds
    matches: int  # when explaining: a bit per enabled rule that matched, first-match or not
    sliced: tuple[str, ...]  # the case's value of each slice field, as text
    observed: tuple[tuple[Any, bool], ...]  # each metric's (value or None, vacuous?)


Slicer = Callable[[Case], Any]
# a metric: its value in a case, and which cases answered (None: no check)
Metric = tuple[Callable[[Case], Any], "Predicate | None"]


class RuleError(Exception):
    """A rule (or slice, population or metric) could not be evaluated on a case."""

    def __init__(self, rule: str, message: str, nonfinite: bool = False) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message
        self.nonfinite = nonfinite  # a NaN or infinite number compared (``NonFinite``)


@dataclass
class MetricTally:
    """A metric over the cases where it applies (non-null values only, docs/design.md)."""

    n_values: int = 0
    total: Fraction = Fraction(0)
    vacuous: int = 0  # non-substantive cases carrying 1.0: the vacuous-truth trap

    @property
    def mean(self) -> Fraction | None:
        return self.total / self.n_values if self.n_values else None


@dataclass(frozen=True)
class MissingField:
    """A field a rule reads that was absent from some of the cases the rule examined."""

    rule: str
    field: str
    missing: int
    examined: int
    default: Any


@dataclass
class Explanation:
    """What first-match hid, and what the fallback holds (``--failgate-explain``)."""

    # category -> later rule -> cases of the category that the later rule also matched
    hidden: dict[str, dict[str, int]]
    # rule -> cases it matched at all, first or not
    matched: dict[str, int]
    # field values of the fallback's cases (rule fields only) -> cases
    fallback_groups: Counter[tuple[tuple[str, str], ...]]


@dataclass
class SliceTally:
    """The cases whose slice field has one value: their number and their categories."""

    n_cases: int = 0
    ids: dict[str, list[str]] = field(default_factory=dict)
    # counts from a SQL engine, whose ``ids`` are only the first few of each category
    counted: dict[str, int] | None = None

    @property
    def counts(self) -> dict[str, int]:
        if self.counted is not None:
            return dict(self.counted)
        return {category: len(ids) for category, ids in self.ids.items()}


def slice_text(value: Any) -> str:
    """How a slice value is written in item names and ceilings (``query_type=comparison``)."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


@dataclass
class Tally:
    """Counts per category (every category, zeros included) for one report."""

    taxonomy: Taxonomy
    n_cases: int
    counts: dict[str, int]
    ids: dict[str, list[str]]
    examined: dict[str, int]
    missing: dict[str, dict[str, int]]
    examples: dict[str, list[tuple[str, Case]]] = field(default_factory=dict)
    flags: dict[str, int] = field(default_factory=dict)  # flag -> cases it holds for
    flagged: dict[str, dict[str, int]] = field(default_factory=dict)  # flag -> category -> n
    explanation: Explanation | None = None
    # slice field -> value -> its cases (values in order of first appearance)
    slices: dict[str, dict[str, SliceTally]] = field(default_factory=dict)
    absent: dict[str, int] = field(default_factory=dict)  # field -> cases without it
    metrics: dict[str, MetricTally] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        return sum(self.counts.values())

    def missing_fields(self) -> list[MissingField]:
        """Every (rule, field) pair with absences, in rule then field order."""
        found = []
        for rule in self.taxonomy.rules:
            for name in (*rule.reads, *rule.paths):
                count = self.missing[rule.name].get(name, 0)
                if count:
                    declared = self.taxonomy.field_index.get(name)
                    found.append(MissingField(rule.name, name, count, self.examined[rule.name],
                                              declared.default if declared else None))
        return found


def nested_absent(case: Case, path: str) -> bool:
    """Whether a nested path is missing from a case whose top-level field is there (an
    absent top-level field is reported as such, not once more per path below it)."""
    value: Any = case
    for depth, key in enumerate(path.split(".")):
        if not isinstance(value, Mapping) or key not in value:
            return depth > 0 and isinstance(value, Mapping)
        value = value[key]
    return False


@dataclass(frozen=True, kw_only=True)
class TallyTarget:
    """What a caller that counts cases itself updates in a ``Tallier`` (the generated loop
    of ``reports.scan``), named: it records a case exactly as ``Tallier.record`` would."""

    # (absent-field mask * (enabled rules + 2) + decided position) -> cases
    reach: dict[int, int]
    flagged: dict[tuple[int, int], int]  # (flag bits, decided position) -> cases
    ids_at: list[list[str]]  # per decided position (0, passed, keeps none): the case ids
    examples_at: list[list[tuple[str, Case]]]  # per decided position: the first cases
    # the case's slices counted (its id, decided position, each slice field's value)
    record_slices: Callable[[str, int, tuple[str, ...]], None]
    observe: Callable[[Case], tuple[tuple[Any, bool], ...]]  # each metric's observation
    count_observed: Callable[[tuple[tuple[Any, bool], ...]], None]  # ... counted


def classify(taxonomy: Taxonomy, case: Case) -> str | None:
    """The category of one case (a mapping of its present fields), or ``None`` if it passed."""
    return Tallier(taxonomy).add("", case)


class Tallier:
    """Classifies cases one at a time, so a report never needs to be held in memory."""

    def __init__(self, taxonomy: Taxonomy, measures: Mapping[str, Predicate] | None = None,
                 explain: bool = False, slicers: Mapping[str, Slicer] | None = None,
                 metrics: Mapping[str, Metric] | None = None) -> None:
        self.taxonomy = taxonomy
        self.explain = explain
        self.metric_names = list(metrics or {})
        self._metrics = list((metrics or {}).values())
        self._metric_values: list[Counter[tuple[Any, bool]]] = [Counter() for _ in self._metrics]
        self.slice_names = list(slicers or {})
        self._slicers = list((slicers or {}).values())
        self._slices: dict[str, dict[str, SliceTally]] = {name: {} for name in self.slice_names}
        # fields, then nested paths (absent: their object is there, the key is not)
        self._names = [f.name for f in taxonomy.fields]
        self._names += [p for p in taxonomy.nested_paths if p not in self._names]
        self._bits = {name: 1 << i for i, name in enumerate(self._names)}
        self._rules = [r for r in taxonomy.categories if r.enabled]
        self._failed = taxonomy.failed.predicate
        self._category_at = ["", *(r.name for r in self._rules), taxonomy.fallback]
        self._plain = [Decision(i, 0, 0, (), ()) for i in range(len(self._category_at))]
        flags = {c.name: c.predicate for c in taxonomy.caveats}
        flags.update(measures or {})
        self.flag_names = list(flags)
        self._flag_predicates = list(flags.values())
        self._ids: dict[str, list[str]] = {name: [] for name in taxonomy.category_names}
        self._examples: dict[str, list[tuple[str, Case]]] = {
            name: [] for name in taxonomy.category_names}
        # (absent-field mask, 1 + index of the deciding rule, 0 for passed) as one
        # integer -> number of cases; decoded in ``result``
        self._stride = len(self._rules) + 2
        self._reach: dict[int, int] = {}
        self._flagged: dict[tuple[int, int], int] = {}  # (flags, decided) -> cases
        self._hidden: Counter[tuple[int, int]] = Counter()  # (decided, matches) -> cases
        self._fallback_groups: Counter[tuple[tuple[str, str], ...]] = Counter()
        self.n_cases = 0

    def bit(self, name: str) -> int:
        """The bit that marks ``name`` as absent in a ``record`` mask."""
        return self._bits[name]

    def add(self, case_id: str, case: Case) -> str | None:
        """Classify one case given the fields it has; returns its category."""
        absent = sum(bit for name, bit in self._bits.items()
                     if (name not in case if "." not in name else nested_absent(case, name)))
        return self.record(case_id, self.decide(case), absent, case)

    def decide(self, case: Case) -> Decision:
        """What the rules say of a case. Pure, so callers may cache it by the case's fields.

        A rule that raises (a type it cannot handle) becomes a ``RuleError`` naming it.
        """
        try:
            return self._decide(case)
        except RuleError:
            raise
        except Exception as exc:  # a user's predicate may raise anything
            raise self._culprit(case, exc) from None

    @property
    def id_lists(self) -> dict[str, list[str]]:
        """Each category's failed case ids, in the order counted (lists kept growing)."""
        return self._ids

    def target(self) -> TallyTarget:
        """This tally's counters, for a caller recording cases itself (``TallyTarget``)."""

        def record_slices(case_id: str, decided: int, sliced: tuple[str, ...]) -> None:
            self._record_slices(case_id, decided, self._category_at[decided], sliced)

        def count_observed(observed: tuple[tuple[Any, bool], ...]) -> None:
            for values, observation in zip(self._metric_values, observed, strict=True):
                values[observation] += 1

        return TallyTarget(
            reach=self._reach, flagged=self._flagged,
            ids_at=[[], *(self._ids[name] for name in self._category_at[1:])],
            examples_at=[[], *(self._examples[name] for name in self._category_at[1:])],
            record_slices=record_slices, observe=self._observe, count_observed=count_observed)

    def _culprit(self, case: Case, exc: Exception) -> RuleError:
        named = [(self.taxonomy.failed.name, self._failed), *((r.name, r.predicate)
                 for r in self._rules), *zip(self.flag_names, self._flag_predicates,
                                             strict=True)]
        for name, predicate in named:
            try:
                predicate(case)
            except Exception as found:
                return RuleError(name, str(found) or type(found).__name__,
                                 isinstance(found, NonFinite))
        return RuleError("a slice or metric", str(exc) or type(exc).__name__)

    def _observe(self, case: Case) -> tuple[tuple[Any, bool], ...]:
        observed = []
        for name, (value_of, substantive) in zip(self.metric_names, self._metrics, strict=True):
            try:
                value = metric_number(value_of(case))
            except ValueError as exc:
                raise RuleError(f"metric {name}", str(exc)) from None
            vacuous = value == 1 and substantive is not None and not substantive(case)
            observed.append((value, vacuous))
        return tuple(observed)

    def _decide(self, case: Case) -> Decision:
        flags = 0
        for i, predicate in enumerate(self._flag_predicates):
            if predicate(case):
                flags |= 1 << i
        sliced = tuple(slice_text(slicer(case)) for slicer in self._slicers) \
            if self._slicers else ()
        observed = self._observe(case) if self._metrics else ()
        # the usual case (no flag, slice or metric): one shared Decision per outcome
        plain = not (flags or sliced or observed or self.explain)
        if not self._failed(case):
            return self._plain[0] if plain else Decision(0, flags, 0, sliced, observed)
        decided = 0
        matches = 0
        for position, rule in enumerate(self._rules, start=1):
            if rule.predicate(case):
                if not decided:
                    decided = position
                    if not self.explain:
                        break
                matches |= 1 << position
        decided = decided or len(self._rules) + 1
        return self._plain[decided] if plain else Decision(decided, flags, matches, sliced,
                                                             observed)

    def record(self, case_id: str, decision: Decision, absent: int,
               case: Case | None = None) -> str | None:
        """Count a case whose ``decision`` was made; returns its category."""
        decided, flags, matches, sliced, observed = decision
        self.n_cases += 1
        if observed:  # the ifs spare the hot loop a zip per case when unused
            for values, observation in zip(self._metric_values, observed, strict=True):
                values[observation] += 1
        key = absent * self._stride + decided
        self._reach[key] = self._reach.get(key, 0) + 1
        if flags:
            self._flagged[flags, decided] = self._flagged.get((flags, decided), 0) + 1
        category = self._category_at[decided]
        if sliced:
            self._record_slices(case_id, decided, category, sliced)
        if not decided:
            return None
        ids = self._ids[category]
        ids.append(case_id)
        if case is not None and len(ids) <= EXAMPLES:
            self._examples[category].append((case_id, case))
        if self.explain:
            self._hidden[decided, matches] += 1
            if decided == len(self._rules) + 1 and case is not None:
                self._fallback_groups[self._signature(case)] += 1
        return category

    def _record_slices(self, case_id: str, decided: int, category: str,
                       sliced: tuple[str, ...]) -> None:
        for name, value in zip(self.slice_names, sliced, strict=True):
            tally = self._slices[name].get(value)
            if tally is None:
                tally = self._slices[name][value] = SliceTally(
                    ids={c: [] for c in self.taxonomy.category_names})
            tally.n_cases += 1
            if decided:
                tally.ids[category].append(case_id)

    def _signature(self, case: Case) -> tuple[tuple[str, str], ...]:
        fields = dict.fromkeys(f for rule in self._rules for f in rule.reads)
        return tuple((name, json.dumps(case.get(name), sort_keys=True, default=str))
                     for name in fields)

    def result(self) -> Tally:
        taxonomy = self.taxonomy
        examined = {rule.name: 0 for rule in taxonomy.rules}
        missing: dict[str, dict[str, int]] = {rule.name: {} for rule in taxonomy.rules}
        rule_masks = {rule.name: [(name, self._bits[name]) for name in (*rule.reads, *rule.paths)]
                      for rule in taxonomy.rules}
        for key, count in self._reach.items():
            mask, decided = divmod(key, self._stride)
            # ``failed`` examines every case; an enabled rule examines the failed
            # cases that reached it (those decided at its position or later).
            reached = [taxonomy.failed.name] + [rule.name for rule in self._rules[:decided]]
            for rule_name in reached:
                examined[rule_name] += count
                for name, bit in rule_masks[rule_name]:
                    if mask & bit:
                        missing[rule_name][name] = missing[rule_name].get(name, 0) + count
        absent = dict.fromkeys(self._names, 0)
        for key, count in self._reach.items():
            mask = key // self._stride
            for name, bit in self._bits.items():
                if mask & bit:
                    absent[name] += count
        flags = dict.fromkeys(self.flag_names, 0)
        flagged: dict[str, dict[str, int]] = {name: {} for name in self.flag_names}
        for (bits, decided), count in self._flagged.items():
            for i, name in enumerate(self.flag_names):
                if bits & (1 << i):
                    flags[name] += count
                    if decided:
                        category = self._category_at[decided]
                        flagged[name][category] = flagged[name].get(category, 0) + count
        return Tally(
            taxonomy=taxonomy,
            n_cases=self.n_cases,
            counts={name: len(ids) for name, ids in self._ids.items()},
            ids=self._ids,
            examined=examined,
            missing=missing,
            examples=self._examples,
            flags=flags,
            flagged=flagged,
            explanation=self._explanation() if self.explain else None,
            slices=self._slices,
            absent=absent,
            metrics={name: _metric_tally(values)
                     for name, values in zip(self.metric_names, self._metric_values, strict=True)},
        )

    def _explanation(self) -> Explanation:
        hidden: dict[str, dict[str, int]] = {name: {} for name in self.taxonomy.category_names}
        matched = {rule.name: 0 for rule in self._rules}
        for (decided, matches), count in self._hidden.items():
            for position, rule in enumerate(self._rules, start=1):
                if not matches & (1 << position):
                    continue
                matched[rule.name] += count
                if position > decided:
                    category = self._category_at[decided]
                    hidden[category][rule.name] = hidden[category].get(rule.name, 0) + count
        return Explanation(hidden, matched, self._fallback_groups)


def _metric_tally(values: Counter[tuple[Any, bool]]) -> MetricTally:
    """Exact sums: each distinct value once, as the decimal it was written as."""
    tally = MetricTally()
    for (value, vacuous), count in values.items():
        if value is None:
            continue
        tally.n_values += count
        tally.total += Fraction(repr(value)) * count
        tally.vacuous += count if vacuous else 0
    return tally
