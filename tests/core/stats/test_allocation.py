"""The split of a sample between the judge's stratum of a category and the rest
(``core.stats.allocation``), and that the exact test stays valid for it."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from pytest_failgate.core.stats.allocation import allocate
from pytest_failgate.core.stats.poststrat import Sample, StratifiedTest


def test_the_share_goes_to_the_judges_stratum_within_what_each_stratum_holds() -> None:
    assert allocate(300, 250, 4750) == (90, 210)  # 30%, where a uniform draw puts 15
    assert allocate(300, 40, 4960) == (40, 260)  # the stratum holds only 40
    assert allocate(300, 4000, 1000) == (240, 60)  # a uniform draw's 80% is kept
    assert allocate(100, 95, 5) == (95, 5)
    with pytest.raises(ValueError, match="at most"):
        allocate(11, 5, 5)


def test_a_sample_stratified_by_the_judge_keeps_the_false_alarm_rate() -> None:
    # an unchanged system at its ceiling (the true count is the ceiling), 600 cases, the
    # judge's stratum oversampled: the one-sided test at 1/10 fails at most 1 run in 10
    rng = random.Random(13)
    level, fails, runs = Fraction(1, 10), 0, 300
    for _ in range(runs):
        truth = [rng.random() < 0.05 for _ in range(600)]
        judge = [(t and rng.random() > 0.2) or (not t and rng.random() < 0.02)
                 for t in truth]
        inside = [i for i in range(600) if judge[i]]
        outside = [i for i in range(600) if not judge[i]]
        n1, n0 = allocate(90, len(inside), len(outside))
        drawn_in, drawn_out = rng.sample(inside, n1), rng.sample(outside, n0)
        sample = Sample(600, len(inside), n1, n0, sum(truth[i] for i in drawn_out),
                        sum(not truth[i] for i in drawn_in))
        fails += StratifiedTest(sample, level / 10).rejects(sum(truth), level)
    assert fails / runs <= 0.1
