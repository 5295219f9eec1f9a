"""A confidence sequence for a count among N cases, drawn in a random order: anytime valid.

The cases of a run are run in a uniformly random order fixed before the run. After the
first ``n`` of them, ``s`` are in a category; the category's count over all ``N`` cases
(``C``, fixed by the system under test, unknown until the run ends) is what the ceiling
judges. Peeking at a fixed-n interval after every case inflates its error (a Wilson
interval looked at a thousand times covers far less than 95%); a *confidence sequence*
covers ``C`` at every ``n`` at once, so the gate may stop the first time it is decided.

The construction (Waudby-Smith & Ramdas, "Confidence sequences for sampling without
replacement", 2020) is a prior-mixture likelihood ratio. Under a true count ``C`` the
probability of an observed prefix ``x_1..x_n`` with ``s`` ones is
``C^(s) (N - C)^(n - s) / N^(n)`` (falling factorials): it depends on ``s`` only. Mixing
over ``C`` with a beta-binomial prior ``BetaBin(N, a, b)`` gives the probability of the
same prefix under the exchangeable Polya sequence, whose first ``n`` draws sum to
``BetaBin(n, a, b)``. Both sequence probabilities carry the same factor ``binom(n, s)``
as the pmfs of the count, so their ratio is

    M_n(C) = BetaBin(s; n, a, b) / Hypergeom(s; N, C, n).

It is the likelihood ratio of a consistent probability measure (the mixture) against
the true one over the prefixes of the order, hence, under ``C``, a nonnegative
supermartingale with ``M_0 = 1``: a martingale while both next cases are possible under
``C``, falling when only one is (the mixture's mass on the impossible one is lost). A
prefix impossible under ``C`` gives ``+inf``, which only excludes that ``C``. Ville's
inequality bounds ``P(exists n: M_n(C) >= 1/alpha)`` by ``alpha``, so ``{C : M_n(C) <
1/alpha}`` holds the true count at every ``n`` simultaneously with probability at least
``1 - alpha``, and so does the running intersection. As a function of ``C`` the
hypergeometric pmf is unimodal (the ratio of consecutive terms falls), so each set is an
interval around the mode, and its ends move a step or two a look from where they were.

The interval is also intersected with the counts the prefix allows at all, ``[s, s + N -
n]`` (certain, not statistical): at ``n = N`` it is exactly ``{s}``, so the last look is
the full run's count. The boundary search works in floating point (``math.lgamma``);
decisions made from the interval compare integers.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..base.classes import dataclass

if TYPE_CHECKING:
    from collections.abc import Sequence

_LOG_FACTORIALS = [0.0]  # log k!, grown as populations need: a look is table lookups


def _log_factorials(n: int) -> list[float]:
    """The table of ``log k!`` for ``k <= n`` (shared, grown once per larger population)."""
    table = _LOG_FACTORIALS
    while len(table) <= n:
        table.append(math.lgamma(len(table) + 1))
    return table


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def log_betabinomial(s: int, n: int, a: float, b: float) -> float:
    """``log P(S = s)`` for ``S ~ BetaBin(n, a, b)``."""
    return (
        _log_choose(n, s)
        + math.lgamma(s + a)
        + math.lgamma(n - s + b)
        - math.lgamma(n + a + b)
        - math.lgamma(a)
        - math.lgamma(b)
        + math.lgamma(a + b)
    )


def log_hypergeometric(s: int, population: int, marked: int, n: int) -> float:
    """``log P(S = s)`` for ``s`` marked among ``n`` drawn without replacement from
    ``population`` holding ``marked``; ``-inf`` when impossible."""
    if s < 0 or s > marked or n - s > population - marked or s > n:
        return -math.inf
    return (
        _log_choose(marked, s)
        + _log_choose(population - marked, n - s)
        - _log_choose(population, n)
    )


def hypergeometric_mode(s: int, population: int, n: int) -> int:
    """The count ``C`` under which ``s`` of ``n`` is most likely (``n >= 1``).

    ``P(C + 1) >= P(C)`` exactly when ``(C + 1) n <= s (N + 1)``, so the mode is
    ``floor(s (N + 1) / n)``, kept within the counts the prefix allows.
    """
    return min(max(s * (population + 1) // n, s), s + population - n)


@dataclass
class CountSequence:
    """The running confidence interval ``[low, high]`` for one count over ``population``
    cases, updated one case at a time at level ``1 - alpha`` over all looks.

    ``a`` and ``b`` are the beta prior's; any fixed choice is valid (the guarantee holds
    for every prior chosen before the run), and a prior near the expected rate narrows
    the interval sooner.
    """

    population: int
    alpha: float
    a: float = 1.0
    b: float = 1.0
    n: int = 0
    s: int = 0
    low: int = 0
    high: int = -1  # set in __post_init__: the whole range before any case

    def __post_init__(self) -> None:
        if self.population < 1:
            raise ValueError("a confidence sequence needs at least one case")
        if not 0 < self.alpha < 1:
            raise ValueError("alpha must lie strictly between 0 and 1")
        self.high = self.population
        self._log_threshold = -math.log(self.alpha)
        self._lf = _log_factorials(self.population)
        self._bar = 0.0  # see ``_inside``
        self._lgamma_a, self._lgamma_b = math.lgamma(self.a), math.lgamma(self.b)  # s = n = 0
        self._prior_and_threshold = (
            math.lgamma(self.a)
            + math.lgamma(self.b)
            - math.lgamma(self.a + self.b)
            + self._log_threshold
        )

    @property
    def remaining(self) -> int:
        return self.population - self.n

    def add(self, marked: bool, *, narrow: bool = True, stratum: int = 0) -> None:
        """One more case of the order: in the counted set (``marked``) or not (``stratum``:
        0, the one there is, as ``StratifiedCount.add`` takes it).

        ``narrow=False`` keeps the interval to what is certain and skips the statistics
        (for a count already decided, whose interval no longer matters). Called for every
        item at every case (``failgate watch`` with strata, a baseline or the futility
        stop), so the usual look (both ends still inside: ``_narrowed``) is computed here,
        in locals, as ``_inside`` computes it: the step ``advance`` runs case after case,
        written out in both for speed (a call a case costs a third more), and pinned
        together by the tests (every bound after every case).
        """
        population = self.population
        n = self.n
        if n >= population:
            raise ValueError(f"more than the {population} planned cases")
        n = self.n = n + 1
        s = self.s
        lgamma, a, b = math.lgamma, self.a, self.b
        # lgamma(s + a) changes with s only, lgamma(n - s + b) with n - s: one of them a look
        if marked:
            s = self.s = s + 1
            self._lgamma_a = lgamma(s + a)
        else:
            self._lgamma_b = lgamma(n - s + b)
        top = s + population - n  # the most the prefix allows: every remaining case marked
        low, high = self.low, self.high
        if low < s:
            low = s
        if high > top:
            high = top
        if not narrow:
            self.low, self.high = (low, high) if low <= high else (s, top)
            return
        lf = self._lf
        # log BetaBin(s) + log s! (n - s)! N! / (n! (N - n)!), the binomials cancelled
        bar = self._bar = (
            self._lgamma_a
            + self._lgamma_b
            - lgamma(n + a + b)
            + lf[population]
            - lf[population - n]
            - self._prior_and_threshold
        )
        if low <= high:
            rest = population - low
            if lf[low] - lf[low - s] + lf[rest] - lf[rest - n + s] > bar:
                rest = population - high
                if lf[high] - lf[high - s] + lf[rest] - lf[rest - n + s] > bar:
                    # both ends inside: so is every count between them (the set is an
                    # interval around the mode), and ``_narrowed`` would keep both
                    self.low, self.high = low, high
                    return
        interval = self._narrowed(low, high)
        # empty: the sequence missed (probability <= alpha); keep what is certain
        self.low, self.high = interval if interval is not None else (s, top)

    def advance(self, marks: Sequence[bool], limit: int | None = None) -> int:
        """``add`` each of ``marks`` in turn (narrowing), stopping after the first case
        that moves the interval across ``limit`` (its low end above it, or its high end
        to it or below, where it was not before): the cases added. The gate's usual
        look, case after case of one count (``SequentialGate.advance``), so it runs in
        locals; the usual step (both ends still inside the confidence set) is computed
        here as ``_inside`` computes it, with one new ``lgamma``."""
        population, n, s = self.population, self.n, self.s
        low, high = self.low, self.high
        lgamma, a, b, lf = math.lgamma, self.a, self.b, self._lf
        lgamma_a, lgamma_b = self._lgamma_a, self._lgamma_b
        prior_and_threshold, whole = self._prior_and_threshold, lf[population]
        if limit is None:  # no stop: ends that never cross
            over, cleared = population, -1
        else:
            over, cleared = limit, limit
        was_over, was_cleared = low > over, high <= cleared
        added = 0
        for marked in marks:
            if n >= population:
                self.n, self.s, self.low, self.high = n, s, low, high
                self._lgamma_a, self._lgamma_b = lgamma_a, lgamma_b
                raise ValueError(f"more than the {population} planned cases")
            n += 1
            added += 1
            # lgamma(s + a) changes with s only, lgamma(n - s + b) with n - s: one a look
            if marked:
                s += 1
                lgamma_a = lgamma(s + a)
            else:
                lgamma_b = lgamma(n - s + b)
            top = s + population - n  # the most the prefix allows: every remaining marked
            if low < s:
                low = s
            if high > top:
                high = top
            # log BetaBin(s) + log s! (n - s)! N! / (n! (N - n)!), the binomials cancelled
            bar = (lgamma_a + lgamma_b - lgamma(n + a + b) + whole - lf[population - n]
                   - prior_and_threshold)
            inside = False
            if low <= high:
                rest = population - low
                if lf[low] - lf[low - s] + lf[rest] - lf[rest - n + s] > bar:
                    rest = population - high
                    # both ends inside: so is every count between them (the set is an
                    # interval around the mode), and ``_narrowed`` would keep both
                    inside = lf[high] - lf[high - s] + lf[rest] - lf[rest - n + s] > bar
            if not inside:
                self.n, self.s, self._bar = n, s, bar
                interval = self._narrowed(low, high)
                # empty: the sequence missed (probability <= alpha); keep what is certain
                low, high = interval if interval is not None else (s, top)
            if (low > over) is not was_over or (high <= cleared) is not was_cleared:
                break
        self.n, self.s, self.low, self.high = n, s, low, high
        self._lgamma_a, self._lgamma_b = lgamma_a, lgamma_b
        if added:
            self._bar = bar
        return added

    def mark(self) -> tuple[int, int, int, int, float, float, float]:
        """Where the sequence is (``restore`` returns it there): all ``advance`` changes."""
        return (self.n, self.s, self.low, self.high, self._lgamma_a, self._lgamma_b,
                self._bar)

    def restore(self, mark: tuple[int, int, int, int, float, float, float]) -> None:
        (self.n, self.s, self.low, self.high, self._lgamma_a, self._lgamma_b,
         self._bar) = mark

    def log_martingale(self, count: int) -> float:
        """``log M_n(count)``: ``+inf`` for a count the prefix rules out."""
        denominator = log_hypergeometric(self.s, self.population, count, self.n)
        if denominator == -math.inf:
            return math.inf
        return log_betabinomial(self.s, self.n, self.a, self.b) - denominator

    def _inside(self, count: int) -> bool:
        """``M_n(count) < 1/alpha``, for a count the prefix allows (``s <= count <= s +
        N - n``): ``log M_n(C) = log BetaBin(s) - log Hypergeom(s; C)``, and of the
        hypergeometric's log only ``log C!/(C - s)! + log (N - C)!/(N - C - n + s)!``
        depends on ``C``; the rest is folded into ``_bar`` once a look."""
        lf, rest = self._lf, self.population - count
        return lf[count] - lf[count - self.s] + lf[rest] - lf[rest - self.n + self.s] > self._bar

    def _narrowed(self, low: int, high: int) -> tuple[int, int] | None:
        """``[low, high]`` intersected with ``{C : M_n(C) < 1/alpha}`` (None: empty).

        The set is an interval around the mode, so a bound still inside stays, and one
        outside moves towards the mode by bisection: one or two evaluations a look once
        the interval has settled down.
        """
        if low > high:
            return None
        mode = min(max(hypergeometric_mode(self.s, self.population, self.n), low), high)
        if not self._inside(mode):
            return None
        return (self._edge(low, mode, rising=True), self._edge(mode, high, rising=False))

    def _edge(self, start: int, stop: int, *, rising: bool) -> int:
        """The last count inside on a monotone stretch ``[start, stop]`` whose far end
        (the mode) is inside: the smallest inside when the pmf rises along it, else the
        largest. Searched from the old bound inwards, in growing steps, then by
        bisection: a bound moves a step or two a look, so this is two or three
        evaluations, not a bisection of the whole range."""
        sign = 1 if rising else -1
        outside, end = (start, stop) if rising else (stop, start)
        if self._inside(outside):
            return outside
        step = 1
        while True:  # gallop: outside, then the first probe found inside
            probe = outside + sign * step
            if sign * (probe - end) >= 0:
                inside = end
                break
            if self._inside(probe):
                inside = probe
                break
            outside, step = probe, step * 2
        while abs(inside - outside) > 1:
            middle = (outside + inside) // 2
            if self._inside(middle):
                inside = middle
            else:
                outside = middle
        return inside


def count_sequence(sizes: list[int], alpha: float, a: float = 1.0, b: float = 1.0
                   ) -> CountSequence | StratifiedCount:
    """The confidence sequence of a count over strata of these sizes: with one stratum the
    ``CountSequence`` itself (a ``StratifiedCount`` of one is exactly it), else one per
    stratum (``StratifiedCount``)."""
    if len(sizes) == 1:
        return CountSequence(sizes[0], alpha, a, b)
    return StratifiedCount(sizes, alpha, a, b)


class StratifiedCount:
    """A count over cases drawn in a random order **within each stratum**: one confidence
    sequence per stratum (at ``alpha / S``, so all ``S`` hold at once with probability at
    least ``1 - alpha``), the count's interval the sum of theirs.

    A plan that permutes the cases within each stratum (``failgate plan --strata``) is not a
    uniformly random order of the whole run, so one sequence over all of it would not be
    valid; per stratum it is, whatever the order the strata are interleaved in. With one
    stratum it is exactly ``CountSequence``.
    """

    def __init__(self, sizes: list[int], alpha: float, a: float = 1.0, b: float = 1.0) -> None:
        if not sizes:
            raise ValueError("a stratified count needs at least one stratum")
        share = alpha / len(sizes)
        self.parts = [CountSequence(size, share, a, b) for size in sizes]
        # the sums over the strata, kept as each case comes (one stratum changes a case)
        self.n = self.s = self.low = 0
        self.high = sum(part.high for part in self.parts)

    def add(self, marked: bool, *, narrow: bool = True, stratum: int = 0) -> None:
        """One more case of ``stratum``'s order (see ``CountSequence.add``)."""
        part = self.parts[stratum]
        low, high = part.low, part.high
        part.add(marked, narrow=narrow)
        self.n += 1
        self.s += 1 if marked else 0
        self.low += part.low - low
        self.high += part.high - high


# The bets of ``RiseRuledOut``: a mixture of fixed fractions of capital staked on each case
# (each at most 1, so no case can make the capital negative); any fixed set keeps the
# guarantee, and a spread of them settles small and large flip rates alike.
RISE_BETS = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)


class RiseRuledOut:
    """A one-sided, anytime-valid test that the full run's **rise** (the sum over its
    ``population`` cases of each case's change against the baseline: +1 a case that entered
    the counted set, -1 one that left it, 0 unchanged) is at least ``bound``: ``ruled_out``
    once it is rejected at level ``alpha``, for every order of the run at once.

    Drawn without replacement in a uniformly random order, under a full-run rise ``D`` the
    next case's change has the conditional mean ``m = (D - r) / (N - n)`` (``r`` the rise so
    far): with ``x = (d + 1) / 2`` and ``mu = (m + 1) / 2`` in [0, 1], each fixed stake
    ``lambda <= 1`` gives a capital ``prod (1 + lambda (mu - x))`` that is a nonnegative
    martingale with mean 1 under ``D`` (Waudby-Smith & Ramdas's betting confidence sequence
    for sampling without replacement, one-sided), and so is their average. The test runs at
    ``D = bound``: ``mu`` rises with ``D``, so every factor is at most the true rise's (``mu``
    kept within [0, 1]), the capital at ``bound`` is at most the capital at any larger true
    rise, and Ville's inequality bounds the probability that it ever reaches ``1 / alpha`` by
    ``alpha`` for every rise of ``bound`` or more. A bound the remaining cases cannot reach
    (``r + N - n < bound``) is ruled out with certainty.
    """

    def __init__(self, population: int, bound: int, alpha: float) -> None:
        if population < 1:
            raise ValueError("a rise test needs at least one case")
        if not 0 < alpha < 1:
            raise ValueError("alpha must lie strictly between 0 and 1")
        self.population, self.bound = population, bound
        self.n = 0
        self.rise = 0
        self._log_threshold = -math.log(alpha)
        self._log_capital = [0.0] * len(RISE_BETS)
        self.ruled_out = bound > population

    def add(self, change: int) -> None:
        """One more case of the order: its change against the baseline (-1, 0 or +1)."""
        if self.n >= self.population:
            raise ValueError(f"more than the {self.population} planned cases")
        if not self.ruled_out:
            mean = (self.bound - self.rise) / (self.population - self.n)
            mu = min(max((mean + 1) / 2, 0.0), 1.0)
            x = (change + 1) / 2
            for index, bet in enumerate(RISE_BETS):
                factor = 1 + bet * (mu - x)
                self._log_capital[index] += math.log(factor) if factor > 0 else -math.inf
        self.n += 1
        self.rise += change
        if self.ruled_out:
            return
        if self.rise + self.population - self.n < self.bound:
            self.ruled_out = True  # certain: even every remaining case new falls short
            return
        top = max(self._log_capital)
        if top == -math.inf:
            return
        mixed = top + math.log(sum(math.exp(c - top) for c in self._log_capital)
                               / len(RISE_BETS))
        self.ruled_out = mixed >= self._log_threshold
