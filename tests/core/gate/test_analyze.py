"""``failgate analyze`` and ``--failgate-analyze``: one run's diagnosis, no baseline."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import scipy.stats  # type: ignore[import-untyped, unused-ignore]

from pytest_failgate.cli import main
from pytest_failgate.core.stats.intervals import exact_interval

DATA = Path(__file__).resolve().parents[2] / "data" / "rag-gate"


@pytest.fixture
def analysis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> tuple[str, dict[str, Any]]:
    monkeypatch.chdir(tmp_path)
    assert main(["analyze", str(DATA / "baseline"), "--json", "a.json"]) == 0
    out = capsys.readouterr().out
    return out, json.loads(Path("a.json").read_text(encoding="utf-8"))[0]


def test_failures_by_stage_and_the_bottleneck(analysis: tuple[str, dict[str, Any]]) -> None:
    out, found = analysis
    stages = {s["stage"]: s["count"] for s in found["stages"]}
    assert stages == {"retrieval": 65, "generation": 3, "refusal": 3, "unstaged": 0}
    assert found["bottleneck"] == "retrieval"
    assert "bottleneck: retrieval" in out


def test_the_weakest_slices_come_with_exact_intervals(
        analysis: tuple[str, dict[str, Any]]) -> None:
    _, found = analysis
    rates = [(s["value"], s["failed"], s["n_cases"]) for s in found["slices"]]
    assert rates == sorted(rates, key=lambda r: -Fraction(r[1], r[2]))
    assert rates[-1] == ("no_answer", 1, 10)
    assert sum(n for _, _, n in rates) == 100
    for weak in found["slices"]:
        expected = scipy.stats.binomtest(weak["failed"], weak["n_cases"]).proportion_ci(
            method="exact")
        assert weak["interval"] == pytest.approx([expected.low, expected.high], abs=1e-9)


def test_what_to_look_at_first_is_ordered_with_the_taxonomy_hints(
        analysis: tuple[str, dict[str, Any]]) -> None:
    out, found = analysis
    assert [(p["category"], p["count"]) for p in found["priorities"]] == [
        ("retrieval_miss", 65), ("hallucination", 3), ("false_refusal", 2), ("over_answer", 1)]
    first = found["priorities"][0]
    assert first["stage"] == "retrieval"
    assert "top_k" in first["settings"]
    assert first["hint"] in out
    metrics = {m["name"]: (m["value"], m["n"]) for m in found["metrics"]}
    assert metrics["answerable_accuracy"] == (pytest.approx(0.2), 90)  # answerable cases only
    assert metrics["no_answer_accuracy"] == (pytest.approx(0.9), 10)


@pytest.mark.parametrize(("successes", "n"), [(0, 1), (0, 10), (3, 10), (10, 10), (17, 85),
                                              (65, 90), (1, 400)])
def test_exact_intervals_match_clopper_pearson(successes: int, n: int) -> None:
    expected = scipy.stats.binomtest(successes, n).proportion_ci(method="exact")
    low, high = exact_interval(successes, n)
    assert (low, high) == pytest.approx((expected.low, expected.high), abs=1e-9)
    with pytest.raises(ValueError, match="successes"):
        exact_interval(n + 1, n)


@pytest.mark.slow
def test_the_analysis_in_the_pytest_summary(pytester: pytest.Pytester) -> None:
    shutil.copytree(DATA / "baseline", pytester.path / "run")
    pytester.makefile(".yaml", ceilings="version: 1\ntaxonomy: rag-gate\nceilings:\n"
                      "  retrieval_miss: 65\n  hallucination: 3\n  false_refusal: 2\n"
                      "  over_answer: 1\n")
    result = pytester.runpytest("--failgate=run", "--failgate-analyze", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["analysis of attribution  100 cases, 71 failed*",
                                 "  bottleneck: retrieval",
                                 "    1. retrieval_miss *: 65 (92% of failures*"])
    plain = pytester.runpytest("--failgate=run", "-p", "no:cacheprovider")
    assert "bottleneck" not in plain.stdout.str()


def test_a_run_with_nothing_failed_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no ceilings file: the run folder's own taxonomy
    run = tmp_path / "run"
    run.mkdir()
    rows = [{"id": f"c{i}", "slice": "s", "answerable": False, "correct": True,
             "over_answer": False, "primary_failure": "correct"} for i in range(3)]
    (run / "attribution.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                           encoding="utf-8")
    assert main(["analyze", str(run), "--json", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    assert "nothing failed" in out
    assert "answerable_accuracy n/a (applies to no case)" in out
    found = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))[0]
    assert found["bottleneck"] is None
    assert found["priorities"] == []
