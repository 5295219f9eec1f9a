"""Finding and reading reports: every shape, every name, every malformed input."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from helpers import EXAMPLES, RAG, case, cases_for, category_case, write_jsonl, write_summary

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.gate.runner import load_run
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.discover import discover
from pytest_failgate.core.reports.model import Report, ReportFile, SkippedFile
from pytest_failgate.core.reports.read import load_report

if TYPE_CHECKING:
    from pathlib import Path

COUNTS = {"verifier_false_negative": 3, "retrieval_miss": 2, "unknown": 1}


def load(path: Path) -> Report:
    loaded = load_report(ReportFile(path, path.stem), TaxonomyChoice(RAG))
    assert isinstance(loaded, Report)
    return loaded


def load_error(path: Path) -> str:
    with pytest.raises(FailgateError) as info:
        load_report(ReportFile(path, path.stem), TaxonomyChoice(RAG))
    return str(info.value)


def expected_counts(counts: dict[str, int]) -> dict[str, int]:
    return {name: counts.get(name, 0) for name in RAG.category_names}


@pytest.mark.parametrize("indent", [None, 2])
def test_eval_summary_shape_is_classified(tmp_path: Path, indent: int | None) -> None:
    records = cases_for(COUNTS, passed=5)
    report = load(write_summary(tmp_path / "r.json", records, indent=indent))
    assert report.kind == "cases"
    assert report.counts == expected_counts(COUNTS)
    assert report.n_cases == 11
    in_file_order = [c["id"] for c in records if c["id"].startswith("retrieval_miss")]
    assert report.case_ids("retrieval_miss") == in_file_order


def test_json_array_and_jsonl_give_the_same_counts(tmp_path: Path) -> None:
    records = cases_for(COUNTS, passed=4, seed=3)
    (tmp_path / "a.json").write_text(json.dumps(records), encoding="utf-8")
    write_jsonl(tmp_path / "b.jsonl", records)
    array, lines = load(tmp_path / "a.json"), load(tmp_path / "b.jsonl")
    assert array.counts == lines.counts == expected_counts(COUNTS)
    assert array.tally is not None
    assert lines.tally is not None
    assert array.tally.ids == lines.tally.ids


def test_bidmate_example_reports_load(tmp_path: Path) -> None:
    summary = load(EXAMPLES / "reports" / "eval_summary.json")
    assert summary.counts["verifier_false_negative"] == 6
    assert summary.counts["retrieval_miss"] == 1
    assert summary.failed == 7
    assert summary.n_cases == 26
    aggregate = load(EXAMPLES / "reports" / "real100" / "baseline.aggregate.json")
    assert aggregate.kind == "aggregate"
    assert aggregate.counts["verifier_false_negative"] == 76
    assert aggregate.n_cases == 221
    assert aggregate.case_ids("retrieval_miss") == []


def test_case_ids_fall_back_through_the_id_fields_then_position(tmp_path: Path) -> None:
    records = [
        {**category_case("unknown", "x"), "id": None, "case_id": "c-1"},
        {k: v for k, v in category_case("unknown", "x").items() if k != "id"}
        | {"question_id": 7},
        {k: v for k, v in category_case("unknown", "x").items() if k != "id"},
    ]
    report = load(write_summary(tmp_path / "r.json", records))
    assert report.case_ids("unknown") == ["c-1", "7", "#3"]


def test_recorded_aggregates_are_kept(tmp_path: Path) -> None:
    path = write_summary(tmp_path / "r.json", cases_for(COUNTS), num_predictions=6,
                         failure_category_counts={"unknown": 1})
    report = load(path)
    assert report.recorded["num_predictions"] == 6
    assert report.recorded_counts == {"unknown": 1}


def test_unrelated_json_is_skipped_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"top_k": 4, "ablation": {"runs": [1, 2]}}')
    (tmp_path / "list.json").write_text("3")
    only_rag = TaxonomyChoice(RAG)
    assert isinstance(load_report(ReportFile(tmp_path / "config.json", "config"), only_rag),
                      SkippedFile)
    assert isinstance(load_report(ReportFile(tmp_path / "list.json", "list"), only_rag),
                      SkippedFile)


def test_discover_names_reports_relative_to_the_root_without_suffix(tmp_path: Path) -> None:
    write_summary(tmp_path / "real100" / "eval_summary.json", [case("a")])
    write_jsonl(tmp_path / "smoke.jsonl", [case("a")])
    (tmp_path / "notes.md").write_text("hi")
    write_jsonl(tmp_path / ".git" / "x.jsonl", [case("a")])
    write_jsonl(tmp_path / "node_modules" / "x.jsonl", [case("a")])
    found, skipped = discover([tmp_path])
    assert [f.name for f in found] == ["smoke", "real100/eval_summary"]
    assert [s.path.name for s in skipped] == ["notes.md"]


def test_discover_reads_hidden_folders_and_files_where_tools_write_runs(tmp_path: Path
                                                                      ) -> None:
    write_jsonl(tmp_path / ".deepeval" / ".latest_test_run.jsonl", [case("a")])
    found, skipped = discover([tmp_path])
    assert [f.name for f in found] == [".deepeval/.latest_test_run"]
    assert skipped == []


def test_two_reports_with_one_name_are_an_error(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a" / "run.jsonl", [case("a")])
    write_jsonl(tmp_path / "b" / "run.jsonl", [case("a")])
    with pytest.raises(FailgateError, match="two reports are both named 'run'"):
        load_run((tmp_path / "a", tmp_path / "b"), TaxonomyChoice(RAG))


def test_a_broken_report_and_a_report_of_one_name_are_an_error(tmp_path: Path) -> None:
    """A file that fails to load keeps its name: it may not share items with another."""
    write_jsonl(tmp_path / "a" / "run.jsonl", [case("a")])
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "run.json").write_text("{", encoding="utf-8")
    with pytest.raises(FailgateError, match="two reports are both named 'run'"):
        load_run((tmp_path / "a", tmp_path / "b"), TaxonomyChoice(RAG))


def test_a_file_no_reader_reads_never_clashes_with_a_report_of_its_name(tmp_path: Path
                                                                        ) -> None:
    """``promptfoo eval -o results.json -o results.csv``: the CSV is listed as skipped."""
    write_jsonl(tmp_path / "results.jsonl", [case("a")])
    (tmp_path / "results.csv").write_text("Description,Status\nx,PASS\n", encoding="utf-8")
    gated, skipped = load_run((tmp_path,), TaxonomyChoice(RAG))
    assert [g.report.name for g in gated if g.report is not None] == ["results"]
    assert [s.path.name for s in skipped] == ["results.csv"]


def test_a_path_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FailgateError, match="no such file or directory"):
        discover([tmp_path / "nope"])


# -- malformed input: one message, with the file and the place ----------------------


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{\n  "case_results": [\n    {"id": "a",}\n  ]\n}\n')
    message = load_error(path)
    assert message.startswith(f"{path}:3:")
    assert "invalid JSON" in message


def test_truncated_report_is_an_error(tmp_path: Path) -> None:
    path = write_summary(tmp_path / "r.json", cases_for(COUNTS))
    path.write_text(path.read_text()[:-40])
    assert "invalid JSON" in load_error(path)


def test_a_case_that_is_not_an_object_names_its_index(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"case_results": [case("a"), "oops"]}, indent=1))
    message = load_error(path)
    assert "case #2 is string, not an object" in message
    assert f"{path}:" in message


def test_jsonl_line_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", [case("a"), case("b")])
    path.write_text(path.read_text() + "{not json}\n")
    assert load_error(path).startswith(f"{path}:3:")


def test_a_mistyped_field_names_the_case_and_field(tmp_path: Path) -> None:
    path = write_summary(tmp_path / "r.json", [case("a"), case("b", answerable="yes")])
    message = load_error(path)
    assert "case #2: 'answerable' is \"yes\" (a string); expected true or false" in message
    line = path.read_text().splitlines().index('      "answerable": "yes",') + 1
    assert message.startswith(f"{path}:{line}:")


def test_duplicate_case_ids_are_an_error(tmp_path: Path) -> None:
    path = write_summary(tmp_path / "r.json", [case("a"), case("b"), case("a")])
    message = load_error(path)
    assert "case #3: duplicate case id 'a' (also case #1)" in message
    third = [i for i, line in enumerate(path.read_text().splitlines(), 1) if line == "    {"][2]
    assert message.startswith(f"{path}:{third}:5: ")


def test_ids_are_compared_as_values_not_spellings(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a"}\n{"id": "\\u0061"}\n')
    assert "case #2: duplicate case id 'a' (also case #1)" in load_error(path)
    path.write_text('{"id": 17}\n{"id": "17"}\n')
    assert f"{path}:2:1: case #2: duplicate case id '17'" in load_error(path)


def test_an_id_that_is_not_text_or_integer_is_an_error(tmp_path: Path) -> None:
    path = write_summary(tmp_path / "r.json", [case(None, id=[1])])
    message = load_error(path)
    assert "case #1: the case id 'id' is array; it must be a string or an integer" in message


@pytest.mark.parametrize(
    ("content", "message"),
    [('{"case_results": []}', "no cases"), ("[]", "no cases"), ("", "the file is empty")],
)
def test_zero_cases_is_an_error_not_a_pass(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(content)
    assert message in load_error(path)


def test_empty_jsonl_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("\n\n")
    assert "no cases" in load_error(path)


def test_case_results_that_is_not_a_list_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"case_results": {"a": 1}}')
    assert "'case_results' must be a list of cases" in load_error(path)


def test_aggregate_with_an_unknown_category_suggests_the_closest(tmp_path: Path) -> None:
    counts = dict.fromkeys(RAG.category_names, 0)
    counts["retrieval_mis"] = counts.pop("retrieval_miss")
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"num_predictions": 5, "failure_category_counts": counts}))
    assert "did you mean 'retrieval_miss'?" in load_error(path)


def test_aggregate_missing_a_category_is_an_error(tmp_path: Path) -> None:
    counts = dict.fromkeys(RAG.category_names, 0)
    del counts["context_dilution"]
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"failure_category_counts": counts}))
    assert "lacks context_dilution" in load_error(path)


def test_aggregate_with_more_failures_than_cases_is_an_error(tmp_path: Path) -> None:
    counts = dict.fromkeys(RAG.category_names, 2)
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"num_predictions": 3, "failure_category_counts": counts}))
    assert "more than num_predictions 3" in load_error(path)


def test_non_utf8_report_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(b'{"case_results": ["\xff"]}')
    assert "not UTF-8" in load_error(path)
