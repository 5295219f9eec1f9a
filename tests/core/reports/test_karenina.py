"""karenina results through failgate: the JSON and CSV readers and the `karenina` taxonomy."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.base.result import Row
from pytest_failgate.core.gate.runner import Gate, GateConfig, load_run, run_gate
from pytest_failgate.core.reports.builtin import builtin_readers
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.karenina import (
    CATEGORY_TO_GROUP,
    MAX_CONTRADICTIONS,
    KareninaCsvReader,
    KareninaJsonReader,
)
from pytest_failgate.core.reports.model import Report
from pytest_failgate.core.reports.read import ReadSpec
from pytest_failgate.core.taxonomy import builtin_taxonomies

DATA = Path(__file__).resolve().parents[2] / "data" / "karenina"
FIXTURE = DATA / "results_export_full.json"
KARENINA = builtin_taxonomies()["karenina"]
EXPORT: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
RESULT_SHAPE: dict[str, Any] = EXPORT["results"][0]  # a passing result

# The generated export: this many failures per category (karenina's order), and passes.
COUNTS = {
    "content": 3, "recursion_limit": 1, "trace_validation": 2, "deep_judgment": 1,
    "deep_judgment_rubric": 1, "timeout": 4, "connection": 2, "rate_limit": 1,
    "server_error": 1, "abstention": 2, "sufficiency": 1, "template_validation": 1,
    "parsing": 2, "unexpected_error": 1,
}
PASSES = 5
GROUP_COUNTS = {"content": 3, "autofail": 5, "retry": 8, "abstained": 3, "system": 4}
CAVEATS = {
    "pass-0": ["retries_used"],
    "pass-1": ["partial_content", "embedding_override", "parse_decision_malformed",
               "retries_used"],
    "content-0": ["embedding_override"],
    "timeout-0": ["retries_used"], "timeout-1": ["retries_used"],
    "timeout-2": ["retries_used"], "timeout-3": ["retries_used"],
    "parsing-0": ["parse_decision_malformed"],
    "unexpected_error-0": ["partial_content"],
}
CAVEAT_COUNTS = {"partial_content": 2, "embedding_override": 2, "parse_decision_malformed": 2,
                 "retries_used": 6}
STAGES = {"content": "verify_template", "abstention": "abstention_check",
          "sufficiency": "sufficiency_check", "template_validation": "validate_template",
          "parsing": "parse_template"}


# ------------------------------------------------------------------------- builders


def result(question_id: str, category: str | None = None, caveats: list[str] | None = None,
           group: str | None = None, **template: Any) -> dict[str, Any]:
    """A karenina result in the fixture's shape whose fields agree with its ``category``
    (karenina's classifier would give it) unless ``template`` or ``group`` say otherwise."""
    record = copy.deepcopy(RESULT_SHAPE)
    record["metadata"]["question_id"] = record["metadata"]["result_id"] = question_id
    record["metadata"]["caveats"] = list(caveats or [])
    fields: dict[str, Any] = {"template_verification_performed": False, "verify_result": None}
    if category is None or category == "timeout":  # a timeout after a passing verify
        fields = {"template_verification_performed": True, "verify_result": True}
    elif category == "content":
        fields = {"template_verification_performed": True, "verify_result": False}
    elif category == "abstention":
        fields.update(abstention_check_performed=True, abstention_detected=True)
    elif category == "sufficiency":
        fields.update(abstention_check_performed=True, abstention_detected=False,
                      sufficiency_check_performed=True, sufficiency_detected=True)
    record["template"].update(fields, **template)
    if category is not None:
        record["metadata"]["failure"] = {
            "category": category, "stage": STAGES.get(category, "generate_answer"),
            "reason": f"{category} happened", "details": None,
            "group": group or CATEGORY_TO_GROUP.get(category, "system"),
        }
    return record


def generated_results() -> list[dict[str, Any]]:
    """Every category ``COUNTS`` times, ``PASSES`` passes, the ``CAVEATS``, interleaved."""
    records = [result(f"pass-{i}", None, CAVEATS.get(f"pass-{i}")) for i in range(PASSES)]
    for category, n in COUNTS.items():
        records += [result(f"{category}-{i}", category, CAVEATS.get(f"{category}-{i}"))
                    for i in range(n)]
    return records[::2] + records[1::2]


def write_json(path: Path, results: list[Any], **top: Any) -> Path:
    document = {"format_version": "2.2", "metadata": EXPORT["metadata"],
                "shared_data": EXPORT["shared_data"], "results": results, **top}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


CSV_COLUMNS = ["row_index", "question_id", "question_text", "verify_result",
               "template_verification_performed", "abstention_detected",
               "sufficiency_detected", "success", "failure_category", "failure_group",
               "failure_stage", "failure_reason", "failure_details_json", "caveats"]


def csv_row(index: int, record: dict[str, Any]) -> list[str]:
    """A result as karenina's CSV export writes it: JSON for verify_result ("N/A" when
    null), Python's True/False for flags, comma-joined caveats, empty cells for null."""
    meta, template = record["metadata"], record["template"]
    failure = meta["failure"] or {}

    def flag(value: Any) -> str:
        return "" if value is None else str(value)

    verify = template["verify_result"]
    return [
        str(index), meta["question_id"], meta["question_text"],
        "N/A" if verify is None else json.dumps(verify),
        flag(template["template_verification_performed"]),
        flag(template["abstention_detected"]), flag(template["sufficiency_detected"]),
        str(failure.get("category") in (None, "content")),
        failure.get("category", ""), failure.get("group", ""), failure.get("stage", ""),
        failure.get("reason", ""),
        json.dumps(failure["details"]) if failure.get("details") else "",
        ",".join(meta["caveats"]),
    ]


def write_csv(path: Path, results: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for index, record in enumerate(results, start=1):
            writer.writerow(csv_row(index, record))
    return path


def write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def load(path: Path) -> Report:
    """One karenina file through failgate's loader with the built-in readers."""
    gated, _ = load_run((path,), TaxonomyChoice(KARENINA), ReadSpec(readers=builtin_readers()))
    assert len(gated) == 1
    if gated[0].error is not None:
        raise gated[0].error
    assert gated[0].report is not None
    return gated[0].report


def gate(tmp_path: Path, ceilings: str, *paths: Path) -> Gate:
    ceilings_path = tmp_path / "ceilings.yaml"
    ceilings_path.write_text("version: 1\ntaxonomy: karenina\n" + ceilings, encoding="utf-8")
    return run_gate(GateConfig(paths=paths or (tmp_path / "reports",),
                               ceilings_path=ceilings_path))


def rows(gated: Gate, report: str) -> dict[str, Row]:
    found = [r for r in gated.result().reports if r.name == report]
    assert len(found) == 1, [r.name for r in gated.result().reports]
    assert found[0].error is None, found[0].error
    return {row.name: row for row in found[0].rows}


# ------------------------------------------------------------------ the real export


def test_the_real_export_gives_one_timeout_in_group_retry(tmp_path: Path) -> None:
    # its one failure is a timeout (outside the system under test) in two cases: judged only
    # when the file allows half the cases to fail so (the default is a quarter)
    gated = gate(tmp_path, "inconclusive: 0.5\nceilings:\n  timeout: 1\n  group:retry: 1\n",
                 FIXTURE)
    found = rows(gated, "results_export_full")
    assert found["timeout"].count == 1
    assert found["timeout"].first_cases == ["q-timeout"]
    assert found["group:retry"].count == 1
    assert {name: row.count for name, row in found.items() if row.kind == "category"
            and name != "timeout"} == dict.fromkeys(
                [c for c in KARENINA.category_names if c != "timeout"], 0)
    assert found["consistency"].verdict == "pass"  # num_predictions 2, no contradiction
    assert all(row.verdict == "pass" for row in found.values())


def test_the_real_export_records_its_size_and_job_summary() -> None:
    report = load(FIXTURE)
    assert (report.n_cases, report.failed) == (2, 1)
    assert report.recorded["num_predictions"] == 2
    assert report.recorded["job_summary"]["failed_count"] == 1
    assert report.contradictions == []
    assert report.tally is not None
    assert report.tally.flags == dict.fromkeys(CAVEAT_COUNTS, 0)


def test_the_csv_export_of_the_real_results_gives_the_same_counts() -> None:
    assert load(DATA / "results_export.csv").counts == load(FIXTURE).counts
    report = load(DATA / "results_export.csv")
    assert report.case_ids("timeout") == ["q-timeout"]
    assert report.contradictions == []


def test_the_karenina_taxonomy_follows_karenina_tables() -> None:
    assert KARENINA.category_names == (*CATEGORY_TO_GROUP, "unrecognised")
    assert KARENINA.groups == {
        "content": ("content",),
        "autofail": ("recursion_limit", "trace_validation", "deep_judgment",
                     "deep_judgment_rubric"),
        "retry": ("timeout", "connection", "rate_limit", "server_error"),
        "abstained": ("abstention", "sufficiency"),
        "system": ("template_validation", "parsing", "unexpected_error"),
    }
    assert [c.name for c in KARENINA.caveats] == list(CAVEAT_COUNTS)
    stages = {rule.name: rule.stage for rule in KARENINA.categories}
    assert stages["content"] == "verify_template"
    assert stages["recursion_limit"] == "recursion_limit_autofail"
    assert stages["timeout"] is None  # "the failing stage": not one stage
    assert all(rule.hint for rule in KARENINA.categories)
    assert KARENINA.id_fields == ("id", "metadata.question_id")  # the readers' id first


# --------------------------------------------------------------- a generated export


def test_a_generated_export_counts_every_category_group_and_caveat(tmp_path: Path) -> None:
    report = load(write_json(tmp_path / "run.json", generated_results()))
    assert report.n_cases == sum(COUNTS.values()) + PASSES
    assert report.counts == {**COUNTS, "unrecognised": 0}
    assert sorted(report.case_ids("timeout")) == [f"timeout-{i}" for i in range(4)]
    assert report.tally is not None
    assert report.tally.flags == CAVEAT_COUNTS
    assert report.contradictions == []


def test_group_ceilings_gate_a_group(tmp_path: Path) -> None:
    write_json(tmp_path / "reports" / "run.json", generated_results())
    ceilings = "".join(f"  {c}: {n}\n" for c, n in COUNTS.items())
    groups = "".join(f"  group:{g}: {n}\n" for g, n in GROUP_COUNTS.items() if g != "autofail")
    # 11 of the 28 generated cases failed outside the system (retry group, parsing, ...)
    found = rows(gate(tmp_path, f"inconclusive: 0.5\nceilings:\n{ceilings}{groups}"
                                "  group:autofail: 4\n"), "run")
    assert {g: found[f"group:{g}"].count for g in GROUP_COUNTS} == GROUP_COUNTS
    assert found["group:autofail"].verdict == "fail"
    assert "group:autofail: 5 cases, 1 over the ceiling of 4" in found["group:autofail"].message
    assert [name for name, row in found.items() if row.verdict != "pass"] == ["group:autofail"]


def test_the_retry_group_over_its_ceiling_makes_the_run_inconclusive(tmp_path: Path) -> None:
    """A retry budget run out (timeouts, connections, rate limits, server errors) is the
    provider's failure, not the system's: over its ceiling it is no regression."""
    write_json(tmp_path / "reports" / "run.json", generated_results())
    ceilings = "".join(f"  {c}: {n}\n" for c, n in COUNTS.items())
    found = rows(gate(tmp_path, f"inconclusive: 0.5\nceilings:\n{ceilings}  group:retry: 7\n"),
                 "run")
    assert found["inconclusive"].verdict == "inconclusive"
    assert "11 of 28 cases failed outside the system under test (timeout 4, connection 2, " \
           "rate_limit 1, server_error 1, parsing 2, unexpected_error 1): group:retry 8 > its " \
           "ceiling 7" in found["inconclusive"].message
    assert found["group:retry"].verdict == "skip"
    assert {row.verdict for name, row in found.items()
            if name not in ("inconclusive", "consistency")} == {"skip"}
    # by default more than a quarter of the cases failing so is inconclusive on its own
    found = rows(gate(tmp_path, f"ceilings:\n{ceilings}  group:retry: 8\n"), "run")
    assert "more than the 25% of its cases" in found["inconclusive"].message


def test_the_csv_export_gives_the_same_counts_and_caveats_as_the_json(tmp_path: Path) -> None:
    results = generated_results()
    from_json = load(write_json(tmp_path / "run.json", results))
    from_csv = load(write_csv(tmp_path / "run.csv", results))
    assert from_csv.counts == from_json.counts == {**COUNTS, "unrecognised": 0}
    assert from_csv.tally is not None
    assert from_csv.tally.flags == CAVEAT_COUNTS
    assert from_csv.all_case_ids() == from_json.all_case_ids()
    assert from_csv.contradictions == []
    assert from_csv.recorded == {"num_predictions": len(results)}


def test_csv_cells_become_the_json_shape(tmp_path: Path) -> None:
    text = ("question_id,success,failure_category,failure_group,failure_stage,failure_reason,"
            "failure_details_json,caveats,verify_result,abstention_detected,"
            "embedding_similarity_score,run_name,\n"
            'q1,abstained,timeout,,generate_answer,slow,"{""retry_counts"": {}}",'
            '"partial_content,retries_used",N/A,FALSE,0.5,,7\n')
    output = KareninaCsvReader().read(write_text(tmp_path / "x.csv", text))
    assert output is not None
    (case,) = list(output.cases)
    assert case == {
        "id": "q1",
        "metadata": {
            "question_id": "q1",
            "failure": {"category": "timeout", "group": "retry", "stage": "generate_answer",
                        "reason": "slow", "details": {"retry_counts": {}}},
            "caveats": ["partial_content", "retries_used"],
            "success": True,
            "run_name": None,
        },
        "template": {"verify_result": None, "abstention_detected": False,
                     "embedding_similarity_score": 0.5},
    }


def test_an_unknown_category_in_json_is_counted_as_unrecognised(tmp_path: Path) -> None:
    report = load(write_json(tmp_path / "run.json", [
        result("q1", "model_melted", group="system"), result("q2")]))
    assert report.counts["unrecognised"] == 1
    assert report.contradictions == []  # nothing decides what a new category means


# ------------------------------------------------------------------- contradictions

CONTRADICTIONS = {
    "group_not_the_categorys": (
        result("q1", "timeout", group="system"),
        "q1: the recorded group is system, yet timeout belongs to retry"),
    "verify_false_yet_not_content": (
        result("q1", "timeout", template_verification_performed=True, verify_result=False),
        "q1: verify_result is false after template verification (rule 2: content), yet the "
        "recorded failure is timeout"),
    "verify_false_yet_passed": (
        result("q1", None, template_verification_performed=True, verify_result=False),
        "q1: verify_result is false after template verification (rule 2: content), yet it "
        "passed"),
    "content_yet_verify_true": (
        result("q1", "content", verify_result=True),
        "q1: the recorded failure is content (rule 2), yet verify_result is true"),
    "content_yet_not_verified": (
        result("q1", "content", template_verification_performed=False),
        "q1: the recorded failure is content (rule 2), yet template verification was not "
        "performed"),
    "abstention_detected_yet_parsing": (
        result("q1", "parsing", abstention_detected=True),
        "q1: abstention_detected is true (rule 4: abstention), yet the recorded failure is "
        "parsing"),
    "abstention_detected_yet_passed": (
        result("q1", None, abstention_detected=True),
        "q1: abstention_detected is true (rule 4: abstention), yet it passed"),
    "sufficiency_detected_yet_unexpected_error": (
        result("q1", "unexpected_error", sufficiency_detected=True),
        "q1: sufficiency_detected is true (rule 4: sufficiency), yet the recorded failure is "
        "unexpected_error"),
    "abstention_recorded_yet_not_detected": (
        result("q1", "abstention", abstention_detected=False),
        "q1: the recorded failure is abstention (rule 4), yet abstention_detected is false"),
    "sufficiency_recorded_yet_not_detected": (
        result("q1", "sufficiency", sufficiency_detected=False),
        "q1: the recorded failure is sufficiency (rule 4), yet sufficiency_detected is false"),
}


@pytest.mark.parametrize("kind", CONTRADICTIONS)
def test_a_contradiction_fails_the_consistency_item(tmp_path: Path, kind: str) -> None:
    record, line = CONTRADICTIONS[kind]
    write_json(tmp_path / "reports" / "run.json", [result("q0"), record])
    found = rows(gate(tmp_path, "ceilings:\n  total: 2\n"), "run")
    consistency = found["consistency"]
    assert consistency.verdict == "fail"
    assert f"  {line}" in consistency.message.splitlines()
    assert load(tmp_path / "reports" / "run.json").contradictions == [line]


@pytest.mark.parametrize("record", [
    result("q1", "recursion_limit", template_verification_performed=True, verify_result=False),
    result("q1", "connection", template_verification_performed=True, verify_result=False),
    result("q1", "content", abstention_detected=True),
    result("q1", "rate_limit", sufficiency_detected=True),
    result("q1", "abstention", sufficiency_detected=True),
    result("q1", "timeout", abstention_detected=None, verify_result=None),
    result("q1", "content", template_verification_performed=None),
], ids=["autofail_outranks_content", "placeholder_connection_outranks_content",
        "content_outranks_abstention", "retry_outranks_sufficiency",
        "abstention_outranks_sufficiency", "null_fields_decide_nothing",
        "unknown_verification_decides_nothing"])
def test_what_outranks_a_rule_or_is_undecided_is_no_contradiction(
        tmp_path: Path, record: dict[str, Any]) -> None:
    assert load(write_json(tmp_path / "run.json", [record])).contradictions == []


def test_a_csv_contradiction_names_the_line(tmp_path: Path) -> None:
    results = [result("q0"), result("q1", "timeout", template_verification_performed=True,
                                    verify_result=False)]
    report = load(write_csv(tmp_path / "run.csv", results))
    assert report.contradictions == [
        "q1 (line 3): verify_result is false after template verification (rule 2: content), "
        "yet the recorded failure is timeout"]


def test_a_csv_without_the_checked_columns_offers_no_check(tmp_path: Path) -> None:
    path = write_text(tmp_path / "run.csv", "question_id,failure_category\nq1,timeout\nq2,\n")
    report = load(path)
    assert report.counts["timeout"] == 1
    assert report.contradictions is None


def test_many_contradictions_are_listed_up_to_a_cap(tmp_path: Path) -> None:
    records = [result(f"q{i}", "content", verify_result=True) for i in range(25)]
    found = load(write_json(tmp_path / "run.json", records)).contradictions
    assert found is not None
    assert len(found) == MAX_CONTRADICTIONS + 1
    assert found[-1] == f"... and {25 - MAX_CONTRADICTIONS} more contradiction(s)"


# --------------------------------------------------------------------- malformed JSON


def _json_with(tmp_path: Path, mutate: Any) -> Path:
    document = copy.deepcopy(EXPORT)
    mutate(document)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _set(path: str, value: Any) -> Any:
    def mutate(document: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = document
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if value is _DELETE:
            del target[last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return mutate


_DELETE = object()
MALFORMED_JSON = {
    "version_1": (_set("format_version", "1.0"),
                  'karenina format_version "1.0" is not read; failgate reads karenina\'s JSON '
                  "export format 2.x"),
    "version_3": (_set("format_version", "3.0"), 'format_version "3.0" is not read'),
    "results_not_a_list": (_set("results", {"q1": {}}),
                           "karenina 'results' is an object; expected a list of results"),
    "result_not_an_object": (_set("results.1", ["q-timeout"]),
                             "result #2 is a list, not an object"),
    "metadata_missing": (_set("results.0.metadata", _DELETE), "result #1: metadata is missing"),
    "question_id_missing": (_set("results.1.metadata.question_id", _DELETE),
                            "result #2: metadata.question_id is missing"),
    "question_id_not_text": (_set("results.1.metadata.question_id", 7),
                             "result #2: metadata.question_id is 7; expected a non-empty "
                             "string"),
    "failure_not_an_object": (_set("results.1.metadata.failure", "timeout"),
                              "result #2 (question_id 'q-timeout'): metadata.failure is a "
                              "string; expected an object or null"),
    "failure_category_not_text": (_set("results.1.metadata.failure.category", None),
                                  "metadata.failure.category is null; expected a string"),
    "caveats_not_a_list": (_set("results.0.metadata.caveats", "retries_used"),
                           'metadata.caveats is "retries_used"; expected a list of strings'),
    "template_not_an_object": (_set("results.0.template", True),
                               "template is a bool; expected an object or null"),
}


@pytest.mark.parametrize("kind", MALFORMED_JSON)
def test_malformed_karenina_json_is_one_error_naming_the_file(tmp_path: Path,
                                                              kind: str) -> None:
    mutate, message = MALFORMED_JSON[kind]
    path = _json_with(tmp_path, mutate)
    with pytest.raises(FailgateError) as caught:
        KareninaJsonReader().read(path)
    assert caught.value.path == path
    assert message in caught.value.message
    error = gate(tmp_path, "", path).result().reports[0].error  # the run goes on
    assert error is not None
    assert "run.json: " in error
    assert message in error


def test_duplicate_question_ids_are_an_error_naming_the_case(tmp_path: Path) -> None:
    path = write_json(tmp_path / "run.json", [result("q1"), result("q1", "timeout")])
    with pytest.raises(FailgateError, match="case #2: duplicate case id 'q1'"):
        load(path)


@pytest.mark.parametrize("document", [
    {"format_version": "2.2", "items": []},
    {"format_version": "1.0", "results": [{"score": 1}]},
    {"results": [], "metadata": {"karenina_version": "0.1"}},
    [{"format_version": "2.2", "results": []}],
], ids=["no_results", "other_tool_v1", "no_version", "array"])
def test_other_json_is_not_claimed(tmp_path: Path, document: Any) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert KareninaJsonReader().read(path) is None


def test_a_karenina_marked_export_of_another_version_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format_version": "1.4", "results": [],
                                "metadata": {"karenina_version": "0.9"}}), encoding="utf-8")
    with pytest.raises(FailgateError, match=r"reads karenina's JSON export format 2\.x"):
        KareninaJsonReader().read(path)


# ---------------------------------------------------------------------- malformed CSV

HEADER = "question_id,failure_category,failure_group,verify_result,caveats\n"
MALFORMED_CSV = {
    "ragged_row": (HEADER + "q1,,,true,\nq2,timeout,retry\n", 3,
                   "the row has 3 cells; the header has 5"),
    "group_contradicts_category": (
        HEADER + "q1,timeout,system,true,\n", 2,
        "failure_group 'system' contradicts failure_category 'timeout', whose group is "
        "'retry'"),
    "unknown_category": (HEADER + "q1,,,true,\nq2,timout,retry,true,\n", 3,
                         "failure_category 'timout' is not one of karenina's 14 categories; "
                         "did you mean 'timeout'?"),
    "group_without_category": (HEADER + "q1,,retry,true,\n", 2,
                               "failure_group is set but failure_category is empty"),
    "not_a_boolean": (HEADER + "q1,,,maybe,\n", 2,
                      'verify_result is "maybe"; expected true, false or an empty cell'),
    "empty_question_id": (HEADER + "q1,,,,\n,timeout,,,\n", 3, "question_id is empty"),
    "line_after_a_multiline_cell": (
        "question_id,failure_category,failure_reason\n"
        'q1,timeout,"two\nlines"\nq2,timeout,"x",extra\n', 4,
        "the row has 4 cells; the header has 3"),
    "details_not_json": ("question_id,failure_category,failure_details_json\nq1,parsing,{oops\n",
                         2, "failure_details_json is not JSON"),
    "details_huge_integer": ("question_id,failure_category,failure_details_json\nq1,parsing,"
                             + "9" * 5000 + "\n", 2,
                             "failure_details_json holds a number too large to read"),
    "column_twice": ("question_id,failure_category,question_id\nq1,,q1\n", 1,
                     "the header names column 'question_id' twice"),
}


@pytest.mark.parametrize("kind", MALFORMED_CSV)
def test_malformed_karenina_csv_is_one_error_naming_file_and_line(tmp_path: Path,
                                                                  kind: str) -> None:
    text, line, message = MALFORMED_CSV[kind]
    path = write_text(tmp_path / "run.csv", text)
    with pytest.raises(FailgateError) as caught:
        KareninaCsvReader().read(path)
    assert (caught.value.path, caught.value.line) == (path, line)
    assert message in caught.value.message
    with pytest.raises(FailgateError) as through_failgate:
        load(path)
    assert str(through_failgate.value) == str(caught.value)
    assert f"run.csv:{line}: " in str(caught.value)


def test_a_karenina_csv_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    path.write_bytes(b"question_id,failure_category\nq1,\nq2,caf\xe9\n")
    with pytest.raises(FailgateError, match="not UTF-8 text") as caught:
        KareninaCsvReader().read(path)
    assert caught.value.line == 3


def test_a_csv_that_is_not_a_karenina_export_is_skipped(tmp_path: Path) -> None:
    assert KareninaCsvReader().read(DATA / "other.csv") is None
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"name,city\nJos\xe9,S\xe3o Paulo\n")
    assert KareninaCsvReader().read(latin) is None
    assert KareninaCsvReader().read(write_text(tmp_path / "empty.csv", "")) is None
    gated, skipped = load_run((DATA,), TaxonomyChoice(KARENINA),
                              ReadSpec(readers=builtin_readers()))
    assert sorted(g.file.name for g in gated) == [
        "results_export", "results_export_empty", "results_export_full", "with_results"]
    assert [g.file.name for g in gated if g.error is not None] == ["results_export_empty"]
    assert [s.path.name for s in skipped if s.path.suffix == ".csv"] == ["other.csv"]


def test_a_header_only_karenina_csv_is_zero_cases_not_a_pass(tmp_path: Path) -> None:
    with pytest.raises(FailgateError, match="no cases"):
        load(write_text(tmp_path / "run.csv", HEADER))


# ------------------------------------------------------------------------- the plugin


def test_pytest_gates_karenina_json_and_csv_by_group(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    reports = pytester.path / "reports"
    write_json(reports / "run.json", generated_results())
    write_csv(reports / "export.csv", generated_results())
    write_text(reports / "notes.csv", "name,value\na,1\n")
    (pytester.path / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: karenina\ninconclusive: 0.5\nceilings:\n"
        + "".join(f"  {c}: {n}\n" for c, n in COUNTS.items())
        + "  group:autofail: 5\n"
        + "reports:\n  export:\n    group:autofail: 4\n", encoding="utf-8")
    result = pytester.runpytest("--failgate=reports")
    # per report: 15 categories, group:autofail and consistency; export's group fails
    result.assert_outcomes(passed=2 * 17 - 1, failed=1)
    result.stdout.fnmatch_lines([
        "*taxonomy karenina, 2 reports (56 cases)*",
        "skipped 1 file: reports/notes.csv*",
        "FAILED ceilings.yaml::export::group:autofail - group:autofail: 5 cases*",
    ])
