"""The corrected counts (``core.stats.ppi``) against the tests' own reference
(``tests/ppi_reference.py``) on seeded simulations, and their coverage where a normal
interval fails: small categories with few or no disagreements in the sample."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import ppi_reference as reference
import pytest

from pytest_failgate.core.stats.poststrat import Sample, StratifiedTest
from pytest_failgate.core.stats.ppi import correct, lower_bound, upper_bound

CATEGORIES = ("a", "b", "c", "d")


def simulate(rng: random.Random, n_cases: int, rates: tuple[float, ...], miss: float = 0.15,
             false_fail: float = 0.02, confuse: float = 0.05
             ) -> tuple[list[Any], list[Any]]:
    """True categories at ``rates`` (None: passes) and a judge that misses, fails passes
    and confuses categories at the given rates."""
    gold: list[Any] = []
    for _ in range(n_cases):
        u, acc, chosen = rng.random(), 0.0, None
        for category, rate in zip(CATEGORIES, rates, strict=False):
            acc += rate
            if u < acc:
                chosen = category
                break
        gold.append(chosen)
    judge: list[Any] = []
    for truth in gold:
        if truth is None:
            judge.append(rng.choice(CATEGORIES) if rng.random() < false_fail else None)
        elif rng.random() < miss:
            judge.append(None)
        elif rng.random() < confuse:
            judge.append(rng.choice([c for c in CATEGORIES if c != truth]))
        else:
            judge.append(truth)
    return gold, judge


def corrected(n_cases: int, judge: list[Any], gold: dict[int, Any], category: str,
              alpha: Fraction) -> Any:
    """``ppi.correct`` fed from the cases, as the gate feeds it."""
    count = sum(1 for j in judge if j == category)
    inside = [i for i in gold if judge[i] == category]
    wrong = sum(1 for i in inside if gold[i] != category)
    missed = sum(1 for i in gold if judge[i] != category and gold[i] == category)
    return correct(n_cases, count, len(inside), len(gold) - len(inside), missed, wrong, alpha)


def test_the_bounds_are_the_reference_tests_inversion() -> None:
    rng = random.Random(41)
    for _ in range(100):
        population = rng.randint(1, 40)
        draws = rng.randint(0, population)
        observed = rng.randint(0, draws)
        level = rng.choice([Fraction(1, 20), Fraction(1, 80), Fraction(1, 5), Fraction(1, 3)])
        if draws == 0:
            assert (lower_bound(population, 0, 0, level),
                    upper_bound(population, 0, 0, level)) == (0, population)
            continue
        assert (lower_bound(population, draws, observed, level),
                upper_bound(population, draws, observed, level)) == reference.bounds(
            population, draws, observed, level), (population, draws, observed, level)


def test_a_tail_exactly_at_the_level_is_rejected_in_exact_arithmetic() -> None:
    # P[X <= 0] with 30 of 60 successes, 3 drawn: the level equal to it rejects 30
    # (the test keeps a count only when its tail is above the level), 29 is kept
    level = reference.cdf(60, 30, 3, 0)
    assert upper_bound(60, 3, 0, level) == 29
    assert upper_bound(60, 3, 0, level - Fraction(1, 10**30)) == 30


def _strata(n_cases: int, judge: list[Any], gold: dict[int, Any], category: str
            ) -> tuple[int, int, int, int, int]:
    """J, n1, n0, d-, d+ of one category, as the gate counts them."""
    count = sum(1 for j in judge if j == category)
    inside = [i for i in gold if judge[i] == category]
    wrong = sum(1 for i in inside if gold[i] != category)
    missed = sum(1 for i in gold if judge[i] != category and gold[i] == category)
    return count, len(inside), len(gold) - len(inside), wrong, missed


@pytest.mark.parametrize("runs", [
    pytest.param(40, id="quick"), pytest.param(400, id="long", marks=pytest.mark.slow)])
def test_the_exact_test_equals_the_brute_force_reference_on_small_runs(runs: int) -> None:
    # every split in the box and every outcome, in Fractions (tests/ppi_reference.py):
    # small counts, empty strata, labels contradicting the judge, ceilings of 0
    rng = random.Random(19 + runs)
    for _ in range(runs):
        n_cases = rng.randint(3, 14)
        count = rng.randint(0, n_cases)
        n1, n0 = rng.randint(0, count), rng.randint(0, n_cases - count)
        if n1 + n0 == 0:
            continue
        wrong, missed = rng.randint(0, n1), rng.randint(0, n0)
        level = rng.choice([Fraction(1, 20), Fraction(1, 5), Fraction(1, 3)])
        gamma = level / 10
        test = StratifiedTest(Sample(n_cases, count, n1, n0, missed, wrong), gamma)
        case = (n_cases, count, n1, n0, wrong, missed, level)
        assert (test.lower(level), test.upper(level)) == reference.test_bounds(
            n_cases, count, n1, n0, wrong, missed, level, gamma), case
        for ceiling in (0, count, rng.randint(0, n_cases)):
            expected = reference.p_value(n_cases, count, n1, n0, wrong, missed, ceiling,
                                         gamma) <= level
            assert test.rejects(ceiling, level) is expected, (case, ceiling)


def test_a_p_value_exactly_at_the_level_is_decided_in_exact_arithmetic() -> None:
    # a level equal to the reference's p-value rejects (p <= level); a hair below it does
    # not: the float filter hands both to the integers
    rng = random.Random(23)
    decided = 0
    while decided < 12:
        n_cases = rng.randint(6, 14)
        count = rng.randint(1, n_cases - 1)
        n1, n0 = rng.randint(1, count), rng.randint(1, n_cases - count)
        wrong, missed = rng.randint(0, n1), rng.randint(0, n0)
        ceiling = rng.randint(0, n_cases)
        gamma = Fraction(1, 200)
        p = reference.p_value(n_cases, count, n1, n0, wrong, missed, ceiling, gamma)
        if not gamma < p < 1:
            continue
        test = StratifiedTest(Sample(n_cases, count, n1, n0, missed, wrong), gamma)
        assert test.rejects(ceiling, p)
        assert not test.rejects(ceiling, p - Fraction(1, 10**40))
        decided += 1


@pytest.mark.parametrize("runs", [
    pytest.param(12, id="quick"), pytest.param(80, id="long", marks=pytest.mark.slow)])
def test_the_float_filter_decides_as_the_integers_do(runs: int) -> None:
    # seeded runs of hundreds of cases: every bound (each a chain of decisions, the last
    # ones at the boundary of the test) equal with and without the float filter
    rng = random.Random(29 + runs)
    for _ in range(runs):
        n_cases = rng.randint(100, 400)
        gold_all, judge = simulate(rng, n_cases, (0.15, 0.06, 0.03, 0.01), miss=0.25,
                                   false_fail=0.05, confuse=0.1)
        gold = {i: gold_all[i] for i in rng.sample(range(n_cases), rng.randint(30, 90))}
        category = rng.choice(CATEGORIES)
        count, n1, n0, wrong, missed = _strata(n_cases, judge, gold, category)
        level = rng.choice([Fraction(1, 80), Fraction(1, 20)])
        sample = Sample(n_cases, count, n1, n0, missed, wrong)
        fast = StratifiedTest(sample, level / 10)
        exact = StratifiedTest(sample, level / 10, exact=True)
        assert (fast.wrong_box, fast.missed_box) == (exact.wrong_box, exact.missed_box)
        assert (fast.lower(level), fast.upper(level)) == (exact.lower(level),
                                                          exact.upper(level))
        for ceiling in (count, fast.lower(level) - 1, fast.lower(level)):
            assert fast.rejects(ceiling, level) is exact.rejects(ceiling, level)


def test_the_estimate_is_never_negative_and_always_inside_its_interval() -> None:
    rng = random.Random(31)
    for _ in range(200):
        n_cases = rng.randint(40, 400)
        count = rng.randint(0, n_cases)
        n1, n0 = rng.randint(0, min(count, 40)), rng.randint(0, min(n_cases - count, 40))
        if n1 + n0 == 0:
            continue
        wrong, missed = rng.randint(0, n1), rng.randint(0, n0)
        found = correct(n_cases, count, n1, n0, missed, wrong, Fraction(1, 40))
        assert 0 <= found.lower <= found.estimate <= found.upper <= n_cases


def test_a_ceiling_of_0_passes_when_no_labelled_case_is_in_it_and_fails_on_one() -> None:
    # 600 cases, 300 labelled, the judge finds none
    assert correct(600, 0, 0, 300, 0, 0, Fraction(1, 80), ceiling=0).verdict == "pass"
    found = correct(600, 0, 0, 300, 1, 0, Fraction(1, 80), ceiling=0)
    assert found.verdict == "fail"
    assert found.lower >= 1


def test_labels_agreeing_with_the_judge_pass_the_ceiling_at_its_count() -> None:
    # the run the ceiling came from, 200 of 600 labelled, every label the judge's: the
    # labels do not show the true count over it (the interval holds it both sides)
    found = correct(600, 90, 30, 170, 0, 0, Fraction(1, 80), ceiling=90)
    assert found.verdict == "pass"
    assert found.lower <= 90 <= found.upper
    assert found.caught is not None
    assert found.caught > 90


def test_the_largest_category_at_20000_cases_and_2000_labels_takes_under_50_ms() -> None:
    import time

    sample = Sample(20000, 3000, 300, 1700, 34, 30)
    started = time.perf_counter()
    correct(20000, 3000, 300, 1700, 34, 30, Fraction(1, 80), ceiling=3000)
    elapsed = time.perf_counter() - started
    assert StratifiedTest(sample, Fraction(1, 800)).lower(Fraction(1, 80)) <= 3000
    assert elapsed < 0.5  # a tenth of the budget's pace on a loaded machine (bench: 50 ms)


def _coverage(rates: tuple[float, ...], category: str, alpha: Fraction, runs: int,
              n_cases: int = 1000, labelled: int = 100, seed: int = 3
              ) -> tuple[float, float]:
    """How often the exact and the normal interval hold the true count."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - float(alpha) / 2)
    rng = random.Random(seed)
    exact = normal = 0
    for _ in range(runs):
        gold_all, judge = simulate(rng, n_cases, rates)
        gold = {i: gold_all[i] for i in rng.sample(range(n_cases), labelled)}
        true = sum(1 for g in gold_all if g == category)
        found = corrected(n_cases, judge, gold, category, alpha / 2)  # a side each
        exact += found.lower <= true <= found.upper
        low, high = reference.normal_interval(n_cases, judge, gold, category, z)
        normal += low <= true <= high
    return exact / runs, normal / runs


def test_a_small_category_is_covered_where_the_normal_interval_is_not() -> None:
    # a 1% category among 1,000 cases, 100 labels: most samples hold no disagreement,
    # and the normal interval collapses onto the judge's count
    exact, normal = _coverage((0.15, 0.06, 0.03, 0.01), "d", Fraction(1, 5), runs=300)
    assert exact >= 0.8
    assert normal < 0.8  # the reference's plain interval misses: the test can tell


@pytest.mark.parametrize("rates", [(0.15, 0.06, 0.03, 0.01), (0.02, 0.005, 0.3, 0.0)])
def test_all_four_intervals_hold_together_at_the_run_budget(rates: tuple[float, ...]) -> None:
    rng = random.Random(11)
    runs, held = 150, 0
    alpha = Fraction(1, 20) / len(CATEGORIES) / 2  # a side each
    for _ in range(runs):
        gold_all, judge = simulate(rng, 800, rates, miss=0.25, false_fail=0.05)
        gold = {i: gold_all[i] for i in rng.sample(range(800), 60)}
        held += all(
            (found := corrected(800, judge, gold, c, alpha)).lower
            <= sum(1 for g in gold_all if g == c) <= found.upper for c in CATEGORIES)
    assert held / runs >= 0.95


def test_the_estimate_is_unbiased_where_the_judge_count_is_not() -> None:
    rng = random.Random(5)
    runs, n_cases = 300, 600
    bias = judge_bias = Fraction(0)
    for _ in range(runs):
        gold_all, judge = simulate(rng, n_cases, (0.15, 0.06, 0.03, 0.01))
        gold = {i: gold_all[i] for i in rng.sample(range(n_cases), 60)}
        true = sum(1 for g in gold_all if g == "a")
        bias += corrected(n_cases, judge, gold, "a", Fraction(1, 20)).estimate - true
        judge_bias += sum(1 for j in judge if j == "a") - true
    # the judge misses 15% and confuses 5% of a's 90 cases: about -14 each run
    assert judge_bias / runs < -10
    assert abs(bias / runs) < 3


def test_a_sample_that_is_the_whole_run_gives_the_true_count() -> None:
    rng = random.Random(2)
    gold_all, judge = simulate(rng, 60, (0.3, 0.1, 0.05, 0.05))
    gold = dict(enumerate(gold_all))
    for category in CATEGORIES:
        true = sum(1 for g in gold_all if g == category)
        found = corrected(60, judge, gold, category, Fraction(1, 20))
        assert found.lower == found.upper == found.estimate == true


def test_counts_outside_the_run_are_refused() -> None:
    with pytest.raises(ValueError, match="sample"):
        correct(10, 11, 0, 5, 0, 0, Fraction(1, 20))
    with pytest.raises(ValueError, match="stratum"):
        correct(10, 2, 3, 2, 0, 0, Fraction(1, 20))


def test_holm_fails_a_second_count_that_bonferroni_would_pass() -> None:
    from pytest_failgate.core.gate.corrected import decide_counts

    alpha = Fraction(1, 20)
    gamma = alpha / 2 / 10
    rng = random.Random(37)
    borderline = None
    while borderline is None:  # a count the test fails at alpha, not at alpha / 2
        n_cases = rng.randint(200, 400)
        count = rng.randint(20, 60)
        sample = Sample(n_cases, count, rng.randint(5, 20), rng.randint(40, 80),
                        rng.randint(0, 6), 0)
        test = StratifiedTest(sample, gamma)
        for ceiling in range(count, count + 80):
            if test.rejects(ceiling, alpha) and not test.rejects(ceiling, alpha / 2):
                borderline = (test, ceiling)
                break
    clear = (StratifiedTest(Sample(400, 10, 10, 100, 30, 0), gamma), 10)  # 30 misses of 100
    found = decide_counts([clear, borderline], alpha)
    assert [k.verdict for k in found] == ["fail", "fail"]
    assert found[1].lower > borderline[1]  # its bound at the level it was decided at
    alone = decide_counts([borderline, (StratifiedTest(Sample(400, 10, 10, 100, 0, 0),
                                                       gamma), 400)], alpha)
    assert [k.verdict for k in alone] == ["pass", "pass"]  # nothing else fails: alpha / 2


@pytest.mark.parametrize(("n_cases", "count", "n1", "n0", "wrong", "missed"), [
    pytest.param(12, 4, 0, 6, 0, 2, id="no-label-in-the-judges-stratum"),
    pytest.param(12, 4, 3, 0, 1, 0, id="no-label-outside-it"),
    pytest.param(12, 5, 4, 5, 4, 5, id="every-label-contradicts-the-judge"),
    pytest.param(12, 0, 0, 8, 0, 0, id="judge-finds-none-labels-agree"),
    pytest.param(12, 0, 0, 8, 0, 1, id="judge-finds-none-one-label-in-it"),
    pytest.param(10, 10, 6, 0, 0, 0, id="every-case-in-the-judges-stratum"),
])
def test_edge_samples_equal_the_reference_with_a_ceiling_of_0(
        n_cases: int, count: int, n1: int, n0: int, wrong: int, missed: int) -> None:
    level = Fraction(1, 10)
    gamma = level / 10
    test = StratifiedTest(Sample(n_cases, count, n1, n0, missed, wrong), gamma)
    assert (test.lower(level), test.upper(level)) == reference.test_bounds(
        n_cases, count, n1, n0, wrong, missed, level, gamma)
    for ceiling in (0, count):
        assert test.rejects(ceiling, level) is (reference.p_value(
            n_cases, count, n1, n0, wrong, missed, ceiling, gamma) <= level)
    found = correct(n_cases, count, n1, n0, missed, wrong, level, ceiling=0)
    assert 0 <= found.lower <= found.estimate <= found.upper
