"""What a taxonomy is: a ``failed`` predicate, ordered rules, groups and caveats.

A taxonomy is data plus small predicates over a *case*: a mapping of the fields
present in one record of a report (an absent field is simply not a key). Rules
declare the fields they read, which lets readers decode only those fields of a
large report, lets failgate say how often a field a rule depends on was absent,
and lets a value of the wrong kind be an error naming the case. Taxonomies are
usually written as YAML files (see ``files``); this module is also the Python API.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from ..base.classes import dataclass
from ..base.confine import shown

Kind = Literal["bool", "number", "string", "array", "object", "null"]
Case = Mapping[str, Any]
Predicate = Callable[[Case], bool]

TOTAL = "total"  # every failed case together: the name of its ceiling, item and count
GROUP_PREFIX = "group:"  # ``group:<g>``: the categories of one group together
RESERVED_NAMES = frozenset({TOTAL, "consistency", "guard", "cases", "groups"})
DEFAULT_ID_FIELDS = ("id", "case_id", "question_id", "sample_id")
COMPOSITE = "+"  # an id_fields entry "provider.id+testIdx" joins its parts' values with "/"

_KIND_WORDS: dict[str, str] = {
    "bool": "true or false",
    "number": "a number",
    "string": "a string",
    "array": "a list",
    "object": "an object",
    "null": "null",
}

# the taxonomies shipped with failgate, one YAML file each (read by ``BuiltinTaxonomies``;
# a taxonomy file may ``extends:`` one of them)
BUILTIN_DIR = Path(__file__).parent / "builtin"


def kind_of(value: object) -> Kind:
    """The JSON kind of a decoded value (``True`` is a bool, never a number)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"


def describe_kinds(kinds: frozenset[Kind]) -> str:
    words = [_KIND_WORDS[k] for k in sorted(kinds)]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


@dataclass(frozen=True)
class Field:
    """A case field rules read: the JSON kinds it may hold (``None``: any) and its default.

    The default is what rules see when the field is absent; the kinds make a
    mistyped value an error instead of a silent truthiness accident.
    """

    name: str
    kinds: frozenset[Kind] | None = None
    default: Any = None
    item_kinds: frozenset[Kind] | None = None  # for arrays whose items rules hash or compare

    def problem(self, value: object) -> str | None:
        """Why ``value`` is not acceptable for this field, or ``None`` when it is."""
        kind = kind_of(value)
        if self.kinds is not None and kind not in self.kinds:
            return f"is {_show(value)} ({_KIND_WORDS[kind]}); expected {describe_kinds(self.kinds)}"
        if kind == "array" and self.item_kinds is not None:
            assert isinstance(value, list | tuple)
            for i, item in enumerate(value):
                if kind_of(item) not in self.item_kinds:
                    return (
                        f"item {i} is {_show(item)}; expected a list of "
                        f"{describe_kinds(self.item_kinds)}"
                    )
        return None


def _show(value: object) -> str:
    text = repr(value) if not isinstance(value, str) else '"' + value + '"'
    return shown(text if len(text) <= 40 else text[:37] + "...")


def _never(case: Case) -> bool:
    return False


@dataclass(frozen=True)
class Rule:
    """One named predicate over a case, with the fields it reads and its meaning in words.

    ``group``, ``stage`` and ``hint`` are for people: a coarser bucket ceilings can
    gate, where in the pipeline the failure arises, and what to look at first.
    ``settings`` is the hint catalogue: configuration keys that usually move the
    category, so a comparison can name the changed one (never guessed by a model).
    """

    name: str
    predicate: Predicate
    reads: tuple[str, ...]
    description: str
    enabled: bool = True
    group: str | None = None
    stage: str | None = None
    hint: str | None = None
    settings: tuple[str, ...] = ()
    # the rule as written in the expression language (None for a Python predicate):
    # what the SQL engines compile
    text: str | None = None
    paths: tuple[str, ...] = ()  # nested field paths it reads (``metadata.failure.category``)
    # the case failed outside the system under test (a provider, quota or judge error): it
    # says nothing about the system, and too many make the run inconclusive
    outside: bool = False
    # the field that names what failed (a metric's name): ``init`` gives each name found in
    # this category a category of its own, so users read their own metrics' names
    split_by: str | None = None


Better = Literal["higher", "lower"]


@dataclass(frozen=True)
class CaseMetric:
    """A per-case quality measure, compared with a baseline case by case.

    ``value(case)`` is a bool or a number, or null where the metric does not apply
    (docs/design.md: such a case leaves the mean's numerator and denominator, it is never
    counted as a vacuous 1.0). ``better`` says which way is an improvement.
    """

    name: str
    value: Callable[[Case], Any]
    reads: tuple[str, ...]
    better: Better = "higher"
    description: str = ""
    settings: tuple[str, ...] = ()
    text: str | None = None  # the value as written (None for Python): what SQL compiles


def metric_number(value: object) -> int | float | None:
    """A case's value of a metric, as every metric counts it: true 1, false 0, a finite
    number itself, null (not applicable) None. Anything else raises ``ValueError``.

    One meaning for taxonomy metrics and ceilings' floors alike (a floor named like a
    taxonomy metric reads that metric).
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return value
    raise ValueError(f"is {_show(value)}; a metric is true/false, a number, or null where it "
                     "does not apply")


@dataclass(frozen=True)
class Taxonomy:
    """A ``failed`` predicate plus categories tried in order; the first match wins.

    ``fallback`` names the category of failed cases no rule matched. Disabled rules
    never match but their category is still counted (as 0), so a report's shape
    does not change when a rule is switched on. Caveats are informational flags
    counted over all cases, never failures.
    """

    name: str
    description: str
    fields: tuple[Field, ...]
    failed: Rule
    categories: tuple[Rule, ...]
    fallback: str
    fallback_description: str = "no rule matched"
    fallback_group: str | None = None
    caveats: tuple[Rule, ...] = ()
    id_fields: tuple[str, ...] = DEFAULT_ID_FIELDS
    # which cases answered substantively: a quality metric's 1.0 elsewhere is vacuous
    substantive: Rule | None = None
    metrics: tuple[CaseMetric, ...] = ()
    source: Path | None = None
    # field paths every case must have: a file without them is not this taxonomy's
    required: tuple[str, ...] = ()
    # a format described in YAML: where a JSON file's cases are (keys from the top), and
    # a pattern whose group `name` (else group 1) is the report's name (drops timestamps)
    records: tuple[str, ...] = ()
    report_name: str | None = None
    field_index: Mapping[str, Field] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        declared = {f.name: f for f in self.fields}
        if len(declared) != len(self.fields):
            raise ValueError(f"taxonomy {self.name}: a field is declared twice")
        # Fields a rule reads without a declaration accept any value, default null.
        reads = [rule.reads for rule in (self.failed, *self.categories, *self.caveats)]
        for names in (*reads, *(metric.reads for metric in self.metrics)):
            for name in names:
                declared.setdefault(name, Field(name))
        for path in self.required:
            declared.setdefault(path.split(".", 1)[0], Field(path.split(".", 1)[0]))
        object.__setattr__(self, "field_index", declared)
        object.__setattr__(self, "fields", tuple(declared.values()))
        seen: set[str] = set()
        for name in [r.name for r in self.categories] + [self.fallback] + [
                c.name for c in self.caveats]:
            if name in seen:
                raise ValueError(f"taxonomy {self.name}: the name '{name}' is used twice")
            if name in RESERVED_NAMES or name.startswith(GROUP_PREFIX):
                raise ValueError(f"taxonomy {self.name}: '{name}' is reserved, not a category")
            seen.add(name)

    def lacks(self, case: Case) -> str | None:
        """The first required field path the case does not have, or ``None``."""
        for path in self.required:
            value: Any = case
            for part in path.split("."):
                if not isinstance(value, Mapping) or part not in value:
                    return path
                value = value[part]
        return None

    @property
    def nested_paths(self) -> tuple[str, ...]:
        """The nested field paths ``failed`` and the categories read, in order."""
        return tuple(dict.fromkeys(path for rule in self.rules for path in rule.paths))

    @property
    def rule_fields(self) -> tuple[str, ...]:
        """The fields ``failed`` and the categories read, in order."""
        return tuple(dict.fromkeys(name for rule in self.rules for name in rule.reads))

    @property
    def category_names(self) -> tuple[str, ...]:
        """Every category in order, the fallback last."""
        return (*(rule.name for rule in self.categories), self.fallback)

    @property
    def outside(self) -> tuple[str, ...]:
        """The categories of cases that failed outside the system under test (``outside``)."""
        return tuple(rule.name for rule in self.categories if rule.outside)

    @property
    def rules(self) -> tuple[Rule, ...]:
        """``failed`` followed by the categories: everything that decides a case."""
        return (self.failed, *self.categories)

    @property
    def groups(self) -> dict[str, tuple[str, ...]]:
        """Group name -> its categories, in order of first appearance."""
        found: dict[str, list[str]] = {}
        for rule in self.categories:
            if rule.group is not None:
                found.setdefault(rule.group, []).append(rule.name)
        if self.fallback_group is not None:
            found.setdefault(self.fallback_group, []).append(self.fallback)
        return {group: tuple(names) for group, names in found.items()}

    def members(self, name: str) -> tuple[str, ...]:
        """The categories a countable name counts: every one for ``total``, a group's for
        ``group:<g>``, else the category itself. The one place these names are expanded."""
        if name == TOTAL:
            return self.category_names
        if name.startswith(GROUP_PREFIX):
            return self.groups[name[len(GROUP_PREFIX):]]
        return (name,)

    def count(self, name: str, counts: Mapping[str, int]) -> int:
        """A countable name's count from per-category counts."""
        return sum(counts.get(category, 0) for category in self.members(name))


    def category(self, name: str) -> Rule | None:
        """The rule of a category (``None`` for the fallback or an unknown name)."""
        return next((rule for rule in self.categories if rule.name == name), None)

    def describe(self, category: str) -> str:
        """The rule behind a category, in words, for failure messages."""
        for position, rule in enumerate(self.categories, start=1):
            if rule.name == category:
                state = "" if rule.enabled else " (disabled)"
                return f"{position} of {len(self.categories) + 1}{state}: {rule.description}"
        return f"fallback: {self.fallback_description}"


def never() -> Predicate:
    """The predicate of a disabled rule."""
    return _never

