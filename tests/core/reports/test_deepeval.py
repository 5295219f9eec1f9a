"""DeepEval test runs read natively: every file a run leaves, metric failures and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import load_one

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports.deepeval import DeepEvalReader
from pytest_failgate.core.reports.model import Report
from pytest_failgate.core.taxonomy import builtin_taxonomies, classify

DATA = Path(__file__).resolve().parents[2] / "data" / "deepeval"
DEEPEVAL = builtin_taxonomies()["deepeval"]
TEST_RUN = [DATA / "test_run" / ".deepeval" / name for name in
            (".latest_test_run.json", ".latest_run_full.json", ".temp_test_run_data.json")]
TEST_RUN.append(next((DATA / "test_run" / "results").glob("test_run_*.json")))
EVALUATE = [DATA / "evaluate" / ".deepeval" / name for name in
            (".latest_test_run.json", ".latest_run_full.json")]
EVALUATE.append(next((DATA / "evaluate" / "results").glob("test_run_*.json")))


def load(path: Path) -> Report:
    return load_one(path, DEEPEVAL)


def run_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    run: dict[str, Any] = data.get("testRunData", data)
    return run


def nonzero(report: Report) -> dict[str, int]:
    return {name: count for name, count in report.counts.items() if count}


def label(path: Path) -> str:
    return f"{path.parts[-3]}/{path.name}"


@pytest.mark.parametrize("path", [p for p in TEST_RUN + EVALUATE
                                  if "testFailed" in run_of(p)], ids=label)
def test_counts_match_test_passed_and_test_failed(path: Path) -> None:
    run = run_of(path)
    report = load(path)
    assert report.n_cases == run["testPassed"] + run["testFailed"]
    assert report.failed == run["testFailed"]
    assert report.contradictions == []


@pytest.mark.parametrize("path", TEST_RUN, ids=label)
def test_every_file_of_a_test_run_gives_the_same_cases_and_categories(path: Path) -> None:
    report = load(path)
    assert nonzero(report) == {"metric_error": 1, "exact_match": 1, "other_metric": 3}
    assert report.all_case_ids() == ["refund_window", "shipping_cost", "warranty",
                                     "opening_hours", "order_status", "password_reset",
                                     "address_change"]


@pytest.mark.parametrize("path", EVALUATE, ids=label)
def test_an_evaluate_run_is_read_the_same_way(path: Path) -> None:
    assert nonzero(load(path)) == {"metric_error": 1, "exact_match": 1, "other_metric": 2}


def test_the_in_progress_file_records_no_totals_yet_still_gives_the_runs_counts() -> None:
    temp = run_of(TEST_RUN[2])
    assert "testFailed" not in temp
    assert all("order" not in case for case in temp["testCases"])
    assert load(TEST_RUN[2]).counts == load(TEST_RUN[0]).counts


def test_a_judge_error_is_its_own_category_not_a_quality_failure() -> None:
    report = load(TEST_RUN[0])
    assert report.case_ids("metric_error") == ["order_status"]  # Cited Source errored
    assert report.case_ids("exact_match") == ["shipping_cost"]
    assert report.case_ids("other_metric") == ["warranty", "opening_hours", "address_change"]


def write_run(tmp_path: Path, cases: list[dict[str, Any]], **top: Any) -> Path:
    target = tmp_path / "test_run_1.json"
    target.write_text(json.dumps({"testCases": cases, **top}), encoding="utf-8")
    return target


def metric(name: str, success: bool, score: float | None = None,
           error: str | None = None) -> dict[str, Any]:
    return {"name": name, "success": success, "score": score, "threshold": 0.5, "error": error}


def test_a_quality_failure_outranks_a_judge_error_on_the_same_case(tmp_path: Path) -> None:
    cases = [
        {"name": "a", "success": False, "metricsData": [
            metric("Faithfulness", False, error="timeout"), metric("Answer Relevancy", False,
                                                                   0.2)]},
        {"name": "b", "success": False, "metricsData": [
            metric("Contextual Recall", False, 0.1), metric("Bias", False, 0.9)]},
        {"name": "c", "success": False, "metricsData": [metric("Correctness [GEval]", False,
                                                               0.3)]},
        {"name": "d", "success": False, "metricsData": [metric("Hallucination", False)]},
        {"name": "e", "success": True, "metricsData": [metric("Toxicity", True, 0.0)]},
    ]
    report = load(write_run(tmp_path, cases))
    assert {name: report.case_ids(name) for name in nonzero(report)} == {
        "answer_relevancy": ["a"], "contextual_recall": ["b"], "custom_criteria": ["c"],
        "metric_error": ["d"]}  # no score: the judge did not answer


def test_conversational_cases_count_beside_single_turn_ones(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    target.write_text(json.dumps({"testRunData": {
        "testCases": [{"order": 0, "success": True, "metricsData": []}],
        "conversationalTestCases": [{"order": 0, "success": False, "metricsData": [
            metric("Knowledge Retention", False, 0.1)]}],
        "testPassed": 1, "testFailed": 1}}), encoding="utf-8")
    report = load(target)
    assert report.all_case_ids() == ["test_case_0", "conversational_test_case_0"]
    assert nonzero(report) == {"conversation": 1}


def test_cases_that_contradict_the_recorded_totals_fail_consistency(tmp_path: Path) -> None:
    target = write_run(tmp_path, [{"name": "a", "success": True, "metricsData": []}],
                       testPassed=0, testFailed=1)
    assert load(target).contradictions == ["testPassed is 0, yet 1 test cases say so",
                                           "testFailed is 1, yet 0 test cases say so"]


def test_a_case_without_a_verdict_is_an_error_naming_it_and_its_line(tmp_path: Path) -> None:
    target = tmp_path / ".latest_test_run.json"
    target.write_text('{"testRunData": {"testCases": [\n{"name": "a", "success": true},\n'
                      '{"name": "b", "metricsData": []}]}}', encoding="utf-8")
    with pytest.raises(FailgateError, match=r"testCases\[1\]: success is null; expected true "
                                            "or false") as raised:
        load(target)
    assert (raised.value.line, raised.value.col) == (3, 1)


def test_the_cache_and_a_link_only_latest_run_are_not_test_runs(tmp_path: Path) -> None:
    reader = DeepEvalReader()
    assert reader.read(DATA / "test_run" / ".deepeval" / ".deepeval-cache.json") is None
    link = tmp_path / ".latest_test_run.json"
    link.write_text(json.dumps({"testRunLink": "https://example.invalid/run"}),
                    encoding="utf-8")
    assert reader.read(link) is None


@pytest.mark.parametrize(("metric", "category"), [
    ("Answer Relevancy", "answer_relevancy"), ("Turn Faithfulness", "faithfulness"),
    ("Hallucination", "hallucination"), ("Contextual Precision", "contextual_precision"),
    ("Turn Contextual Recall", "contextual_recall"),
    ("Contextual Relevancy", "contextual_relevancy"), ("PII Leakage", "safety"),
    ("Tool Correctness", "agent"), ("Role Adherence", "conversation"),
    ("Exact Match", "exact_match"), ("Tone [GEval]", "custom_criteria"),
    ("Helpful [Conversational GEval]", "custom_criteria"), ("Flow [DAG]", "custom_criteria"),
    ("Keyword Recall", "other_metric"),
])
def test_each_deepeval_metric_name_has_its_category(metric: str, category: str) -> None:
    case = {"success": False, "failed_metric": metric, "errored_metric": "Bias"}
    assert classify(DEEPEVAL, case) == category
