"""Correcting the judge with gold labels: the exact test's promises, measured on simulated
judges, run after run.

A run's true categories are drawn at fixed rates; an LLM judge labels every case with
errors (it misses a share of the true failures, fails a share of the passes into a random
category, confuses a share of the failures with another category); people label a random
sample of ``labelled`` cases. Each count is gated as ``--labels`` gates it: the exact
post-stratified one-sided test (``core.stats.poststrat``) of each true count against its
ceiling, Holm over the run's counts at 0.05 (``core.gate.corrected.decide_counts``).

Sections (``--only`` picks some):

- ``power``: labels needed for 80% power at +50% of the largest category (its ceiling at
  the system's expected true count, ``round(N * rate)``), the exact test against labels
  alone (the exact hypergeometric bound from the labelled cases only, ignoring the judge),
  both at the Bonferroni level 0.05 / m of the largest category (Holm only does better).
- ``loop``: the team's loop. ``init --labels`` on an unchanged run writes each ceiling
  (the true count's upper bound, or the rounded-up estimate); then unchanged reruns with
  fresh labels (per-case noise: every case drawn again; day-level noise: the day's rates
  and the judge's harshness drawn again, correlated across the run's cases) are green in
  what share, and a +50% regression of the largest category is caught in what share.
- ``false``: an unchanged system under a harsher judge: the gate's false alarms (a count
  failing though its true count is within its ceiling) against the raw judge's counts.
- ``stratified``: a sample stratified by the judge's label (half the labels on the cases
  the judge put in the category) against a uniform one, single-category run: power at the
  same labels (the test is valid for both: it conditions on each stratum's draws).
- ``gamma``: the Berger-Boos share (gamma = level x share) against power.
- ``speed``: one category at N = 20,000 with 2,000 labels, against the floor of one float
  tail at the observed split (the least an exact test of that sample computes).

    python bench/judge_correction.py --runs 200
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_failgate.core.gate.corrected import INIT_LEVEL, decide_counts
from pytest_failgate.core.stats.poststrat import Sample, StratifiedTest

CATEGORIES = ("a", "b", "c", "d")
BUDGET = Fraction(1, 20)
SHARE = Fraction(1, 10)  # the gate's GAMMA_SHARE


class Scenario:
    """A system's true rates, its judge's errors and the run's size."""

    def __init__(self, name: str, cases: int, rates: tuple[float, ...], miss: float,
                 false_fail: float, confuse: float) -> None:
        self.name, self.cases, self.rates = name, cases, rates
        self.miss, self.false_fail, self.confuse = miss, false_fail, confuse
        self.categories = CATEGORIES[:len(rates)]

    def describe(self) -> str:
        rates = "/".join(f"{r:.1%}" for r in self.rates)
        return (f"{self.name}: {self.cases} cases, rates {rates}; judge misses "
                f"{self.miss:.0%}, fails {self.false_fail:.0%} of passes, confuses "
                f"{self.confuse:.0%}")


SCENARIOS = (
    Scenario("issue", 2000, (0.15, 0.06, 0.03, 0.01), 0.15, 0.02, 0.05),
    Scenario("sloppy judge", 1000, (0.10, 0.05, 0.02, 0.005), 0.25, 0.05, 0.10),
    Scenario("big run, one 5% category", 5000, (0.05,), 0.15, 0.02, 0.05),
)


def simulate(rng: random.Random, s: Scenario, rates: tuple[float, ...] | None = None,
             day: float = 0.0) -> tuple[list[Any], list[Any]]:
    """One run's true categories and the judge's; ``day``: the day-level noise (the day's
    rates and the judge's harshness drawn log-normally with that spread)."""
    rates = rates or s.rates
    false_fail, miss = s.false_fail, s.miss
    if day:
        rates = tuple(r * math.exp(rng.gauss(0, day)) for r in rates)
        false_fail *= math.exp(rng.gauss(0, 3 * day))
        miss = min(0.9, miss * math.exp(rng.gauss(0, 3 * day)))
    gold: list[Any] = []
    for _ in range(s.cases):
        u, acc, chosen = rng.random(), 0.0, None
        for category, rate in zip(s.categories, rates, strict=True):
            acc += rate
            if u < acc:
                chosen = category
                break
        gold.append(chosen)
    return gold, _verdicts(rng, s, gold, false_fail, miss)


def rerun(rng: random.Random, s: Scenario, gold: list[Any], flaky: float, day: float,
          rates: tuple[float, ...] | None = None) -> tuple[list[Any], list[Any]]:
    """The same cases run again: each case's true category drawn again with probability
    ``flaky`` (per-case noise: a nondeterministic system), the rest kept; the judge
    labels every case afresh, its harshness and the flaky cases' rates drawn for the day
    (``day``: day-level noise, correlated across the run's cases); ``rates``: a changed
    system, every case drawn again at them."""
    fresh, judge = simulate(rng, s, rates=rates, day=day)
    if rates is not None:
        return fresh, judge
    kept = [g if rng.random() >= flaky else f for g, f in zip(gold, fresh, strict=True)]
    _, relabelled = _judge(rng, s, kept, day)
    return kept, relabelled


def _judge(rng: random.Random, s: Scenario, gold: list[Any], day: float
           ) -> tuple[list[Any], list[Any]]:
    false_fail, miss = s.false_fail, s.miss
    if day:
        false_fail *= math.exp(rng.gauss(0, 3 * day))
        miss = min(0.9, miss * math.exp(rng.gauss(0, 3 * day)))
    return gold, _verdicts(rng, s, gold, false_fail, miss)


def _verdicts(rng: random.Random, s: Scenario, gold: list[Any], false_fail: float,
              miss: float) -> list[Any]:
    """The judge's category of each case: a passing case failed at ``false_fail``, a
    failing one missed at ``miss``, else confused with another category at ``s.confuse``."""
    judge: list[Any] = []
    for truth in gold:
        if truth is None:
            judge.append(rng.choice(s.categories) if rng.random() < false_fail else None)
        elif rng.random() < miss:
            judge.append(None)
        elif len(s.categories) > 1 and rng.random() < s.confuse:
            judge.append(rng.choice([c for c in s.categories if c != truth]))
        else:
            judge.append(truth)
    return judge


def draw(rng: random.Random, judge: list[Any], size: int, category: str | None = None,
         judged_share: float | None = None) -> list[int]:
    """A uniform sample, or (``judged_share``) one stratified by the judge's label of
    ``category``: that share of the labels among the cases the judge put in it."""
    if judged_share is None:
        return rng.sample(range(len(judge)), size)
    inside = [i for i, j in enumerate(judge) if j == category]
    outside = [i for i, j in enumerate(judge) if j != category]
    n1 = min(len(inside), round(size * judged_share))
    return rng.sample(inside, n1) + rng.sample(outside, size - n1)


def strata(gold: list[Any], judge: list[Any], sample: list[int], category: str) -> Sample:
    count = sum(1 for j in judge if j == category)
    inside = [i for i in sample if judge[i] == category]
    wrong = sum(1 for i in inside if gold[i] != category)
    missed = sum(1 for i in sample if judge[i] != category and gold[i] == category)
    return Sample(len(gold), count, len(inside), len(sample) - len(inside), missed, wrong)


def gate(gold: list[Any], judge: list[Any], sample: list[int], s: Scenario,
         ceilings: dict[str, int]) -> dict[str, Any]:
    """Every category's verdict, as ``--labels`` decides it (Holm at 0.05)."""
    gamma = BUDGET / len(s.categories) * SHARE
    tests = [(StratifiedTest(strata(gold, judge, sample, c), gamma), ceilings[c])
             for c in s.categories]
    return dict(zip(s.categories, decide_counts(tests, BUDGET), strict=True))


def caught_by_test(gold: list[Any], judge: list[Any], sample: list[int], ceiling: int,
                   m: int, share: Fraction = SHARE) -> bool:
    level = BUDGET / m
    test = StratifiedTest(strata(gold, judge, sample, "a"), level * share)
    return test.rejects(ceiling, level)


def caught_by_labels(gold: list[Any], sample: list[int], ceiling: int, m: int) -> bool:
    """Labels alone: the exact hypergeometric lower bound of the count from the labelled
    cases, at one-sided ``0.05 / m`` (the float-filtered bounds of ``poststrat``, each
    decision exact: a sample with no judge stratum has only the one)."""
    seen = sum(1 for i in sample if gold[i] == "a")
    alone = StratifiedTest(Sample(len(gold), 0, 0, len(sample), seen, 0), 4 * BUDGET / m)
    return alone.missed_box[0] > ceiling


def power(s: Scenario, size: int, runs: int, seed: int, method: str,
          judged_share: float | None = None, share: Fraction = SHARE) -> float:
    """The +50% regression of the largest category caught, in ``runs`` seeded runs."""
    rng = random.Random(seed)
    ceiling = round(s.cases * s.rates[0])
    regressed = (s.rates[0] * 1.5, *s.rates[1:])
    m = len(s.categories)
    caught = 0
    for _ in range(runs):
        gold, judge = simulate(rng, s, rates=regressed)
        sample = draw(rng, judge, size, "a", judged_share)
        caught += (caught_by_labels(gold, sample, ceiling, m) if method == "labels" else
                   caught_by_test(gold, judge, sample, ceiling, m, share))
    return caught / runs


def labels_for_power(s: Scenario, runs: int, seed: int, method: str,
                     judged_share: float | None = None, most: int = 1600) -> int | None:
    """The fewest labels (to 10) with at least 80% power: bisection on seeded runs."""
    low, high = 10, min(most, s.cases)
    if power(s, high, runs, seed, method, judged_share) < 0.8:
        return None
    while high - low > 10:
        middle = (low + high) // 20 * 10
        if power(s, middle, runs, seed, method, judged_share) >= 0.8:
            high = middle
        else:
            low = middle
    return high


def loop(s: Scenario, labels: int, runs: int, seed: int, day: float, flaky: float
         ) -> dict[str, float]:
    """init with labels, then an unchanged rerun (the same cases, ``flaky`` of them drawn
    again) and a +50% rerun, each with fresh labels. The ceilings init could write: the
    upper bound at the run's level (``upper``), the rounded-up estimate, and the upper
    bound at one-sided 1/4 (``INIT_LEVEL``, what ``init --labels`` writes)."""
    rng = random.Random(seed)
    regressed = (s.rates[0] * 1.5, *s.rates[1:])
    expected = {c: round(s.cases * r) for c, r in zip(s.categories, s.rates, strict=True)}
    kinds = ("upper", "estimate", "init")
    green = dict.fromkeys(kinds, 0)
    caught = dict.fromkeys(kinds, 0)
    gamma = BUDGET / len(s.categories) * SHARE
    for _ in range(runs):
        gold, judge = simulate(rng, s, day=day)
        sample = draw(rng, judge, labels)
        init = gate(gold, judge, sample, s, expected)
        written = {"upper": {c: k.upper for c, k in init.items()},
                   "estimate": {c: math.ceil(k.estimate) for c, k in init.items()},
                   "init": {c: StratifiedTest(strata(gold, judge, sample, c), gamma
                                              ).upper(INIT_LEVEL) for c in s.categories}}
        again = rerun(rng, s, gold, flaky, day)
        again_sample = draw(rng, again[1], labels)
        worse = rerun(rng, s, gold, flaky, day, rates=regressed)
        worse_sample = draw(rng, worse[1], labels)
        for kind, ceilings in written.items():
            green[kind] += all(k.verdict == "pass" for k in
                               gate(*again, again_sample, s, ceilings).values())
            caught[kind] += gate(*worse, worse_sample, s, ceilings)["a"].verdict == "fail"
    return {f"{kind}: unchanged reruns green": green[kind] / runs for kind in kinds} | {
        f"{kind}: +50% caught": caught[kind] / runs for kind in kinds}


def false_alarms(s: Scenario, labels: int, runs: int, seed: int) -> tuple[float, float]:
    """An unchanged system judged by a harsher judge (4x the false fails), ceilings at the
    expected true counts: runs where a count fails though its true count is within its
    ceiling (the gate's false alarms), and runs the raw judge's counts fail."""
    rng = random.Random(seed)
    harsh = Scenario(s.name, s.cases, s.rates, s.miss, s.false_fail * 4, s.confuse)
    ceilings = {c: round(s.cases * r) for c, r in zip(s.categories, s.rates, strict=True)}
    false = raw = 0
    for _ in range(runs):
        gold, judge = simulate(rng, harsh)
        found = gate(gold, judge, draw(rng, judge, labels), s, ceilings)
        truths = {c: sum(1 for g in gold if g == c) for c in s.categories}
        false += any(k.verdict == "fail" and truths[c] <= ceilings[c]
                     for c, k in found.items())
        raw += any(sum(1 for j in judge if j == c) > ceilings[c] for c in s.categories)
    return false / runs, raw / runs


def speed(repeats: int) -> tuple[float, float]:
    """Median CPU seconds of one category at N = 20,000, 2,000 labels, and of the floor
    (CPU time: the machine may be shared; the floor, timed the same way, scales the same)."""
    sample = Sample(20000, 3000, 300, 1700, 34, 30)
    level = BUDGET / 4
    found, floors = [], []
    for _ in range(repeats):
        started = time.process_time()
        decide_counts([(StratifiedTest(sample, level * SHARE), 3000)], level)
        found.append(time.process_time() - started)
        test = StratifiedTest(sample, level * SHARE)
        started = time.process_time()
        test._float_tail(30, 340, True)  # one tail at the observed split
        floors.append(time.process_time() - started)
    return statistics.median(found), statistics.median(floors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--only", nargs="*", default=["speed", "power", "loop", "false",
                                                       "stratified", "gamma"])
    parser.add_argument("--scenarios", nargs="*", type=int, default=[],
                        help="the power section's scenarios, by index (default: all)")
    args = parser.parse_args()
    if "speed" in args.only:
        found, floor = speed(7)
        print(f"speed: one category, N = 20,000, 2,000 labels: {found * 1000:.1f} ms "
              f"(floor, one float tail: {floor * 1000:.2f} ms)")
    if "power" in args.only:
        for index, s in enumerate(SCENARIOS):
            if args.scenarios and index not in args.scenarios:
                continue
            started = time.process_time()
            test = labels_for_power(s, args.runs, args.seed + index, "test")
            alone = labels_for_power(s, args.runs, args.seed + index, "labels")
            most = min(1600, s.cases)
            print(f"power: {s.describe()}: labels for 80% at +50%: exact test "
                  f"{test if test is not None else f'> {most}'}, "
                  f"labels alone {alone if alone is not None else f'> {most}'} "
                  f"({args.runs} runs a point, {time.process_time() - started:.0f} s)")
    if "loop" in args.only:
        for s, labels in ((SCENARIOS[0], 200), (SCENARIOS[1], 280), (SCENARIOS[1], 400)):
            for day, flaky in ((0.0, 0.0), (0.05, 0.1)):
                started = time.process_time()
                figures = loop(s, labels, args.runs, args.seed, day, flaky)
                shown = ", ".join(f"{k} {v:.1%}" for k, v in figures.items())
                print(f"loop: {s.name}, {labels} labels, day noise {day}, flaky {flaky}: "
                      f"{shown} "
                      f"({args.runs} runs, {time.process_time() - started:.0f} s)")
    if "false" in args.only:
        for s, labels in ((SCENARIOS[0], 200), (SCENARIOS[1], 280), (SCENARIOS[2], 340)):
            false, raw = false_alarms(s, labels, args.runs, args.seed)
            print(f"false alarms: {s.name}, {labels} labels, judge failing 4x the passes: "
                  f"the gate {false:.1%}, the raw judge's counts {raw:.1%}")
    if "stratified" in args.only:
        s = SCENARIOS[2]
        for size in (300, 500):
            uniform = power(s, size, args.runs, args.seed, "test")
            split = {share: power(s, size, args.runs, args.seed, "test", share)
                     for share in (0.3, 0.5)}
            print(f"stratified: {s.name}, {size} labels: uniform {uniform:.1%}, "
                  + ", ".join(f"{share:.0%} on the judge's stratum {value:.1%}"
                              for share, value in split.items()))
    if "gamma" in args.only:
        s = SCENARIOS[1]
        for share in (Fraction(1, 5), Fraction(1, 10), Fraction(1, 20)):
            value = power(s, 280, args.runs, args.seed, "test", share=share)
            print(f"gamma: {s.name}, 280 labels, gamma = level x {share}: +50% caught "
                  f"{value:.1%}")


if __name__ == "__main__":
    main()
