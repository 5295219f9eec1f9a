"""A baseline comparison computed in the engine: cases paired by a join on their ids.

Two 100M-case runs never leave the warehouse: one query joins the two runs'
(deciding position, id) per case and counts every (before, after) transition;
McNemar's discordant counts per category, group or total (``new`` and
``fixed``) are sums over that small matrix. A second query brings back the
first few ids of each transition, for the messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..compare.pairing import CategoryChange, ReportComparison

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..reports.model import Report

SHOWN = 50  # ids kept per transition


@dataclass(frozen=True)
class Classified:
    """How to select a report's cases again: ``select`` gives (_decided, _id) per case."""

    engine: str
    select: str
    categories: tuple[str, ...]  # deciding position - 1 -> category
    run: Callable[[str], list[tuple[Any, ...]]]  # the engine: a query -> its rows

    def pair(self, base: Report, candidate: Report, names: Sequence[str],
             members: Callable[[str], Sequence[str]]) -> ReportComparison:
        return pair_in_engine(base, candidate, names, members)


def pair_in_engine(base: Report, candidate: Report, names: Sequence[str],
                   members: Callable[[str], Sequence[str]]) -> ReportComparison:
    """The comparison ``compare_report`` makes, from a join in the engine."""
    b, c = base.classified, candidate.classified
    if not (isinstance(b, Classified) and isinstance(c, Classified)) or b.engine != c.engine:
        raise FailgateError(
            f"report '{candidate.name}': the baseline and this run must both be read by the "
            "same SQL engine to be paired case by case", candidate.path)
    joined = (f"WITH b AS ({b.select}), c AS ({c.select}) SELECT b._decided AS bd, "
              f"c._decided AS cd, coalesce(c._id, b._id) AS id FROM b FULL OUTER JOIN c "
              f"ON b._id = c._id")
    try:
        matrix = c.run(f"SELECT bd, cd, count(*) FROM ({joined}) t GROUP BY bd, cd")
        shown = c.run(f"SELECT bd, cd, id FROM (SELECT bd, cd, id, row_number() OVER "
                      f"(PARTITION BY bd, cd ORDER BY id) AS n FROM ({joined}) t) s "
                      f"WHERE n <= {SHOWN} AND (bd IS NULL OR cd IS NULL OR bd <> cd) "
                      f"ORDER BY bd, cd, id")
    except FailgateError:
        raise
    except Exception as exc:
        raise FailgateError(f"pairing with the baseline in {c.engine} stopped: "
                            f"{str(exc).strip().splitlines()[0]}", candidate.path) from None
    ids: dict[tuple[Any, Any], list[str]] = {}
    for bd, cd, case_id in shown:
        ids.setdefault((bd, cd), []).append(str(case_id))

    def category(position: Any, classified: Classified) -> str | None:
        return None if not position else classified.categories[int(position) - 1]

    both = sum(n for bd, cd, n in matrix if bd is not None and cd is not None)
    n_candidate = sum(n for _, cd, n in matrix if cd is not None)
    if 2 * both < n_candidate:
        raise FailgateError(
            f"report '{candidate.name}': only {both} of its {n_candidate} cases are in the "
            "baseline; a comparison needs the same cases (pairs are matched by id)",
            candidate.path)
    changes = []
    for name in names:
        inside = set(members(name))
        new = fixed = 0
        new_ids: list[str] = []
        fixed_ids: list[str] = []
        for bd, cd, n in matrix:
            if bd is None or cd is None:
                continue
            before, after = category(bd, b) in inside, category(cd, c) in inside
            if after and not before:
                new += n
                new_ids += ids.get((bd, cd), [])
            elif before and not after:
                fixed += n
                fixed_ids += ids.get((bd, cd), [])
        changes.append(CategoryChange(
            name, sum(base.counts[m] for m in inside), sum(candidate.counts[m] for m in inside),
            new=sorted(new_ids)[:SHOWN], fixed=sorted(fixed_ids)[:SHOWN], n_new=new,
            n_fixed=fixed))
    only_base = [i for (bd, cd), found in ids.items() if cd is None for i in found]
    only_candidate = [i for (bd, cd), found in ids.items() if bd is None for i in found]
    return ReportComparison(
        candidate.name, True, changes, both,
        only_base=sorted(only_base)[:SHOWN], only_candidate=sorted(only_candidate)[:SHOWN],
        n_only_base=sum(n for _, cd, n in matrix if cd is None),
        n_only_candidate=sum(n for bd, _, n in matrix if bd is None))
