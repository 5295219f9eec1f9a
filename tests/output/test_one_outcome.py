"""One outcome: the exit code, the JSON, Markdown, HTML, the terminal, MCP and the CI step
say the same verdict for the same run.

Each scenario is a real project (the rag example report beside a real promptfoo run,
ceilings written by ``failgate init``) changed the way a run goes wrong: a regression
(the example regression report), a provider outage (promptfoo's real outage output), both,
a ceiling loosened without a reason (the guard), a report that does not load. The
expected verdict is the scenario's, not any renderer's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import EXAMPLES

from pytest_failgate import mcpserver
from pytest_failgate.ci.__main__ import main as ci_main
from pytest_failgate.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "promptfoo" / "workflows"
EXIT = {"pass": 0, "fail": 1, "error": 2, "inconclusive": 3}


@dataclass(frozen=True)
class Scenario:
    name: str
    verdict: str  # what the run is, by construction
    regression: bool = False  # the rag report's regressed run
    outage: bool = False  # promptfoo's provider outage
    loosened: bool = False  # a ceiling raised without a reason, guarded against HEAD
    broken: bool = False  # a report that does not load


SCENARIOS = [
    Scenario("pass", "pass"),
    Scenario("fail", "fail", regression=True),
    Scenario("inconclusive", "inconclusive", outage=True),
    Scenario("fail+inconclusive", "fail", regression=True, outage=True),
    Scenario("guard-fail", "fail", loosened=True),
    Scenario("error", "error", broken=True),
]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   cwd=cwd, check=True, capture_output=True)


def _project(root: Path, scenario: Scenario) -> Path:
    """The scenario's project in ``root``, its ceilings set from the healthy runs."""
    evals = root / "evals"
    evals.mkdir(parents=True)
    shutil.copy(DATA / "jsonl" / "results.jsonl", evals)
    shutil.copy(EXAMPLES / "reports" / "eval_summary.json", evals)
    (root / "pytest.ini").write_text("[pytest]\nfailgate = evals\n", encoding="utf-8")
    assert main(["init"]) == 0
    if scenario.loosened:
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "ceilings")
        ceilings = root / "ceilings.yaml"
        text = ceilings.read_text(encoding="utf-8")
        assert "  text_match: 4\n" in text
        ceilings.write_text(text.replace("  text_match: 4\n", "  text_match: 5\n"),
                            encoding="utf-8")
        (root / "pytest.ini").write_text("[pytest]\nfailgate = evals\nfailgate_guard = HEAD\n",
                                         encoding="utf-8")
    if scenario.regression:
        shutil.copy(EXAMPLES / "regression" / "eval_summary.json", evals)
    if scenario.outage:
        shutil.copy(DATA / "outage_jsonl" / "results.jsonl", evals)
    if scenario.broken:
        (evals / "broken.json").write_text('{"case_results": [1]}', encoding="utf-8")
    return evals


def _html_headline(page: str) -> tuple[str, str]:
    """The headline's mark and words."""
    found = re.search(r'<h1><span class="mark" aria-hidden="true">(.*?)</span>'
                      r"<span>(.*?)</span></h1>", page)
    assert found is not None, page[:2000]
    return found.group(1), found.group(2)


MARKDOWN_MARK = {"pass": "✅", "fail": "❌", "error": "⚠️", "inconclusive": "❔"}
HTML_MARK = {"pass": "✓", "fail": "✗", "error": "✗", "inconclusive": "?"}


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_every_front_end_and_output_says_the_runs_one_verdict(
        scenario: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, scenario)
    capsys.readouterr()
    code = main(["check", "--md", "gate.md", "--html", "gate.html", "--json", "gate.json"])
    terminal = capsys.readouterr().out
    expected = scenario.verdict
    assert code == EXIT[expected], terminal
    document = json.loads(Path("gate.json").read_text(encoding="utf-8"))
    assert document["verdict"] == expected
    assert document["headline"]["verdict"] == expected
    markdown = Path("gate.md").read_text(encoding="utf-8").splitlines()[0]
    assert markdown.startswith(f"### failgate: {MARKDOWN_MARK[expected]} "), markdown
    mark, words = _html_headline(Path("gate.html").read_text(encoding="utf-8"))
    assert mark == HTML_MARK[expected]
    assert any(line.startswith(f"verdict {expected}: ") for line in terminal.splitlines())
    assert mcpserver.check(paths=["evals"], ceilings="ceilings.yaml")["verdict"] == expected
    assert ci_main(["evals", "--out-dir", "ci", *(["--guard-base", "HEAD"]
                                                  if scenario.loosened else [])], {}) \
        == EXIT[expected]
    step = json.loads(Path("ci", "verdict.json").read_text(encoding="utf-8"))
    assert step["verdict"] == expected
    assert Path("ci", "failgate.md").read_text(encoding="utf-8").startswith(
        f"## failgate: {MARKDOWN_MARK[expected]} {expected}\n")
    # the words agree too: each output says the one headline the core wrote
    said = document["headline"]["text"]
    assert markdown == f"### failgate: {MARKDOWN_MARK[expected]} {said}"
    assert words.lower() == said.lower()
    assert f"verdict {expected}: {said}" in terminal.splitlines()
    if expected != "pass":
        assert "passed" not in said
    if expected != "inconclusive":
        assert "not a regression" not in said


def test_a_regression_beside_an_inconclusive_report_is_a_fail_not_inconclusive(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, Scenario("both", "fail", regression=True, outage=True))
    assert main(["check", "--md", "gate.md", "--json", "gate.json"]) == 1
    assert json.loads(Path("gate.json").read_text(encoding="utf-8"))["verdict"] == "fail"
    headline = Path("gate.md").read_text(encoding="utf-8").splitlines()[0]
    assert "not a regression" not in headline
    assert headline == ("### failgate: ❌ 2 of 23 checks failed; 1 report cannot be judged")


def test_an_inconclusive_run_is_not_called_failed_in_html(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, Scenario("outage", "inconclusive", outage=True))
    assert main(["check", "--html", "gate.html"]) == 3
    mark, words = _html_headline(Path("gate.html").read_text(encoding="utf-8"))
    assert "failed" not in words
    assert (mark, words) == ("?", "1 report cannot be judged (not a pass, not a regression)")


def test_a_guard_failure_is_not_called_all_passed_in_markdown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, Scenario("loosened", "fail", loosened=True))
    assert main(["check", "--md", "gate.md"]) == 1
    headline = Path("gate.md").read_text(encoding="utf-8").splitlines()[0]
    assert "passed" not in headline
    assert headline == ("### failgate: ❌ the ceilings guard against HEAD found a loosening "
                        "without a reason")
