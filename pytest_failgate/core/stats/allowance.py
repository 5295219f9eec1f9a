"""Noise-aware ceilings: how far an unchanged system's count may rise by chance, exactly.

On a noisy pipeline a ceiling is the count observed when it was set plus an
**allowance**: the rise that an unchanged system exceeds with probability at most
``alpha`` per run. The model is the one every paired test here rests on: cases are
independent, and between two runs of one configuration some cases move into or out
of a category. For two runs of an unchanged system the moves are symmetric: given
that ``d`` cases moved, each moved in (or out) with probability 1/2, so the rise
``D = in - out`` is ``2 Bin(d, 1/2) - d`` (McNemar's sign argument), whatever each
case's own probability. Its tail is an exact binomial tail (:mod:`.binomial`).

How many cases move is measured by a noise source, as the expected number ``mu``
that move between two runs (:class:`Movement`):

- repeated runs (``failgate noise``): a case seen in the category in ``k`` of ``r``
  runs moved in ``k (r - k)`` of the ``r (r - 1) / 2`` pairs of runs, so
  ``mu = sum k (r - k) / (r (r - 1) / 2)``, the unbiased estimate;
- repeats inside one run (Inspect epochs, karenina replicates): a unit (a sample)
  with ``k`` of its ``r`` repeats in the category moves ``2 k (r - k) / (r - 1)`` of
  its repeats between two runs, in expectation (again unbiased).

A few repeats estimate ``mu`` loosely, and a category that never moved in three runs
can still move. So the allowance uses ``d = ceil(mu + sqrt(mu)) + 2`` cases that may
move: one standard deviation above the estimate (a count of independent rare events
has variance about its mean), and two more for what so few repeats cannot have seen.
``bench/noise_loop.py`` measures what this gives: false alarms of unchanged pull
requests and the power to catch a regression, over repeats, flip rates and sizes.

Independent moves are not all of real noise: on a harsher day every flaky case moves
the same way. A count that spreads over repeated runs more than its movement explains
carries a **dispersion factor** (:mod:`.dispersion`: a chi-square bound of its
variance over the runs, at least 1), and is taken to move as ``ceil(phi * mu)``
independent cases would, so that the rise's variance is the count's between two runs;
the bound of the variance replaces the one standard deviation and two cases added above
(it bounds the same uncertainty), and the allowance is never narrower than the one of
independent moves.

All decisions are exact (integers, fractions, exact binomial tails); nothing is
resampled. Without a noise source there is no movement: ``d = 0``, the allowance is
0 and a ceiling is the exact count, as on a deterministic pipeline.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ..base.classes import dataclass
from ..base.formatting import format_number
from .binomial import binomial_upper_tail
from .checks import check_alpha, check_fraction, check_int
from .dispersion import CONFIDENCE

__all__ = ["POWER", "Movement", "allowance", "detectable", "may_move", "rate_allowance",
           "rate_upper", "rise_at_most"]

POWER = Fraction(4, 5)  # "the smallest regression it catches": with this probability
SEEN_FLOOR = 2  # cases added for movement a few repeats cannot have seen


@dataclass(frozen=True)
class Movement:
    """How many cases of a count move between two runs of one configuration.

    ``expected`` is the unbiased estimate (a Fraction); ``source`` says where it was
    measured, for the messages (``noise_band.json: 3 runs, 19 cases moved``);
    ``dispersion`` how much more than independent moves the count spreads (1: not more,
    or not measurable; see :mod:`.dispersion`), and ``runs`` over how many runs it was.
    """

    expected: Fraction
    source: str
    dispersion: Fraction = Fraction(1)
    runs: int | None = None  # the runs the dispersion was bounded from (None: not measured)

    def __post_init__(self) -> None:
        value = check_fraction("expected", self.expected)
        if value < 0:
            raise ValueError(f"expected movement must be >= 0, got {value}")
        object.__setattr__(self, "expected", value)
        factor = check_fraction("dispersion", self.dispersion)
        if factor < 1:
            raise ValueError(f"a dispersion factor is at least 1, got {factor}")
        object.__setattr__(self, "dispersion", factor)

    @property
    def cases(self) -> int:
        """The cases that may move: :func:`may_move` of the estimate, or the estimate times
        the dispersion when that is more (the count's own spread, bounded)."""
        return max(may_move(self.expected), math.ceil(self.expected * self.dispersion))

    def allowance(self, level: Fraction) -> int:
        """The allowance this count needs at ``level``: the one place it is computed."""
        return allowance(self.cases, level)

    @property
    def model(self) -> str:
        """Which noise model the allowance rests on, in words (the power line says it)."""
        if self.dispersion > 1:
            return (f"overdispersed: spread x{format_number(self.dispersion)} beyond "
                    f"independent case moves (chi-square bound at "
                    f"{format_number(CONFIDENCE * 100)}% over {self.runs} runs)")
        if self.runs is None:
            return "independent case moves (day-to-day drift not measured)"
        return f"independent case moves (spread over {self.runs} runs within them)"

    @property
    def described(self) -> str:
        """The source and the model: what a row's power line says."""
        return f"{self.source}; {self.model}"


def may_move(expected: Fraction) -> int:
    """``ceil(mu + sqrt(mu)) + 2``, computed exactly (no float square root)."""
    mu = check_fraction("expected", expected)
    if mu < 0:
        raise ValueError(f"expected movement must be >= 0, got {mu}")
    # the smallest integer n >= mu with (n - mu)**2 >= mu; it is at least
    # ceil(mu) + isqrt(floor(mu)), as sqrt(mu) >= isqrt(floor(mu))
    n = math.ceil(mu) + math.isqrt(math.floor(mu))
    while (n - mu) ** 2 < mu:
        n += 1
    return n + SEEN_FLOOR


def rise_at_most(moving: int, rise: int, level: Fraction) -> bool:
    """Exactly: ``P[D >= rise] <= level`` for ``D = 2 Bin(moving, 1/2) - moving``."""
    if rise <= -moving:
        return level >= 1
    if rise > moving:
        return level >= 0
    k = -(-(moving + rise) // 2)  # ceil((moving + rise) / 2): D >= rise iff Bin >= k
    return binomial_upper_tail(k, moving).at_most(level)


def allowance(moving: int, alpha: Fraction) -> int:
    """The least ``a >= 0`` with ``P[D > a] <= alpha``: an unchanged system whose count
    moves over ``moving`` cases rises by more than ``a`` with probability at most alpha."""
    check_int("moving", moving)
    alpha = check_alpha(alpha)
    low, high = 0, moving  # P[D > moving] = 0
    while low < high:  # the tail falls as a grows: bisect on exact decisions
        middle = (low + high) // 2
        if rise_at_most(moving, middle + 1, alpha):
            high = middle
        else:
            low = middle + 1
    return low


def detectable(moving: int, headroom: int, power: Fraction = POWER) -> int:
    """The smallest regression (in cases) caught with probability at least ``power``.

    A ceiling ``headroom`` cases above the count it was set from fails a run whose
    count rose by more than that; a regression of ``r`` cases rises ``r + D``. The
    smallest ``r >= 1`` with ``P[r + D > headroom] >= power`` is ``headroom + s`` with
    ``s`` the least shift whose tail ``P[D >= s]`` is at most ``1 - power`` (``D`` is
    symmetric), i.e. ``s = allowance(moving, 1 - power) + 1``. Without movement it is
    ``headroom + 1``: a deterministic gate catches exactly the cases past its ceiling.
    """
    check_int("moving", moving)
    if isinstance(headroom, bool) or not isinstance(headroom, int):
        raise TypeError(f"headroom must be an int, got {type(headroom).__name__}")
    shift = allowance(moving, 1 - check_fraction("power", power)) + 1
    return max(1, headroom + shift)


RATE_CONFIDENCE = Fraction(95, 100)  # the upper bound of an outside-the-system error rate
_RATE_SCALE = 10**6  # that bound, rounded up to this


def rate_upper(seen: int, trials: int, confidence: Fraction = RATE_CONFIDENCE) -> Fraction:
    """The one-sided upper Clopper-Pearson bound of ``seen / trials``, rounded up to 1e-6.

    The rate ``p`` with ``P[Bin(trials, p) <= seen] = 1 - confidence``, found by
    bisection on exact tail decisions; with nothing seen it is still above 0 (about
    ``3 / trials`` at 95%): a few runs without an error do not show the rate is 0.
    """
    check_int("trials", trials, minimum=1)
    check_int("seen", seen)
    if seen >= trials:
        return Fraction(1)
    level = check_fraction("confidence", confidence)
    low, high = 0, _RATE_SCALE  # in millionths
    while low < high:
        middle = (low + high) // 2
        # P[X >= seen + 1 | p] rises with p; the bound is where it reaches `confidence`
        if binomial_upper_tail(seen + 1, trials, Fraction(middle, _RATE_SCALE)).at_most(level):
            low = middle + 1
        else:
            high = middle
    return Fraction(low, _RATE_SCALE)


def rate_allowance(seen: int, trials: int, n: int, observed: int, level: Fraction) -> int:
    """The allowance of a count of failures outside the system (provider or judge errors),
    from their observed rate: ``seen`` of ``trials`` cases over the runs that measured it.

    At the rate's upper bound (:func:`rate_upper`) a run of ``n`` cases exceeds ``c``
    such failures with probability at most ``level`` for the least such ``c``; the
    allowance is what ``c`` leaves above ``observed`` (at least 0). An error rate is a
    tolerance like any count: a steady 1% of provider errors makes no run inconclusive.
    """
    check_int("n", n)
    check_int("observed", observed)
    level = check_alpha(level)
    rate = rate_upper(seen, trials)
    low, high = 0, n  # P[Bin(n, rate) > n] = 0
    while low < high:
        middle = (low + high) // 2
        if binomial_upper_tail(middle + 1, n, rate).at_most(level):
            high = middle
        else:
            low = middle + 1
    return max(0, low - observed)
