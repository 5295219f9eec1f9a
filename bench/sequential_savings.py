"""How many cases the sequential gate needs before its verdict is settled, on N = 1000.

A system's baseline fails 8%, 6%, 5%, 4% and 3% of cases in five categories; each
ceiling is the baseline's expected count plus two binomial standard deviations (97, 75,
64, 52, 41), as a noise allowance would set it. Three kinds of run are drawn, each
case's category at random with the run's rates (so counts vary from run to run as
they do between real runs), in a uniformly random order fixed before the run:

- **broken**: the first category 30 points worse (38%);
- **improved**: every category at half its baseline rate;
- **unchanged**: the baseline itself.

The gate (``core.gate.sequential``, delta 0.05) looks after every case; the script
prints the mean number of cases used per kind of run against its target (broken <= 60,
improved <= 700, unchanged <= 950), ``met`` or ``NOT met``, and how many early verdicts
differed from the full run's (the guarantee: at most delta of runs). Seeded:

    python bench/sequential_savings.py                  # 100 runs of each kind
    python bench/sequential_savings.py --runs 500 --seed 3
    python bench/sequential_savings.py --beta 0.05 --margin 20   # with the futility stop

With the futility stop (``--beta``), a run whose count lands over a ceiling by fewer than
the margin may pass early: those count as differing (the stop's stated trade).
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

PLANNED = 1000
RATES = (0.08, 0.06, 0.05, 0.04, 0.03)
DELTA = Fraction(1, 20)
TARGETS = {"broken": 60, "improved": 700, "unchanged": 950}
MARGIN = 10  # the futility stop's default margin (``watch --margin``)
RUNS = {"broken": (RATES[0] + 0.30, *RATES[1:]),
        "improved": tuple(rate / 2 for rate in RATES),
        "unchanged": RATES}


def ceilings() -> list[int]:
    """Each category's expected baseline count plus two binomial standard deviations."""
    return [round(PLANNED * p + 2 * math.sqrt(PLANNED * p * (1 - p))) for p in RATES]


def draw(rates: tuple[float, ...], rng: random.Random) -> list[str | None]:
    """One run's cases in their random order: each a category with the run's rates."""
    cases: list[str | None] = []
    for _ in range(PLANNED):
        roll, category = rng.random(), None
        for index, rate in enumerate(rates):
            if roll < rate:
                category = f"c{index}"
                break
            roll -= rate
        cases.append(category)
    return cases


def settle(cases: list[str | None], limits: list[int],
           futility: Futility | None = None) -> tuple[int, bool]:
    """(cases used, whether the early verdict is the full run's)."""
    items = [SequentialItem(f"c{i}", frozenset({f"c{i}"}), k) for i, k in enumerate(limits)]
    gate = SequentialGate(items, PLANNED, DELTA, futility)
    settled = next(s for s in map(gate.add, cases) if s is not None)
    full = "fail" if any(cases.count(f"c{i}") > k for i, k in enumerate(limits)) else "pass"
    return settled.n, settled.verdict == full


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="runs of each kind")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--beta", type=Fraction, default=None,
                        help="the futility stop's beta (default: off)")
    parser.add_argument("--margin", type=int, default=MARGIN,
                        help=f"the regression, in cases past a ceiling, the futility stop "
                             f"rules out (default: {MARGIN})")
    args = parser.parse_args()
    limits = ceilings()
    futility = None if args.beta is None else Futility(args.beta, args.margin)
    print(f"N = {PLANNED}, ceilings {limits}, delta {float(DELTA)}, {args.runs} runs each"
          + ("" if futility is None else f", futility beta {float(futility.beta)} margin "
             f"{futility.margin}"))
    print(f"{'run':<10} {'mean cases':>10} {'target':>7}  {'':<7} {'differed':>8}")
    all_met = True
    for offset, (kind, rates) in enumerate(RUNS.items()):
        rng = random.Random(args.seed * 10 + offset)
        used, differed = [], 0
        for _ in range(args.runs):
            n, agrees = settle(draw(rates, rng), limits, futility)
            used.append(n)
            differed += not agrees
        mean = sum(used) / len(used)
        met = mean <= TARGETS[kind]
        all_met &= met
        print(f"{kind:<10} {mean:>10.1f} {TARGETS[kind]:>7}  {'met' if met else 'NOT met':<7} "
              f"{differed:>8}")
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
