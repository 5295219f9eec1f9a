"""The judge's agreement figures (``core.stats.agreement``) against independent references:
scipy's beta quantiles for Clopper-Pearson, the textbook formula for Cohen's kappa (and
scikit-learn's definition written out), the exact coverage of the intervals, and "not
applicable" wherever a denominator is 0."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from scipy import stats  # type: ignore[import-untyped, unused-ignore]

from pytest_failgate.core.stats.agreement import (
    CONFIDENCE,
    PASS,
    TRUST_LEVEL,
    agreement,
    kappa,
    share,
    trust,
)

CATEGORIES = ("retrieval_miss", "generator_hallucination", "unknown")


def _reference_bounds(hits: int, of: int) -> tuple[float, float]:
    """Clopper-Pearson from the beta distribution's quantiles (an independent route)."""
    a = float(1 - CONFIDENCE) / 2
    lower = 0.0 if hits == 0 else float(stats.beta.ppf(a, hits, of - hits + 1))
    upper = 1.0 if hits == of else float(stats.beta.ppf(1 - a, hits + 1, of - hits))
    return lower, upper


@pytest.mark.parametrize(("hits", "of"), [(0, 1), (1, 1), (0, 30), (30, 30), (27, 30),
                                          (55, 60), (3, 200), (150, 200), (1999, 2000)])
def test_each_interval_is_clopper_pearsons(hits: int, of: int) -> None:
    found = share(hits, of)
    assert found is not None
    assert found.value == Fraction(hits, of)
    lower, upper = _reference_bounds(hits, of)
    assert found.lower == pytest.approx(lower, abs=1e-6)
    assert found.upper == pytest.approx(upper, abs=1e-6)


def test_a_share_of_no_case_is_not_applicable() -> None:
    assert share(0, 0) is None


@pytest.mark.parametrize("of", [5, 12, 30])
def test_the_intervals_cover_at_least_their_confidence_for_every_rate(of: int) -> None:
    """Exact coverage: the probability, over every outcome, that the interval holds p."""
    shares = [share(k, of) for k in range(of + 1)]
    for p in [i / 40 for i in range(1, 40)] + [0.9, 0.95, 0.99]:
        covered = sum(stats.binom.pmf(k, of, p) for k, found in enumerate(shares)
                      if found is not None and found.lower <= p <= found.upper)
        assert covered >= float(CONFIDENCE) - 1e-9, (of, p, covered)


@pytest.mark.parametrize(("hits", "of"), [(k, n) for n in (10, 29, 30, 45, 100, 400)
                                          for k in range(max(0, n - 12), n + 1)])
def test_the_trust_word_is_decided_on_the_bounds_exactly(hits: int, of: int) -> None:
    """``at_least``/``below`` agree with the bounds wherever they are not within rounding
    of the level (where only the exact tail can tell)."""
    found = share(hits, of)
    assert found is not None
    level = float(TRUST_LEVEL)
    if abs(found.lower - level) > 1e-6:
        assert found.at_least(TRUST_LEVEL) == (found.lower >= level)
    if abs(found.upper - level) > 1e-6:
        assert found.below(TRUST_LEVEL) == (found.upper < level)


def test_trust_words() -> None:
    high, low, few = share(298, 300), share(150, 300), share(9, 10)
    assert trust(high, high) == "trusted"
    assert trust(high, low) == "untrusted"  # a good precision does not excuse a poor recall
    assert trust(low, None) == "untrusted"
    assert trust(high, few) == "inconclusive"  # 9 of 10 cannot show 90%
    assert trust(high, None) == "inconclusive"  # a figure not applicable shows nothing
    assert trust(None, None) == "not applicable"


def _reference_kappa(pairs: list[tuple[str | None, str | None]]) -> float:
    n = len(pairs)
    classes = {c for pair in pairs for c in pair}
    observed = sum(1 for j, g in pairs if j == g) / n
    chance = sum((sum(1 for j, _ in pairs if j == c) / n) * (sum(1 for _, g in pairs if g == c)
                                                             / n) for c in classes)
    return (observed - chance) / (1 - chance)


def _pairs(rng: random.Random, n: int, error: float) -> list[tuple[str | None, str | None]]:
    options: list[str | None] = [*CATEGORIES, None, None, None]
    pairs = []
    for _ in range(n):
        gold = rng.choice(options)
        judge = rng.choice(options) if rng.random() < error else gold
        pairs.append((judge, gold))
    return pairs


@pytest.mark.parametrize("seed", range(6))
def test_matrix_precision_recall_and_kappa_against_a_direct_count(seed: int) -> None:
    rng = random.Random(seed)
    pairs = _pairs(rng, rng.choice([30, 80, 200]), rng.choice([0.05, 0.3, 0.7]))
    found = agreement(pairs, CATEGORIES)
    assert found.classes == (*CATEGORIES, PASS)
    assert found.labelled == len(pairs)
    assert found.agreed == sum(1 for j, g in pairs if j == g)
    named = {**{c: c for c in CATEGORIES}, PASS: None}
    for figures in found.per_class:
        c = named[figures.name]
        judged = [g for j, g in pairs if j == c]
        gold = [j for j, g in pairs if g == c]
        assert (figures.judged, figures.gold) == (len(judged), len(gold))
        assert figures.agreed == judged.count(c)
        for figure, of in ((figures.precision, judged), (figures.recall, gold)):
            if of:
                assert figure is not None
                assert figure.value == Fraction(of.count(c), len(of))
            else:
                assert figure is None
    for i, j in ((i, j) for i in range(4) for j in range(4)):
        assert found.matrix[i][j] == sum(1 for a, b in pairs
                                         if a == named[found.classes[i]]
                                         and b == named[found.classes[j]])
    assert found.kappa is not None
    assert isinstance(found.kappa, Fraction)
    assert float(found.kappa) == pytest.approx(_reference_kappa(pairs), abs=1e-12)


def test_a_perfect_judge_has_kappa_1_and_a_chance_judge_about_0() -> None:
    rng = random.Random(3)
    perfect = [(g, g) for _, g in _pairs(rng, 300, 0.0)]
    assert agreement(perfect, CATEGORIES).kappa == 1
    chance = [(j, g) for (j, _), (_, g) in zip(_pairs(rng, 3000, 1.0), _pairs(rng, 3000, 0.0),
                                               strict=True)]
    found = agreement(chance, CATEGORIES).kappa
    assert found is not None
    assert abs(found) < Fraction(1, 20)


def test_every_figure_over_no_case_is_not_applicable_never_0_or_1() -> None:
    # every labelled case passes by judge and labels: kappa, and every category's figures,
    # say nothing
    found = agreement([(None, None)] * 40, CATEGORIES)
    assert found.kappa is None
    assert kappa([[0, 0], [0, 0]]) is None
    for figures in found.per_class[:-1]:
        assert (figures.precision, figures.recall, figures.trust) == (
            None, None, "not applicable")
    passing = found.per_class[-1]
    assert passing.precision is not None
    assert passing.precision.value == 1
    # a category the judge never used but the labels did: recall 0, precision not applicable
    missed = agreement([(None, "unknown")] * 5 + [(None, None)] * 30, CATEGORIES)
    unknown = missed.per_class[2]
    assert unknown.precision is None
    assert unknown.recall is not None
    assert unknown.recall.value == 0
    assert unknown.trust == "untrusted"


def test_an_unknown_or_reserved_category_is_refused() -> None:
    with pytest.raises(ValueError, match="distinct"):
        agreement([], ("a", PASS))
    with pytest.raises(KeyError):
        agreement([("nope", None)], CATEGORIES)


def test_36_labelled_cases_all_agreeing_are_the_fewest_that_show_90_percent() -> None:
    """docs/judge.md: a class needs 36 labelled cases, all agreeing, to be trusted."""
    enough, fewer = share(36, 36), share(35, 35)
    assert enough is not None
    assert fewer is not None
    assert enough.at_least(TRUST_LEVEL)
    assert not fewer.at_least(TRUST_LEVEL)


def test_the_passing_class_takes_another_name_when_a_category_is_named_pass() -> None:
    found = agreement([(PASS, None), (None, None)], (PASS,), passing="(pass)")
    assert found.classes == (PASS, "(pass)")
    assert found.matrix == ((0, 1), (0, 1))  # the category "pass" judged, truly passing
