"""The confidence sequence for a full-run count: its pmfs, its martingale, its interval."""

from __future__ import annotations

import math
import random

import pytest
import scipy.stats  # type: ignore[import-untyped, unused-ignore]

from pytest_failgate.core.stats.sequential import (
    CountSequence,
    hypergeometric_mode,
    log_betabinomial,
    log_hypergeometric,
)


def _close(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize(("s", "n", "a", "b"), [(0, 1, 1.0, 1.0), (3, 10, 0.5, 2.0),
                                                (40, 100, 2.0, 7.5), (100, 100, 1.0, 3.0)])
def test_the_beta_binomial_log_pmf_is_scipys(s: int, n: int, a: float, b: float) -> None:
    assert _close(log_betabinomial(s, n, a, b), scipy.stats.betabinom.logpmf(s, n, a, b))


@pytest.mark.parametrize(("s", "population", "marked", "n"),
                         [(0, 10, 0, 3), (2, 10, 4, 5), (30, 1000, 100, 200), (5, 5, 5, 5)])
def test_the_hypergeometric_log_pmf_is_scipys(s: int, population: int, marked: int,
                                              n: int) -> None:
    assert _close(log_hypergeometric(s, population, marked, n),
                  scipy.stats.hypergeom.logpmf(s, population, marked, n))


def test_an_impossible_draw_has_log_probability_minus_infinity() -> None:
    assert log_hypergeometric(3, 10, 2, 5) == -math.inf  # 3 marked of only 2
    assert log_hypergeometric(0, 10, 9, 5) == -math.inf  # 5 unmarked of only 1


def test_the_beta_binomial_prior_mixes_the_hypergeometric_into_the_polya_marginal() -> None:
    """What makes ``M_n`` a likelihood ratio: mixing ``Hypergeom(s; N, C, n)`` over ``C ~
    BetaBin(N, a, b)`` gives ``BetaBin(s; n, a, b)``."""
    population, a, b = 30, 1.5, 4.0
    for n in (1, 7, 30):
        for s in range(n + 1):
            mixed = sum(math.exp(log_betabinomial(c, population, a, b)
                                 + log_hypergeometric(s, population, c, n))
                        for c in range(population + 1))
            assert _close(mixed, math.exp(log_betabinomial(s, n, a, b)))


def test_the_mixture_ratio_is_a_test_supermartingale_under_the_true_count() -> None:
    """``E[M_{n+1}(C) | first n] = M_n(C)`` while both next cases are possible under ``C``
    (the next is in the category with probability ``(C - s) / (N - n)``); when only one
    is, the mixture's mass on the impossible one is lost and the mean falls: a test
    supermartingale either way, which is all Ville's inequality needs."""
    population, a, b = 12, 1.0, 2.0
    falls = 0
    for count in range(population + 1):
        for n in range(population):
            for s in range(max(0, n - (population - count)), min(n, count) + 1):
                now = CountSequence(population, 0.05, a, b, n=n, s=s)
                marked, unmarked = (CountSequence(population, 0.05, a, b, n=n + 1, s=s + k)
                                    for k in (1, 0))
                p_marked = (count - s) / (population - n)
                expected = sum(p * math.exp(seq.log_martingale(count))
                               for p, seq in ((p_marked, marked), (1 - p_marked, unmarked))
                               if p > 0)
                current = math.exp(now.log_martingale(count))
                if 0 < p_marked < 1:
                    assert _close(expected, current)
                else:
                    assert expected < current
                    falls += 1
    assert falls  # the boundary cases were reached


@pytest.mark.parametrize(("s", "n", "population"), [(0, 5, 20), (3, 5, 20), (5, 5, 20),
                                                    (1, 100, 1000), (37, 400, 1000)])
def test_the_mode_is_the_count_that_makes_the_prefix_most_likely(s: int, n: int,
                                                                 population: int) -> None:
    likelihoods = {c: log_hypergeometric(s, population, c, n) for c in range(population + 1)}
    best = max(likelihoods.values())
    assert _close(likelihoods[hypergeometric_mode(s, population, n)], best)


def test_the_interval_is_the_running_intersection_of_the_mixture_sets() -> None:
    """Against a scan of every count: the interval holds exactly the counts whose
    martingale stayed under ``1/alpha`` at every look (up to rounding at the edge)."""
    rng = random.Random(7)
    for _ in range(60):
        population = rng.randint(1, 80)
        count = rng.randint(0, population)
        order = [1] * count + [0] * (population - count)
        rng.shuffle(order)
        sequence = CountSequence(population, rng.choice([0.01, 0.1, 0.5]),
                                 rng.choice([0.5, 1.0, 3.0]), rng.choice([1.0, 8.0]))
        threshold = -math.log(sequence.alpha)
        alive = set(range(population + 1))
        for case in order:
            sequence.add(bool(case))
            alive = {c for c in alive if sequence.log_martingale(c) < threshold - 1e-9
                     or (sequence.low <= c <= sequence.high
                         and sequence.log_martingale(c) < threshold + 1e-9)}
            if not alive:
                break  # the sequence missed: the certain range takes over, tested below
            assert (sequence.low, sequence.high) == (min(alive), max(alive))


def test_after_the_last_case_the_interval_is_the_count() -> None:
    rng = random.Random(3)
    for population in (1, 2, 50, 300):
        count = rng.randint(0, population)
        order = [True] * count + [False] * (population - count)
        rng.shuffle(order)
        sequence = CountSequence(population, 0.05)
        for case in order:
            sequence.add(case)
            assert sequence.s <= sequence.low <= sequence.high <= sequence.s + sequence.remaining
        assert (sequence.low, sequence.high) == (count, count)


def test_the_interval_covers_the_count_at_every_look_in_at_least_1_minus_alpha() -> None:
    rng = random.Random(11)
    population, count, alpha, orders = 100, 20, 0.1, 400
    order = [True] * count + [False] * (population - count)
    missed = 0
    for _ in range(orders):
        rng.shuffle(order)
        sequence = CountSequence(population, alpha)
        for case in order:
            sequence.add(case)
            if not sequence.low <= count <= sequence.high:
                missed += 1
                break
    assert missed <= alpha * orders


def test_more_cases_than_the_population_are_refused() -> None:
    sequence = CountSequence(1, 0.05)
    sequence.add(True)
    with pytest.raises(ValueError, match="more than the 1 planned cases"):
        sequence.add(False)


@pytest.mark.parametrize(("population", "alpha", "message"), [
    (0, 0.05, "at least one case"), (10, 0.0, "strictly between"), (10, 1.0, "strictly between")])
def test_a_sequence_needs_cases_and_a_level_strictly_inside_0_and_1(population: int,
                                                                    alpha: float,
                                                                    message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CountSequence(population, alpha)


def test_advance_is_add_case_after_case_at_every_bound() -> None:
    """``CountSequence.advance`` (the bulk gate's) and ``add`` (one case a call) write out
    the same narrowing step: after every case the same interval, on sequences that settle,
    that miss (a level near 1 empties the set: the certain range is kept) and that run to
    the last case; ``advance`` stops after the first case that crosses its limit."""
    rng = random.Random(5)
    for _ in range(60):
        population = rng.choice([1, 7, 60, 400])
        alpha = rng.choice([0.05, 1e-6, 0.999])
        prior = (rng.choice([0.5, 1.0, 7.5]), rng.choice([0.5, 2.0, 12.5]))
        rate = rng.random()
        marks = [rng.random() < rate for _ in range(population)]
        one = CountSequence(population, alpha, *prior)
        bulk = CountSequence(population, alpha, *prior)
        step = rng.randint(1, 9)
        for at in range(0, population, step):
            chunk = marks[at:at + step]
            expected = []
            for marked in chunk:
                one.add(marked)
                expected.append((one.n, one.s, one.low, one.high))
            got = []
            for marked in chunk:  # one at a time here: each bound seen
                assert bulk.advance([marked]) == 1
                got.append((bulk.n, bulk.s, bulk.low, bulk.high))
            assert got == expected
        limit = rng.randint(0, population)
        fresh = CountSequence(population, alpha, *prior)
        added = fresh.advance(marks, limit)
        reference = CountSequence(population, alpha, *prior)
        crossed_at = population
        for index, marked in enumerate(marks):
            reference.add(marked)
            if (reference.low > limit, reference.high <= limit) != (False, population <= limit):
                crossed_at = index + 1
                break
        assert added == crossed_at
        assert (fresh.low, fresh.high, fresh.n) == (reference.low, reference.high, reference.n)
