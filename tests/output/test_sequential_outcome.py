"""One outcome for a sequential run: the exit code, the terminal, JSON, Markdown, HTML and
MCP say the same verdict, "settled after n of N planned cases" and what the verdict is
worth, from the one headline the core decides (``core.gate.settled``, ``decide``).

Each scenario is a run replayed as if its cases were arriving (``failgate watch
--replay``): a broken run (it fails early), a healthy one with room under every ceiling
(it passes early) and a run that stopped before the verdict was settled (inconclusive).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
from helpers import CONFIDENCE, cases_for, write_ceilings, write_jsonl

from pytest_failgate import mcpserver
from pytest_failgate.cli import SCHEMA, main
from pytest_failgate.core.base.defaults import DEFAULT_DELTA
from pytest_failgate.core.ceilings.load import load_ceilings
from pytest_failgate.core.gate.sequential import SequentialGate, SequentialItem
from pytest_failgate.core.gate.settled import sequential_result
from pytest_failgate.core.taxonomy import builtin_taxonomies

EXIT = {"pass": 0, "fail": 1, "error": 2, "inconclusive": 3}
MARKDOWN_MARK = {"pass": "✅", "fail": "❌", "inconclusive": "❔"}
HTML_MARK = {"pass": "✓", "fail": "✗", "inconclusive": "?"}
CATEGORIES = ("verifier_false_negative", "verifier_false_positive", "retrieval_miss",
              "planner_under_decomposition", "generator_hallucination", "context_dilution",
              "unknown")
SURE = f"the verdict is the full run's with probability at least {CONFIDENCE}"


@dataclass(frozen=True)
class Scenario:
    name: str
    verdict: str
    counts: dict[str, int]
    planned: int | None = None  # more than the report holds: the run stopped early


SCENARIOS = [
    Scenario("broken", "fail", {"retrieval_miss": 80}),
    Scenario("healthy", "pass", {"retrieval_miss": 3}),
    Scenario("stopped", "inconclusive", {"retrieval_miss": 10}, planned=400),
]


def _project(root: Path, scenario: Scenario) -> Path:
    """200 cases, every category allowed 25 (room: a healthy run can pass early)."""
    write_ceilings(root / "ceilings.yaml", dict.fromkeys(CATEGORIES, 25))
    failed = sum(scenario.counts.values())
    return write_jsonl(root / "run.jsonl", cases_for(scenario.counts, 200 - failed, seed=28))


def _html_headline(page: str) -> tuple[str, str]:
    found = re.search(r'<h1><span class="mark" aria-hidden="true">(.*?)</span>'
                      r"<span>(.*?)</span></h1>", page)
    assert found is not None, page[:2000]
    return found.group(1), found.group(2)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_every_output_of_a_sequential_run_says_its_verdict_and_n_of_n_planned(
        scenario: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, scenario)
    planned = ["--planned", str(scenario.planned)] if scenario.planned else []
    code = main(["watch", "run.jsonl", "--replay", *planned, "--md", "gate.md", "--html",
                 "gate.html", "--json", "gate.json"])
    terminal = capsys.readouterr().out
    expected = scenario.verdict
    assert code == EXIT[expected], terminal
    document = json.loads(Path("gate.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert document["verdict"] == document["headline"]["verdict"] == expected
    record = document["sequential"]
    said = document["headline"]["text"]
    if expected == "inconclusive":
        assert record["settled"] is False
        assert (record["n"], record["planned"]) == (200, 400)
        assert said.endswith("stopped after 200 of 400 planned cases (200 started and paid "
                             "for) before the verdict was settled")
        assert document["reports"][0]["inconclusive"].startswith("the run stopped after 200")
    else:
        assert record["settled"] is True
        assert record["planned"] == 200
        assert record["n"] < 200  # settled early: what the sequential run saved
        assert said.endswith(f"; settled after {record['n']} of 200 planned cases "
                             f"({record['paid']} started and paid for): {SURE}")
        assert record["paid"] == record["n"]  # a replay in order reads what it settles on
        assert (record["delta"], record["confidence"]) == (float(DEFAULT_DELTA), CONFIDENCE)
    # every output says the one headline
    assert terminal.rstrip("\n").splitlines()[-1] == f"verdict {expected}: {said}"
    markdown = Path("gate.md").read_text(encoding="utf-8").splitlines()[0]
    assert markdown == f"### failgate: {MARKDOWN_MARK[expected]} {said}"
    mark, words = _html_headline(Path("gate.html").read_text(encoding="utf-8"))
    assert (mark, html.unescape(words).lower()) == (HTML_MARK[expected], said.lower())
    answered = mcpserver.replay("run.jsonl", planned=scenario.planned)
    assert answered["verdict"] == expected
    assert answered["headline"]["text"] == said
    assert answered["sequential"] == record


def test_a_fail_settled_early_fails_the_items_over_and_leaves_the_open_ones_unjudged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, SCENARIOS[0])
    assert main(["watch", "run.jsonl", "--replay", "--json", "gate.json"]) == 1
    capsys.readouterr()
    rows = {row["name"]: row for row in
            json.loads(Path("gate.json").read_text(encoding="utf-8"))["reports"][0]["rows"]}
    assert rows["retrieval_miss"]["verdict"] == "fail"
    assert "above its ceiling of 25" in rows["retrieval_miss"]["message"]
    # a category that cannot reach its ceiling is cleared; none is left failing but the one
    assert [name for name, row in rows.items() if row["verdict"] == "fail"] == ["retrieval_miss"]
    assert {row["verdict"] for row in rows.values()} <= {"fail", "pass", "skip"}
    assert all("not settled" in row["message"] for row in rows.values()
               if row["verdict"] == "skip")


def test_a_run_over_its_outside_share_is_inconclusive_in_the_result_not_failed(
        tmp_path: Path) -> None:
    path = write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 5})
    ceilings = load_ceilings(path, builtin_taxonomies())
    gate = SequentialGate([SequentialItem("retrieval_miss", frozenset({"retrieval_miss"}), 5),
                           SequentialItem("provider_error", frozenset({"provider_error"}), 2,
                                          outside=True)], 100, DEFAULT_DELTA)
    settled = None
    for _ in range(3):
        settled = gate.add("provider_error")
    assert settled is not None
    assert settled.verdict == "inconclusive"
    result = sequential_result(gate, ceilings, "run", tmp_path / "run.jsonl", "rag")
    assert result.verdict == "inconclusive"
    assert result.headline.failed == 0
    verdicts = {row.name: row.verdict for row in result.rows}
    assert verdicts == {"retrieval_miss": "skip", "provider_error": "inconclusive"}
    assert result.headline.text == (
        "1 report cannot be judged (not a pass, not a regression); settled after 3 of 100 "
        f"planned cases: {SURE}")
