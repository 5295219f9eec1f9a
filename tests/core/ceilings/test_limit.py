"""A ceiling's limit is one object (``core.ceilings.limit.Limit``), read by every consumer.

What a limit allows is exact (a rate is a fraction, never a float), the guard's notion of
"looser" and the messages' wording come from it, and a limit key added to it that some
consumer has not been taught is refused there by name rather than ignored.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from helpers import cases_for, write_ceilings, write_summary

from pytest_failgate.core.ceilings import limit
from pytest_failgate.core.ceilings.check import evaluate
from pytest_failgate.core.ceilings.limit import Limit, UnhandledKey
from pytest_failgate.core.ceilings.model import CEILING_KEYS, Ceiling
from pytest_failgate.core.ceilings.rewrite import plan_ratchet
from pytest_failgate.core.gate.messages import ceiling_text
from pytest_failgate.core.gate.runner import GateConfig, run_gate
from pytest_failgate.core.gate.sequential import gate_items
from pytest_failgate.core.guard.enforced import loosenings
from pytest_failgate.core.guard.loosening import parse_version


def test_a_rate_allows_the_exact_floor_of_its_fraction() -> None:
    # 0.29 * 100 is 28.999999999999996 in floating point: the exact floor is 29
    assert Limit(max_rate=Fraction("0.29")).allows(100) == 29
    assert Limit(max=3, max_rate=Fraction(1, 2)).allows(10) == 3  # the smaller decides
    assert Limit(max=9, max_rate=Fraction(1, 2)).allows(10) == 5
    assert Limit(max_rate=Fraction(1, 2)).allows(None) is None  # a rate of nothing
    assert Limit(max=4).allows(None) == 4


def test_what_is_looser_is_read_from_the_limit() -> None:
    strict = Limit(max=3, max_rate=Fraction(1, 10), significance=Fraction(1, 100))
    assert strict.loosenings(strict) == []
    assert strict.loosenings(Limit(max=4, max_rate=Fraction(1, 10),
                                   significance=Fraction(1, 100))) == [("", 3, 4)]
    assert [key for key, _, _ in strict.loosenings(limit.UNLIMITED)] == ["", ".max_rate"]
    looser_test = Limit(max=3, max_rate=Fraction(1, 10), significance=Fraction(1, 1000))
    assert [key for key, _, _ in strict.loosenings(looser_test)] == [".significance"]
    assert Limit(max=5, observed=3, allowance=2).loosenings(
        Limit(max=5, observed=2, allowance=3)) == [(".allowance", 2, 3)]


def test_the_file_significance_applies_only_to_a_rate_that_sets_none() -> None:
    level = Fraction(1, 20)
    assert Ceiling(max_rate=Fraction(1, 10)).under(level).significance == level
    assert Ceiling(max_rate=Fraction(1, 10), significance=Fraction(1, 100)).under(
        level).significance == Fraction(1, 100)
    assert Ceiling(max=3).under(level).significance is None


def test_a_ceiling_is_its_limit_and_its_notes_and_the_file_keys_are_their_fields() -> None:
    assert CEILING_KEYS[:len(limit.LIMIT_KEYS)] == limit.LIMIT_KEYS
    assert set(CEILING_KEYS) - set(limit.LIMIT_KEYS) == {"reason", "owner", "goal"}
    assert Ceiling(max=5, observed=3, allowance=2).text() == "5 (3 + 2)"
    assert Ceiling(max_rate=Fraction(1, 20), per="x").text(2) == "rate 0.05 per x (2)"


def test_a_new_limit_key_is_refused_by_name_by_every_consumer_not_taught_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reports = write_summary(tmp_path / "reports" / "eval_summary.json",
                            cases_for({"retrieval_miss": 2}, passed=8))
    path = write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 5})
    gate = run_gate(GateConfig((reports,), path, mode="ratchet"))
    check = next(c for c in gate.checks if c.entry is not None)
    ceilings, entry = gate.ceilings, check.entry
    assert ceilings is not None
    assert entry is not None
    version = parse_version(path)
    consumers: dict[str, Any] = {
        "the check": lambda: evaluate(check.report, check.name, check.count, check.entry,
                                      check.n_cases),
        "the guard": lambda: loosenings(version, version),
        "the sequential gate": lambda: gate_items(check.report.taxonomy, ceilings,
                                                  check.report.name, 10),
        "the ratchet": lambda: plan_ratchet([check]),
        "the summary's ceiling": lambda: ceiling_text(check),
        "the failing item's ceiling": lambda: entry.ceiling.detail(check.n_cases),
    }
    for consume in consumers.values():  # each works with the keys it knows
        consume()
    monkeypatch.setattr(limit, "LIMIT_KEYS", (*limit.LIMIT_KEYS, "max_share"))
    refused = {}
    for what, consume in consumers.items():
        with pytest.raises(UnhandledKey) as raised:
            consume()
        refused[what] = str(raised.value)
    assert all("does not handle the ceilings key 'max_share'" in text
               for text in refused.values()), refused
    assert refused["the ratchet"].startswith("the ratchet")
    assert refused["the check"].startswith("the check")
    assert refused["the sequential gate"].startswith("the sequential gate")


def test_a_mapping_without_a_bound_is_refused_naming_the_limits_bounds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The keys a ceiling mapping needs one of are ``limit.BOUNDS``, beside ``Limit``: the
    file's reader names them from there (a new bound, such as ``max_share``, is one edit)."""
    from helpers import BUILTIN

    from pytest_failgate.core.base.errors import FailgateError
    from pytest_failgate.core.ceilings.load import load_ceilings

    assert set(limit.BOUNDS) <= set(limit.LIMIT_KEYS)
    path = tmp_path / "ceilings.yaml"
    path.write_text("version: 1\nceilings:\n  unknown: {reason: x}\n", encoding="utf-8")
    with pytest.raises(FailgateError) as info:
        load_ceilings(path, BUILTIN)
    assert "needs 'max' (a count) or 'max_rate' (a rate)" in str(info.value)
    monkeypatch.setitem(limit.BOUNDS, "max_share", "a share of the failed cases")
    with pytest.raises(FailgateError) as info:
        load_ceilings(path, BUILTIN)
    assert "or 'max_share' (a share of the failed cases)" in str(info.value)
