"""Strata: a plan permuted within each stratum is gated with a confidence sequence per
stratum, valid whatever the order the strata come in."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.gate.sequential import SequentialGate, SequentialItem

DELTA = Fraction(1, 20)
SIZES = (60, 40)  # stratum 0: every case passes; stratum 1: every failure
CEILING = 10


def _disagreements(over: bool, orders: int, stratified: bool, seed: int = 28) -> float:
    """The share of orders whose early verdict differs from the full run's: each stratum
    in a random order, stratum 0 entirely before stratum 1 (the worst interleaving for a
    gate that took the whole as one random order)."""
    rng = random.Random(seed)
    items = [SequentialItem("c", frozenset({"c"}), CEILING)]
    failures = CEILING + over
    first: list[str | None] = [None] * SIZES[0]
    second: list[str | None] = ["c"] * failures + [None] * (SIZES[1] - failures)
    differed = 0
    for _ in range(orders):
        rng.shuffle(second)
        gate = SequentialGate(items, sum(SIZES), DELTA,
                              strata=list(SIZES) if stratified else None)
        cases = [(c, 0) for c in first] + [(c, 1) for c in second]
        settled = next(s for s in (gate.add(c, k if stratified else 0) for c, k in cases)
                       if s is not None)
        differed += settled.verdict != ("fail" if over else "pass")
    return differed / orders


@pytest.mark.slow
@pytest.mark.parametrize("over", [False, True], ids=["at-ceiling", "one-over"])
def test_a_stratified_plan_settles_on_the_full_runs_verdict_but_with_probability_delta(
        over: bool) -> None:
    assert _disagreements(over, 500, stratified=True) <= DELTA


@pytest.mark.slow
@pytest.mark.parametrize("over", [False, True], ids=["at-ceiling", "one-over"])
def test_a_stratified_plan_over_10000_orders(over: bool) -> None:
    assert _disagreements(over, 10_000, stratified=True, seed=29) <= DELTA


def test_negative_control_one_sequence_over_a_stratified_plan_is_wrong_far_too_often() -> None:
    """The same orders gated as one uniformly random order: the passing stratum first
    makes a run one case over its ceiling look clean, so the test above can fail."""
    assert _disagreements(True, 200, stratified=False) > 4 * DELTA


def test_strata_must_add_up_to_the_planned_cases() -> None:
    items = [SequentialItem("c", frozenset({"c"}), 1)]
    with pytest.raises(FailgateError, match="must be positive and add up to the 10 planned"):
        SequentialGate(items, 10, strata=[4, 5])
