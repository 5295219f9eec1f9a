"""Paired mode with the futility stop: an unchanged system re-run beside its same-day
baseline passes before its last case once a rise of the margin over the baseline is ruled
out, and a run that rose by the margin passes early in at most beta of the orders
(``bench/paired_futility.py`` measures the same on 1000 orders)."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_failgate.core.gate.sequential import (
    Futility,
    SequentialGate,
)
from pytest_failgate.core.stats.sequential import RiseRuledOut


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[3] / "bench" / "paired_futility.py"
    spec = importlib.util.spec_from_file_location("paired_futility", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("paired_futility", module)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def test_an_unchanged_paired_run_passes_before_its_last_case() -> None:
    early, used, differ = BENCH.measure(0, 12, seed=5)
    assert early > 0.5  # most orders stop before the end
    assert used < BENCH.PLANNED
    assert differ == 0  # and the early verdict is the full run's (a pass)


def test_the_pass_is_the_futility_stop_and_says_so() -> None:
    cases = BENCH.population(0)
    random.Random(3).shuffle(cases)
    gate = SequentialGate(BENCH.items(), BENCH.PLANNED, BENCH.DELTA,
                          Futility(BENCH.BETA, BENCH.MARGIN), paired=BENCH.compared())
    settled = next(s for s in (gate.add(now, baseline=b) for now, b in cases) if s is not None)
    assert settled.verdict == "pass"
    assert settled.n < BENCH.PLANNED
    assert settled.futility == Futility(BENCH.BETA, BENCH.MARGIN)
    assert any(name.endswith(" vs baseline") for name in settled.deciding)


def test_without_futility_paired_mode_still_waits_for_the_last_case() -> None:
    """The control: the futility stop is what lets the unchanged run stop early."""
    cases = BENCH.population(0)
    random.Random(3).shuffle(cases)
    gate = SequentialGate(BENCH.items(), BENCH.PLANNED, BENCH.DELTA, paired=BENCH.compared())
    settled = next(s for s in (gate.add(now, baseline=b) for now, b in cases) if s is not None)
    assert settled.n == BENCH.PLANNED


def test_a_rise_of_the_margin_is_never_ruled_out_at_its_own_bound_by_certainty() -> None:
    """Every case new: the rise reaches the bound, never ruled out; one short of the bound
    by the last case: ruled out with certainty."""
    test = RiseRuledOut(20, 20, 0.05)
    for _ in range(20):
        test.add(1)
    assert not test.ruled_out
    short = RiseRuledOut(20, 5, 0.05)
    for change in [1] * 4 + [0] * 16:
        short.add(change)
    assert short.ruled_out


@pytest.mark.slow
def test_the_rates_stay_within_their_budgets_over_400_orders() -> None:
    early, _, differ = BENCH.measure(0, 400, seed=41)
    assert early > 0.9
    assert differ <= BENCH.DELTA
    _, _, passed = BENCH.measure(BENCH.MARGIN, 400, seed=42)
    assert passed <= BENCH.BETA


@pytest.mark.slow
def test_the_rise_test_at_its_bound_rejects_in_at_most_alpha_of_orders() -> None:
    """The test's own level, with no gate around it: a rise of exactly the bound."""
    rng = random.Random(9)
    population = [1] * 25 + [-1] * 15 + [0] * 160
    rejected = 0
    for _ in range(2000):
        rng.shuffle(population)
        test = RiseRuledOut(len(population), 10, 0.05)
        for change in population:
            test.add(change)
        rejected += test.ruled_out
    assert rejected / 2000 <= 0.05
