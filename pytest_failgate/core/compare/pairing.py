"""Pairing two runs: reports by name, cases by id, and what moved between categories.

A case counts as *new* in a category when it is in both runs, in the category now
and not before; *fixed* when the reverse. Only cases present in both runs are
pairs; the others are listed, and a candidate whose cases are mostly absent from
the baseline is an error, because a comparison of different test sets says nothing.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..taxonomy.model import TOTAL

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

    from ..reports.model import Report


@dataclass(frozen=True)
class CategoryChange:
    """One category of one report, before and after."""

    category: str
    base_count: int
    count: int
    new: list[str] = field(default_factory=list)  # candidate order
    fixed: list[str] = field(default_factory=list)  # baseline order
    # the full counts when ``new``/``fixed`` list only the first ids (paired in a SQL engine)
    n_new: int | None = None
    n_fixed: int | None = None

    @property
    def delta(self) -> int:
        return self.count - self.base_count

    @property
    def new_count(self) -> int:
        return len(self.new) if self.n_new is None else self.n_new

    @property
    def fixed_count(self) -> int:
        return len(self.fixed) if self.n_fixed is None else self.n_fixed


@dataclass(frozen=True)
class ReportComparison:
    """A report present in both runs. ``paired`` is false for aggregates (counts only)."""

    name: str
    paired: bool
    changes: list[CategoryChange]
    n_both: int = 0
    only_base: list[str] = field(default_factory=list)
    only_candidate: list[str] = field(default_factory=list)
    n_only_base: int | None = None  # full counts when the lists hold only the first ids
    n_only_candidate: int | None = None

    @property
    def only_base_count(self) -> int:
        return len(self.only_base) if self.n_only_base is None else self.n_only_base

    @property
    def only_candidate_count(self) -> int:
        return (len(self.only_candidate) if self.n_only_candidate is None
                else self.n_only_candidate)

    def change(self, category: str) -> CategoryChange:
        return next(c for c in self.changes if c.category == category)


@dataclass(frozen=True)
class RunComparison:
    reports: list[ReportComparison]
    only_base: list[str]  # report names
    only_candidate: list[str]


def compare_report(base: Report, candidate: Report, categories: Sequence[str],
                   members: Callable[[str], Sequence[str]] | None = None,
                   exclude: Collection[str] = ()) -> ReportComparison:
    """Pair one report's cases by id and list, per name, what entered and left it.

    A name is a category, or (through ``members``) the union of several: ``total``,
    a group. Cases in ``exclude`` (unstable across repeats) are never pairs.
    """
    def of(name: str) -> Sequence[str]:
        return members(name) if members is not None else (name,)

    def count(report: Report, name: str) -> int:
        return sum(report.counts[c] for c in of(name))

    if base.tally is None or candidate.tally is None:
        changes = [CategoryChange(c, count(base, c), count(candidate, c)) for c in categories]
        return ReportComparison(candidate.name, False, changes)
    if base.classified is not None or candidate.classified is not None:
        # read by a SQL engine: the engine pairs the cases by a join (engines.pairing)
        engine = candidate.classified if candidate.classified is not None else base.classified
        comparison: ReportComparison = engine.pair(base, candidate, categories, of)
        return comparison
    base_ids = base.all_case_ids()
    candidate_ids = candidate.all_case_ids()
    base_set, candidate_set = set(base_ids), set(candidate_ids)
    both = base_set & candidate_set
    if 2 * len(both) < len(candidate_ids):
        raise FailgateError(
            f"report '{candidate.name}': only {len(both)} of its {len(candidate_ids)} cases are "
            "in the baseline; a comparison needs the same cases (pairs are matched by id)",
            candidate.path,
        )
    both -= set(exclude)
    changes = []
    for name in categories:
        base_ids_in = [i for c in of(name) for i in base.case_ids(c)]
        candidate_ids_in = [i for c in of(name) for i in candidate.case_ids(c)]
        before = set(base_ids_in) & both
        after = set(candidate_ids_in) & both
        changes.append(CategoryChange(
            name,
            count(base, name),
            count(candidate, name),
            new=[i for i in candidate_ids_in if i in after and i not in before],
            fixed=[i for i in base_ids_in if i in before and i not in after],
        ))
    return ReportComparison(
        candidate.name, True, changes, len(both),
        only_base=[i for i in base_ids if i not in candidate_set],
        only_candidate=[i for i in candidate_ids if i not in base_set],
    )


def compare_runs(base: Sequence[Report], candidate: Sequence[Report], with_total: bool = False,
                 exclude: Collection[str] = ()) -> RunComparison:
    """Pair reports by name; each pair compared case by case, category by category of the
    taxonomy that classified the report (``total`` and the groups too, ``with_total``).

    A run may mix formats, each classified by its own taxonomy: every pair is compared
    under its own. A report classified by another taxonomy in each run (its format, or
    the ceilings' ``taxonomies:``, changed) is an error: its counts cannot be compared.
    """
    base_by_name = {r.name: r for r in base}
    candidate_names = {r.name for r in candidate}
    reports = []
    for report in candidate:
        before = base_by_name.get(report.name)
        if before is None:
            continue
        taxonomy = report.taxonomy
        if before.taxonomy.name != taxonomy.name:
            raise FailgateError(
                f"report '{report.name}' is classified by taxonomy '{taxonomy.name}' here and "
                f"by '{before.taxonomy.name}' in the baseline; counts of different "
                "categories cannot be compared", report.path)
        names = [*taxonomy.category_names, TOTAL] if with_total else taxonomy.category_names
        reports.append(compare_report(before, report, names, taxonomy.members, exclude))
    if not reports:
        raise FailgateError(
            "no report of the candidate run has a counterpart (same name) in the baseline: "
            f"baseline has {', '.join(sorted(base_by_name)) or 'none'}"
        )
    return RunComparison(
        reports,
        only_base=sorted(n for n in base_by_name if n not in candidate_names),
        only_candidate=sorted(n for n in candidate_names if n not in base_by_name),
    )
