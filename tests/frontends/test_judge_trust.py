"""How far to trust the judge: with gold labels every output reports, per category, the
judge's precision and recall with exact intervals, Cohen's kappa and the confusion matrix,
each figure the labels' own (counted here again from the labels file), "not applicable"
where no labelled case is, and the same document from the CLI and the MCP server."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from helpers import mcp_calls, run_cli
from labelled_project import draw, judge_of, make_project, write_gold

CEILINGS = {"retrieval_miss": 80, "generator_hallucination": 40}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The judge misses 30% of the passing cases' true retrieval misses (by the labels)."""
    monkeypatch.chdir(tmp_path)
    root = make_project(tmp_path, CEILINGS)
    write_gold(root, draw(root), missed_share=0.3)
    return root


def _pairs(root: Path) -> list[tuple[str | None, str | None]]:
    """(judge, gold) of every labelled case, read from the labels file and the case ids."""
    lines = (root / "gold.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    return [(judge_of(label["id"]), label["category"]) for label in map(json.loads, lines)]


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, dict[str, Any]]:
    code, out, err = run_cli(capsys, "check", "reports", "--json", "gate.json", *args)
    assert "Traceback" not in err
    return code, out, json.loads(Path("gate.json").read_text(encoding="utf-8"))


def test_the_json_carries_each_categorys_figures_counted_from_the_labels(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, document = _check(capsys, "--labels", "gold.jsonl")
    agreement = document["reports"][0]["agreement"]
    pairs = _pairs(project)
    classes = agreement["classes"]
    assert classes[-1] == "pass"
    assert "retrieval_miss" in classes
    named = {name: (None if name == "pass" else name) for name in classes}
    assert agreement["labelled"] == len(pairs) == 200
    assert agreement["agreed"] == sum(1 for j, g in pairs if j == g)
    for i, row in enumerate(agreement["matrix"]):
        for k, cell in enumerate(row):
            assert cell == sum(1 for j, g in pairs if j == named[classes[i]]
                               and g == named[classes[k]])
    figures = {one["name"]: one for one in agreement["categories"]}
    miss = figures["retrieval_miss"]
    judged = [g for j, g in pairs if j == "retrieval_miss"]
    truly = [j for j, g in pairs if g == "retrieval_miss"]
    assert miss["precision"]["hits"] == judged.count("retrieval_miss") == len(judged)
    assert Fraction(miss["recall"]["hits"], miss["recall"]["of"]) == Fraction(
        truly.count("retrieval_miss"), len(truly))
    assert miss["recall"]["of"] > miss["precision"]["of"]  # the judge missed some
    low, high = miss["recall"]["interval"]
    assert low < miss["recall"]["value"] < high
    assert high < 0.9
    assert miss["trust"] == "untrusted"  # its recall is shown below 90%
    # a category no labelled case is in: not applicable, never 1.0 or 0.0
    assert figures["context_dilution"]["precision"] is None
    assert figures["context_dilution"]["recall"] is None
    assert figures["context_dilution"]["trust"] == "not applicable"
    n = len(pairs)
    agreed = sum(1 for j, g in pairs if j == g)
    expected = sum(sum(1 for j, _ in pairs if j == c) * sum(1 for _, g in pairs if g == c)
                   for c in {c for pair in pairs for c in pair})
    kappa = Fraction(n * agreed - expected, n * n - expected)
    assert agreement["kappa_exact"] == f"{kappa.numerator}/{kappa.denominator}"
    assert agreement["kappa"] == pytest.approx(float(kappa))


def test_the_terminal_markdown_and_html_show_the_figures(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, document = _check(capsys, "--labels", "gold.jsonl", "--md", "gate.md",
                              "--html", "gate.html")
    agreement = document["reports"][0]["agreement"]
    miss = next(one for one in agreement["categories"] if one["name"] == "retrieval_miss")
    recall = f"{miss['recall']['hits']}/{miss['recall']['of']}"
    assert "how far to trust the judge:" in out
    line = next(line for line in out.splitlines() if line.strip().startswith("retrieval_miss")
                and "untrusted" in line)
    assert recall in line
    assert f"kappa {agreement['kappa']:.3f}" in out
    assert "judge \\ label" in out
    markdown = Path("gate.md").read_text(encoding="utf-8")
    assert "Judge vs gold labels" in markdown
    assert "untrusted: `retrieval_miss`" in markdown
    assert f"| `retrieval_miss` | {miss['precision']['hits']}/" in markdown
    page = Path("gate.html").read_text(encoding="utf-8")
    assert '<section id="judge">' in page
    assert recall in page
    # classes no labelled case is in are left out of the tables (the JSON keeps them)
    assert "context_dilution" not in out.split("how far to trust the judge")[1]


def test_a_run_without_labels_says_nothing_of_the_judge(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, document = _check(capsys, "--md", "gate.md")
    assert document["reports"][0]["agreement"] is None
    assert "trust the judge" not in out
    assert "Judge vs gold labels" not in Path("gate.md").read_text(encoding="utf-8")


@pytest.mark.heavy  # a whole MCP server over stdio
def test_the_mcp_check_tool_returns_the_same_figures(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, document = _check(capsys, "--labels", "gold.jsonl")
    _, results = mcp_calls(project, [("check", {"paths": ["reports"],
                                                "labels": "gold.jsonl"})])
    assert not results[0].is_error
    served = dict(results[0].structured_content)
    assert served["reports"][0]["agreement"] == document["reports"][0]["agreement"]


def test_the_ci_steps_summary_says_how_far_to_trust_the_judge(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_failgate.ci.run import run, settings_from_args

    done = run(settings_from_args(["reports", "--labels", "gold.jsonl", "--out-dir", "ci"]))
    capsys.readouterr()
    summary = (project / "ci" / "failgate.md").read_text(encoding="utf-8")
    assert "Judge vs gold labels" in summary
    assert "untrusted: `retrieval_miss`" in summary
    gate = json.loads((project / "ci" / "gate.json").read_text(encoding="utf-8"))
    assert gate["reports"][0]["agreement"]["labelled"] == 200
    assert done.failed == ["ceilings.yaml::run::retrieval_miss"]
