"""How many of a sample's labels to draw from the judge's stratum of one category.

The exact test (``stats.poststrat``) conditions on how many labelled cases fall in the
judge's stratum of the category (``n1`` of its ``J``) and how many outside it (``n0`` of
``N - J``), so it stays exactly valid for a sample drawn at two rates, uniformly within
each of the two strata. A uniform sample puts only ``J / N`` of its labels in the judge's
stratum: for a small category that is a handful of cases, and the judge's wrong calls
there are barely measured. Measured (``bench/judge_correction.py``, 5,000 cases, one 5%
category, a +50% regression, 300 labels): caught in 74% of runs with a uniform sample,
in 99.5% with 30% of the labels in the judge's stratum.

Only for one category (or ``total``, whose judge's stratum is every failed case): with
several categories, oversampling the judge's stratum of one samples the others' outside
strata at several rates, which the two-stratum test does not allow.
"""

from __future__ import annotations

from fractions import Fraction

from .checks import check_fraction

JUDGED_SHARE = Fraction(3, 10)  # the share measured above


def allocate(size: int, judged: int, others: int, share: Fraction = JUDGED_SHARE
             ) -> tuple[int, int]:
    """``(n1, n0)``: ``size`` labels split between the judge's stratum (``judged`` cases)
    and the rest (``others``), ``share`` of them in the judge's stratum, never more than a
    stratum holds (the remainder goes to the other) and never fewer than a uniform draw
    would put there on average."""
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= judged + others:
        raise ValueError("a sample of at most the run's cases")
    share = check_fraction("share", share)
    total = judged + others
    uniform = Fraction(size * judged, total) if total else Fraction(0)
    wanted = max(share * size, uniform)
    n1 = min(judged, size, int(wanted + Fraction(1, 2)))  # rounded half up
    n0 = size - n1
    if n0 > others:  # the rest does not hold them: the judge's stratum takes them
        n1, n0 = size - others, others
    return n1, n0
