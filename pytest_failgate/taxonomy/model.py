"""What a taxonomy is: the fields it reads, a ``failed`` predicate, ordered rules.

A taxonomy is data plus small predicates. Declaring the fields each rule reads is
what lets readers decode only those fields of a large report, lets failgate say
how often a field a rule depends on was absent, and lets a mistyped value be an
error that names the case instead of a silent misclassification.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["bool", "number", "string", "array", "object", "null"]
Case = Mapping[str, Any]
Predicate = Callable[[Case], bool]

RESERVED_NAMES = frozenset({"total", "consistency"})
DEFAULT_ID_FIELDS = ("id", "case_id", "question_id", "sample_id")

_KIND_WORDS: dict[str, str] = {
    "bool": "true or false",
    "number": "a number",
    "string": "a string",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


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
    """A case field a taxonomy reads: the JSON kinds it accepts and its value when absent."""

    name: str
    kinds: frozenset[Kind]
    default: Any = None
    item_kinds: frozenset[Kind] | None = None  # for arrays whose items a rule hashes or compares
    note: str = ""

    def problem(self, value: object) -> str | None:
        """Why ``value`` is not acceptable for this field, or ``None`` when it is."""
        kind = kind_of(value)
        if kind not in self.kinds:
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
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class Rule:
    """One named predicate over a case, with the fields it reads and its meaning in words."""

    name: str
    predicate: Predicate
    reads: tuple[str, ...]
    description: str
    enabled: bool = True


@dataclass(frozen=True)
class Taxonomy:
    """A ``failed`` predicate plus categories tried in order; the first match wins.

    ``fallback`` names the category of failed cases no rule matched. Disabled rules
    never match but their category is still counted (as 0), so a report's shape
    does not change when a rule is switched on.
    """

    name: str
    description: str
    fields: tuple[Field, ...]
    failed: Rule
    categories: tuple[Rule, ...]
    fallback: str
    fallback_description: str = "no rule matched"
    id_fields: tuple[str, ...] = DEFAULT_ID_FIELDS
    field_index: Mapping[str, Field] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index = {f.name: f for f in self.fields}
        if len(index) != len(self.fields):
            raise ValueError(f"taxonomy {self.name}: a field is declared twice")
        object.__setattr__(self, "field_index", index)
        names = [rule.name for rule in self.categories] + [self.fallback]
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise ValueError(f"taxonomy {self.name}: category '{name}' is declared twice")
            if name in RESERVED_NAMES:
                raise ValueError(f"taxonomy {self.name}: '{name}' is reserved, not a category")
            seen.add(name)
        for rule in (self.failed, *self.categories):
            unknown = [f for f in rule.reads if f not in index]
            if unknown:
                raise ValueError(
                    f"taxonomy {self.name}: rule '{rule.name}' reads undeclared field(s) "
                    + ", ".join(unknown)
                )

    @property
    def category_names(self) -> tuple[str, ...]:
        """Every category in order, the fallback last."""
        return (*(rule.name for rule in self.categories), self.fallback)

    @property
    def rules(self) -> tuple[Rule, ...]:
        """``failed`` followed by the categories: everything that reads fields."""
        return (self.failed, *self.categories)

    def describe(self, category: str) -> str:
        """The rule behind a category, in words, for failure messages."""
        for position, rule in enumerate(self.categories, start=1):
            if rule.name == category:
                state = "" if rule.enabled else " (disabled)"
                return f"{position} of {len(self.categories) + 1}{state}: {rule.description}"
        return f"fallback: {self.fallback_description}"
