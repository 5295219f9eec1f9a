"""Exact statistics for comparing a run against a baseline, and noise bands.

Everything that decides a verdict here is exact: counts are integers, rates and
significance levels are :class:`fractions.Fraction`, and no float ever decides a
comparison. Floats appear only where a number is shown to a person
(``float(tail)``, :func:`wilson_interval`, ``NoiseBand.std``).

Binomial tails, exact and fast
------------------------------
:func:`binomial_upper_tail` returns ``P[X >= k]`` for ``X ~ Binomial(n, p)`` with
``p = a/b`` a Fraction. The exact value is the rational ``S / b**n``, where
``S = sum(comb(n, i) * a**i * (b-a)**(n-i) for i in range(k, n + 1))`` is an
integer of about ``n * log2(b)`` bits; summing it exactly costs about
``n**2 * log2(b)`` bit operations (about 0.4 s at ``n = 100,000`` and ``p = 1/2``,
1.5 s at ``p = 3/10``), too slow for every call. So a decision
``P[X >= k] <= alpha`` is taken in stages, each of which either decides
rigorously or says "too close to call":

1. *Small problems are summed exactly.* When the exact sum is cheap (``b**n``
   has at most 32,768 bits and ``min(k, n-k+1) * n * log2(b)`` is at most about
   4 million), ``S`` is computed with integers, from the shorter side of the
   distribution, and the decision is ``S * den(alpha) <= num(alpha) * b**n``.
2. *Otherwise an enclosure* ``lo <= P[X >= k] <= hi`` with a relative width of
   about ``2**-w`` is computed (``w = 64``, then ``w = 512``). If ``hi <= alpha``
   the answer is yes, if ``lo > alpha`` it is no; only an ``alpha`` inside the
   enclosure moves on to the next stage, and past ``w = 512`` to the exact sum
   of step 1. The answer is therefore always the exact one; the exact sum is
   only paid for an ``alpha`` within about ``2**-500`` (relative) of the true
   tail, that is, agreeing with it to some 150 significant digits. A significance
   level such as 1/20 or 1/1000 in practice never is; an ``alpha`` deliberately
   set equal to an exactly computed tail is, and then costs the exact sum.

The enclosure is the sum of a geometric-like series started at its largest
term. The terms ``t_i = P[X = i]`` rise up to the mode ``m = floor((n+1)p)`` and
fall after it, with ratios ``t_{i+1}/t_i = (n-i)a / ((i+1)(b-a))`` that shrink as
``i`` moves away from the mode. For ``k > m`` the tail ``sum_{i>=k} t_i`` is
summed upward from ``t_k``; otherwise ``1 - sum_{i<k} t_i`` is used, summed
downward from ``t_{k-1}``. Either way every ratio is below one and decreasing,
so once a term ``t`` with ratio ``r`` is reached, everything after it is at most
``t * r / (1 - r)``; the summation stops when that bound is below ``2**-(w+4)``
of the sum so far, and the bound is added to the upper end. The series is run
in integer fixed point twice, once rounding every step down and once rounding
every step up, so ``lo`` and ``hi`` are true bounds, not estimates. Near the
centre at ``n = 100,000`` this is about 1,500 steps on integers of about 120 bits
(4,200 steps on 570-bit integers for ``w = 512``).

The leading term ``t_j = comb(n, j) p**j (1-p)**(n-j)`` comes from its
logarithm, ``ln n! - ln j! - ln (n-j)! + j ln a + (n-j) ln(b-a) - n ln b``, in
interval arithmetic over :mod:`decimal`: additions, multiplications and
divisions round toward minus or plus infinity, and ``ln``/``exp`` (correctly
rounded by the decimal module) are widened by one unit in the last place.
``ln m!`` is the logarithm of ``math.factorial(m)`` for ``m < 1000`` and
otherwise Stirling's series ``(m + 1/2) ln m - m + ln(2 pi)/2 + sum_{j<=K}
B_2j / (2j (2j-1) m**(2j-1))`` whose remainder, for real ``m > 0``, is bounded
by the first omitted term (DLMF 5.11.ii); ``pi`` is bracketed by Machin's formula
in integers and the Bernoulli numbers are exact Fractions. The result is split
as ``2**E * exp(z)`` so only ``exp`` of a number near ``[0, 1)`` is needed, and
becomes an integer mantissa interval, so the whole enclosure is a pair of
dyadic rationals.

``float(tail)`` is the midpoint of the ``w = 64`` enclosure (relative error
below ``2**-45``; exact rational to float for small problems), so it agrees with
``scipy.stats.binomtest(...).pvalue`` far below ``1e-12`` and keeps its relative
accuracy in the far tails, down to float underflow.

Verdicts
--------
A baseline comparison pairs cases by id. ``new`` cases entered a category and
``fixed`` cases left it. :func:`regression_verdict` FAILs only when the increase
``new - fixed`` is both significant (McNemar's exact one-sided test on the
discordant pairs, :func:`paired_increase`) and larger than the noise band, and
WARNs when only one of the two holds.

The noise band, in whole cases, is ``max(1, band.max - band.min)``: the range of
the counts seen across repeated runs of one configuration. Not a multiple of
the standard deviation: with the 3 to 5 repeated runs a team can afford, a
sample standard deviation is itself very unstable (with 3 runs its relative
standard error is about 50%) and a "k sigma" band assumes normality, while the
range is exactly "how far the same configuration moved", is an integer like the
counts it is compared with, and is something a reviewer can check by eye
against the recorded runs. ``std`` is recorded for information only.
"""

from __future__ import annotations

import math
import numbers
import statistics
from dataclasses import dataclass
from decimal import (
    MAX_EMAX,
    MIN_EMIN,
    ROUND_CEILING,
    ROUND_FLOOR,
    Context,
    Decimal,
    DivisionByZero,
    InvalidOperation,
    Overflow,
)
from fractions import Fraction
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "NoiseBand",
    "TailProbability",
    "Verdict",
    "band_cases",
    "binomial_upper_tail",
    "measure_noise",
    "noise_band_document",
    "paired_increase",
    "rate_verdict",
    "read_noise_band",
    "regression_verdict",
    "smallest_detectable",
    "wilson_interval",
]

Verdict = Literal["PASS", "WARN", "FAIL"]

HALF = Fraction(1, 2)

# A dyadic rational m * 2**e, as (m, e).
_Dyadic = tuple[int, int]
# A closed interval of Decimals, (lower, upper).
_Interval = tuple[Decimal, Decimal]

# Precisions of the enclosure stages, in bits; past the last, the exact sum.
_STAGES = (64, 512)
# The exact sum is used outright when min(k, n-k+1) * n * bits(b) is at most this.
_EXACT_BUDGET = 1 << 22
# ... and only when b**n has at most this many bits.
_EXACT_SIZE = 1 << 15
# Below this, ln m! is the logarithm of the exact factorial; from it on, Stirling.
_STIRLING_FROM = 1000
# Terms per block in the exact sum (one big division per block, not per term).
_BLOCK = 64


# --------------------------------------------------------------------------- input checks


def _check_int(name: str, value: object, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _check_fraction(name: str, value: object) -> Fraction:
    """An exact rational: a Fraction or an int. Floats are refused, not converted."""
    if isinstance(value, bool) or not isinstance(value, numbers.Rational):
        raise TypeError(
            f"{name} must be a fractions.Fraction (or int), got {type(value).__name__}; "
            f"a float is not exact, write Fraction(1, 20) or Fraction('0.05')"
        )
    return Fraction(value)


def _check_alpha(alpha: object) -> Fraction:
    value = _check_fraction("alpha", alpha)
    if not 0 < value < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {value}")
    return value


# --------------------------------------------------------------------------- exact tails


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


# --------------------------------------------------------------------------- interval arithmetic


def _contexts(digits: int) -> tuple[Context, Context]:
    """Contexts rounding down and up, independent of the caller's decimal settings."""
    def context(rounding: str) -> Context:
        return Context(prec=digits, rounding=rounding, Emin=MIN_EMIN, Emax=MAX_EMAX,
                       capitals=1, clamp=0, flags=[],
                       traps=[InvalidOperation, DivisionByZero, Overflow])
    return context(ROUND_FLOOR), context(ROUND_CEILING)


def _ln_int(value: int, digits: int) -> _Interval:
    """An interval holding ``ln(value)`` for an integer ``value >= 1``."""
    if value == 1:
        return Decimal(0), Decimal(0)
    down, up = _contexts(digits)
    # ln is correctly rounded (to nearest): the true value lies between its neighbours.
    approx = down.ln(Decimal(value))
    return down.next_minus(approx), up.next_plus(approx)


@lru_cache(maxsize=64)
def _pi_dyadic(bits: int) -> tuple[int, int]:
    """``(lo, hi)`` with ``lo <= pi * 2**bits <= hi``, by Machin's formula in integers."""
    scale = bits + 16

    def arctan_inv(x: int) -> tuple[int, int]:
        # arctan(1/x) = sum (-1)^j / ((2j+1) x^(2j+1)). Each floored term is off by
        # less than one unit; the first omitted term (zero after flooring) by less.
        total = 0
        power = (1 << scale) // x
        j = 0
        while power:
            term = power // (2 * j + 1)
            total += -term if j % 2 else term
            power //= x * x
            j += 1
        slack = j + 2
        return total - slack, total + slack

    lo5, hi5 = arctan_inv(5)
    lo239, hi239 = arctan_inv(239)
    lo = 16 * lo5 - 4 * hi239
    hi = 16 * hi5 - 4 * lo239
    return lo >> 16, -((-hi) >> 16)


@lru_cache(maxsize=16)
def _constants(digits: int) -> tuple[_Interval, _Interval]:
    """Intervals holding ``ln(2)`` and ``ln(2 pi) / 2`` at this precision."""
    down, up = _contexts(digits)
    ln2 = _ln_int(2, digits)
    bits = int(digits * 3.33) + 16
    pi_lo, pi_hi = _pi_dyadic(bits)
    scale = Decimal(1 << (bits - 1))  # 2 pi = pi_dyadic / 2**(bits-1)
    two_pi_lo = down.divide(Decimal(pi_lo), scale)
    two_pi_hi = up.divide(Decimal(pi_hi), scale)
    half_ln_lo = down.multiply(Decimal("0.5"), down.next_minus(down.ln(two_pi_lo)))
    half_ln_hi = up.multiply(Decimal("0.5"), up.next_plus(up.ln(two_pi_hi)))
    return ln2, (half_ln_lo, half_ln_hi)


_BERNOULLI_STEP = 16


@cache
def _bernoulli_table(limit: int) -> tuple[Fraction, ...]:
    """``B_0 .. B_limit`` exactly (``B_1 = -1/2``); ``limit`` a multiple of the step."""
    if limit <= 0:
        return (Fraction(1),)
    table = list(_bernoulli_table(limit - _BERNOULLI_STEP))
    for m in range(len(table), limit + 1):
        if m % 2 and m > 1:
            table.append(Fraction(0))
            continue
        total = sum((math.comb(m + 1, j) * table[j] for j in range(m) if table[j]), Fraction(0))
        table.append(-total / (m + 1))
    return tuple(table)


def _bernoulli(index: int) -> Fraction:
    """The Bernoulli number ``B_index``, exactly."""
    limit = -(-index // _BERNOULLI_STEP) * _BERNOULLI_STEP
    return _bernoulli_table(limit)[index]


def _fraction_interval(value: Fraction, digits: int) -> _Interval:
    down, up = _contexts(digits)
    num, den = Decimal(value.numerator), Decimal(value.denominator)
    return down.divide(num, den), up.divide(num, den)


@lru_cache(maxsize=256)
def _ln_factorial(m: int, digits: int, bits: int) -> _Interval:
    """An interval holding ``ln(m!)``, accurate to about ``2**-bits`` absolute."""
    if m < _STIRLING_FROM:
        return _ln_int(math.factorial(m), digits)
    down, up = _contexts(digits)
    # Stirling: ln m! = (m + 1/2) ln m - m + ln(2 pi)/2 + sum_{j=1..K} B_2j / (2j(2j-1) m^(2j-1))
    # + R_K, |R_K| <= |B_2K+2| / ((2K+2)(2K+1) m^(2K+1)) for real m > 0 (DLMF 5.11.ii).
    series = Fraction(0)
    target = Fraction(1, 1 << bits)
    j = 1
    while True:
        series += _bernoulli(2 * j) / (2 * j * (2 * j - 1) * m ** (2 * j - 1))
        nxt = 2 * j + 2
        remainder = abs(_bernoulli(nxt)) / (nxt * (nxt - 1) * m ** (nxt - 1))
        if remainder <= target:
            break
        j += 1
    s_lo = _fraction_interval(series - remainder, digits)[0]
    s_hi = _fraction_interval(series + remainder, digits)[1]
    ln_lo, ln_hi = _ln_int(m, digits)
    _, (c_lo, c_hi) = _constants(digits)
    half = Decimal("0.5")
    m_lo, m_hi = down.add(Decimal(m), half), up.add(Decimal(m), half)  # m + 1/2
    lo = down.add(down.subtract(down.multiply(m_lo, ln_lo), Decimal(m)), down.add(c_lo, s_lo))
    hi = up.add(up.subtract(up.multiply(m_hi, ln_hi), Decimal(m)), up.add(c_hi, s_hi))
    return lo, hi


def _lead_term(j: int, n: int, a: int, b: int, w: int) -> tuple[int, int, int]:
    """``(lo, hi, e)`` with ``lo * 2**e <= comb(n, j) p**j (1-p)**(n-j) <= hi * 2**e``.

    The relative width is about ``2**-w``.
    """
    c = b - a
    magnitude = n * (math.log2(n + 2) + math.log2(b) + 2) + 64
    mag_bits = int(magnitude).bit_length()
    digits = int((w + 32 + mag_bits) * 0.30103) + 6
    bits = w + 32
    down, up = _contexts(digits)

    def scaled(factor: int, value: int) -> _Interval:
        lo, hi = _ln_int(value, digits)
        f = Decimal(factor)
        return down.multiply(f, lo), up.multiply(f, hi)

    parts_plus = [_ln_factorial(n, digits, bits), scaled(j, a), scaled(n - j, c)]
    parts_minus = [_ln_factorial(j, digits, bits), _ln_factorial(n - j, digits, bits),
                   scaled(n, b)]
    y_lo = Decimal(0)
    y_hi = Decimal(0)
    for lo, hi in parts_plus:
        y_lo, y_hi = down.add(y_lo, lo), up.add(y_hi, hi)
    for lo, hi in parts_minus:
        y_lo, y_hi = down.subtract(y_lo, hi), up.subtract(y_hi, lo)

    # t = 2**E * exp(y - E ln 2), so that exp only sees a number near [0, 1).
    (l2_lo, l2_hi), _ = _constants(digits)
    exponent = math.floor(float(y_lo) / math.log(2))
    e_dec = Decimal(exponent)
    if exponent >= 0:
        el_lo, el_hi = down.multiply(e_dec, l2_lo), up.multiply(e_dec, l2_hi)
    else:
        el_lo, el_hi = down.multiply(e_dec, l2_hi), up.multiply(e_dec, l2_lo)
    z_lo = down.subtract(y_lo, el_hi)
    z_hi = up.subtract(y_hi, el_lo)
    ex_lo = down.next_minus(down.exp(z_lo))
    ex_hi = up.next_plus(up.exp(z_hi))
    g = w + 16
    scale = Decimal(1 << g)
    m_lo = int(down.multiply(ex_lo, scale).to_integral_value(ROUND_FLOOR, down))
    m_hi = int(up.multiply(ex_hi, scale).to_integral_value(ROUND_CEILING, up))
    return max(m_lo, 0), m_hi, exponent - g


def _series(j: int, n: int, a: int, b: int, upward: bool, w: int) -> tuple[int, int, int]:
    """``(lo, hi, f)``: ``lo / 2**f <= sum of t_i / t_j <= hi / 2**f``.

    Upward: over ``i >= j`` (needs ``j`` at or past the mode). Downward: over
    ``i <= j`` (needs ``j`` below the mode). In both the ratios are below one and
    decreasing, which makes the geometric bound on what is left valid.
    """
    c = b - a
    if upward:  # t_{i+1}/t_i = (n-i) a / ((i+1) c), i = j, j+1, ...
        nu, dnu, de, dde = (n - j) * a, a, (j + 1) * c, c
    else:  # t_{i-1}/t_i = i c / ((n-i+1) a), i = j, j-1, ...
        nu, dnu, de, dde = j * c, c, (n - j + 1) * a, a
    f = w + 48
    stop = w + 4
    lo = hi = 1 << f
    sum_lo = sum_hi = lo
    while nu > 0:
        # Everything after the current term is at most hi * r / (1 - r), r = nu / de.
        if nu < de and hi * nu <= (de - nu) * (sum_lo >> stop):
            break
        lo = lo * nu // de
        hi = -(-hi * nu // de)
        sum_lo += lo
        sum_hi += hi
        nu -= dnu
        de += dde
    rest = -(-hi * nu // (de - nu)) if nu > 0 else 0
    return sum_lo, sum_hi + rest, f


@lru_cache(maxsize=1024)
def _enclosure(k: int, n: int, a: int, b: int, w: int) -> tuple[_Dyadic, _Dyadic]:
    """Dyadic bounds ``lo <= P[X >= k] <= hi`` of relative width about ``2**-w``.

    For ``0 < p < 1`` and ``0 < k <= n``.
    """
    mode = (n + 1) * a // b
    upward = k > mode
    j = k if upward else k - 1
    t_lo, t_hi, te = _lead_term(j, n, a, b, w)
    s_lo, s_hi, f = _series(j, n, a, b, upward, w)
    e = te - f
    lo, hi = t_lo * s_lo, t_hi * s_hi
    one = 1 << -e  # e < 0: the lead term is at most one and f > 0
    if not upward:  # P[X >= k] = 1 - P[X <= k-1]
        lo, hi = one - hi, one - lo
    lo, hi = max(lo, 0), min(hi, one)
    # Keep w + 64 significant bits, rounding outward: 1 - L has as many bits as 2**-e.
    keep = w + 64
    excess = max(hi.bit_length() - keep, 0)
    return (lo >> excess, e + excess), (-(-hi >> excess), e + excess)


def _dyadic_at_most(value: _Dyadic, alpha: Fraction) -> bool:
    m, e = value
    if e >= 0:
        return (m << e) * alpha.denominator <= alpha.numerator
    return m * alpha.denominator <= alpha.numerator << -e


def _dyadic_float(m: int, e: int) -> float:
    return float(m << e) if e >= 0 else m / (1 << -e)


# --------------------------------------------------------------------------- tail API


@dataclass(frozen=True)
class TailProbability:
    """``P[X >= k]`` for ``X ~ Binomial(n, p)``, decided exactly, shown as a float."""

    k: int
    n: int
    p: Fraction = HALF

    def __post_init__(self) -> None:
        _check_int("n", self.n)
        _check_int("k", self.k)
        if self.k > self.n + 1:
            raise ValueError(f"k must be between 0 and n + 1 = {self.n + 1}, got {self.k}")
        p = _check_fraction("p", self.p)
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
        alpha = _check_fraction("alpha", alpha)
        trivial = self._trivial()
        if trivial is not None:
            return alpha >= (1 if trivial else 0)
        if alpha >= 1:
            return True
        if alpha <= 0:
            return False  # the tail is strictly positive here
        k, n, a, b = self.k, self.n, self.p.numerator, self.p.denominator
        if not _exact_is_cheap(k, n, b):
            for w in _STAGES:
                lo, hi = _enclosure(k, n, a, b, w)
                if _dyadic_at_most(hi, alpha):
                    return True
                if not _dyadic_at_most(lo, alpha):
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
        return _tail_float(self.k, self.n, self.p)


@lru_cache(maxsize=1024)
def _tail_float(k: int, n: int, p: Fraction) -> float:
    trivial = TailProbability(k, n, p)._trivial()
    if trivial is not None:
        return float(trivial)
    a, b = p.numerator, p.denominator
    if not _exact_is_cheap(k, n, b):
        for w in _STAGES:
            (lm, le), (hm, he) = _enclosure(k, n, a, b, w)
            e = min(le, he)
            lo, hi = lm << (le - e), hm << (he - e)
            if (hi - lo) << 45 <= lo:
                return _dyadic_float(lo + hi, e - 1)
    return _exact_numerator(k, n, a, b) / _power(b, n)


def _clear_caches() -> None:
    """Forget every cached tail, enclosure and constant (for cold timings)."""
    for cached in (_power, _exact_numerator, _pi_dyadic, _constants, _ln_factorial,
                   _enclosure, _tail_float, _bernoulli_table):
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
    _check_int("new", new)
    _check_int("fixed", fixed)
    return binomial_upper_tail(new, new + fixed, HALF)


# --------------------------------------------------------------------------- noise bands


@dataclass(frozen=True)
class NoiseBand:
    """How one category's count moved across ``n`` repeated runs of one configuration."""

    std: float
    min: int
    max: int
    n: int

    def __post_init__(self) -> None:
        if isinstance(self.std, bool) or not isinstance(self.std, (int, float)):
            raise TypeError(f"std must be a number, got {type(self.std).__name__}")
        if not math.isfinite(self.std) or self.std < 0:
            raise ValueError(f"std must be a finite number >= 0, got {self.std}")
        object.__setattr__(self, "std", float(self.std))
        _check_int("min", self.min)
        _check_int("max", self.max)
        _check_int("n", self.n, minimum=2)
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")


def measure_noise(runs: Sequence[Mapping[str, int]]) -> dict[str, NoiseBand]:
    """Per category, the spread of its count over repeated runs (at least two).

    A category missing from a run counted 0 in it. ``std`` is the sample standard
    deviation (``n - 1``), rounded to 6 decimals. Categories come out sorted.
    """
    if len(runs) < 2:
        raise ValueError(f"a noise band needs at least 2 runs, got {len(runs)}")
    for index, run in enumerate(runs):
        for category, count in run.items():
            if not isinstance(category, str) or not category:
                raise ValueError(f"run {index}: category names must be non-empty strings, "
                                 f"got {category!r}")
            _check_int(f"run {index}, count of {category!r}", count)
    categories = sorted({category for run in runs for category in run})
    bands: dict[str, NoiseBand] = {}
    for category in categories:
        counts = [run.get(category, 0) for run in runs]
        bands[category] = NoiseBand(std=round(statistics.stdev(counts), 6), min=min(counts),
                                    max=max(counts), n=len(counts))
    return bands


_MODE_PREFIX = "mode:"
_BAND_FIELDS = ("std", "min", "max", "n")


def noise_band_document(bands: Mapping[str, NoiseBand]) -> dict[str, Any]:
    """The ``noise_band.json`` shape: ``{"metric_band": {"mode:<category>": {...}}}``."""
    return {"metric_band": {
        f"{_MODE_PREFIX}{category}": {"std": band.std, "min": band.min, "max": band.max,
                                      "n": band.n}
        for category, band in sorted(bands.items())
    }}


def read_noise_band(document: Any) -> dict[str, NoiseBand]:
    """The inverse of :func:`noise_band_document`; ``ValueError`` naming the bad key.

    Other top-level keys are ignored; inside ``metric_band`` every key must be
    ``mode:<category>`` and every entry must have exactly ``std``, ``min``,
    ``max`` and ``n``.
    """
    if not isinstance(document, dict):
        raise ValueError(f"noise band: the document must be a JSON object, "
                         f"got {type(document).__name__}")
    if "metric_band" not in document:
        raise ValueError("noise band: missing key 'metric_band'")
    table = document["metric_band"]
    if not isinstance(table, dict):
        raise ValueError(f"noise band: 'metric_band' must be an object, "
                         f"got {type(table).__name__}")
    bands: dict[str, NoiseBand] = {}
    for key in sorted(table, key=str):
        where = f"noise band: metric_band[{key!r}]"
        if not isinstance(key, str) or not key.startswith(_MODE_PREFIX) \
                or len(key) == len(_MODE_PREFIX):
            raise ValueError(f"{where}: keys must look like 'mode:<category>'")
        entry = table[key]
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be an object, got {type(entry).__name__}")
        missing = [name for name in _BAND_FIELDS if name not in entry]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(repr(m) for m in missing)}")
        unknown = sorted(str(name) for name in entry if name not in _BAND_FIELDS)
        if unknown:
            raise ValueError(f"{where}: unknown {', '.join(repr(u) for u in unknown)}")
        try:
            band = NoiseBand(std=entry["std"], min=entry["min"], max=entry["max"],
                             n=entry["n"])
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}: {error}") from None
        bands[key[len(_MODE_PREFIX):]] = band
    return bands


# --------------------------------------------------------------------------- verdicts


def band_cases(band: NoiseBand | None) -> int:
    """The noise band in whole cases: ``max(1, band.max - band.min)``; 1 without a band."""
    if band is None:
        return 1
    return max(1, band.max - band.min)


def regression_verdict(new: int, fixed: int, band: NoiseBand | None,
                       alpha: Fraction) -> Verdict:
    """FAIL if the increase is significant and beyond the band, WARN if one of them, else PASS.

    ``increase = new - fixed``; significant means ``paired_increase(new, fixed)``
    is at most ``alpha``; beyond means ``increase > band_cases(band)``. No
    increase (a decrease, or no change) is always PASS.
    """
    _check_int("new", new)
    _check_int("fixed", fixed)
    alpha = _check_alpha(alpha)
    increase = new - fixed
    if increase <= 0:
        return "PASS"
    significant = paired_increase(new, fixed).at_most(alpha)
    beyond = increase > band_cases(band)
    if significant and beyond:
        return "FAIL"
    if significant or beyond:
        return "WARN"
    return "PASS"


def rate_verdict(count: int, n: int, max_rate: Fraction, alpha: Fraction | None) -> Verdict:
    """A rate ceiling with significance: PASS at or under ``max_rate``, exactly.

    Over the ceiling: FAIL if ``count`` is significantly above what the ceiling
    rate would give (``P[Binomial(n, max_rate) >= count] <= alpha``), WARN if
    not. With ``alpha`` None any excess is FAIL.
    """
    _check_int("n", n)
    _check_int("count", count)
    if count > n:
        raise ValueError(f"count ({count}) must not exceed n ({n})")
    rate = _check_fraction("max_rate", max_rate)
    if not 0 <= rate <= 1:
        raise ValueError(f"max_rate must be between 0 and 1, got {rate}")
    level = None if alpha is None else _check_alpha(alpha)
    if count * rate.denominator <= rate.numerator * n:  # count / n <= max_rate, exactly
        return "PASS"
    if level is None:
        return "FAIL"
    return "FAIL" if binomial_upper_tail(count, n, rate).at_most(level) else "WARN"


def smallest_detectable(n_discordant_noise: int, band: NoiseBand | None,
                        alpha: Fraction) -> int:
    """The smallest increase, in cases, that would FAIL against this much churn.

    With ``h = n_discordant_noise // 2`` cases leaving the category, it is the
    smallest ``k`` with ``regression_verdict(k + h, h, band, alpha) == "FAIL"``.
    It is well defined: ``beyond`` holds exactly for ``k > band_cases(band)``,
    and the p-value ``P[Bin(k + 2h, 1/2) >= k + h]`` never increases with ``k``
    (adding one discordant case that is new gives
    ``P[Y + C >= j + 1] = (P[Y >= j] + P[Y >= j + 1]) / 2 <= P[Y >= j]`` for a fair
    coin ``C``) and tends to 0, so the FAIL set is ``{k >= k0}`` for one ``k0``.
    The search brackets ``k0`` by doubling and then bisects, every probe exact.
    """
    _check_int("n_discordant_noise", n_discordant_noise)
    level = _check_alpha(alpha)
    half = n_discordant_noise // 2

    def significant(k: int) -> bool:
        return paired_increase(k + half, half).at_most(level)

    low = band_cases(band) + 1  # the smallest k that is beyond the band
    if significant(low):
        return low
    high = low * 2
    while not significant(high):
        low, high = high, high * 2
    # not significant at low, significant at high
    while high - low > 1:
        middle = (low + high) // 2
        if significant(middle):
            high = middle
        else:
            low = middle
    return high


# --------------------------------------------------------------------------- display


def wilson_interval(successes: Fraction, n: int,
                    z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval for ``successes / n``, for display only.

    ``successes`` may be fractional (metric values need not be 0 or 1); the
    bounds are clamped to ``[0, 1]``.
    """
    _check_int("n", n, minimum=1)
    value = _check_fraction("successes", successes)
    if not 0 <= value <= n:
        raise ValueError(f"successes must be between 0 and n = {n}, got {value}")
    if not (math.isfinite(z) and z > 0):
        raise ValueError(f"z must be a finite number > 0, got {z}")
    phat = float(value / n)
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (phat + z2 / (2 * n)) / denominator
    half_width = z / denominator * math.sqrt(phat * (1 - phat) / n + z2 / (4 * n * n))
    return max(0.0, centre - half_width), min(1.0, centre + half_width)
