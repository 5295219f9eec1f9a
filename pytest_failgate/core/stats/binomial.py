"""Exact binomial tails: the one computation every significance decision rests on.

:func:`binomial_upper_tail` returns ``P[X >= k]`` for ``X ~ Binomial(n, p)`` with
``p = a/b`` a Fraction. Its exact value is the rational ``S / b**n`` with
``S = sum(comb(n, i) * a**i * (b-a)**(n-i) for i >= k)``, an integer of about
``n * log2(b)`` bits; summing it costs about ``n**2 * log2(b)`` bit operations
(0.4 s at ``n = 100,000`` and ``p = 1/2``, 1.1 s at ``p = 3/10``). A decision
``P[X >= k] <= alpha`` is therefore taken in two steps, and is always the exact one:

1. *Small problems are summed exactly* (``b**n`` of at most 32,768 bits and
   ``min(k, n-k+1) * n * log2(b)`` at most about 4 million bit operations), from
   the shorter side of the distribution; the decision is
   ``S * den(alpha) <= num(alpha) * b**n`` in integers.
2. *Otherwise a float estimate with a margin.* ``ln P[X >= k]`` is estimated from
   its largest term, ``ln t_j`` in Loader's saddle-point form (as R's ``dbinom``:
   no difference of huge log-factorials), and the sum of the term ratios
   ``t_i / t_j``, a series whose ratios are below one and shrinking, summed until
   the geometric bound on what is left is negligible. Each operation is off by a
   few units in the last place of a number no larger than ``M = |ln t_j| + ln n``,
   so the estimate is off by far less than ``margin = 2**-36 * (M + steps + 16)``
   (the tests find it under a thousandth of that). When ``ln alpha`` is farther
   than the margin from the estimate, that decides; inside it (an ``alpha``
   agreeing with the tail to some nine significant digits, which a significance
   level like 1/20 in practice never does), the exact sum of step 1 decides.

Why not a rigorous interval enclosure: an earlier version bracketed the tail with
interval arithmetic over :mod:`decimal` (Stirling's series with exact Bernoulli
numbers, pi by Machin's formula; some 340 lines) so that even ``alpha`` within
``2**-500`` of the tail avoided the exact sum. Measured against this version
(``bench/stats_speed.py``, ``n = 100,000``) it took 1 to 4.5 ms per ordinary cold
call where this takes 0.02 to 0.5 ms, and the cases it saved are alphas equal to a
tail to nine digits, which still get the exact answer here, only more slowly
(0.3 to 1 s). The margin's one assumption, that ``log``, ``exp``
and ``lgamma`` (below 16) are accurate to within thousands of units in the last
place, holds with room to spare in every C library in use.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from ..base.classes import dataclass
from .checks import check_fraction, check_int

__all__ = ["HALF", "TailProbability", "binomial_upper_tail", "paired_increase"]

HALF = Fraction(1, 2)

# The exact sum is used outright when min(k, n-k+1) * n * bits(b) is at most this ...
_EXACT_BUDGET = 1 << 22
# ... and only when b**n has at most this many bits.
_EXACT_SIZE = 1 << 15
# Terms per block in the exact sum (one big division per block, not per term).
_BLOCK = 64
# Relative size of the margin around the float estimate of ln P (see the docstring).
_MARGIN = 2.0**-36
# The series stops once what is left is below this fraction of the sum.
_SERIES_STOP = 2.0**-60


# --------------------------------------------------------------------------- exact sums


@lru_cache(maxsize=16)
def _power(base: int, exponent: int) -> int:
    result: int = base**exponent
    return result


def _blocked_sum(first: int, count: int, n: int, x: int, y: int) -> int:
    """Sum ``count`` integer terms ``u_0 = first``, ``u_{s+1} = u_s (n-s) x / ((s+1) y)``.

    Every ``u_s`` is an integer (a binomial term). Instead of one big division per
    term, a block of terms is summed as ``u * N / Q`` with small ``N`` and ``Q``
    (the block's numerator and denominator products), using a single
    ``divmod(u, Q)``: for ``u = q*Q + r``, ``u*N/Q = q*N + r*N/Q`` with ``r*N/Q``
    an exact small division.
    """
    total = 0
    u = first
    s = 0
    while s < count:
        end = min(s + _BLOCK, count)
        num = 1  # prod of step numerators so far
        den = 1  # prod of step denominators so far
        acc = 0  # sum_j num_j * den / den_j, kept over the running den
        for t in range(s, end):
            step_num = (n - t) * x
            step_den = (t + 1) * y
            acc = (acc + num) * step_den
            num *= step_num
            den *= step_den
        quotient, rest = divmod(u, den)
        total += quotient * acc + rest * acc // den
        u = quotient * num + rest * num // den
        s = end
    return total


@lru_cache(maxsize=16)
def _exact_numerator(k: int, n: int, a: int, b: int) -> int:
    """``S`` with ``P[X >= k] = S / b**n`` exactly, for ``0 < p = a/b < 1``, ``0 < k <= n``."""
    c = b - a
    if n - k + 1 <= k:
        # Upper terms from i = n down to k: u_n = a**n, u_{i-1} = u_i * i c / ((n-i+1) a).
        return _blocked_sum(a**n, n - k + 1, n, c, a)
    # Lower terms from i = 0 up to k-1: u_0 = c**n, u_{i+1} = u_i * (n-i) a / ((i+1) c).
    return _power(b, n) - _blocked_sum(c**n, k, n, a, c)


def _exact_is_cheap(k: int, n: int, b: int) -> bool:
    size = n * b.bit_length()  # bits of b**n, about the size of every term
    return size <= _EXACT_SIZE and min(k, n - k + 1) * size <= _EXACT_BUDGET


# --------------------------------------------------------------------------- float estimate


_LN_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _stirling_error(m: int) -> float:
    """``ln m! - ((m + 1/2) ln m - m + ln sqrt(2 pi))``, a small number, to full precision.

    Catherine Loader's formulation (2000), as in R's ``dbinom``: the series for
    ``m > 15``, the log-gamma function below (where every term is small).
    """
    if m <= 15:
        return 0.0 if m == 0 else math.lgamma(m + 1) - (m + 0.5) * math.log(m) + m - _LN_SQRT_2PI
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    mm = float(m) * m
    if m > 500:
        return (s0 - s1 / mm) / m
    if m > 80:
        return (s0 - (s1 - s2 / mm) / mm) / m
    if m > 35:
        return (s0 - (s1 - (s2 - s3 / mm) / mm) / mm) / m
    return (s0 - (s1 - (s2 - (s3 - s4 / mm) / mm) / mm) / mm) / m


def _deviance(x: int, mean: float) -> float:
    """``x ln(x / mean) + mean - x`` without cancellation (Loader's ``bd0``)."""
    if abs(x - mean) < 0.1 * (x + mean):
        v = (x - mean) / (x + mean)
        total = (x - mean) * v
        step = 2 * x * v
        j = 1
        while True:
            step *= v * v
            following = total + step / (2 * j + 1)
            if following == total:
                return total
            total = following
            j += 1
    return x * math.log(x / mean) + mean - x


def _log_term(j: int, n: int, a: int, b: int) -> float:
    """``ln P[X = j]`` for ``X ~ Binomial(n, a/b)``, accurate to a few units in the last place
    of the larger of it and ``ln n``: the saddle-point form, no difference of huge logs."""
    c = b - a
    if j == 0:
        return n * math.log1p(-a / b)
    if j == n:
        return n * math.log1p(-c / b)
    return (_stirling_error(n) - _stirling_error(j) - _stirling_error(n - j)
            - _deviance(j, n * a / b) - _deviance(n - j, n * c / b)
            + 0.5 * math.log(n / (2 * math.pi * j * (n - j))))


@lru_cache(maxsize=1024)
def _log_tail(k: int, n: int, a: int, b: int) -> tuple[float, float]:
    """``(estimate, margin)`` with ``|ln P[X >= k] - estimate| < margin``.

    For ``0 < p = a/b < 1`` and ``0 < k <= n``. The terms ``t_i = P[X = i]`` rise
    to the mode ``m = floor((n+1)p)`` and fall after it. For ``k > m`` the tail is
    summed upward from ``t_k``; otherwise ``1 - P[X <= k-1]``, summed downward
    from ``t_{k-1}``. Either way every ratio is below one and decreasing, so once
    a term ``t`` with next ratio ``r`` is reached, all that is left is at most
    ``t * r / (1 - r)``.
    """
    c = b - a
    upward = k > (n + 1) * a // b
    j = k if upward else k - 1
    ln_lead = _log_term(j, n, a, b)
    total = term = 1.0
    i = j
    steps = 0
    while True:
        if upward:
            if i >= n:
                break
            ratio = (n - i) * a / ((i + 1) * c)
            i += 1
        else:
            if i <= 0:
                break
            ratio = i * c / ((n - i + 1) * a)
            i -= 1
        term *= ratio
        total += term
        steps += 1
        following = ratio * term  # the next ratio is below this one
        if following < 1 and following / (1 - ratio) <= total * _SERIES_STOP:
            break
    size = abs(ln_lead) + math.log(n) + steps + 16
    ln_sum = ln_lead + math.log(total)
    if upward:
        return ln_sum, _MARGIN * size
    lower = math.exp(ln_sum)  # P[X <= k-1], at most about one half here
    # ln(1 - L) moves by L / (1 - L) times what ln L moves by.
    widen = max(1.0, lower / (1.0 - lower)) if lower < 1 else math.inf
    return math.log1p(-lower), _MARGIN * size * widen


def _log_fraction(value: Fraction) -> float:
    """``ln value`` for a positive Fraction, to a unit in the last place, in or out of
    float range: ``value = 2**e * m`` with ``m`` near one, rounded once."""
    shift = value.numerator.bit_length() - value.denominator.bit_length()
    mantissa = value / 2**shift if shift >= 0 else value * 2**-shift
    return math.log(float(mantissa)) + shift * math.log(2)


# --------------------------------------------------------------------------- tail API


@dataclass(frozen=True)
class TailProbability:
    """``P[X >= k]`` for ``X ~ Binomial(n, p)``, decided exactly, shown as a float."""

    k: int
    n: int
    p: Fraction = HALF

    def __post_init__(self) -> None:
        check_int("n", self.n)
        check_int("k", self.k)
        if self.k > self.n + 1:
            raise ValueError(f"k must be between 0 and n + 1 = {self.n + 1}, got {self.k}")
        p = check_fraction("p", self.p)
        if not 0 <= p <= 1:
            raise ValueError(f"p must be between 0 and 1, got {p}")
        object.__setattr__(self, "p", p)

    def _trivial(self) -> bool | None:
        """``True`` if the tail is exactly 1, ``False`` if exactly 0, else ``None``."""
        k, n, p = self.k, self.n, self.p
        if k == 0:
            return True
        if k > n or p == 0:
            return False
        if p == 1:
            return True
        return None

    def at_most(self, alpha: Fraction) -> bool:
        """Exactly: is ``P[X >= k] <= alpha``? (See the module docstring for how.)"""
        alpha = check_fraction("alpha", alpha)
        trivial = self._trivial()
        if trivial is not None:
            return alpha >= (1 if trivial else 0)
        if alpha >= 1:
            return True
        if alpha <= 0:
            return False  # the tail is strictly positive here
        k, n, a, b = self.k, self.n, self.p.numerator, self.p.denominator
        if not _exact_is_cheap(k, n, b):
            estimate, margin = _log_tail(k, n, a, b)
            ln_alpha = _log_fraction(alpha)
            if ln_alpha >= estimate + margin:
                return True
            if ln_alpha <= estimate - margin:
                return False
        total = _exact_numerator(k, n, a, b)
        return total * alpha.denominator <= alpha.numerator * _power(b, n)

    def exact(self) -> Fraction:
        """The exact tail as a Fraction. Costly for large ``n``; decisions never need it."""
        trivial = self._trivial()
        if trivial is not None:
            return Fraction(int(trivial))
        k, n, a, b = self.k, self.n, self.p.numerator, self.p.denominator
        return Fraction(_exact_numerator(k, n, a, b), _power(b, n))

    def __float__(self) -> float:
        trivial = self._trivial()
        if trivial is not None:
            return float(trivial)
        k, n, a, b = self.k, self.n, self.p.numerator, self.p.denominator
        if _exact_is_cheap(k, n, b):
            return _exact_numerator(k, n, a, b) / _power(b, n)
        return math.exp(_log_tail(k, n, a, b)[0])


def _clear_caches() -> None:
    """Forget every cached tail (for cold timings)."""
    for cached in (_power, _exact_numerator, _log_tail):
        cached.cache_clear()


def binomial_upper_tail(k: int, n: int, p: Fraction = HALF) -> TailProbability:
    """``P[X >= k]`` for ``X ~ Binomial(n, p)``, ``0 <= k <= n + 1``, ``p`` a Fraction."""
    return TailProbability(k, n, p)


def paired_increase(new: int, fixed: int) -> TailProbability:
    """McNemar's exact one-sided test that a category grew against its baseline.

    Only discordant pairs carry information: ``new`` cases entered the category,
    ``fixed`` cases left it. Under no change each discordant case is a fair coin,
    so the p-value is ``P[Binomial(new + fixed, 1/2) >= new]`` (exactly 1 when
    there are no discordant cases).
    """
    check_int("new", new)
    check_int("fixed", fixed)
    return binomial_upper_tail(new, new + fixed, HALF)
