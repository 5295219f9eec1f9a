"""A run mixing report formats (``taxonomies:`` per format) compared with a baseline run:
every report is paired under the taxonomy that classified it, in every front end.

The runs are real tools' output: a regression gate run folder (taxonomy ``rag-gate``)
beside a promptfoo results file (taxonomy ``promptfoo``), before and after a change.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import cases_for, write_summary
from helpers import run_cli as run

from pytest_failgate import mcpserver

DATA = Path(__file__).resolve().parents[2] / "data"


def _run(root: Path, rag: str, promptfoo: str) -> Path:
    shutil.copytree(DATA / "rag-gate" / rag, root / "rag")
    shutil.copy(DATA / "promptfoo" / "generated" / promptfoo / "results.json", root)
    return root


@pytest.fixture
def mixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
          capsys: pytest.CaptureFixture[str]) -> Path:
    """``base/`` and ``cand/``, each a rag-gate run folder and a promptfoo file, and the
    ceilings ``failgate init base`` writes (a taxonomy per format)."""
    _run(tmp_path / "base", "baseline", "run1")
    _run(tmp_path / "cand", "topk1", "run2")
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "init", "base")[0] == 0
    text = (tmp_path / "ceilings.yaml").read_text()
    assert "taxonomy: promptfoo\ntaxonomies:\n  rag-gate: rag-gate\n" in text
    return tmp_path


def _rows(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(report["name"], row["name"]): row for report in document["reports"]
            for row in report["rows"]}


def test_check_against_a_baseline_pairs_each_report_under_its_own_taxonomy(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "check", "cand", "--baseline", "base", "--json", "gate.json")
    assert (code, err) == (1, "")
    document = json.loads((mixed / "gate.json").read_text())
    rows = _rows(document)
    assert rows["results", "text_match"]["baseline"]["n_new"] == 2
    assert rows["rag/attribution", "retrieval_miss"]["baseline"]["n_new"] == 10
    assert rows["rag/attribution", "retrieval_miss"]["baseline"]["verdict"] == "fail"
    assert ("results", "retrieval_miss") not in rows
    assert {r["name"]: r["taxonomy"] for r in document["reports"]} == {
        "results": "promptfoo", "rag/attribution": "rag-gate"}
    # the same through MCP
    assert _rows(mcpserver.check(paths=["cand"], baseline=["base"])) == rows


@pytest.mark.slow
def test_pytest_pairs_a_mixed_run_with_its_baseline(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = pytester.path
    _run(root / "base", "baseline", "run1")
    _run(root / "cand", "topk1", "run2")
    pytester.makeini("[pytest]\n")
    assert run(capsys, "init", "base")[0] == 0
    result = pytester.runpytest("--failgate=cand", "--failgate-baseline=base",
                                "--failgate-accept-baseline-gap=the fixture's runs, days apart",
                                "-k", "text_match or retrieval_miss")
    result.assert_outcomes(failed=2, deselected=result.parseoutcomes()["deselected"])
    result.stdout.fnmatch_lines(["*retrieval_miss: regressed against the baseline*",
                                 "*text_match*+2 / -0 WARN*"])


def test_diff_lists_each_reports_own_categories(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "diff", "base", "cand")
    assert code == 0
    assert out.splitlines()[:3] == ["results  (14 paired cases)",
                                    "  text_match: 4 -> 6  +2 new, -0 fixed",
                                    "    new: flaky-echo/0/exact answer, echo/0/exact answer"]
    assert "rag/attribution  (100 paired cases)" in out
    assert "  retrieval_miss: 65 -> 73  +10 new, -2 fixed" in out
    diffed = mcpserver.diff("base", "cand")
    assert {r["name"]: r["taxonomy"] for r in diffed["reports"]} == {
        "results": "promptfoo", "rag/attribution": "rag-gate"}


def test_noise_measures_each_reports_categories(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "noise", "base", "cand", "--out", "bands.json")
    assert code == 0, out
    table = json.loads((mixed / "bands.json").read_text())["metric_band"]
    assert (table["mode:text_match"]["min"], table["mode:text_match"]["max"]) == (4, 6)
    assert (table["mode:retrieval_miss"]["min"], table["mode:retrieval_miss"]["max"]) == (65, 73)
    assert table["mode:correct"]["min"] == 3 + 17  # promptfoo's passed cases, rag-gate's


def test_a_report_classified_by_another_taxonomy_in_the_baseline_is_one_clear_error(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (mixed / "cand" / "results.json").unlink()
    write_summary(mixed / "cand" / "results.json", cases_for({"retrieval_miss": 2}, passed=12))
    (mixed / "ceilings.yaml").write_text("version: 1\ntaxonomy: promptfoo\ntaxonomies:\n"
                                         "  rag-gate: rag-gate\n  failgate: rag\n")
    message = ("cand/results.json: report 'results' is classified by taxonomy 'rag' here and by "
               "'promptfoo' in the baseline; counts of different categories cannot be compared")
    for command in (["check", "cand", "--baseline", "base"], ["diff", "base", "cand"]):
        code, _, err = run(capsys, *command)
        assert (code, err) == (2, f"failgate: error: {message}\n"), command
