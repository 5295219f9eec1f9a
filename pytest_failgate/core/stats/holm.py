"""Holm's step-down procedure, decided exactly: many tests, one false-alarm budget.

A run tests many things at once (each category against the baseline, each metric,
each rate ceiling with a significance level); at 0.05 each, a run of twenty tests
raises a false alarm far more often than one time in twenty. Holm's procedure keeps
the chance of *any* false alarm in the run at most ``alpha``, whatever the tests'
dependence, and is uniformly more powerful than Bonferroni: with the p-values
sorted, ``p(1) <= ... <= p(m)``, it rejects ``H(1) ... H(r)`` where ``r`` is the largest
``i`` with ``p(j) <= alpha / (m - j + 1)`` for every ``j <= i``.

A test that cannot reach the budget whatever the data, because its smallest possible
p-value is above it (a category with four discordant cases: ``2**-4 > 0.05``), is not
counted in ``m`` (Tarone's refinement for discrete tests: such a test can never raise
a false alarm, so it needs no share of the budget). Its smallest p-value is that of
the most extreme outcome, ``P[X >= n]``, which depends only on how many cases the test
is over (the discordant ones), never on which way they moved.

No p-value is ever compared as a float. ``p(j) <= alpha / (m - j + 1)`` holds exactly
when at least ``j`` tests are at most that level (counting), and a test is at most a
level from :meth:`.binomial.TailProbability.at_most`. Each test's least step ``t``
(the smallest with ``p <= alpha / (m - t + 1)``; the levels grow with ``t``) is found
by bisection, so ``m`` tests cost ``O(m log m)`` exact decisions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .binomial import binomial_upper_tail
from .checks import check_alpha

if TYPE_CHECKING:
    from collections.abc import Sequence
    from fractions import Fraction

    from .binomial import TailProbability


def _least_step(test: TailProbability, alpha: Fraction, m: int) -> int | None:
    """The smallest ``t`` in ``1..m`` with ``p <= alpha / (m - t + 1)``, or None."""
    if not test.at_most(alpha):  # the largest level, at t = m
        return None
    low, high = 1, m
    while low < high:
        middle = (low + high) // 2
        if test.at_most(alpha / (m - middle + 1)):
            high = middle
        else:
            low = middle + 1
    return low


def can_reach(test: TailProbability, alpha: Fraction) -> bool:
    """Whether the test's most extreme outcome, ``P[X >= n]``, is at most ``alpha``."""
    return binomial_upper_tail(test.n, test.n, test.p).at_most(alpha)


def holm(tests: Sequence[TailProbability], alpha: Fraction) -> tuple[list[bool], int]:
    """Which of ``tests`` (one-sided p-values) Holm's procedure rejects at ``alpha``, and
    how many it counted (tests that cannot reach ``alpha`` are not: see the module
    docstring)."""
    alpha = check_alpha(alpha)
    counted = [can_reach(test, alpha) for test in tests]
    m = sum(counted)
    steps = [_least_step(test, alpha, m) if reach else None
             for test, reach in zip(tests, counted, strict=True)]
    # how many tests are at most the level of step t: those whose least step is <= t
    at_most = [0] * (m + 2)
    for step in steps:
        if step is not None:
            at_most[step] += 1
    rejected, running = 0, 0
    for t in range(1, m + 1):
        running += at_most[t]
        if running < t:
            break
        rejected = t
    # the rejected tests are exactly those at most the level of step `rejected`
    return [step is not None and rejected > 0 and step <= rejected for step in steps], m
