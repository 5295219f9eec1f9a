"""Verdicts on a change against a baseline: pass, warn or fail, decided exactly.

A baseline comparison pairs cases by id. ``new`` cases entered a category and
``fixed`` cases left it. :func:`regression_verdict` FAILs only when the increase
``new - fixed`` is both significant (McNemar's exact one-sided test on the
discordant pairs, :func:`.binomial.paired_increase`) and larger than the noise
band, and WARNs when only one of the two holds.

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

from typing import TYPE_CHECKING

from ..stats.binomial import paired_increase
from ..stats.checks import check_alpha, check_int
from ..taxonomy.model import TOTAL
from . import PASSED_MODE

if TYPE_CHECKING:
    from collections.abc import Mapping
    from fractions import Fraction

    from ..base.verdict import BaselineVerdict
    from .noise import NoiseBand


def band_of(bands: Mapping[str, NoiseBand], name: str) -> NoiseBand | None:
    """A count's band: its own, and for ``total`` the passed cases' (``mode:correct``, as
    the regression gate writes it: a case leaves the passed ones as it fails, so over runs
    of one size the failed count spreads exactly as the passed count does)."""
    band = bands.get(name)
    if band is None and name == TOTAL:
        return bands.get(PASSED_MODE)
    return band


def band_cases(band: NoiseBand | None) -> int:
    """The noise band in whole cases: ``max(1, band.max - band.min)``; 1 without a band."""
    if band is None:
        return 1
    return max(1, band.max - band.min)


def regression_verdict(new: int, fixed: int, band: NoiseBand | None,
                       alpha: Fraction, significant: bool | None = None) -> BaselineVerdict:
    """``fail`` if the increase is significant and beyond the band, ``warn`` if one of them.

    ``increase = new - fixed``; significant means ``paired_increase(new, fixed)``
    is at most ``alpha``; beyond means ``increase > band_cases(band)``. No
    increase (a decrease, or no change) is always ``pass``. ``significant``, when
    given, is the test's decision among the run's tests (Holm, ``core.gate.family``).
    """
    check_int("new", new)
    check_int("fixed", fixed)
    alpha = check_alpha(alpha)
    increase = new - fixed
    if increase <= 0:
        return "pass"
    if significant is None:
        significant = paired_increase(new, fixed).at_most(alpha)
    beyond = increase > band_cases(band)
    if significant and beyond:
        return "fail"
    if significant or beyond:
        return "warn"
    return "pass"


def paired_verdict(worse: int, better: int, decline: Fraction, band: Fraction,
                   alpha: Fraction, significant: bool | None = None) -> BaselineVerdict:
    """The same rule for a per-case metric: worse and better are the discordant pairs.

    ``decline`` is how far the paired sum fell (in the metric's units, one case of
    a true/false metric being 1) and ``band`` the decline the noise explains, in the
    same units, at least one case. ``fail`` when the decline is significant (an exact sign test,
    which for a true/false metric is McNemar's) and beyond the band; ``warn`` for one.
    """
    check_int("worse", worse)
    check_int("better", better)
    alpha = check_alpha(alpha)
    if decline <= 0:
        return "pass"
    if significant is None:
        significant = paired_increase(worse, better).at_most(alpha)
    significant = significant and worse > better
    beyond = decline > band
    if significant and beyond:
        return "fail"
    if significant or beyond:
        return "warn"
    return "pass"
