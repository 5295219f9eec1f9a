"""First-match classification and the per-category counts of one report.

Besides the counts, a tally keeps what a reviewer needs to trust them: the case
ids in each category, and for every rule how many of the cases it examined
lacked a field it reads (ADR 0059's ``attempt_latency`` was often absent, which
silently turned every comparison query into ``planner_under_decomposition``).
A rule examines a case when the case is failed and no earlier rule matched it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .model import Case, Taxonomy


def classify(taxonomy: Taxonomy, present: Mapping[str, Any]) -> str | None:
    """The category of one case (absent fields at their defaults), or ``None`` if it passed."""
    tallier = Tallier(taxonomy)
    return tallier.add("", present)


@dataclass(frozen=True)
class MissingField:
    """A field a rule reads that was absent from some of the cases the rule examined."""

    rule: str
    field: str
    missing: int
    examined: int
    default: Any


@dataclass
class Tally:
    """Counts per category (every category, zeros included) for one report."""

    taxonomy: Taxonomy
    n_cases: int
    counts: dict[str, int]
    ids: dict[str, list[str]]
    examined: dict[str, int]
    missing: dict[str, dict[str, int]]
    # the first cases of each category with the fields rules read, to show why
    examples: dict[str, list[tuple[str, Case]]] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        return sum(self.counts.values())

    def missing_fields(self) -> list[MissingField]:
        """Every (rule, field) pair with absences, in rule then field order."""
        found = []
        for rule in self.taxonomy.rules:
            for name in rule.reads:
                count = self.missing[rule.name].get(name, 0)
                if count:
                    found.append(
                        MissingField(
                            rule.name, name, count, self.examined[rule.name],
                            self.taxonomy.field_index[name].default,
                        )
                    )
        return found


EXAMPLES = 10  # cases kept per category with their fields


class Tallier:
    """Classifies cases one at a time, so a report never needs to be held in memory."""

    def __init__(self, taxonomy: Taxonomy) -> None:
        self.taxonomy = taxonomy
        self._names = [f.name for f in taxonomy.fields]
        self._defaults = [f.default for f in taxonomy.fields]
        self._bits = {name: 1 << i for i, name in enumerate(self._names)}
        self._rules = [r for r in taxonomy.categories if r.enabled]
        self._failed = taxonomy.failed.predicate
        self._ids: dict[str, list[str]] = {name: [] for name in taxonomy.category_names}
        self._examples: dict[str, list[tuple[str, Case]]] = {
            name: [] for name in taxonomy.category_names}
        # (absent-field mask, 1 + index of the deciding rule, 0 for passed) as one
        # integer -> number of cases; decoded in ``result``
        self._stride = len(self._rules) + 2
        self._category_at = ["", *(r.name for r in self._rules), taxonomy.fallback]
        self._reach: dict[int, int] = {}
        self.n_cases = 0

    def bit(self, name: str) -> int:
        """The bit that marks ``name`` as absent in an ``add_complete`` mask."""
        return self._bits[name]

    def add(self, case_id: str, present: Mapping[str, Any]) -> str | None:
        """Classify one case given the fields it has; returns its category."""
        case = {}
        mask = 0
        for name, default in zip(self._names, self._defaults, strict=True):
            if name in present:
                case[name] = present[name]
            else:
                case[name] = default
                mask |= self._bits[name]
        return self.add_complete(case_id, case, mask)

    def add_complete(self, case_id: str, case: Case, absent: int) -> str | None:
        """Classify a case that already holds every field (defaults for the ``absent`` bits)."""
        return self.record(case_id, self.decide(case), absent, case)

    def decide(self, case: Case) -> int:
        """0 for a passed case, else the 1-based position of the deciding rule
        (one past the last enabled rule for the fallback). Pure, so callers may cache it."""
        if not self._failed(case):
            return 0
        for position, rule in enumerate(self._rules, start=1):
            if rule.predicate(case):
                return position
        return len(self._rules) + 1

    def record(self, case_id: str, decided: int, absent: int, case: Case | None = None
               ) -> str | None:
        """Count a case whose outcome ``decide`` gave; returns its category."""
        self.n_cases += 1
        key = absent * self._stride + decided
        self._reach[key] = self._reach.get(key, 0) + 1
        if not decided:
            return None
        category = self._category_at[decided]
        ids = self._ids[category]
        ids.append(case_id)
        if case is not None and len(ids) <= EXAMPLES:
            self._examples[category].append((case_id, case))
        return category

    def result(self) -> Tally:
        taxonomy = self.taxonomy
        examined = {rule.name: 0 for rule in taxonomy.rules}
        missing: dict[str, dict[str, int]] = {rule.name: {} for rule in taxonomy.rules}
        rule_masks = {
            rule.name: [(name, self._bits[name]) for name in rule.reads]
            for rule in taxonomy.rules
        }
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
        return Tally(
            taxonomy=taxonomy,
            n_cases=self.n_cases,
            counts={name: len(ids) for name, ids in self._ids.items()},
            ids=self._ids,
            examined=examined,
            missing=missing,
            examples=self._examples,
        )
