"""Paired mode against a baseline run: the full run's new cases in a category (in it now,
not in the baseline) against its fixed ones, each a confidence sequence over the run; a
fail once the new exceed the fixed by more than the rise allowed, with probability at
most delta when they do not."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from pytest_failgate.core.gate.sequential import SequentialGate, SequentialItem

DELTA = Fraction(1, 20)
PLANNED = 200
NEW, FIXED = 20, 20  # a run with as many new cases as fixed: no rise, not a regression
CEILING_ROOM = SequentialItem("c", frozenset({"c"}), PLANNED)  # the ceiling never decides


def _population(rise: int) -> list[tuple[str | None, str | None]]:
    """(now, baseline) per case: ``NEW + rise`` new, ``FIXED`` fixed, the rest concordant."""
    cases: list[tuple[str | None, str | None]] = [("c", None)] * (NEW + rise)
    cases += [(None, "c")] * FIXED
    return cases + [(None, None)] * (PLANNED - len(cases))


def _paired_fails(rise: int, orders: int, seed: int = 28) -> float:
    """The share of orders the paired gate settles as a fail."""
    rng = random.Random(seed)
    cases = _population(rise)
    failed = 0
    for _ in range(orders):
        rng.shuffle(cases)
        gate = SequentialGate([CEILING_ROOM], PLANNED, DELTA, paired=[
            SequentialItem("c", frozenset({"c"}), 0)])
        settled = next(s for s in (gate.add(now, baseline=base) for now, base in cases)
                       if s is not None)
        failed += settled.verdict == "fail"
    return failed / orders


def _naive_fails(rise: int, orders: int, seed: int = 28) -> float:
    """Peeking at a fixed-n one-sided sign test (exact binomial, 5%) on the discordant
    pairs so far after every case: what a harness without a confidence sequence does."""
    rng = random.Random(seed)
    cases = _population(rise)
    failed = 0
    for _ in range(orders):
        rng.shuffle(cases)
        new = fixed = 0
        for now, base in cases:
            new += now == "c" and base is None
            fixed += base == "c" and now is None
            pairs = new + fixed
            tail = sum(math.comb(pairs, j) for j in range(new, pairs + 1))
            if pairs and tail * 20 <= 2 ** pairs:  # P(Bin(d, 1/2) >= new) <= 5%
                failed += 1
                break
    return failed / orders


@pytest.mark.slow
def test_a_run_without_a_rise_fails_in_at_most_delta_of_the_orders() -> None:
    assert _paired_fails(0, 300) <= DELTA


@pytest.mark.slow
def test_a_run_without_a_rise_fails_in_at_most_delta_of_10000_orders() -> None:
    assert _paired_fails(0, 10_000, seed=29) <= DELTA


def test_negative_control_peeking_at_a_fixed_n_sign_test_fails_it() -> None:
    assert _naive_fails(0, 500) > DELTA


def test_a_broken_run_fails_early_on_the_comparison_alone() -> None:
    """Thirty more new cases than fixed: the ceiling allows them all, the baseline does
    not, and the run fails long before its end."""
    rng = random.Random(7)
    cases = _population(30)
    rng.shuffle(cases)
    gate = SequentialGate([CEILING_ROOM], PLANNED, DELTA,
                          paired=[SequentialItem("c", frozenset({"c"}), 0)])
    settled = next(s for s in (gate.add(now, baseline=base) for now, base in cases)
                   if s is not None)
    assert (settled.verdict, settled.deciding) == ("fail", ("c vs baseline",))
    assert settled.n < PLANNED
    look = next(one for one in settled.items if one.name == "c vs baseline")
    assert look.low > 0


def test_at_the_last_case_the_comparison_is_the_full_runs_exactly() -> None:
    """No rise in a random order: a pass waits for the comparison, which at the last case
    is the run's own count (new minus fixed, exactly 0)."""
    cases = _population(0)
    random.Random(1).shuffle(cases)
    gate = SequentialGate([CEILING_ROOM], PLANNED, DELTA,
                          paired=[SequentialItem("c", frozenset({"c"}), 0)])
    verdicts = [gate.add(now, baseline=base) for now, base in cases]
    settled = verdicts[-1]
    assert settled is not None
    assert verdicts.index(settled) == PLANNED - 1  # not before: a rise of 1 stayed possible
    assert settled.verdict == "pass"
    look = next(one for one in settled.items if one.name == "c vs baseline")
    assert (look.low, look.high, look.count) == (0, 0, 0)
