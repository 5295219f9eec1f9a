"""Paired mode with the futility stop: does an unchanged system, re-run beside its
same-day baseline, stop before the end, and at what cost to the guarantees?

N = 600 cases, three categories. The baseline fails 60, 40 and 30 cases; each ceiling is
the baseline's count plus two binomial standard deviations (as a noise allowance sets it).
The compared items allow no rise over the baseline (paired mode's rule). Two runs:

- **unchanged**: in each category 15 cases that failed in the baseline pass now and 15
  others fail now that passed in it (the noise of a re-run): every count equals the
  baseline's, no rise; the full run passes;
- **regressed by the margin**: the first category has ``margin`` more new cases than fixed
  ones (a rise of exactly the margin): the full run fails, and a pass before the end is
  the futility stop's error, which its level ``beta`` bounds.

Each run is drawn in a uniformly random order (seeded) and fed to the sequential gate
(``core.gate.sequential``, delta 0.05, futility beta 0.05, margin 10) after every case.
Printed: the share of orders that stopped before the last case, the mean cases used,
P(early verdict != full run's) for the unchanged run (budget: delta), and the share of
orders in which the run regressed by the margin passed early (budget: beta).

    python bench/paired_futility.py                  # 1000 orders of each run
    python bench/paired_futility.py --orders 200 --seed 3
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_failgate.core.gate.sequential import Futility, SequentialGate, SequentialItem

PLANNED = 600
BASELINE = {"a": 60, "b": 40, "c": 30}
FLIPS = 15  # cases a re-run moves into and out of each category
DELTA = BETA = Fraction(1, 20)
MARGIN = 10

Case = tuple[str | None, str | None]  # (category now, category in the baseline)


def population(rise: int) -> list[Case]:
    """The run's cases, paired with the baseline's: ``rise`` more new than fixed in ``a``."""
    cases: list[Case] = []
    for category, count in BASELINE.items():
        extra = rise if category == "a" else 0
        cases += [(category, category)] * (count - FLIPS)  # failed in both
        cases += [(None, category)] * FLIPS  # fixed
        cases += [(category, None)] * (FLIPS + extra)  # new
    return cases + [(None, None)] * (PLANNED - len(cases))


def items() -> list[SequentialItem]:
    """Each category's ceiling: the baseline's count plus two binomial deviations."""
    return [SequentialItem(c, frozenset({c}), round(k + 2 * math.sqrt(k * (1 - k / PLANNED))))
            for c, k in BASELINE.items()]


def compared() -> list[SequentialItem]:
    return [SequentialItem(c, frozenset({c}), 0) for c in BASELINE]


def run(cases: list[Case], margin: int = MARGIN) -> tuple[str, int]:
    """The settled verdict and the cases it used, for one order of ``cases``."""
    gate = SequentialGate(items(), PLANNED, DELTA, Futility(BETA, margin), paired=compared())
    for now, before in cases:
        settled = gate.add(now, baseline=before)
        if settled is not None:
            return settled.verdict, settled.n
    raise AssertionError("the last case settles the verdict")


def full_verdict(cases: list[Case]) -> str:
    """The full run's verdict: a count over its ceiling, or a rise over the baseline."""
    counts = {c: sum(now == c for now, _ in cases) for c in BASELINE}
    rises = {c: sum(now == c and b != c for now, b in cases)
             - sum(b == c and now != c for now, b in cases) for c in BASELINE}
    over = any(counts[i.name] > i.limit for i in items()) or any(r > 0 for r in rises.values())
    return "fail" if over else "pass"


def measure(rise: int, orders: int, seed: int) -> tuple[float, float, float]:
    """Share stopped before the end, mean cases used, share whose verdict differs."""
    rng = random.Random(seed)
    cases = population(rise)
    full = full_verdict(cases)
    early = used = differ = 0
    for _ in range(orders):
        rng.shuffle(cases)
        verdict, n = run(cases)
        early += n < PLANNED
        used += n
        differ += verdict != full
    return early / orders, used / orders, differ / orders


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=40)
    args = parser.parse_args()
    early, used, differ = measure(0, args.orders, args.seed)
    print(f"unchanged: stopped early in {early:.1%} of {args.orders} orders, "
          f"{used:.0f} of {PLANNED} cases on average; P(early != full) {differ:.1%} "
          f"(delta {float(DELTA):.0%})")
    _r_early, r_used, passed = measure(MARGIN, args.orders, args.seed + 1)
    print(f"regressed by the margin ({MARGIN}): passed early in {passed:.1%} of orders "
          f"(beta {float(BETA):.0%}); {r_used:.0f} cases on average")
    ok = early > 0.5 and differ <= DELTA and passed <= BETA
    print("met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
