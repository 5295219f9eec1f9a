"""promptfoo's `eval -o` output read natively: counts, categories, stable ids, old shapes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import load_one

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.compare.pairing import compare_report
from pytest_failgate.core.reports.model import Report
from pytest_failgate.core.reports.promptfoo import PromptfooReader
from pytest_failgate.core.taxonomy import builtin_taxonomies, classify

DATA = Path(__file__).resolve().parents[2] / "data" / "promptfoo"
SHARED = DATA / "shared"
GENERATED = DATA / "generated"
PROMPTFOO = builtin_taxonomies()["promptfoo"]
FILES = [SHARED / "tds_project1.promptfoo_results.json",
         SHARED / "promptfoo.sample-export.json",
         *(GENERATED / run / "results.json" for run in ("run1", "run2", "repeat"))]


def load(path: Path) -> Report:
    return load_one(path, PROMPTFOO)


def document(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def nonzero(report: Report) -> dict[str, int]:
    return {name: count for name, count in report.counts.items() if count}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name + "/" + p.stem)
def test_counts_match_what_promptfoo_records_in_results_stats(path: Path) -> None:
    stats = document(path)["results"]["stats"]
    report = load(path)
    assert report.n_cases == stats["successes"] + stats["failures"] + stats["errors"]
    assert report.failed == stats["failures"] + stats["errors"]
    assert report.contradictions == []
    assert report.counts["provider_error"] == stats["errors"]


def test_the_shared_exports_fall_in_the_categories_of_their_failed_assertions() -> None:
    assert nonzero(load(FILES[0])) == {"text_match": 3}  # contains, contains-any
    assert nonzero(load(FILES[1])) == {"latency": 3, "cost": 1}  # cost is listed first


def test_generated_runs_cover_provider_errors_and_assertion_families() -> None:
    assert nonzero(load(GENERATED / "run1" / "results.json")) == {
        "provider_error": 1, "text_match": 4, "format": 2, "code": 2}
    run2 = load(GENERATED / "run2" / "results.json")
    assert nonzero(run2) == {"provider_error": 1, "text_match": 6, "format": 2, "code": 2}
    assert run2.case_ids("provider_error") == ["flaky-echo/0/slow upstream"]


def test_case_ids_are_stable_across_runs_and_never_the_row_uuid() -> None:
    run1, run2 = (load(GENERATED / run / "results.json") for run in ("run1", "run2"))
    uuids = {row["id"] for run in ("run1", "run2")
             for row in document(GENERATED / run / "results.json")["results"]["results"]}
    assert len(uuids) == 28  # promptfoo gives every row of every run a fresh id
    ids1, ids2 = run1.all_case_ids(), run2.all_case_ids()
    assert len(set(ids1)) == 14
    assert set(ids1) == set(ids2)
    assert not set(ids1) & uuids


def test_two_runs_pair_case_by_case_and_show_which_cases_moved() -> None:
    """run2 edits the prompt: the `equals` test now fails for both providers, and the
    refusal test fails on a second assertion (same category: no move)."""
    run1, run2 = (load(GENERATED / run / "results.json") for run in ("run1", "run2"))
    comparison = compare_report(run1, run2, PROMPTFOO.category_names)
    assert comparison.n_both == 14
    assert comparison.only_base == comparison.only_candidate == []
    moved = comparison.change("text_match")
    assert sorted(moved.new) == ["echo/0/exact answer", "flaky-echo/0/exact answer"]
    assert moved.fixed == []
    assert all(not c.new and not c.fixed for c in comparison.changes
               if c.category != "text_match")


def test_repeats_folded_into_the_test_index_stay_distinct_cases() -> None:
    report = load(GENERATED / "repeat" / "results.json")
    ids = report.all_case_ids()
    assert len(ids) == len(set(ids)) == 28
    # the second repeat of a test: its own case, named for the test and the repeat
    single = load(GENERATED / "run1" / "results.json").all_case_ids()
    assert sorted(ids) == sorted([*single, *(f"{i}/r2" for i in single)])


def old_export(path: Path) -> list[dict[str, Any]]:
    """The rows of a v3 file in the shape older promptfoo wrote: a bare list, without
    failureReason, testIdx or promptIdx."""
    rows: list[dict[str, Any]] = copy.deepcopy(document(path)["results"]["results"])
    for row in rows:
        for key in ("failureReason", "testIdx", "promptIdx", "promptId"):
            row.pop(key, None)
    return rows


def test_an_older_bare_row_list_is_read_with_the_same_verdicts(tmp_path: Path) -> None:
    source = GENERATED / "run1" / "results.json"
    target = tmp_path / "old.json"
    target.write_text(json.dumps(old_export(source)), encoding="utf-8")
    old, new = load(target), load(source)
    assert old.counts == new.counts  # the provider error is found by its missing grading
    assert len(set(old.all_case_ids())) == 14


def test_an_error_beside_a_grading_result_is_an_assertion_failure_not_a_provider_error(
        tmp_path: Path) -> None:
    rows = old_export(SHARED / "tds_project1.promptfoo_results.json")
    assert sum(1 for row in rows if row.get("error")) == 3  # promptfoo sets both
    target = tmp_path / "old.json"
    target.write_text(json.dumps(rows), encoding="utf-8")
    assert nonzero(load(target)) == {"text_match": 3}


def test_the_first_failed_assertion_is_searched_depth_first_in_assertion_sets(
        tmp_path: Path) -> None:
    data = document(SHARED / "tds_project1.promptfoo_results.json")
    row = next(r for r in data["results"]["results"] if not r["success"])
    row["gradingResult"]["componentResults"] = [
        {"pass": True, "assertion": {"type": "contains"}},
        {"pass": False, "assertion": {"type": "assert-set"}, "componentResults": [
            {"pass": True, "assertion": {"type": "regex"}},
            {"pass": False, "assertion": {"type": "llm-rubric"}}]},
        {"pass": False, "assertion": {"type": "latency"}},
    ]
    target = tmp_path / "nested.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    output = PromptfooReader().read(target)
    assert output is not None
    case = next(c for c in output.cases if c["failed_assertion"] == "llm-rubric")
    assert case["failed_assertions"] == ["llm-rubric", "latency"]
    assert load(target).counts["model_graded"] == 1


def test_rows_that_contradict_results_stats_fail_the_consistency_item(tmp_path: Path) -> None:
    data = document(GENERATED / "run1" / "results.json")
    data["results"]["stats"]["failures"] -= 1
    target = tmp_path / "results.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    assert load(target).contradictions == ["results.stats.failures is 7, yet 8 rows say so"]


def test_a_malformed_row_is_an_error_naming_it_and_its_line(tmp_path: Path) -> None:
    data = document(GENERATED / "run1" / "results.json")
    rows = data["results"]["results"]
    rows[3] = {"success": "no", "provider": "echo", "vars": {}}
    target = tmp_path / "results.json"
    lines = ",\n".join(json.dumps(row) for row in rows)  # one row a line, from line 2
    target.write_text('{"results": {"prompts": [], "stats": {}, "results": [\n' + lines
                      + "]}}", encoding="utf-8")
    with pytest.raises(FailgateError, match=r"promptfoo result #4 is an object without "
                                            r"'success' \(true/false\)") as raised:
        load(target)
    assert (raised.value.line, raised.value.col) == (5, 1)


def test_other_json_is_not_claimed(tmp_path: Path) -> None:
    target = tmp_path / "other.json"
    target.write_text(json.dumps({"results": {"results": [{"x": 1}]}}), encoding="utf-8")
    assert PromptfooReader().read(target) is None


def test_a_malformed_first_row_of_a_promptfoo_file_is_an_error_not_a_skip(
        tmp_path: Path) -> None:
    data = document(SHARED / "promptfoo.sample-export.json")
    data["results"]["results"][0] = ["not", "a", "row"]
    target = tmp_path / "results.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(FailgateError, match="promptfoo result #1 is a list"):
        load(target)


@pytest.mark.parametrize(("assertion", "category"), [
    ("contains", "text_match"), ("not-icontains-any", "text_match"), ("regex", "text_match"),
    ("is-json", "format"), ("not-contains-xml", "format"),
    ("is-valid-openai-tools-call", "format"), ("javascript", "code"), ("python", "code"),
    ("rouge-n", "similarity"), ("similar", "similarity"), ("llm-rubric", "model_graded"),
    ("factuality", "model_graded"), ("context-faithfulness", "rag"), ("moderation", "safety"),
    ("not-is-refusal", "safety"), ("latency", "latency"), ("cost", "cost"),
    ("perplexity", "other_assertion"), (None, "unknown"),
])
def test_each_assertion_type_falls_in_its_family(assertion: str | None, category: str) -> None:
    case = {"success": False, "failure_reason": 1, "error": "failed", "graded": True,
            "failed_assertion": assertion}
    assert classify(PROMPTFOO, case) == category


def test_a_provider_error_outranks_the_assertions_and_a_pass_has_no_category() -> None:
    failed = {"success": False, "failure_reason": 2, "error": "HTTP 429", "graded": True,
              "failed_assertion": "contains"}
    assert classify(PROMPTFOO, failed) == "provider_error"
    assert classify(PROMPTFOO, {**failed, "success": True}) is None
