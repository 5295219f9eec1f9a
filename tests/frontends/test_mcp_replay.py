"""MCP's ``replay`` tool, through the MCP SDK's own client: ``failgate watch --replay``'s
document, with the futility stop, a plan drawn within strata, and paired mode against a
baseline run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from helpers import CATEGORY_CASES, cases_for, mcp_calls, write_ceilings, write_jsonl

from pytest_failgate.cli import main

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow  # a server in a subprocess: a few seconds

CATEGORIES = ("verifier_false_negative", "verifier_false_positive", "retrieval_miss",
              "planner_under_decomposition", "generator_hallucination", "context_dilution",
              "unknown")


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    cwd = tmp_path_factory.mktemp("replay")
    write_ceilings(cwd / "ceilings.yaml", dict.fromkeys(CATEGORIES, 12))
    write_ceilings(cwd / "paired.yaml", dict.fromkeys(CATEGORIES, 60))
    write_jsonl(cwd / "clean.jsonl", cases_for({"retrieval_miss": 3}, passed=297, seed=4))
    before = cases_for({"retrieval_miss": 5}, passed=295, seed=6)
    write_jsonl(cwd / "baseline.jsonl", before)
    write_jsonl(cwd / "worse.jsonl", [
        dict(one, **CATEGORY_CASES["retrieval_miss"]) if index % 7 == 0 else one
        for index, one in enumerate(before)])
    strata = cases_for({"retrieval_miss": 3}, passed=37, seed=5)
    for index, one in enumerate(strata):
        one["domain"] = "legal" if index % 4 == 0 else "medical"
    write_jsonl(cwd / "strata.jsonl", strata)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        assert main(["plan", "strata.jsonl", "--seed", "3", "--strata", "domain"]) == 0
    _, results = mcp_calls(cwd, [
        ("replay", {"report": "clean.jsonl"}),
        ("replay", {"report": "clean.jsonl", "futility": 0.05, "margin": 10}),
        ("replay", {"report": "worse.jsonl", "baseline": "baseline.jsonl",
                    "ceilings": "paired.yaml"}),
        ("replay", {"report": "strata.jsonl", "plan": "plan.json"}),
        ("replay", {"report": "clean.jsonl", "futility": 2}),
    ])
    return cwd, results


def _cli(cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *argv: str) -> Any:
    monkeypatch.chdir(cwd)
    main(["watch", *argv, "--replay", "--json", "cli.json"])
    capsys.readouterr()
    return json.loads((cwd / "cli.json").read_text(encoding="utf-8"))


def _same(document: Any, expected: Any) -> None:
    document, expected = dict(document), dict(expected)
    document.pop("ratchet_advice")
    expected.pop("ratchet_advice")
    assert document == expected


def test_replay_with_the_futility_stop_settles_sooner_as_watch_does(
        replayed: tuple[Path, list[Any]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cwd, results = replayed
    plain, futile = results[0].structured_content, results[1].structured_content
    assert (plain["verdict"], futile["verdict"]) == ("pass", "pass")
    assert futile["sequential"]["n"] < plain["sequential"]["n"]
    assert (futile["sequential"]["beta"], futile["sequential"]["margin"]) == (0.05, 10)
    _same(futile, _cli(cwd, monkeypatch, capsys, "clean.jsonl", "--futility", "0.05",
                       "--margin", "10"))


def test_replay_against_a_baseline_fails_on_the_comparison_as_watch_does(
        replayed: tuple[Path, list[Any]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cwd, results = replayed
    paired = results[2].structured_content
    assert paired["verdict"] == "fail"
    rows = {row["name"]: row for row in paired["reports"][0]["rows"]}
    assert rows["retrieval_miss vs baseline"]["verdict"] == "fail"
    assert rows["retrieval_miss"]["verdict"] != "fail"  # at most 48 of 300: within its 60
    _same(paired, _cli(cwd, monkeypatch, capsys, "worse.jsonl", "--baseline", "baseline.jsonl",
                       "--ceilings", "paired.yaml"))


def test_replay_of_a_plan_drawn_within_strata_is_watchs(
        replayed: tuple[Path, list[Any]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cwd, results = replayed
    document = results[3].structured_content
    assert (document["verdict"], document["sequential"]["planned"]) == ("pass", 40)
    _same(document, _cli(cwd, monkeypatch, capsys, "strata.jsonl", "--plan", "plan.json"))


def test_replay_with_a_beta_outside_0_and_1_is_one_error(
        replayed: tuple[Path, list[Any]]) -> None:
    bad = replayed[1][4]
    assert bad.is_error
    assert "beta must lie strictly between 0 and 1, not 2" in bad.content[0].text
