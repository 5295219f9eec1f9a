"""Correcting the judge with gold labels: the gate's promises on simulated judges.

A run's true categories are drawn at fixed rates; an LLM judge labels every case with
errors (it misses a share of the true failures, fails a share of the passes into a random
category, and confuses a share of the failures with another category); people label a
uniform random sample of ``labelled`` cases. Each count is then gated as ``--labels`` gates
it: the corrected count's exact interval (``core.stats.ppi.correct``) at ``0.05 / m`` for
the ``m`` gated categories, failing above the ceiling, passing within it, inconclusive
between (``core.gate.corrected.verdict``). The ceilings are the system's expected true
counts (``round(N * rate)``): an unchanged system sits at its ceilings.

Per scenario, over ``--runs`` runs each:

- **joint coverage**: every category's interval holds its true count;
- **harsher judge, unchanged system**: the judge fails 4x as many passes; runs failed
  (the gate must fail at most 5%), runs inconclusive, and runs the raw judge's counts fail;
- **+50% regression** of the largest category, other rates unchanged: runs failed;
- the **plain normal interval**'s coverage of the smallest category, and the regressions
  it catches, for comparison (what an interval that is not valid at small counts buys).

The first scenario is the issue's (2,000 cases; rates 15%, 6%, 3%, 1%; the judge misses
15%, fails 2% of passes, confuses 5%; 200 labels); the others are held out: other judges,
rates and sample sizes; the last shows where labels do not pay (too few for the judge's
error: the normal interval, invalid as it is, catches little more). ``--power`` adds the
regression caught by sample size.

    python bench/judge_correction.py --runs 1000 --power
"""

from __future__ import annotations

import argparse
import math
import random
import time
from fractions import Fraction
from statistics import NormalDist
from typing import Any

from pytest_failgate.core.gate.corrected import verdict
from pytest_failgate.core.stats.ppi import correct

CATEGORIES = ("a", "b", "c", "d")
BUDGET = Fraction(1, 20)


class Scenario:
    """A system's true rates, its judge's errors, the run's size and the labels."""

    def __init__(self, name: str, cases: int, rates: tuple[float, ...], miss: float,
                 false_fail: float, confuse: float, labelled: int) -> None:
        self.name, self.cases, self.rates = name, cases, rates
        self.miss, self.false_fail, self.confuse = miss, false_fail, confuse
        self.labelled = labelled

    def describe(self) -> str:
        rates = ", ".join(f"{r:.1%}" for r in self.rates)
        return (f"{self.name}: {self.cases} cases, rates {rates}; judge misses {self.miss:.0%}, "
                f"fails {self.false_fail:.0%} of passes, confuses {self.confuse:.0%}; "
                f"{self.labelled} labels")


SCENARIOS = (
    Scenario("issue", 2000, (0.15, 0.06, 0.03, 0.01), 0.15, 0.02, 0.05, 200),
    Scenario("held-out sloppy judge", 1000, (0.10, 0.05, 0.02, 0.005), 0.25, 0.05, 0.10, 300),
    Scenario("held-out good judge, big run", 5000, (0.20, 0.08, 0.01, 0.002), 0.05, 0.01,
             0.02, 300),
    Scenario("held-out other rates", 3000, (0.25, 0.10, 0.05, 0.02), 0.10, 0.03, 0.08, 250),
    # where labels do not pay: too few for the judge's error (no interval can catch it)
    Scenario("too few labels", 1000, (0.10, 0.05, 0.02, 0.005), 0.25, 0.05, 0.10, 100),
)


def run(rng: random.Random, s: Scenario, rates: tuple[float, ...] | None = None,
        false_fail: float | None = None, labelled: int | None = None
        ) -> tuple[list[Any], list[Any], list[int]]:
    """One run: the true categories, the judge's, and the labelled sample."""
    rates = rates or s.rates
    false_fail = s.false_fail if false_fail is None else false_fail
    gold: list[Any] = []
    for _ in range(s.cases):
        u, acc, chosen = rng.random(), 0.0, None
        for category, rate in zip(CATEGORIES, rates, strict=True):
            acc += rate
            if u < acc:
                chosen = category
                break
        gold.append(chosen)
    judge: list[Any] = []
    for truth in gold:
        if truth is None:
            judge.append(rng.choice(CATEGORIES) if rng.random() < false_fail else None)
        elif rng.random() < s.miss:
            judge.append(None)
        elif rng.random() < s.confuse:
            judge.append(rng.choice([c for c in CATEGORIES if c != truth]))
        else:
            judge.append(truth)
    return gold, judge, rng.sample(range(s.cases), labelled or s.labelled)


def gate(gold: list[Any], judge: list[Any], sample: list[int]) -> dict[str, Any]:
    """Each category's corrected count, as ``--labels`` computes it."""
    found = {}
    for category in CATEGORIES:
        count = sum(1 for j in judge if j == category)
        inside = [i for i in sample if judge[i] == category]
        wrong = sum(1 for i in inside if gold[i] != category)
        missed = sum(1 for i in sample if judge[i] != category and gold[i] == category)
        found[category] = correct(len(gold), count, len(inside), len(sample) - len(inside),
                                  missed, wrong, BUDGET / len(CATEGORIES))
    return found


def normal_interval(gold: list[Any], judge: list[Any], sample: list[int], category: str
                    ) -> tuple[float, float]:
    """The plain normal interval on the rectifier's mean, finite-population corrected."""
    n, big = len(sample), len(gold)
    values = [(gold[i] == category) - (judge[i] == category) for i in sample]
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    z = NormalDist().inv_cdf(1 - float(BUDGET) / len(CATEGORIES) / 2)
    center = sum(1 for j in judge if j == category) + big * mean
    half = z * big * math.sqrt(var / n * (1 - n / big))
    return center - half, center + half


def measure(s: Scenario, runs: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    ceilings = {c: round(s.cases * r) for c, r in zip(CATEGORIES, s.rates, strict=True)}
    covered = normal = harsh_fail = harsh_open = raw_fail = caught = normal_caught = 0
    regressed = (s.rates[0] * 1.5, *s.rates[1:])
    for _ in range(runs):
        gold, judge, sample = run(rng, s)
        found = gate(gold, judge, sample)
        truths = {c: sum(1 for g in gold if g == c) for c in CATEGORIES}
        covered += all(found[c].lower <= truths[c] <= found[c].upper for c in CATEGORIES)
        low, high = normal_interval(gold, judge, sample, "d")
        normal += low <= truths["d"] <= high
        gold, judge, sample = run(rng, s, false_fail=s.false_fail * 4)
        verdicts = {verdict(k, ceilings[c]) for c, k in gate(gold, judge, sample).items()}
        harsh_fail += "fail" in verdicts
        harsh_open += "fail" not in verdicts and "inconclusive" in verdicts
        raw_fail += any(sum(1 for j in judge if j == c) > ceilings[c] for c in CATEGORIES)
        gold, judge, sample = run(rng, s, rates=regressed)
        caught += verdict(gate(gold, judge, sample)["a"], ceilings["a"]) == "fail"
        normal_caught += normal_interval(gold, judge, sample, "a")[0] > ceilings["a"]
    return {"joint coverage": covered / runs, "normal covers smallest": normal / runs,
            "harsher judge fails": harsh_fail / runs,
            "harsher judge inconclusive": harsh_open / runs,
            "harsher judge fails (raw judge counts)": raw_fail / runs,
            "+50% regression caught": caught / runs,
            "+50% regression caught (normal interval)": normal_caught / runs}


def power(s: Scenario, runs: int, seed: int, sizes: tuple[int, ...]) -> dict[int, float]:
    """The +50% regression of the largest category caught, by the number of labels."""
    rng = random.Random(seed)
    ceiling = round(s.cases * s.rates[0])
    regressed = (s.rates[0] * 1.5, *s.rates[1:])
    found = {}
    for size in sizes:
        caught = 0
        for _ in range(runs):
            gold, judge, sample = run(rng, s, rates=regressed, labelled=size)
            caught += verdict(gate(gold, judge, sample)["a"], ceiling) == "fail"
        found[size] = caught / runs
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--power", action="store_true",
                        help="also the regression caught by the number of labels")
    args = parser.parse_args()
    for index, scenario in enumerate(SCENARIOS):
        started = time.perf_counter()
        figures = measure(scenario, args.runs, args.seed + index)
        print(scenario.describe())
        for name, value in figures.items():
            print(f"  {name:<40} {value:6.1%}")
        print(f"  ({args.runs} runs, {time.perf_counter() - started:.0f} s)")
    if args.power:
        sizes = (50, 100, 200, 300, 400, 600)
        for scenario in (SCENARIOS[0], SCENARIOS[1]):
            caught = power(scenario, max(100, args.runs // 2), args.seed, sizes)
            print(f"+50% regression of the largest category caught, by labels ({scenario.name}):")
            print("  " + ", ".join(f"{size}: {value:.0%}" for size, value in caught.items()))


if __name__ == "__main__":
    main()
