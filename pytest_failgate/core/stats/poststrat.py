"""The exact one-sided test of a category's true count, post-stratified by the judge.

For one category of a run of ``N`` cases the judge puts ``J`` in it; the labelled sample
holds ``n1`` of those (``d-`` of them truly not in it) and ``n0`` of the rest (``d+`` truly
in it). The true count is ``T = J - D- + D+``. Given ``(n1, n0)`` each part of the sample
is a simple random sample of its stratum, for a uniform sample and for one stratified by
the judge's label alike, so, independently,

    d- ~ Hypergeometric(J, D-, n1),    d+ ~ Hypergeometric(N - J, D+, n0).

**The statistic** is the post-stratified estimate ``T^ = J (n1 - d-)/n1 + (N - J) d+/n0``
(PPI++ with its tuned weight, for a yes/no judge label). A stratum with no draw
contributes what the data allow: no wrong call and no miss of its own (the judge's word),
while its unknown ``D`` stays free in the test.

**The test** of ``H0: T <= c``: ``P[T^ >= observed]`` depends on the nuisance split
``(D-, D+)``, rising in ``D+`` and falling in ``D-``. Berger and Boos (1994): take the
largest tail over the splits in ``H0`` that lie in a ``1 - gamma`` confidence box for
``(D-, D+)`` (exact hypergeometric bounds at ``gamma / 4`` a side, each stratum), plus
``gamma``; that p-value is valid, ``P[p <= a] <= a`` under ``H0``, for every ``N``,
count and judge. The largest tail is on the box's part of the boundary ``T = c`` (or at
its corner when the whole box is in ``H0``; the p-value is ``gamma`` when none is), and
grows with ``c``, so the rejected ``c`` are exactly those below a lower bound ``L``: the
test fails a ceiling ``c`` at level ``a`` when ``c < L(a)``. The opposite tail, inverted
the same way, gives the upper bound ``U(a)``: the largest true count the labels cannot
rule out.

**Exact decisions, fast.** A tail is a sum over ``d-`` of ``P[d- = x] P[d+ >= t(x)]``,
``t(x)`` an integer threshold computed in integers. It is first computed in floats from
ratio recurrences (no ``lgamma``): each probability is a product of at most ``n`` ratios
of integers below ``2**53`` (two roundings a step), normalised by a sum of at most
``n + 1`` positive terms, so its relative error is below ``(4 n + 2 N + 8) * 2**-53``;
terms are dropped only past a log-concave remainder bound of ``1e-20`` of the total.
Whenever a float tail is within ``MARGIN`` (a thousand times that bound, at least
``1e-12``) of the threshold it is compared with, the tail is recomputed in integers
(``math.comb`` sums against the level's fraction): no decision rests on float rounding.
The largest tail over the boundary is found by branch and bound: a block of consecutive
splits has its tail bounded by that of its corner (smallest ``D-``, largest ``D+``), so
blocks below the threshold are dropped whole.
"""

from __future__ import annotations

import heapq
import math
from fractions import Fraction
from statistics import NormalDist
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from .hypergeom import _tail_at_least, _tail_at_most, lower_bound, upper_bound

if TYPE_CHECKING:
    from collections.abc import Callable

_UNIT = 2.0 ** -53
_DROP = 1e-20  # a pmf's tail mass left out of the float sums (bounded, not estimated)


@dataclass(frozen=True)
class Sample:
    """One category's labelled sample, by the judge's stratum (module docstring)."""

    n_cases: int  # N
    count: int  # J
    in_judged: int  # n1
    in_other: int  # n0
    missed: int  # d+
    wrong: int  # d-

    def check(self) -> None:
        """Refuse counts no sample of the run can have (a caller's error)."""
        if not 0 <= self.count <= self.n_cases or self.in_judged + self.in_other > self.n_cases:
            raise ValueError("a sample of the run's cases, and a count within them")
        if not (0 <= self.wrong <= self.in_judged <= self.count
                and 0 <= self.missed <= self.in_other <= self.n_cases - self.count):
            raise ValueError("disagreements within the sampled cases of each stratum")


def estimate(sample: Sample) -> Fraction:
    """``J (n1 - d-)/n1 + (N - J) d+/n0``; an undrawn stratum keeps the judge's word."""
    s = sample
    judged = Fraction(s.count * (s.in_judged - s.wrong), s.in_judged) if s.in_judged else \
        Fraction(s.count)
    other = Fraction((s.n_cases - s.count) * s.missed, s.in_other) if s.in_other else \
        Fraction(0)
    return judged + other


class _Dist:
    """Hypergeometric ``(population, successes, draws)``: float pmf from ``start`` (the
    terms past the remainder bound dropped) with its prefix and suffix sums."""

    __slots__ = ("end", "prefix", "probs", "start", "suffix")

    def __init__(self, population: int, successes: int, draws: int) -> None:
        low = max(0, draws - (population - successes))
        high = min(successes, draws)
        mode = min(high, max(low, (draws + 1) * (successes + 1) // (population + 2)))
        others = population - successes
        right = [1.0]
        term, x = 1.0, mode
        while x < high:
            ratio = ((successes - x) * (draws - x)) / ((x + 1) * (others - draws + x + 1))
            term *= ratio
            right.append(term)
            x += 1
            if ratio < 1.0 and term * ratio / (1.0 - ratio) < _DROP:
                break
        left: list[float] = []
        term, x = 1.0, mode
        while x > low:
            # p(x - 1) / p(x) = x (others - draws + x) / ((successes - x + 1) (draws - x + 1))
            ratio = (x * (others - draws + x)) / ((successes - x + 1) * (draws - x + 1))
            term *= ratio
            left.append(term)
            x -= 1
            if ratio < 1.0 and term * ratio / (1.0 - ratio) < _DROP:
                break
        left.reverse()
        terms = left + right
        total = math.fsum(terms)
        self.probs = [t / total for t in terms]
        self.start = mode - len(left)
        self.end = self.start + len(terms) - 1
        self.prefix: list[float] | None = None  # the sums, made on first use
        self.suffix: list[float] | None = None

    def suffix_sums(self) -> list[float]:
        """``P[X >= start + i]`` for each ``i`` (made once)."""
        if self.suffix is None:
            suffix, running = [0.0] * len(self.probs), 0.0
            for i in range(len(self.probs) - 1, -1, -1):
                running += self.probs[i]
                suffix[i] = running
            self.suffix = suffix
        return self.suffix

    def prefix_sums(self) -> list[float]:
        """``P[X <= start + i]`` for each ``i`` (made once)."""
        if self.prefix is None:
            prefix, running = [], 0.0
            for p in self.probs:
                running += p
                prefix.append(running)
            self.prefix = prefix
        return self.prefix

    def at_least(self, y: int) -> float:
        if y <= self.start:
            return 1.0
        return 0.0 if y > self.end else self.suffix_sums()[y - self.start]

    def at_most(self, y: int) -> float:
        if y >= self.end:
            return 1.0
        return 0.0 if y < self.start else self.prefix_sums()[y - self.start]


def _exact_pmf(population: int, successes: int, draws: int) -> tuple[int, list[int]]:
    """``C(successes, x) C(population - successes, draws - x)`` from the support's start."""
    low = max(0, draws - (population - successes))
    high = min(successes, draws)
    return low, [math.comb(successes, x) * math.comb(population - successes, draws - x)
                 for x in range(low, high + 1)]


class StratifiedTest:
    """The exact test and bounds of one category's true count (module docstring)."""

    def __init__(self, sample: Sample, gamma: Fraction, exact: bool = False) -> None:
        sample.check()
        if not 0 < gamma < 1:
            raise ValueError("gamma is a probability in (0, 1)")
        self.sample, self.gamma = sample, gamma
        s = sample
        self.others = s.n_cases - s.count
        n1, n0 = max(s.in_judged, 1), max(s.in_other, 1)
        self.weight_judged = s.count * n0  # A: a wrong call lowers the statistic by A
        self.weight_other = self.others * n1  # B: a miss raises it by B
        self.observed = -s.wrong * self.weight_judged + s.missed * self.weight_other
        bound = (4 * (s.in_judged + s.in_other) + 2 * s.n_cases + 8) * _UNIT
        self.margin = max(1e-12, 1000 * bound)
        self._judged: dict[int, _Dist] = {}
        self._other: dict[int, _Dist] = {}
        self._argmax: dict[bool, int] = {}  # the last search's split over the threshold
        self.exact = exact  # every tail in integers (the tests' check of the filter)
        self.wrong_box = self._box(s.count, s.in_judged, s.wrong, self._judged)
        self.missed_box = self._box(self.others, s.in_other, s.missed, self._other)

    def _box(self, population: int, draws: int, observed: int, cache: dict[int, _Dist]
             ) -> tuple[int, int]:
        """The exact two-sided bounds on a stratum's ``D`` at ``gamma / 4`` a side (all
        of ``0..population`` for a stratum with no draw)."""
        if draws == 0:
            return 0, population
        side = self.gamma / 4
        if self.exact:
            return (lower_bound(population, draws, observed, side),
                    upper_bound(population, draws, observed, side))
        cut = float(side)

        def kept(successes: int, upper: bool) -> bool:
            dist = cache.get(successes)
            if dist is None:
                dist = cache[successes] = _Dist(population, successes, draws)
            value = dist.at_most(observed) if upper else dist.at_least(observed)
            if value > cut + self.margin:
                return True
            if value < cut - self.margin:
                return False
            tail = (_tail_at_most if upper else _tail_at_least)(population, successes,
                                                                draws, observed)
            return tail * side.denominator > side.numerator * math.comb(population, draws)

        low, high = observed, population - (draws - observed)  # P[X <= obs] falls in D
        while low < high:
            middle = (low + high + 1) // 2
            if kept(middle, True):
                low = middle
            else:
                high = middle - 1
        top = low
        low, high = observed, top  # P[X >= obs] rises in D: the least D kept
        while low < high:
            middle = (low + high) // 2
            if kept(middle, False):
                high = middle
            else:
                low = middle + 1
        return low, top

    # -- tails ---------------------------------------------------------------------------
    def _threshold(self, x: int, upper: bool) -> int:
        """The least (upper) or largest (lower) ``d+`` with the statistic past the observed
        one given ``d- = x``; exact integer division."""
        need = self.observed + x * self.weight_judged  # y * B >= need (upper), <= (lower)
        if self.weight_other == 0:
            return 0 if (need <= 0 if upper else need >= 0) else (10**18 if upper else -1)
        return -((-need) // self.weight_other) if upper else need // self.weight_other

    def _float_tail(self, wrong: int, missed: int, upper: bool) -> float:
        s = self.sample
        judged = self._judged.get(wrong)
        if judged is None:
            judged = self._judged[wrong] = _Dist(s.count, wrong, s.in_judged)
        other = self._other.get(missed)
        if other is None:
            other = self._other[missed] = _Dist(self.others, missed, s.in_other)
        weight_judged, weight_other = self.weight_judged, self.weight_other
        need = self.observed + judged.start * weight_judged  # y * B >= need (upper)
        if weight_other == 0:
            terms = []
            for p in judged.probs:
                if (need <= 0) if upper else (need >= 0):
                    terms.append(p)
                need += weight_judged
            return math.fsum(terms)
        start, end = other.start, other.end
        if upper:
            sums = other.suffix_sums()
            terms = []
            for p in judged.probs:
                y = -((-need) // weight_other)
                need += weight_judged
                if y <= start:
                    terms.append(p)
                elif y <= end:
                    terms.append(p * sums[y - start])
            return math.fsum(terms)
        sums = other.prefix_sums()
        terms = []
        for p in judged.probs:
            y = need // weight_other
            need += weight_judged
            if y >= end:
                terms.append(p)
            elif y >= start:
                terms.append(p * sums[y - start])
        return math.fsum(terms)

    def _exact_tail_at_most(self, wrong: int, missed: int, upper: bool,
                            level: Fraction) -> bool:
        """Whether the tail is at most ``level``, in integers."""
        s = self.sample
        start_j, judged = _exact_pmf(s.count, wrong, s.in_judged)
        start_o, other = _exact_pmf(self.others, missed, s.in_other)
        prefix = [0]  # prefix[i]: the first i terms
        for value in other:
            prefix.append(prefix[-1] + value)
        size = len(other)

        def tail(y: int) -> int:  # the terms of d+ >= y (upper) or d+ <= y (lower)
            if upper:
                return prefix[size] - prefix[min(max(y - start_o, 0), size)]
            return prefix[min(max(y - start_o + 1, 0), size)]

        numerator = sum(value * tail(self._threshold(start_j + i, upper))
                        for i, value in enumerate(judged))
        total = math.comb(s.count, s.in_judged) * math.comb(self.others, s.in_other)
        return numerator * level.denominator <= level.numerator * total

    def _point_at_most(self, wrong: int, missed: int, upper: bool, level: Fraction,
                       cut: float) -> bool:
        """Whether the tail at one split is at most ``level`` (float, else integers)."""
        if not self.exact:
            value = self._float_tail(wrong, missed, upper)
            if value < cut - self.margin:
                return True
            if value > cut + self.margin:
                return False
        return self._exact_tail_at_most(wrong, missed, upper, level)

    # -- the test ------------------------------------------------------------------------
    def rejects(self, c: int, level: Fraction, upper: bool = True) -> bool:
        """Whether ``H0: T <= c`` (``upper``) or ``H0: T >= c`` is rejected at ``level``:
        the Berger-Boos p-value (largest tail over the box's splits in H0, plus gamma) is
        at most ``level``."""
        if level <= self.gamma:
            return False
        threshold = level - self.gamma
        cut = float(threshold)
        k = c - self.sample.count  # H0 (upper): D+ - D- <= k; (lower): D+ - D- >= k
        (w_low, w_high), (m_low, m_high) = self.wrong_box, self.missed_box
        if upper:
            if m_low - w_high > k:
                return True  # the whole box has T > c
            if m_high - w_low <= k:
                return self._point_at_most(w_low, m_high, True, threshold, cut)
            first, last = max(w_low, m_low - k), min(w_high, m_high - k)
        else:
            if m_high - w_low < k:
                return True  # the whole box has T < c
            if m_low - w_high >= k:
                return self._point_at_most(w_high, m_low, False, threshold, cut)
            first, last = max(w_low, m_low - k), min(w_high, m_high - k)

        def corner(a: int, b: int) -> tuple[int, int]:
            """The split bounding the tails of the boundary block ``D- in [a, b]``."""
            return (a, b + k) if upper else (b, a + k)

        return self._all_at_most(first, last, corner, upper, threshold, cut)

    def _all_at_most(self, first: int, last: int,
                     corner: Callable[[int, int], tuple[int, int]], upper: bool,
                     threshold: Fraction, cut: float) -> bool:
        """Branch and bound: every boundary split's tail at most the threshold. The
        likeliest splits first (the last search's largest, then the estimate's), then
        the blocks by their bound, highest first: a split over the threshold, when there
        is one, is found in a few tails."""
        s = self.sample
        guesses = [self._argmax.get(upper), s.count * s.wrong // max(s.in_judged, 1)]
        for guess in guesses:
            if guess is not None and first <= guess <= last and not self._point_at_most(
                    *corner(guess, guess), upper, threshold, cut):
                return False
        if self.exact:
            return all(self._exact_tail_at_most(*corner(x, x), upper, threshold)
                       for x in range(first, last + 1))
        heap: list[tuple[float, int, int]] = []

        def push(a: int, b: int) -> bool:
            """Queue a block (False: a split of it is over the threshold)."""
            value = self._float_tail(*corner(a, b), upper)
            if value < cut - self.margin:
                return True  # every split of the block is under it
            if a == b:
                if value > cut + self.margin or not self._exact_tail_at_most(
                        *corner(a, a), upper, threshold):
                    self._argmax[upper] = a
                    return False
                return True
            heapq.heappush(heap, (-value, a, b))
            return True

        if not push(first, last):
            return False
        while heap:
            _, a, b = heapq.heappop(heap)
            middle = (a + b) // 2
            if not (push(a, middle) and push(middle + 1, b)):
                return False
        return True

    # -- bounds --------------------------------------------------------------------------
    def _span(self) -> tuple[int, int]:
        """The true counts of the box's splits: every bound is in this range or at 0, N."""
        (w_low, w_high), (m_low, m_high) = self.wrong_box, self.missed_box
        count = self.sample.count
        return max(0, count - w_high + m_low), min(self.sample.n_cases, count - w_low + m_high)

    def _guess(self, level: Fraction) -> tuple[int, int]:
        """Where the bounds about are (a normal approximation): where the exact searches
        start. Only the number of exact decisions depends on it, never a bound."""
        s = self.sample
        variance = 0.0
        for population, draws, seen in ((s.count, s.in_judged, s.wrong),
                                         (self.others, s.in_other, s.missed)):
            if draws and population:
                share = min(max(seen / draws, 0.5 / draws), 1 - 0.5 / draws)
                variance += (population ** 2 * share * (1 - share) / draws
                             * (1 - draws / population))
        z = NormalDist().inv_cdf(1 - float(min(level, Fraction(1, 2)))) + 0.3
        centre, spread = float(estimate(s)), z * math.sqrt(variance)
        return math.floor(centre - spread), math.ceil(centre + spread)

    def lower(self, level: Fraction) -> int:
        """The least ``c`` that ``H0: T <= c`` keeps at ``level``: a ceiling below it fails."""
        # below the span the box has no split in H0 (rejected); past its top, H0 holds the
        # whole box and the p-value no longer changes with c
        low, high = self._span()
        if self.rejects(high, level, upper=True):
            return self.sample.n_cases
        return _first(lambda c: not self.rejects(c, level, upper=True), low, high,
                      self._guess(level)[0])

    def upper(self, level: Fraction) -> int:
        """The largest ``c`` that ``H0: T >= c`` keeps at ``level``: the largest true count
        the labels cannot rule out."""
        low, high = self._span()
        if self.rejects(low, level, upper=False):
            return 0
        return _first(lambda c: self.rejects(c, level, upper=False), low + 1, high,
                      self._guess(level)[1] + 1) - 1


def _first(holds: Callable[[int], bool], low: int, high: int, guess: int) -> int:
    """The least ``x`` in ``low..high`` where ``holds`` (False, then True), else
    ``high + 1``: galloping from ``guess``, then bisection."""
    guess = min(high, max(low, guess))
    if holds(guess):  # the answer is at or below the guess
        top, step = guess, 1
        while top - step >= low and holds(top - step):
            top -= step
            step *= 2
        bottom = max(low, top - step)  # holds(bottom - 1) is False or out of range
        low, high = bottom, top
    else:
        bottom, step = guess + 1, 1
        while bottom + step - 1 <= high and not holds(bottom + step - 1):
            bottom += step
            step *= 2
        top = min(high + 1, bottom + step - 1)
        low, high = bottom, top
    while low < high:  # holds(high) or high is past the range; the least such
        middle = (low + high) // 2
        if middle <= high and holds(middle):
            high = middle
        else:
            low = middle + 1
    return low
