"""``api.sequential_gate``: the sequential gate any harness feeds one case at a time."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
from helpers import CATEGORY_CASES, case, cases_for, write_ceilings, write_jsonl
from helpers import run_cli as run

from pytest_failgate import api

if TYPE_CHECKING:
    from pathlib import Path

RAG_CATEGORIES = ("verifier_false_negative", "verifier_false_positive", "retrieval_miss",
                  "planner_under_decomposition", "generator_hallucination", "context_dilution",
                  "unknown")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    # a ceiling of 0 can pass only at the last case (one failure among the rest is never
    # ruled out), so every category has room here
    write_ceilings(tmp_path / "ceilings.yaml", {**dict.fromkeys(RAG_CATEGORIES, 8),
                                                "retrieval_miss": 10, "total": 40})
    return tmp_path


def test_a_broken_run_settles_as_a_fail_long_before_its_end(project: Path) -> None:
    cases = cases_for({"retrieval_miss": 120}, passed=280, seed=9)
    gate = api.sequential_gate(len(cases))
    settled = next(s for s in map(gate.add, cases) if s is not None)
    assert settled.verdict == "fail"
    assert settled.n < 60
    assert "retrieval_miss" in settled.deciding or "total" in settled.deciding
    assert gate.add(cases[-1]) is settled  # settled stays settled


def test_a_clean_run_passes_with_the_verdict_check_gives(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = cases_for({"retrieval_miss": 2}, passed=398, seed=2)
    gate = api.sequential_gate(len(cases), ceilings=project / "ceilings.yaml", delta=0.01)
    settled = next(s for s in map(gate.add, cases) if s is not None)
    assert settled.verdict == "pass"
    assert settled.n < len(cases)
    assert settled.line() == (f"verdict pass: settled after {settled.n} of {len(cases)} planned "
                              "cases: the verdict is the full run's with probability at least 99%")
    result = gate.result()  # what every output renders: the same words
    assert result.verdict == "pass"
    assert result.headline.text.endswith(settled.line().split(": ", 1)[1])
    assert run(capsys, "check", str(write_jsonl(project / "run.jsonl", cases)))[0] == 0


def test_cases_finishing_out_of_plan_order_wait_for_the_plan(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The gate sees the longest prefix of the plan whose cases have all finished."""
    cases = [case(f"c{i}") for i in range(12)]
    write_jsonl(project / "data.jsonl", cases)
    run(capsys, "plan", "data.jsonl", "--seed", "4", "--out", "plan.json")
    order = json.loads((project / "plan.json").read_text())["cases"]
    gate = api.sequential_gate(12, plan="plan.json")
    finished = list(cases)
    random.Random(1).shuffle(finished)
    done: set[str] = set()
    for one in finished:
        gate.add(one)
        done.add(one["id"])
        prefix = next((i for i, case_id in enumerate(order) if case_id not in done), 12)
        if gate.settled is None:
            assert gate.gate.n == prefix
        else:  # settled on a prefix of the plan: later cases change nothing
            assert gate.gate.n == gate.settled.n <= prefix
    assert gate.settled is not None
    assert gate.settled.verdict == "pass"
    assert gate.settled.n < 12  # after 4 passes of 12, no category can exceed 8: certain


def test_a_plan_of_another_size_is_refused(project: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    write_jsonl(project / "data.jsonl", [case(f"c{i}") for i in range(5)])
    run(capsys, "plan", "data.jsonl", "--seed", "4", "--out", "plan.json")
    with pytest.raises(api.FailgateError, match="6 planned cases, but the plan orders 5"):
        api.sequential_gate(6, plan="plan.json")


def test_a_case_that_is_not_an_object_is_a_clear_error(project: Path) -> None:
    gate = api.sequential_gate(3)
    with pytest.raises(api.FailgateError, match="case #1: is string, not an object"):
        gate.add("not a case")


def test_against_a_baseline_new_failures_outnumbering_fixed_ones_fail_the_run_early(
        project: Path) -> None:
    """Paired mode: the baseline run had 5 retrieval misses of 300, this one about 45 (a
    count its ceilings would still allow); the comparison fails it early."""
    write_ceilings(project / "ceilings.yaml", dict.fromkeys(RAG_CATEGORIES, 60))
    before = cases_for({"retrieval_miss": 5}, passed=295, seed=6)
    write_jsonl(project / "baseline.jsonl", before)
    after = [dict(one, **CATEGORY_CASES["retrieval_miss"]) if index % 7 == 0 else one
             for index, one in enumerate(before)]
    gate = api.sequential_gate(300, baseline="baseline.jsonl")
    settled = next(s for s in map(gate.add, after) if s is not None)
    assert settled.verdict == "fail"
    assert settled.deciding == ("retrieval_miss vs baseline",)
    assert settled.n < 200
    unpaired = api.sequential_gate(300)
    assert next(s for s in map(unpaired.add, after) if s is not None).verdict == "pass"


def test_a_plan_drawn_within_strata_is_gated_as_watch_gates_it(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = cases_for({"retrieval_miss": 12}, passed=188, seed=5)
    for index, one in enumerate(cases):
        one["domain"] = "legal" if index % 4 == 0 else "medical"
    write_jsonl(project / "data.jsonl", cases)
    assert run(capsys, "plan", "data.jsonl", "--seed", "3", "--strata", "domain")[0] == 0
    code, out, _ = run(capsys, "watch", "data.jsonl", "--plan", "plan.json", "--replay")
    by_id = {one["id"]: one for one in cases}
    order = json.loads((project / "plan.json").read_text())["cases"]
    gate = api.sequential_gate(200, plan="plan.json")
    assert gate.gate.strata == 2
    settled = next(s for s in (gate.add(by_id[i]) for i in order) if s is not None)
    said = out.rstrip("\n").splitlines()[-1]
    # watch read the report's lines up to the last of the plan's first n cases: it paid for
    # every line read (the report is not in the plan's order)
    position = {one["id"]: index for index, one in enumerate(cases)}
    read = max(position[i] for i in order[:settled.n]) + 1
    assert settled.n < read
    assert said.endswith(replace(settled.record(), paid=read).text)
    assert code == (0 if settled.verdict == "pass" else 1)
