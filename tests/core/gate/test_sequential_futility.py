"""The futility stop: a pass once a regression of ``margin`` cases past every open item's
ceiling is ruled out; such a regression passes early in at most beta of the orders."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.gate.sequential import Futility, SequentialGate, SequentialItem

DELTA = BETA = Fraction(1, 20)
MARGIN = 5
# (categories, planned cases, ceiling of each)
FAMILIES = [(1, 100, 5), (5, 100, 3)]


def _early_passes(m: int, planned: int, ceiling: int, over: int, orders: int,
                  seed: int = 28) -> float:
    """The share of random orders in which a population with the first category ``over``
    cases past its ceiling (the others at theirs) is passed (by futility, or at all)."""
    rng = random.Random(seed)
    items = [SequentialItem(f"c{i}", frozenset({f"c{i}"}), ceiling) for i in range(m)]
    cases: list[str | None] = []
    for i in range(m):
        cases += [f"c{i}"] * (ceiling + (over if i == 0 else 0))
    cases += [None] * (planned - len(cases))
    passed = 0
    for _ in range(orders):
        rng.shuffle(cases)
        gate = SequentialGate(items, planned, DELTA, Futility(BETA, MARGIN))
        settled = next(s for s in map(gate.add, cases) if s is not None)
        passed += settled.verdict == "pass"
    return passed / orders


@pytest.mark.slow
@pytest.mark.parametrize(("m", "planned", "ceiling"), FAMILIES)
def test_a_regression_of_the_margin_passes_in_at_most_beta_of_the_orders(
        m: int, planned: int, ceiling: int) -> None:
    assert _early_passes(m, planned, ceiling, MARGIN, 1000) <= BETA


@pytest.mark.slow
@pytest.mark.parametrize(("m", "planned", "ceiling"), FAMILIES)
def test_a_regression_of_the_margin_passes_in_at_most_beta_of_10000_orders(
        m: int, planned: int, ceiling: int) -> None:
    assert _early_passes(m, planned, ceiling, MARGIN, 10_000, seed=29) <= BETA


@pytest.mark.slow
def test_negative_control_a_regression_smaller_than_the_margin_often_passes() -> None:
    """The trade, and proof the test above can fail: one case past the ceiling (a
    regression the futility stop does not guard against) passes in far more than beta
    of the orders."""
    assert _early_passes(1, 100, 5, 1, 1000) > 4 * BETA


def test_futility_settles_a_clean_run_sooner_and_says_what_its_pass_is_worth() -> None:
    rng = random.Random(3)
    cases: list[str | None] = ["c0"] * 2 + [None] * 98
    rng.shuffle(cases)
    items = [SequentialItem("c0", frozenset({"c0"}), 5)]
    plain = SequentialGate(items, 100, DELTA)
    futile = SequentialGate(items, 100, DELTA, Futility(BETA, MARGIN))
    without = next(s for s in map(plain.add, cases) if s is not None)
    with_futility = next(s for s in map(futile.add, cases) if s is not None)
    assert without.verdict == with_futility.verdict == "pass"
    assert with_futility.n < without.n
    assert without.futility is None
    assert with_futility.futility == Futility(BETA, MARGIN)
    assert with_futility.record().text == (
        f"settled after {with_futility.n} of 100 planned cases: a pass by futility: a "
        "regression of 5 cases past a ceiling would pass this early with probability at "
        "most 5%, a smaller one might")


def test_a_futile_item_still_fails_the_run_when_it_goes_over() -> None:
    """Futility never turns a fail into a pass: an item whose regression was ruled out
    stays gated, and over its ceiling it fails the run."""
    gate = SequentialGate([SequentialItem("c0", frozenset({"c0"}), 1),
                           SequentialItem("c1", frozenset({"c1"}), 30)], 100, DELTA,
                          Futility(BETA, 3))
    for category in ["c1", None, None] * 25:  # c1 near its ceiling: open, not futile
        assert gate.add(category) is None
    assert [look.state for look in gate.looks()] == ["open", "open"]
    assert gate._by_futility == {"c0"}  # c0's regression of 3 is ruled out; c1's is not
    assert gate.add("c0") is None
    settled = gate.add("c0")  # 2 > 1: over, whatever the futility stop ruled out
    assert settled is not None
    assert (settled.verdict, settled.deciding, settled.futility) == ("fail", ("c0",), None)


@pytest.mark.parametrize(("beta", "margin", "message"), [
    (Fraction(0), 5, "beta must lie strictly between 0 and 1"),
    (Fraction(1, 20), 0, "the futility margin must be at least 1 case"),
])
def test_a_bad_futility_is_one_error(beta: Fraction, margin: int, message: str) -> None:
    with pytest.raises(FailgateError, match=message):
        Futility(beta, margin)
