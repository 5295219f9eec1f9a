"""The sequential gate: an early verdict is the full run's but with probability delta."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import TYPE_CHECKING

import pytest
from helpers import CONFIDENCE

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.ceilings.load import load_ceilings
from pytest_failgate.core.gate.sequential import (
    OUTSIDE_SHARE,
    SequentialGate,
    SequentialItem,
    describe,
    gate_items,
)
from pytest_failgate.core.stats.intervals import wilson_interval
from pytest_failgate.core.taxonomy import builtin_taxonomies

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

DELTA = Fraction(1, 20)
# (categories, planned cases, ceiling of each): populations with every category at its
# ceiling (the full run passes) or one of them a case over it (the full run fails)
FAMILIES = [(1, 100, 10), (5, 100, 5), (20, 40, 1)]



def _items(m: int, ceiling: int) -> list[SequentialItem]:
    return [SequentialItem(f"c{i}", frozenset({f"c{i}"}), ceiling) for i in range(m)]


def _population(m: int, planned: int, ceiling: int, over: bool) -> list[str | None]:
    cases: list[str | None] = []
    for i in range(m):
        cases += [f"c{i}"] * (ceiling + (1 if over and i == 0 else 0))
    return cases + [None] * (planned - len(cases))


def _sequential(m: int, planned: int, ceiling: int) -> Callable[[], Callable[[str | None],
                                                                          str | None]]:
    def start() -> Callable[[str | None], str | None]:
        gate = SequentialGate(_items(m, ceiling), planned, DELTA)

        def feed(category: str | None) -> str | None:
            settled = gate.add(category)
            return None if settled is None else settled.verdict
        return feed
    return start


def _naive(m: int, planned: int, ceiling: int) -> Callable[[], Callable[[str | None],
                                                                     str | None]]:
    """Peeking at a fixed-n 95% Wilson interval after every case (what a harness that
    stops on a fixed-n interval does), with the same certain bounds as the real gate."""
    def start() -> Callable[[str | None], str | None]:
        counts = dict.fromkeys((f"c{i}" for i in range(m)), 0)
        seen = [0]

        def feed(category: str | None) -> str | None:
            seen[0] += 1
            n = seen[0]
            if category is not None:
                counts[category] += 1
            cleared = 0
            for s in counts.values():
                low, high = wilson_interval(Fraction(s), n)
                lowest = max(s, math.ceil(low * planned))
                highest = min(s + planned - n, math.floor(high * planned))
                if lowest > ceiling:
                    return "fail"
                cleared += highest <= ceiling
            return "pass" if cleared == m else None
        return feed
    return start


def _disagreements(start: Callable[[], Callable[[str | None], str | None]],
                   cases: Sequence[str | None], full: str, orders: int, seed: int) -> int:
    """How many of ``orders`` random orders settle on another verdict than the full run's,
    looking after every case."""
    rng = random.Random(seed)
    order = list(cases)
    wrong = 0
    for _ in range(orders):
        rng.shuffle(order)
        feed = start()
        verdict = None
        for category in order:
            verdict = feed(category)
            if verdict is not None:
                break
        assert verdict is not None  # the last case always settles it
        wrong += verdict != full
    return wrong


def _check_family(m: int, planned: int, ceiling: int, orders: int) -> None:
    for over, full in ((False, "pass"), (True, "fail")):
        cases = _population(m, planned, ceiling, over)
        wrong = _disagreements(_sequential(m, planned, ceiling), cases, full, orders,
                               seed=m * 2 + over)
        assert wrong <= DELTA * orders, (m, full, wrong)


@pytest.mark.slow
@pytest.mark.parametrize(("m", "planned", "ceiling"), FAMILIES)
def test_early_verdicts_agree_with_the_full_run_at_and_just_over_the_ceiling(
        m: int, planned: int, ceiling: int) -> None:
    _check_family(m, planned, ceiling, orders=300 // m + 20)


@pytest.mark.slow
@pytest.mark.parametrize(("m", "planned", "ceiling"), FAMILIES)
def test_ten_thousand_orders_disagree_with_the_full_run_in_at_most_delta(
        m: int, planned: int, ceiling: int) -> None:
    _check_family(m, planned, ceiling, orders=10_000)


@pytest.mark.slow
def test_peeking_at_a_fixed_n_interval_disagrees_more_often_than_delta() -> None:
    """The negative control: the same test fails a gate that stops on a Wilson interval,
    so it can fail."""
    m, planned, ceiling = FAMILIES[0]
    orders = 300
    wrong = sum(_disagreements(_naive(m, planned, ceiling),
                               _population(m, planned, ceiling, over), full, orders, seed=5)
                for over, full in ((False, "pass"), (True, "fail")))
    assert wrong > 2 * DELTA * orders


def test_the_last_case_settles_the_full_runs_verdict_exactly() -> None:
    """Whatever the counts, a gate that reaches the last planned case says what the
    full run's integers say."""
    rng = random.Random(1)
    reached = 0
    for _ in range(200):
        planned = rng.randint(1, 30)
        ceilings = [rng.randint(0, 4) for _ in range(3)]
        cases = [rng.choice([None, None, "c0", "c1", "c2"]) for _ in range(planned)]
        items = [SequentialItem(f"c{i}", frozenset({f"c{i}"}), k) for i, k in enumerate(ceilings)]
        gate = SequentialGate(items, planned, Fraction(1, 2))
        settled = None
        for category in cases:
            settled = gate.add(category)
            if settled is not None:
                break
        assert settled is not None
        full = "fail" if any(cases.count(f"c{i}") > k for i, k in enumerate(ceilings)) else "pass"
        if settled.exact:
            reached += 1
            assert settled.verdict == full
            assert all(look.low == look.high == look.count for look in settled.items)
    assert reached


def test_a_category_allowed_one_in_a_hundred_filling_the_first_cases_fails_at_once() -> None:
    """Were at most 10 of 1000 cases in ``c1``, the first five being five of them would
    be a chance of about one in ten billion: the run fails with its count (5) still under
    the ceiling (10)."""
    gate = SequentialGate(_items(2, 10), 1000)
    verdicts = [gate.add("c1") for _ in range(5)]
    settled = next(v for v in verdicts if v is not None)
    assert (settled.verdict, settled.deciding) == ("fail", ("c1",))
    assert settled.items[1].count <= 5 < settled.items[1].low
    assert settled.line() == (f"verdict fail: settled after {settled.n} of 1000 planned cases: "
                              "the verdict is the full run's with probability at least "
                              f"{CONFIDENCE}")


def test_a_count_over_its_ceiling_fails_whatever_the_statistics() -> None:
    gate = SequentialGate(_items(1, 1), 3, Fraction(1, 1000))
    assert gate.add("c0") is None
    settled = gate.add("c0")
    assert settled is not None
    assert (settled.verdict, settled.n) == ("fail", 2)


def test_a_broken_run_fails_long_before_its_end() -> None:
    rng = random.Random(2)
    planned = 1000
    cases: list[str | None] = ["c0"] * 400 + [None] * 600  # ceiling 100
    rng.shuffle(cases)
    gate = SequentialGate(_items(1, 100), planned)
    settled = next(s for s in map(gate.add, cases) if s is not None)
    assert settled.verdict == "fail"
    assert settled.n < 100


def test_a_clean_run_passes_before_its_end() -> None:
    rng = random.Random(4)
    cases: list[str | None] = ["c0"] * 20 + [None] * 980  # ceiling 100
    rng.shuffle(cases)
    gate = SequentialGate(_items(1, 100), 1000)
    settled = next(s for s in map(gate.add, cases) if s is not None)
    assert settled.verdict == "pass"
    assert settled.n < 500
    assert describe(settled.items[0]).endswith(": cleared")


def test_a_run_over_its_outside_share_is_inconclusive_not_failed() -> None:
    items = [SequentialItem("wrong", frozenset({"wrong"}), 0),
             SequentialItem("provider_error", frozenset({"provider_error"}), 5, outside=True)]
    gate = SequentialGate(items, 10)
    verdicts = [gate.add(category) for category in ["wrong", *["provider_error"] * 6]]
    # the wrong answer is over at once, but the run may yet be inconclusive: it waits
    assert verdicts[:6] == [None] * 6
    settled = verdicts[6]
    assert settled is not None
    assert (settled.verdict, settled.deciding) == ("inconclusive", ("provider_error",))


def test_a_fail_waits_until_the_run_cannot_be_inconclusive() -> None:
    items = [SequentialItem("wrong", frozenset({"wrong"}), 0),
             SequentialItem("provider_error", frozenset({"provider_error"}), 3, outside=True)]
    gate = SequentialGate(items, 10)
    verdicts = [gate.add(category) for category in ["wrong", None, None, None, None, None,
                                                    None]]
    assert verdicts[:6] == [None] * 6  # three errors could still come of the four left
    assert verdicts[6] is not None
    assert verdicts[6].verdict == "fail"


def test_more_cases_than_planned_are_an_error() -> None:
    gate = SequentialGate(_items(1, 5), 1)
    assert gate.add(None) is not None  # settled: further cases return the same verdict
    assert gate.add("c0") is gate.settled
    unsettled = SequentialGate(_items(1, 0), 1)
    unsettled.n = 1
    with pytest.raises(FailgateError, match="more cases than the 1 planned"):
        unsettled.add(None)


@pytest.mark.parametrize(("planned", "delta", "message"), [
    (0, DELTA, "at least one planned case"),
    (10, Fraction(0), "delta must lie strictly between 0 and 1"),
    (10, Fraction(1), "delta must lie strictly between 0 and 1"),
])
def test_a_gate_needs_cases_and_a_delta_inside_0_and_1(planned: int, delta: Fraction,
                                                       message: str) -> None:
    with pytest.raises(FailgateError, match=message):
        SequentialGate(_items(1, 0), planned, delta)


def _ceilings(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ceilings.yaml"
    path.write_text(text)
    return path


def test_the_items_are_the_full_runs_with_rate_ceilings_over_the_planned_cases(
        tmp_path: Path) -> None:
    path = _ceilings(tmp_path, "version: 1\ntaxonomy: rag\nceilings:\n"
                               "  retrieval_miss: 4\n  unknown: {max_rate: 0.015}\n"
                               "  total: 10\n")
    ceilings = load_ceilings(path, builtin_taxonomies())
    items = {item.name: item for item in gate_items(ceilings.taxonomy, ceilings, "run", 200)}
    assert set(items) == {*ceilings.taxonomy.category_names, "total"}
    assert items["retrieval_miss"].limit == 4
    assert items["unknown"].limit == 3  # floor(0.015 * 200)
    assert items["verifier_false_negative"].limit == 0  # no entry: ceiling 0
    assert items["total"].members == frozenset(ceilings.taxonomy.category_names)
    assert OUTSIDE_SHARE not in items  # rag has no outside categories


@pytest.mark.parametrize(("extra", "named"), [
    ("significance: 0.05\n", "significance:"),
    ("slices: [query_type]\n", "slices:"),
])
def test_a_ceilings_file_that_decides_more_than_counts_is_refused(
        tmp_path: Path, extra: str, named: str) -> None:
    path = _ceilings(tmp_path, f"version: 1\ntaxonomy: rag\n{extra}ceilings:\n  unknown: 3\n")
    ceilings = load_ceilings(path, builtin_taxonomies())
    with pytest.raises(FailgateError, match=f"also uses {named}") as raised:
        gate_items(ceilings.taxonomy, ceilings, "run", 100)
    assert raised.value.path == path


def test_advance_in_bulk_is_add_case_by_case() -> None:
    """``SequentialGate.advance`` against ``add``: the same case where each state changed
    and the verdict settled, the same looks there (every bound), on runs that pass, fail,
    go inconclusive, miss (a tiny delta's sequences cross often) or run to the last case;
    chunks of every size, so crossings fall at a chunk's start, middle and end."""
    rng = random.Random(48)
    for trial in range(40):
        planned = rng.choice([30, 200, 700])
        rate = rng.choice([0.02, 0.1, 0.3])
        items = [SequentialItem("a", frozenset({"a"}), int(planned * rng.uniform(0, 0.4))),
                 SequentialItem("b", frozenset({"b"}), int(planned * rng.uniform(0, 0.3))),
                 SequentialItem("total", frozenset({"a", "b", "o"}),
                                int(planned * rng.uniform(0.1, 0.6))),
                 SequentialItem(OUTSIDE_SHARE, frozenset({"o"}), planned // 20, outside=True),
                 SequentialItem("all", frozenset({"a"}), planned)]  # cleared from the start
        cases = [rng.choice(["a", "b", "o"]) if rng.random() < rate * 3 else None
                 for _ in range(planned)]
        delta = Fraction(1, 10**rng.choice([1, 3, 9]))
        one, bulk = SequentialGate(items, planned, delta), SequentialGate(items, planned, delta)
        assert bulk.plain
        by_case = []
        for case in cases:
            one.add(case)
            if one.changed or one.settled is not None:
                by_case.append((one.n, one.looks(), one.settled))
            if one.settled is not None:
                break
        in_bulk, size = [], 1 + trial % 9
        while bulk.settled is None and bulk.n < planned:
            bulk.advance(cases[bulk.n:bulk.n + size])
            if bulk.changed or bulk.settled is not None:
                in_bulk.append((bulk.n, bulk.looks(), bulk.settled))
        assert in_bulk == by_case
        assert bulk.n == one.n
        assert bulk.failed == one.failed


def test_a_gate_with_futility_strata_or_a_baseline_is_not_advanced_in_bulk() -> None:
    items = _items(2, 10)
    assert SequentialGate(items, 100).plain
    assert not SequentialGate(items, 100, strata=[50, 50]).plain
    assert not SequentialGate(items, 100, paired=items).plain
