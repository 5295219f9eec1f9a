"""The ceilings file: validation with places, exact rate verdicts, ratchet edits, init."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from helpers import BUILTIN, RAG, write_ceilings

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.base.formatting import format_number
from pytest_failgate.core.ceilings.check import evaluate
from pytest_failgate.core.ceilings.limit import rate_limit
from pytest_failgate.core.ceilings.load import Ceilings, load_ceilings
from pytest_failgate.core.ceilings.rewrite import (
    apply,
    init_text,
    plan_ratchet,
    ratchet_rate,
    write_atomic,
)
from pytest_failgate.core.reports.model import Report


def load(path: Path) -> Ceilings:
    return load_ceilings(path, BUILTIN)


def error_for(tmp_path: Path, text: str) -> str:
    path = tmp_path / "ceilings.yaml"
    path.write_text(text)
    with pytest.raises(FailgateError) as info:
        load(path)
    return str(info.value)


def report(name: str, n_cases: int | None, **counts: int) -> Report:
    full = {category: counts.get(category, 0) for category in RAG.category_names}
    return Report(name, Path(f"{name}.json"), "cases", full, n_cases, RAG)


@pytest.mark.parametrize(
    ("text", "place", "message"),
    [
        ("version: 2\n", "1:10", "version 2 is not supported"),
        ("ceilings: {}\n", "1:1", "'version: 1' is required"),
        ("version: 1\nceiling:\n  x: 1\n", "2:1",
         "unknown key 'ceiling'; did you mean 'ceilings'?"),
        ("version: 1\nceilings:\n  retrieval_mis: 3\n", "3:3",
         "'retrieval_mis' is not a category of taxonomy rag (nor 'total' or 'group:<name>'); "
         "did you mean 'retrieval_miss'?"),
        ("version: 1\nreports:\n  r:\n    totl: 3\n", "4:5", "did you mean 'total'?"),
        ("version: 1\nceilings:\n  unknown: \"3\"\n", "3:12",
         'a ceiling must be a whole number of cases, got "3" (text)'),
        ("version: 1\nceilings:\n  unknown: 3.0\n", "3:12", "a ceiling must be a whole number"),
        ("version: 1\nceilings:\n  unknown: true\n", "3:12", "got True"),
        ("version: 1\nceilings:\n  unknown: -1\n", "3:12", "must be 0 or more"),
        ("version: 1\nceilings:\n  unknown: {maxx: 3}\n", "3:12",
         "unknown key 'maxx'; did you mean 'max'?"),
        ("version: 1\nceilings:\n  unknown: {max: 3, ownr: me}\n", "3:21",
         "unknown key 'ownr'; did you mean 'owner'?"),
        ("version: 1\nceilings:\n  unknown: {reason: x}\n", "3:12", "needs 'max'"),
        ("version: 1\nceilings:\n  unknown: {max_rate: 1.5}\n", "3:23", "between 0 and 1"),
        ("version: 1\nceilings:\n  unknown: {max_rate: .nan}\n", "3:23",
         "'.nan' is not a plain decimal number"),
        ("version: 1\ntaxonomy: rga\n", "2:11", "unknown taxonomy 'rga'; did you mean 'rag'?"),
        ("version: 1\nceilings:\n  unknown: 1\n  unknown: 2\n", "4:3",
         "duplicate key 'unknown' (first at line 3)"),
        ("version: [1\n", "2:1", "invalid YAML"),
        ("- 1\n", "1:1", "must be a mapping"),
        ("version: 1\nceilings:\n", "1:1", "'ceilings' is empty"),
        ("version: 1\nceilings: [1]\n", "2:11", "expected a mapping of names to ceilings"),
        ("", None, "the file is empty"),
        ("version: 1\n---\nversion: 1\n", "3", "expected one YAML document"),
        ("version: 1\nceilings:\n  <<: {unknown: 1}\n", "3:3", "merge keys"),
        ("version: 1\nceilings:\n  unknown: {max: 3, goal: 0.5}\n", "3:27",
         "ceilings.unknown.goal: goal must be a whole number of cases or text, got 0.5"),
        ("version: 1\nceilings:\n  unknown: x\n  total: [2]\n", "3:12",
         'ceilings.unknown: a ceiling must be a whole number of cases, got "x" (text) '
         "(and 1 more problem)"),
    ],
)
def test_malformed_ceilings_give_one_message_with_the_place(
    tmp_path: Path, text: str, place: str | None, message: str
) -> None:
    error = error_for(tmp_path, text)
    prefix = f"{tmp_path / 'ceilings.yaml'}" + (f":{place}:" if place else ":")
    assert error.startswith(prefix), error
    assert message in error


def test_yaml_tags_are_never_constructed(tmp_path: Path) -> None:
    error = error_for(tmp_path, "version: 1\nceilings:\n  unknown: !!python/object:os.system x\n")
    assert "whole number" in error


def test_report_override_wins_over_the_default(tmp_path: Path) -> None:
    ceilings = load(write_ceilings(tmp_path / "c.yaml", {"retrieval_miss": 64},
                                   {"real100/run": {"retrieval_miss": {"max": 60}}}))
    assert ceilings.entry("real100/run", "retrieval_miss").ceiling.max == 60  # type: ignore[union-attr]
    assert ceilings.entry("other", "retrieval_miss").ceiling.max == 64  # type: ignore[union-attr]
    assert ceilings.entry("other", "unknown") is None


def test_an_override_close_to_a_real_report_is_a_typo_error(tmp_path: Path) -> None:
    ceilings = load(write_ceilings(tmp_path / "c.yaml", {}, {"eval_sumary": {"unknown": 1}}))
    with pytest.raises(FailgateError, match="did you mean 'eval_summary'"):
        ceilings.check_report_names(["eval_summary"])


def test_an_override_for_an_absent_report_is_a_warning(tmp_path: Path) -> None:
    ceilings = load(write_ceilings(tmp_path / "c.yaml", {}, {"nightly/big": {"unknown": 1}}))
    [warning] = ceilings.check_report_names(["smoke"])
    assert "'nightly/big' matches no report in this run" in warning


def test_no_ceiling_means_zero() -> None:
    assert evaluate(report("r", 10), "unknown", 0, None, 10).verdict == "pass"
    failing = evaluate(report("r", 10), "unknown", 1, None, 10)
    assert (failing.verdict, failing.limit, failing.over) == ("fail", 0, 1)


def test_rate_ceiling_is_exact_where_floats_round(tmp_path: Path) -> None:
    # 0.025 * 40 is 1.0000000000000009 in floats; exactly 1 case is allowed.
    ceilings = load(write_ceilings(tmp_path / "c.yaml", {"unknown": {"max_rate": 0.025}}))
    entry = ceilings.entry("r", "unknown")
    assert entry is not None
    assert entry.ceiling.max_rate == Fraction(1, 40)
    assert evaluate(report("r", 40), "unknown", 1, entry, 40).verdict == "pass"
    assert evaluate(report("r", 40), "unknown", 2, entry, 40).verdict == "fail"
    assert evaluate(report("r", 39), "unknown", 1, entry, 39).verdict == "fail"


def test_rate_and_count_both_apply(tmp_path: Path) -> None:
    ceilings = load(write_ceilings(tmp_path / "c.yaml",
                                   {"unknown": {"max": 5, "max_rate": 0.1}}))
    entry = ceilings.entry("r", "unknown")
    assert evaluate(report("r", 100), "unknown", 6, entry, 100).limit == 5
    assert evaluate(report("r", 30), "unknown", 4, entry, 30).limit == 3


def test_rate_over_an_aggregate_without_a_case_total_is_an_error_item(tmp_path: Path) -> None:
    ceilings = load(write_ceilings(tmp_path / "c.yaml", {"unknown": {"max_rate": 0.5}}))
    check = evaluate(report("r", None), "unknown", 1, ceilings.entry("r", "unknown"), None)
    assert check.verdict == "error"
    assert "num_predictions" in check.problem


def test_ratchet_lowers_a_shared_default_only_to_the_highest_count(tmp_path: Path) -> None:
    ceilings = load(write_ceilings(tmp_path / "c.yaml", {"unknown": 10, "retrieval_miss": 4}))
    checks = [
        evaluate(r, name, r.counts[name], ceilings.entry(r.name, name), r.n_cases)
        for r in (report("a", 50, unknown=3, retrieval_miss=4), report("b", 50, unknown=7))
        for name in ("unknown", "retrieval_miss")
    ]
    [lowering] = plan_ratchet(checks)
    assert (lowering.entry.label, lowering.old, lowering.new) == ("ceilings.unknown", 10, 7)


def test_ratchet_never_raises_a_ceiling(tmp_path: Path) -> None:
    ceilings = load(write_ceilings(tmp_path / "c.yaml", {"unknown": 2}))
    r = report("a", 10, unknown=5)
    assert plan_ratchet([evaluate(r, "unknown", 5, ceilings.entry("a", "unknown"), 10)]) == []


@pytest.mark.parametrize(("count", "n"), [(0, 7), (1, 221), (76, 221), (3, 40), (9, 9),
                                          (123, 99_999), (1, 100_000)])
def test_a_ratcheted_rate_allows_exactly_the_count(count: int, n: int) -> None:
    rate = ratchet_rate(Fraction(count, n), n)
    assert rate_limit(rate, n) == count
    assert Fraction(format_number(rate)) == rate


def test_ratchet_rewrite_changes_only_the_numbers(tmp_path: Path) -> None:
    text = (
        "# keep this comment\r\n"
        "version: 1\r\n"
        "taxonomy: rag   # trailing comment\r\n"
        "ceilings:\r\n"
        "  unknown: 10\r\n"
        "  retrieval_miss: {max: 64, max_rate: 0.5, reason: \"x\", owner: rag}\r\n"
        "  total: 99\r\n"
    )
    path = tmp_path / "c.yaml"
    path.write_bytes(text.encode())
    ceilings = load(path)
    r = report("a", 200, unknown=4, retrieval_miss=60)
    checks = [evaluate(r, name, sum(r.counts.values()) if name == "total" else r.counts[name],
                       ceilings.entry("a", name), r.n_cases)
              for name in ("unknown", "retrieval_miss", "total")]
    plan = plan_ratchet(checks)
    assert [(low.key, low.new_text) for low in plan] == [
        ("max", "4"), ("max", "60"), ("max_rate", "0.3"), ("max", "64")]
    new = apply(ceilings.doc.text, plan)
    assert new == (
        text.replace("unknown: 10", "unknown: 4").replace("max: 64", "max: 60")
        .replace("max_rate: 0.5", "max_rate: 0.3").replace("total: 99", "total: 64")
    )


def test_init_text_reproduces_each_reports_counts(tmp_path: Path) -> None:
    reports = [report("a", 30, unknown=3, retrieval_miss=1), report("real100/b", 50, unknown=7)]
    path = tmp_path / "c.yaml"
    path.write_text(init_text(RAG, [(r, RAG) for r in reports], lambda t: t.name))
    ceilings = load(path)
    assert yaml.safe_load(path.read_text())["version"] == 1
    for r in reports:
        for name in RAG.category_names:
            entry = ceilings.entry(r.name, name)
            assert entry is not None
            assert entry.ceiling.max == r.counts[name]
        total = ceilings.entry(r.name, "total")
        assert total is not None
        assert total.ceiling.max == r.failed


def test_write_atomic_replaces_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("old")
    path.chmod(0o640)
    write_atomic(path, "new")
    assert path.read_text() == "new"
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"]


def test_write_atomic_exclusive_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("mine")
    with pytest.raises(FailgateError, match="never overwrites"):
        write_atomic(path, "theirs", exclusive=True)
    assert path.read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"]


@pytest.mark.parametrize(("value", "text"), [(3, "3"), (Fraction(1, 20), "0.05"),
                                             (Fraction(1), "1"), (Fraction(123, 1000), "0.123")])
def test_format_number(value: int | Fraction, text: str) -> None:
    assert format_number(value) == text


def test_init_text_writes_true_max_beside_max_with_the_noise_allowance(
        tmp_path: Path) -> None:
    from pytest_failgate.core.ceilings.rewrite import InitNoise

    reports = [report("a", 300, unknown=3, retrieval_miss=40),
               report("b", 300, unknown=2, retrieval_miss=30)]
    trues = {("a", "retrieval_miss"): 55, ("b", "retrieval_miss"): 41, ("a", "unknown"): 5}
    path = tmp_path / "c.yaml"
    path.write_text(init_text(RAG, [(r, RAG) for r in reports], lambda t: t.name,
                              true_max=trues))
    ceilings = load(path)
    for name, judge, true in (("a", 40, 55), ("b", 30, 41)):
        entry = ceilings.entry(name, "retrieval_miss")
        assert entry is not None
        assert (entry.ceiling.max, entry.ceiling.true_max) == (judge, true)
    default = ceilings.entry("a", "unknown")
    assert default is not None
    assert (default.ceiling.max, default.ceiling.true_max) == (3, 5)
    own = ceilings.entry("b", "unknown")  # b's override: its own count, no labels of its own
    assert own is not None
    assert (own.ceiling.max, own.ceiling.true_max) == (2, None)
    # on a noisy pipeline the true count moves as the judge's does: the same allowance
    noise = InitNoise("repeats", {("a", "retrieval_miss"): 6, ("b", "retrieval_miss"): 4},
                      Fraction(1, 20), 2)
    path.write_text(init_text(RAG, [(r, RAG) for r in reports], lambda t: t.name, noise,
                              true_max=trues))
    entry = load(path).entry("a", "retrieval_miss")
    assert entry is not None
    assert (entry.ceiling.max, entry.ceiling.true_max) == (46, 61)
