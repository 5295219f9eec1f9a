"""A run's plan: the random order of its cases, drawn from a seed, and checked to be it.

The sequential gate's guarantee assumes the cases run in a uniformly random order fixed
before any outcome is seen. A plan states that order and the seed it was drawn with, and
the order is a function of the seed and the set of case ids alone (the ids are sorted
before they are shuffled, so neither the dataset's order nor a reader's changes it). So a
plan is evidence anyone can check: ``verify`` draws the seed's order over the plan's cases
again and refuses a plan whose order is not it (reordered by hand, passing cases first,
with the seed kept), naming the first place they differ.

Pure: no files, no clock; ``commands.sequential`` reads and writes plans.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.errors import FailgateError
from .sequential import quoted

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

# /2: the order is drawn over the sorted ids (so it can be checked); a /1 plan's order
# depended on its dataset's order, which the plan does not hold, and cannot be checked
PLAN_FORMAT = "failgate-plan/2"


@dataclass(frozen=True)
class Plan:
    """The planned order of a run's cases and the seed it was drawn with."""

    ids: tuple[str, ...]
    seed: int
    source: str
    strata: tuple[str, ...] | None = None  # each planned case's stratum (--strata)
    field: str | None = None  # the case field the strata are the values of
    id_field: str | None = None  # where the ids came from, in words (``plan`` says it)


def drawn_order(ids: Sequence[str], seed: int, of: Mapping[str, str] | None = None
                ) -> list[str]:
    """The order ``seed`` draws over the case set ``ids`` (whatever order they are given
    in): one shuffle of the sorted ids, or with strata (``of``: id -> stratum) a shuffle
    within each stratum and the strata interleaved in proportion (``stratified_order``)."""
    rng = random.Random(seed)
    canonical = sorted(ids)
    if of is None:
        rng.shuffle(canonical)
        return canonical
    return stratified_order(canonical, of, rng)


def stratified_order(ids: Sequence[str], of: Mapping[str, str], rng: random.Random
                     ) -> list[str]:
    """``ids`` permuted within each stratum (``of``: id -> stratum) and the strata
    interleaved in proportion: the ``k``-th of a stratum of ``s`` cases at ``(k + 1/2) / s``
    of the run (ties in the strata's sorted order)."""
    groups: dict[str, list[str]] = {}
    for case_id in ids:
        groups.setdefault(of[case_id], []).append(case_id)
    placed = []
    for rank, (_, members) in enumerate(sorted(groups.items())):
        rng.shuffle(members)
        size = len(members)
        placed += [(Fraction(2 * k + 1, 2 * size), rank, case_id)
                   for k, case_id in enumerate(members)]
    return [case_id for _, _, case_id in sorted(placed)]


def draw(ids: Sequence[str], seed: int, source: str, of: Mapping[str, str] | None = None,
         field: str | None = None, id_field: str | None = None) -> Plan:
    """The plan ``seed`` draws over the case set ``ids`` (with strata: ``of`` and the
    ``field`` they are the values of)."""
    duplicated = len(ids) - len(set(ids))
    if duplicated:
        raise FailgateError(
            f"{duplicated} case ids appear more than once; a plan orders distinct cases")
    order = drawn_order(ids, seed, of)
    strata = None if of is None else tuple(of[case_id] for case_id in order)
    return Plan(tuple(order), seed, source, strata, field, id_field)


def verify(plan: Plan, path: Path | None = None) -> None:
    """Refuse a plan whose order is not the one its seed draws over its cases: the first
    place they differ, named."""
    of = None if plan.strata is None else dict(zip(plan.ids, plan.strata, strict=True))
    expected = drawn_order(plan.ids, plan.seed, of)
    if list(plan.ids) == expected:
        return
    place = next(i for i, (one, other) in enumerate(zip(plan.ids, expected, strict=True))
                 if one != other)
    raise FailgateError(
        f"the plan's order is not the one its seed {plan.seed} draws over its "
        f"{len(plan.ids)} cases: case {place + 1} is {quoted(plan.ids[place])} where the "
        f"seed draws {quoted(expected[place])}; an order chosen by hand is not a random "
        "one (draw it with `failgate plan`)", path)


def to_document(plan: Plan) -> dict[str, Any]:
    """The plan as JSON (``failgate plan --out``)."""
    document: dict[str, Any] = {"format": PLAN_FORMAT, "seed": plan.seed,
                                "source": plan.source}
    if plan.id_field is not None:
        document["ids"] = plan.id_field
    document["cases"] = list(plan.ids)
    if plan.strata is not None:
        document["strata"] = {"field": plan.field, "of": list(plan.strata)}
    return document


def from_document(document: Any, path: Path | None = None) -> Plan:
    """A plan from its JSON, checked in shape and verified (``verify``)."""
    if isinstance(document, dict) and document.get("format") == "failgate-plan/1":
        raise FailgateError("a plan drawn by an earlier failgate, whose order cannot be "
                            "checked against its seed: draw it again with `failgate plan`", path)
    if not isinstance(document, dict) or document.get("format") != PLAN_FORMAT:
        raise FailgateError(f"not a plan: `failgate plan` writes one (format {PLAN_FORMAT})",
                            path)
    ids, seed = document.get("cases"), document.get("seed")
    if (not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids)
            or type(seed) is not int):
        raise FailgateError(
            "a plan needs a non-empty list of case ids (cases) and an integer seed", path)
    if len(set(ids)) != len(ids):
        raise FailgateError("the plan lists a case more than once", path)
    id_field = document.get("ids")
    id_field = id_field if isinstance(id_field, str) else None
    strata = document.get("strata")
    plan = Plan(tuple(ids), seed, str(document.get("source", "")), id_field=id_field)
    if strata is not None:
        of = strata.get("of") if isinstance(strata, dict) else None
        field_name = strata.get("field") if isinstance(strata, dict) else None
        if (not isinstance(of, list) or len(of) != len(ids)
                or not all(isinstance(s, str) for s in of) or not isinstance(field_name, str)):
            raise FailgateError(
                "a plan's strata need a field and a stratum (a string) for each case", path)
        plan = Plan(tuple(ids), seed, plan.source, tuple(of), field_name, id_field)
    verify(plan, path)
    return plan
