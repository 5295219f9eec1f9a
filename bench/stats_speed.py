"""Time the exact binomial tail of pytest_failgate.core.stats.binomial at n = 100,000.

Every timing is a cold call: the module's caches are cleared first, so nothing
computed by an earlier call is reused. Run from the repository root:

    python bench/stats_speed.py            # 5 repeats, median shown
    python bench/stats_speed.py --repeats 9

Rows:
- ``at_most(1/20)`` and ``float()`` across p and k (k at the centre, a few
  standard deviations out, far in the tail): the ordinary path.
- ``alpha = tail * (1 - 10**-6)``: still decided by the float estimate.
- ``alpha = exact tail``: the worst case, inside the estimate's margin, decided
  by the exact integer sum.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_failgate.core.stats import binomial as stats

if TYPE_CHECKING:
    from collections.abc import Callable

N = 100_000


def cold(call: Callable[[], object], repeats: int) -> float:
    """Median seconds of ``call`` with the module's caches cleared before each run."""
    times = []
    for _ in range(repeats):
        stats._clear_caches()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    repeats: int = args.repeats
    alpha = Fraction(1, 20)
    print(f"n = {N:,}, median of {repeats} cold calls")
    print(f"{'p':>6} {'k':>7} {'z':>6} {'at_most(1/20)':>14} {'float()':>9}  value")
    slowest = 0.0
    for p in (Fraction(1, 2), Fraction(1, 40), Fraction(3, 10)):
        mean = N * p
        sd = math.sqrt(N * p * (1 - p))
        for z in (-3.0, 0.0, 0.5, 2.0, 5.0, 40.0):
            k = min(N, max(0, round(mean + z * sd)))
            tail = stats.binomial_upper_tail(k, N, p)
            decide = cold(partial(tail.at_most, alpha), repeats)
            show = cold(partial(float, tail), repeats)
            slowest = max(slowest, decide, show)
            print(f"{p!s:>6} {k:>7} {z:>6} {decide * 1e3:>11.2f} ms {show * 1e3:>6.2f} ms"
                  f"  {float(tail):.6g}")
    print(f"slowest ordinary call: {slowest * 1e3:.2f} ms")

    for p in (Fraction(1, 2), Fraction(3, 10)):
        k = math.floor(N * p) + 150
        tail = stats.binomial_upper_tail(k, N, p)
        exact = tail.exact()  # not timed
        near = exact - exact / 10**6
        seconds = cold(partial(tail.at_most, near), repeats)
        print(f"p = {p}, k = {k}, alpha = tail * (1 - 10**-6) (float estimate): "
              f"{seconds * 1e3:.2f} ms -> {tail.at_most(near)}")
        seconds = cold(partial(tail.at_most, exact), 1)
        print(f"p = {p}, k = {k}, alpha = exact tail (worst case, exact sum): "
              f"{seconds * 1e3:.0f} ms -> {tail.at_most(exact)}")

if __name__ == "__main__":
    main()
