"""The statistics core: exact binomial tails, verdicts, noise bands, Wilson intervals."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from typing import Any

import pytest
import scipy.stats  # type: ignore[import-untyped, unused-ignore]
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_failgate.core.compare.noise import (
    NoiseBand,
    NoiseDocument,
    measure_noise,
    noise_band_document,
    read_noise_band,
)
from pytest_failgate.core.compare.verdicts import band_cases, regression_verdict
from pytest_failgate.core.stats import binomial
from pytest_failgate.core.stats.binomial import (
    TailProbability,
    binomial_upper_tail,
    paired_increase,
)
from pytest_failgate.core.stats.intervals import wilson_interval

ALPHA = Fraction(1, 20)
HALF = Fraction(1, 2)
P_VALUES = [Fraction(1, 2), Fraction(1, 40), Fraction(3, 10)]
# Derandomized and with no example database, so runs repeat and the tree stays clean.
PROPERTIES = settings(max_examples=60, deadline=None, derandomize=True, database=None)


def exact_tail(k: int, n: int, p: Fraction) -> Fraction:
    """P[X >= k] summed independently of the module, from math.comb (shorter side)."""
    a, b = p.numerator, p.denominator
    c = b - a

    def terms(start: int, stop: int) -> int:  # sum of comb(n, i) a^i c^(n-i), one term at a time
        term = math.comb(n, start) * a**start * c ** (n - start)
        total = 0
        for i in range(start, stop):
            total += term
            term = term * (n - i) * a // ((i + 1) * c)
        return total

    if k > n // 2:
        return Fraction(terms(k, n + 1), b**n)
    return 1 - Fraction(terms(0, k), b**n)


def grid_ks(n: int, p: Fraction) -> list[int]:
    """k = 0, 1, 2, n-1, n, and k from far below to far above n*p."""
    mean = n * p
    sd = math.sqrt(n * p * (1 - p))
    ks = {0, 1, 2, n - 1, n, math.floor(mean), math.floor(mean) + 1, math.ceil(mean) - 1}
    for z in (-6, -3, -1, -0.25, 0.25, 1, 2, 3, 5, 8, 12, 20, 40):
        ks.add(math.floor(mean + z * sd))
    return sorted(k for k in ks if 0 <= k <= n)


# ------------------------------------------------------------------ float agreement with scipy


@pytest.mark.slow
@pytest.mark.parametrize("p", [*P_VALUES, Fraction(999, 1000)], ids=str)
@pytest.mark.parametrize("n", [1, 2, 5, 40, 100, 1000, 2500, 10_000, 33_333, 100_000])
def test_float_matches_scipy_binomtest_grid(n: int, p: Fraction) -> None:
    for k in grid_ks(n, p):
        ours = float(binomial_upper_tail(k, n, p))
        theirs = scipy.stats.binomtest(k, n, float(p), alternative="greater").pvalue
        assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12), (k, n, p)
        # scipy before 1.16 (the newest for Python 3.10) is itself off by up to ~1.5e-12
        # here; the exact value settles it (test_float_is_the_exact_value_where_scipy_drifts)
        assert abs(ours - theirs) <= 5e-12, (k, n, p)


@pytest.mark.slow
def test_float_is_the_exact_value_where_scipy_drifts() -> None:
    # scipy 1.15.3 gives 0.6019297080443687; the exact rational is 0.60192970804291...
    tail = binomial_upper_tail(29_963, 100_000, Fraction(3, 10))
    assert float(tail) == pytest.approx(float(tail.exact()), rel=1e-14)


def test_float_keeps_relative_accuracy_in_the_far_tail() -> None:
    # 1e-300-sized p-values are still right to many digits, not just "about zero".
    for k, n in [(700, 1000), (999, 1000), (1000, 1000), (51_500, 100_000), (60_000, 100_000)]:
        ours = float(binomial_upper_tail(k, n))
        theirs = scipy.stats.binomtest(k, n, 0.5, alternative="greater").pvalue
        assert ours == pytest.approx(theirs, rel=1e-9), (k, n)
    assert float(binomial_upper_tail(1000, 1000)) == 2.0**-1000


def test_float_of_small_problems_is_the_correctly_rounded_exact_value() -> None:
    for n in (0, 1, 7, 30):
        for k in range(n + 2):
            for p in P_VALUES:
                assert float(binomial_upper_tail(k, n, p)) == float(exact_tail(k, n, p))


# ------------------------------------------------------------------ exactness


@pytest.mark.parametrize("p", [*P_VALUES, Fraction(7, 9)], ids=str)
def test_exact_value_equals_the_sum_of_binomial_terms(p: Fraction) -> None:
    for n in (0, 1, 2, 3, 10, 31, 150):
        for k in range(n + 2):
            assert binomial_upper_tail(k, n, p).exact() == exact_tail(k, n, p), (k, n)


@pytest.mark.parametrize("p", P_VALUES, ids=str)
def test_at_most_is_exact_at_the_boundary_for_small_n(p: Fraction) -> None:
    n = 30
    for k in range(n + 2):
        tail = binomial_upper_tail(k, n, p)
        value = exact_tail(k, n, p)
        tiny = Fraction(1, 10**80)  # far below any float's resolution
        assert tail.at_most(value)
        assert tail.at_most(value + tiny)
        assert not tail.at_most(value - tiny)


@pytest.mark.parametrize(("k", "n", "p"), [(1_580, 3_000, HALF), (1_430, 3_000, HALF),
                                           (170, 6_000, Fraction(1, 40)),
                                           (930, 3_000, Fraction(3, 10))], ids=str)
def test_at_most_is_exact_at_the_boundary_where_the_estimate_cannot_decide(
        k: int, n: int, p: Fraction, monkeypatch: pytest.MonkeyPatch) -> None:
    # Past the outright-exact size: an alpha within 2**-1000 (relative) of the tail
    # is inside the float estimate's margin and goes on to the exact sum.
    assert not binomial._exact_is_cheap(k, n, p.denominator)
    value = exact_tail(k, n, p)
    step = value / 2**1000
    tail = binomial_upper_tail(k, n, p)
    assert tail.at_most(value)
    assert tail.at_most(value + step)
    assert not tail.at_most(value - step)
    # and an alpha a millionth away is settled by the estimate alone, no exact sum
    binomial._clear_caches()
    monkeypatch.setattr(binomial, "_exact_numerator", None)
    assert tail.at_most(value + value / 10**6)
    assert not tail.at_most(value - value / 10**6)


def test_floats_cannot_decide_what_at_most_decides() -> None:
    # alpha is below the tail by 2**-70 of it: the same float, a different answer.
    for k, n, p in [(9, 40, Fraction(1, 40)), (5, 5, Fraction(1, 2)), (1_520, 3_000, HALF)]:
        value = exact_tail(k, n, p)
        alpha = value - value / 2**70
        tail = binomial_upper_tail(k, n, p)
        assert float(alpha) == float(value)
        assert not tail.at_most(alpha)
        assert tail.at_most(value)



def test_rates_like_0_025_times_40_are_compared_exactly() -> None:
    # In floats 0.29 * 100 == 28.999999999999996 < 29: a float ceiling check would
    # call 29 of 100 cases over a 29% ceiling.
    assert 0.29 * 100 < 29
    # and a tail that equals alpha exactly is "at most": P[Bin(5, 1/2) >= 5] == 1/32
    assert binomial_upper_tail(5, 5).at_most(Fraction(1, 32))
    assert not binomial_upper_tail(5, 5).at_most(Fraction(1, 32) - Fraction(1, 2**200))
    # P[Bin(40, 1/40) >= 40] == 40**-40, exactly
    assert binomial_upper_tail(40, 40, Fraction(1, 40)).exact() == Fraction(1, 40**40)


def test_floats_are_refused_where_a_decision_is_made() -> None:
    tail = binomial_upper_tail(3, 10)
    with pytest.raises(TypeError, match="Fraction"):
        tail.at_most(0.05)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Fraction"):
        binomial_upper_tail(3, 10, 0.3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Fraction"):
        regression_verdict(3, 1, None, 0.05)  # type: ignore[arg-type]


@pytest.mark.parametrize(("k", "n"), [(-1, 5), (7, 5), (0, -1)])
def test_out_of_range_arguments_are_errors(k: int, n: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        binomial_upper_tail(k, n)


def test_edges_are_exact() -> None:
    assert binomial_upper_tail(0, 0).exact() == 1
    assert binomial_upper_tail(1, 0).exact() == 0
    assert binomial_upper_tail(0, 100_000, Fraction(3, 10)).exact() == 1
    assert binomial_upper_tail(100_001, 100_000).exact() == 0
    assert float(binomial_upper_tail(100_001, 100_000)) == 0.0
    assert binomial_upper_tail(100_001, 100_000).at_most(Fraction(0))
    assert not binomial_upper_tail(100_000, 100_000).at_most(Fraction(0))
    assert binomial_upper_tail(3, 10, Fraction(0)).exact() == 0
    assert binomial_upper_tail(10, 10, Fraction(1)).exact() == 1
    assert float(binomial_upper_tail(1, 100_000)) == 1.0
    assert not binomial_upper_tail(1, 100_000).at_most(1 - Fraction(1, 2**200))
    assert binomial_upper_tail(1, 100_000).at_most(1 - Fraction(1, 2**100_001))


def log_of(value: Fraction) -> float:
    """ln of an exact positive rational: 2**e times a mantissa in [1/2, 2), rounded once."""
    e = value.numerator.bit_length() - value.denominator.bit_length()
    return math.log(float(value / Fraction(2) ** e)) + e * math.log(2)


@pytest.mark.slow
def test_the_float_estimate_is_far_inside_its_margin() -> None:
    # Forced on sizes where the exact tail is cheap, out to tails near 1e-700: the
    # estimate's error is under a thousandth of the margin that sends a decision
    # to the exact sum.
    for p in [*P_VALUES, Fraction(999, 1000), Fraction(123_456_789, 1_000_000_007)]:
        a, b = p.numerator, p.denominator
        for n in (1, 9, 200, 2400):
            for k in grid_ks(n, p):
                if not 0 < k <= n:
                    continue
                estimate, margin = binomial._log_tail(k, n, a, b)
                error = abs(estimate - log_of(exact_tail(k, n, p)))
                assert error <= margin / 1000, (k, n, p, error, margin)


@PROPERTIES
@given(n=st.integers(1, 400), data=st.data())
def test_at_most_agrees_with_the_exact_comparison(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, n + 1))
    p = data.draw(st.sampled_from([*P_VALUES, Fraction(2, 3)]))
    shift = data.draw(st.sampled_from([-1, 0, 1]))
    scale = data.draw(st.integers(1, 2000))
    value = exact_tail(k, n, p)
    alpha = value + shift * value / 2**scale
    tail = binomial_upper_tail(k, n, p)
    assert tail.at_most(alpha) is (value <= alpha)
    if 0 < k <= n and alpha > 0:  # the estimate's margin never excludes the exact value
        estimate, margin = binomial._log_tail(k, n, p.numerator, p.denominator)
        if log_of(alpha) >= estimate + margin:
            assert value <= alpha
        if log_of(alpha) <= estimate - margin:
            assert value > alpha


def test_a_large_call_near_the_centre() -> None:
    # n = 100,000 one standard deviation above the centre: the ordinary path, kept
    # fast (bench/stats_speed.py times it); no timing is asserted here.
    tail = binomial_upper_tail(50_158, 100_000)
    expected = scipy.stats.binomtest(50_158, 100_000, 0.5, alternative="greater").pvalue
    assert float(tail) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert not tail.at_most(ALPHA)
    assert tail.at_most(Fraction(1, 5))
    assert binomial_upper_tail(50_600, 100_000, Fraction(1, 2)).at_most(Fraction(1, 1000))


# ------------------------------------------------------------------ the paired test


def test_paired_increase_is_mcnemar_exact_one_sided() -> None:
    assert paired_increase(5, 0).exact() == Fraction(1, 32)
    assert paired_increase(3, 1).exact() == Fraction(5, 16)  # P[Bin(4) >= 3] = 5/16
    for new, fixed in [(12, 3), (40, 22), (3, 9), (700, 600)]:
        expected = scipy.stats.binomtest(new, new + fixed, 0.5, alternative="greater").pvalue
        assert float(paired_increase(new, fixed)) == pytest.approx(expected, abs=1e-12)


def test_no_discordant_pairs_is_a_p_value_of_exactly_one() -> None:
    tail = paired_increase(0, 0)
    assert tail.exact() == 1
    assert float(tail) == 1.0
    assert tail.at_most(Fraction(1))
    assert not tail.at_most(1 - Fraction(1, 10**50))


# ------------------------------------------------------------------ verdicts


def band(low: int, high: int, runs: int = 3) -> NoiseBand:
    return NoiseBand(std=0.0 if low == high else 1.0, min=low, max=high, n=runs)


def test_band_cases_is_the_range_with_a_floor_of_one() -> None:
    assert band_cases(None) == 1
    assert band_cases(band(7, 7)) == 1
    assert band_cases(band(4, 5)) == 1
    assert band_cases(band(4, 9)) == 5
    assert band_cases(NoiseBand(std=123.0, min=0, max=2, n=5)) == 2  # std is not used


@pytest.mark.parametrize(("new", "fixed", "noise", "expected"), [
    # the same run against itself
    (0, 0, None, "pass"),
    # decreases and no change are PASS, whatever the band
    (0, 10, None, "pass"),
    (3, 50, band(0, 0), "pass"),
    (5, 5, None, "pass"),
    (200, 200, band(0, 0), "pass"),
    # significant and beyond the band: FAIL  (p = 2**-10)
    (10, 0, None, "fail"),
    (10, 0, band(3, 12), "fail"),
    # significant, inside the band: WARN
    (10, 0, band(0, 12), "warn"),
    (10, 0, band(0, 10), "warn"),  # an increase equal to the band is not beyond it
    # beyond the band, not significant: WARN  (p = P[Bin(55) >= 30] ~ 0.3)
    (30, 25, None, "warn"),
    (2, 0, band(5, 5), "warn"),  # band floor 1: +2 is beyond; p = 1/4
    # neither: PASS
    (2, 1, None, "pass"),  # +1 is within the floor of one case; p = 1/2
    (30, 25, band(0, 8), "pass"),
    # the floor of one case: +1 is never beyond, even with a zero-width band
    (1, 0, band(6, 6), "pass"),
    (5, 0, band(6, 6), "fail"),  # p = 1/32 <= 1/20, +5 > 1
    (4, 0, band(6, 6), "warn"),  # p = 1/16 > 1/20
])
def test_regression_verdict_table(new: int, fixed: int, noise: NoiseBand | None,
                                  expected: str) -> None:
    assert regression_verdict(new, fixed, noise, ALPHA) == expected


def test_regression_verdict_significance_is_inclusive_and_exact() -> None:
    # p-value exactly alpha counts as significant; a hair above it does not
    assert regression_verdict(5, 0, None, Fraction(1, 32)) == "fail"
    assert regression_verdict(5, 0, None, Fraction(1, 32) - Fraction(1, 10**40)) == "warn"


def test_regression_verdict_with_many_cases() -> None:
    # 100,000 cases, 12,000 churned: +300 net is significant (z ~ 2.7) and beyond a band of 40
    assert regression_verdict(6_150, 5_850, band(100, 140, 5), ALPHA) == "fail"
    assert regression_verdict(6_050, 5_950, band(100, 140, 5), ALPHA) == "warn"  # p ~ 0.18
    assert regression_verdict(6_020, 5_980, band(100, 140, 5), ALPHA) == "pass"


def test_verdict_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="alpha"):
        regression_verdict(3, 1, None, Fraction(0))
    with pytest.raises(ValueError, match="alpha"):
        regression_verdict(3, 1, None, Fraction(1))
    with pytest.raises(ValueError, match="new"):
        regression_verdict(-1, 1, None, ALPHA)


# ------------------------------------------------------------------ noise bands


RUNS: list[dict[str, int]] = [
    {"retrieval_miss": 3, "generator_hallucination": 1},
    {"retrieval_miss": 5},
    {"retrieval_miss": 4, "generator_hallucination": 2, "unknown": 1},
]


def test_measure_noise() -> None:
    bands = measure_noise(RUNS)
    assert list(bands) == ["generator_hallucination", "retrieval_miss", "unknown"]
    assert bands["retrieval_miss"] == NoiseBand(std=1.0, min=3, max=5, n=3, mean=4.0)
    assert bands["generator_hallucination"] == NoiseBand(std=1.0, min=0, max=2, n=3, mean=1.0)
    # 0, 0, 1: sample std sqrt(1/3) = 0.5773502691896257, kept to 6 decimals
    assert bands["unknown"] == NoiseBand(std=0.57735, min=0, max=1, n=3, mean=0.333333)
    assert measure_noise([{"a": 2}, {"a": 2}]) == {
        "a": NoiseBand(std=0.0, min=2, max=2, n=2, mean=2.0)}


def test_measure_noise_needs_two_runs() -> None:
    with pytest.raises(ValueError, match="at least 2 runs"):
        measure_noise([{"a": 1}])
    with pytest.raises(ValueError, match="at least 2 runs"):
        measure_noise([])
    with pytest.raises(ValueError, match="count of 'a'"):
        measure_noise([{"a": 1}, {"a": -1}])


def test_noise_band_document_shape_and_round_trip() -> None:
    bands = measure_noise(RUNS)
    document = noise_band_document(bands)
    assert document == {"metric_band": {
        "mode:generator_hallucination": {"mean": 1.0, "std": 1.0, "min": 0, "max": 2, "n": 3},
        "mode:retrieval_miss": {"mean": 4.0, "std": 1.0, "min": 3, "max": 5, "n": 3},
        "mode:unknown": {"mean": 0.333333, "std": 0.57735, "min": 0, "max": 1, "n": 3},
    }}
    assert read_noise_band(json.loads(json.dumps(document))).bands == bands
    assert read_noise_band({"metric_band": {}}) == NoiseDocument()


def test_the_gate_format_reads_with_metric_bands_and_keeps_unknown_keys() -> None:
    document = {
        "n_runs": 3, "config": {"top_k": 5}, "run_ids": ["a", "b", "c"],
        "metric_band": {
            "answerable_accuracy": {"mean": 0.2, "std": 0.01, "min": 0.19, "max": 0.21, "n": 3},
            "mode:retrieval_miss": {"mean": 65.0, "std": 1.0, "min": 64.0, "max": 66, "n": 3,
                                    "p90": 66},
        },
        "case_stability": {"q1": 0, "q2": 2}, "unstable_cases": ["q2"],
        "cost_usd_generation": 1.5, "wall_seconds": 12.0, "comment": "kept",
    }
    noise = read_noise_band(document)
    assert noise.bands == {"retrieval_miss": NoiseBand(std=1.0, min=64, max=66, n=3, mean=65.0)}
    band = noise.metric_bands["answerable_accuracy"]
    assert (band.min, band.max, band.width) == (Fraction(19, 100), Fraction(21, 100),
                                                Fraction(1, 50))
    assert noise.unstable_cases == ("q2",)
    assert noise.case_stability == {"q1": 0, "q2": 2}
    assert noise.extra == {"cost_usd_generation": 1.5, "wall_seconds": 12.0, "comment": "kept"}
    written = noise_band_document(noise)
    assert list(written) == ["n_runs", "config", "run_ids", "metric_band", "case_stability",
                             "unstable_cases", "cost_usd_generation", "wall_seconds", "comment"]
    assert read_noise_band(json.loads(json.dumps(written))) == noise


def good_entry(**change: Any) -> dict[str, Any]:
    return {"std": 0.5, "min": 1, "max": 2, "n": 3, **change}


@pytest.mark.parametrize(("document", "message"), [
    ([], "JSON object"),
    ({}, "'metric_band'"),
    ({"metric_band": []}, "'metric_band' must be an object"),
    ({"metric_band": {"mode:": good_entry()}}, r"\['mode:'\]"),
    ({"metric_band": {"accuracy": good_entry(min=0.5, max=0.25)}},
     r"\['accuracy'\].*must not exceed"),
    ({"metric_band": {"accuracy": good_entry(min="0.5")}}, r"\['accuracy'\].*min"),
    ({"metric_band": {"mode:a": 3}}, r"\['mode:a'\] must be an object"),
    ({"metric_band": {"mode:a": {"std": 0.5, "max": 2, "n": 3}}}, r"\['mode:a'\].*'min'"),
    ({"metric_band": {"mode:a": good_entry(mean="1.5")}}, r"\['mode:a'\].*mean"),
    ({"metric_band": {}, "unstable_cases": "q1"}, "unstable_cases"),
    ({"metric_band": {}, "case_stability": {"q1": "often"}}, "case_stability"),
    ({"metric_band": {"mode:a": good_entry(min=-1)}}, r"\['mode:a'\].*min must be >= 0"),
    ({"metric_band": {"mode:a": good_entry(min=1.5)}}, r"\['mode:a'\].*min must be an int"),
    ({"metric_band": {"mode:a": good_entry(min=3)}}, r"\['mode:a'\].*must not exceed"),
    ({"metric_band": {"mode:a": good_entry(n=1)}}, r"\['mode:a'\].*n must be >= 2"),
    ({"metric_band": {"mode:a": good_entry(n=True)}}, r"\['mode:a'\].*n must be an int"),
    ({"metric_band": {"mode:a": good_entry(std=-0.5)}}, r"\['mode:a'\].*std"),
    ({"metric_band": {"mode:a": good_entry(std="0.5")}}, r"\['mode:a'\].*std"),
    ({"metric_band": {"mode:a": good_entry(std=float("nan"))}}, r"\['mode:a'\].*std"),
    ({"metric_band": {"mode:ok": good_entry(), "mode:bad": good_entry(max=0)}},
     r"\['mode:bad'\]"),
])
def test_malformed_noise_band_documents_name_the_bad_key(document: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_noise_band(document)


# ------------------------------------------------------------------ Wilson


@pytest.mark.parametrize(("successes", "n", "low", "high"), [
    # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (Wilson score)
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_interval_textbook_values(successes: int, n: int, low: float,
                                         high: float) -> None:
    lo, hi = wilson_interval(Fraction(successes), n)
    assert (round(lo, 4), round(hi, 4)) == (low, high)
    reference = scipy.stats.binomtest(successes, n).proportion_ci(method="wilson")
    assert lo == pytest.approx(reference.low, abs=1e-12)
    assert hi == pytest.approx(reference.high, abs=1e-12)


def test_wilson_interval_fractional_and_clamped() -> None:
    lo, hi = wilson_interval(Fraction(27, 2), 20)  # 13.5 of 20, e.g. mean of graded scores
    assert 0 < lo < 0.675 < hi < 1
    assert wilson_interval(Fraction(0), 1)[0] == 0.0
    assert wilson_interval(Fraction(5), 5)[1] == 1.0
    assert all(0.0 <= x <= 1.0 for s in range(11) for x in wilson_interval(Fraction(s), 10))
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(Fraction(11), 10)
    with pytest.raises(ValueError, match="n must be"):
        wilson_interval(Fraction(0), 0)


# ------------------------------------------------------------------ determinism and internals


def test_determinism() -> None:
    cases = [(k, 100_000, p) for p in P_VALUES for k in (int(100_000 * p) + 37, 99_000)]
    first = [(float(binomial_upper_tail(*c)), binomial_upper_tail(*c).at_most(ALPHA))
             for c in cases]
    binomial._clear_caches()
    again = [(float(binomial_upper_tail(*c)), binomial_upper_tail(*c).at_most(ALPHA))
             for c in cases]
    assert first == again
    shuffled = [dict(random.Random(seed).sample(sorted(run.items()), len(run)))
                for seed, run in enumerate(reversed(RUNS))]
    one = json.dumps(noise_band_document(measure_noise(RUNS[::-1])))
    two = json.dumps(noise_band_document(measure_noise(shuffled)))
    assert one == two
    assert binomial_upper_tail(3, 10) == TailProbability(3, 10, Fraction(1, 2))
    assert hash(binomial_upper_tail(3, 10)) == hash(TailProbability(3, 10))
