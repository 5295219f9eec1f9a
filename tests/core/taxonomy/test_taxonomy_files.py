"""Taxonomies as data: YAML files, their errors, groups, slices, populations, contracts,
hooks and rule diagnostics."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    BUILTIN,
    EXAMPLES,
    RAG,
    case,
    category_case,
    random_rag_case,
    write_summary,
)
from rag_reference import reference_classify

from pytest_failgate.cli import main as cli_main
from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.ceilings.load import load_ceilings
from pytest_failgate.core.gate.runner import GateConfig, run_gate
from pytest_failgate.core.taxonomy import BUILTIN_DIR
from pytest_failgate.core.taxonomy.files import load_taxonomy_file

ROOT = EXAMPLES.parent
MY_RAG = (BUILTIN_DIR / "rag.yaml").read_text().replace("name: rag", "name: my-rag")


def counts_with(tmp: Path, reports: Path, taxonomy: str) -> dict[str, dict[str, int]]:
    ceilings = tmp / "c.yaml"
    ceilings.write_text(f"version: 1\ntaxonomy: {taxonomy}\n")
    gate = run_gate(GateConfig((reports,), ceilings))
    return {g.file.name: g.report.counts for g in gate.reports if g.report is not None}


def test_the_builtin_rag_taxonomy_is_a_shipped_file() -> None:
    assert RAG.source == BUILTIN_DIR / "rag.yaml"
    assert RAG.category_names[-1] == "unknown"
    assert set(BUILTIN) >= {"rag", "karenina"}


def reference_counts(cases: list[dict[str, Any]]) -> dict[str, int]:
    """Counts per category by the independent oracle (``tests/rag_reference.py``)."""
    counts = dict.fromkeys(RAG.category_names, 0)
    for record in cases:
        label = reference_classify(record)
        if label is not None:
            counts[label] += 1
    return counts


@pytest.mark.parametrize("n_cases", [0, 5_000, pytest.param(100_000, marks=pytest.mark.slow)])
def test_the_rag_file_loaded_as_a_user_taxonomy_counts_as_the_reference_does(
    tmp_path: Path, n_cases: int
) -> None:
    """rag.yaml, loaded through the gate as any user's taxonomy file, against the oracle:
    the example report (0), and generated reports of random cases over every branch."""
    (tmp_path / "my-rag.yaml").write_text(MY_RAG)
    if n_cases:
        rng = random.Random(n_cases)
        cases = [{"id": f"case-{i}", **random_rag_case(rng)} for i in range(n_cases)]
        write_summary(tmp_path / "gen" / "run.json", cases, indent=None)
        reports, name = tmp_path / "gen", "run"
    else:
        reports, name = EXAMPLES / "reports", "eval_summary"
        document = json.loads((reports / "eval_summary.json").read_text(encoding="utf-8"))
        cases = document["case_results"]
    expected = reference_counts(cases)
    assert sum(expected.values()) > 0
    assert counts_with(tmp_path, reports, "my-rag.yaml")[name] == expected


def test_a_taxonomy_can_be_written_inline_in_the_ceilings_file(tmp_path: Path) -> None:
    inline = "\n".join("  " + line for line in MY_RAG.splitlines())
    ceilings = tmp_path / "c.yaml"
    ceilings.write_text(f"version: 1\ntaxonomy:\n{inline}\nceilings:\n  unknown: 0\n")
    assert load_ceilings(ceilings, BUILTIN).taxonomy.name == "my-rag"


TAXONOMY = """name: t
failed: accuracy != 1.0
categories:
  - {name: miss, when: answerable and not evidence_doc_ids, group: retrieval}
  - {name: other}
"""


@pytest.mark.parametrize(
    ("edit", "place", "message"),
    [
        (("when: answerable and not evidence_doc_ids", "when: answerable and"), "4:38",
         "invalid syntax"),
        (("when: answerable and not evidence_doc_ids", "when: __import__('os')"), "4:24",
         "function '__import__' is not allowed; the functions are: abs, all, any, empty"),
        (("when: answerable and not evidence_doc_ids", "when: len(x.y())"), "4:30",
         "method calls are not allowed"),
        (("when: answerable and not evidence_doc_ids", 'when: "[a for a in b]"'), "4:",
         "comprehension"),
        (("when: answerable and not evidence_doc_ids", 'when: "(lambda: 1)()"'), "4:",
         "lambda"),
        (("  - {name: other}\n", "  - {name: other}\n  - {name: late, when: 'true'}\n"), "5:5",
         "category 'other' has no 'when', so it is a fallback, and the fallback must be the "
         "last category"),
        (("  - {name: other}\n", "  - {name: other, when: 'true'}\n"), "5:5",
         "the last category is the fallback and has no 'when'"),
        (("{name: other}", "{name: miss}"), "1:1", "the name 'miss' is used twice"),
        (("{name: other}", "{name: total}"), "5:12", "'total' is reserved"),
        (("failed: accuracy != 1.0", "failed: accuracy != 1.0\ncaveats: [{name: miss, when: x}]"),
         "1:1", "the name 'miss' is used twice"),
        (("name: t", "name: t\ntypes: {accuracy: nummber}"), "2:",
         "unknown type 'nummber'; did you mean 'number'?"),
        (("name: t", "name: t\ndefaults: {answerable: 3}\ntypes: {answerable: bool}"), "2:",
         "the default is 3 (a number); expected true or false"),
        (("categories:", "categorys:"), "3:1", "unknown key 'categorys'; did you mean"),
        (("{name: miss, when", "{name: miss, whn"), "4:18", "unknown key 'whn'"),
    ],
)
def test_every_malformed_taxonomy_is_one_error_with_the_place(
    tmp_path: Path, edit: tuple[str, str], place: str, message: str
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(TAXONOMY.replace(*edit))
    with pytest.raises(FailgateError) as info:
        load_taxonomy_file(path)
    text = str(info.value)
    assert text.startswith(f"{path}:{place}"), text
    assert message in text


def test_an_expression_error_shows_a_caret_under_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(TAXONOMY.replace("when: answerable and not evidence_doc_ids",
                                     "when: answerable and foo(x)"))
    with pytest.raises(FailgateError) as info:
        load_taxonomy_file(path)
    lines = str(info.value).splitlines()
    assert lines[0].startswith(f"{path}:4:39: ")
    assert lines[1:] == ["    answerable and foo(x)", "                   ^"]


def test_an_unknown_group_in_the_ceilings_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TAXONOMY)
    ceilings = tmp_path / "c.yaml"
    ceilings.write_text("version: 1\ntaxonomy: t.yaml\nceilings:\n  group:retreival: 2\n")
    with pytest.raises(FailgateError, match=r"c\.yaml:4:3: 'group:retreival' is not a group of "
                                            r"taxonomy t; did you mean 'group:retrieval'\?"):
        load_ceilings(ceilings, BUILTIN)


def _gate_rows(tmp: Path, ceilings_text: str, cases: list[dict[str, object]]
               ) -> dict[str, object]:
    write_summary(tmp / "r" / "run.json", cases)
    ceilings = tmp / "c.yaml"
    ceilings.write_text(ceilings_text)
    return {f"{r.slice + '::' if r.slice else ''}{r.name}": r
            for r in run_gate(GateConfig((tmp / "r",), ceilings)).result().rows}


def test_a_group_ceiling_counts_its_categories_together(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TAXONOMY)
    cases = [case(f"m{i}", accuracy=0.0, evidence_doc_ids=[]) for i in range(3)]
    rows = _gate_rows(tmp_path, "version: 1\ntaxonomy: t.yaml\nceilings:\n  miss: 5\n"
                                "  group:retrieval: 2\n", cases)
    group = rows["group:retrieval"]
    assert (group.count, group.limit, group.verdict) == (3, 2, "fail")  # type: ignore[attr-defined]


def test_a_rate_over_a_population_counts_within_it(tmp_path: Path) -> None:
    cases = [category_case("verifier_false_negative", f"v{i}") for i in range(3)]
    cases += [case(f"u{i}", answerable=False, abstained=True, evidence_doc_ids=[])
              for i in range(3)]  # correct refusals: unanswerable, passed
    cases += [case(f"ok{i}") for i in range(94)]
    text = ("version: 1\nceilings:\n  verifier_false_negative: {max_rate: %s, "
            "per: \"not answerable\"}\n")
    # 3 of the 6 unanswerable cases: exactly the rate (of 100 cases it would be 3%)
    row = _gate_rows(tmp_path, text % "0.5", cases)["verifier_false_negative"]
    assert (row.count, row.limit, row.verdict) == (3, 3, "pass")  # type: ignore[attr-defined]
    row = _gate_rows(tmp_path, text % "0.4", cases)["verifier_false_negative"]
    assert (row.limit, row.verdict) == (2, "fail")  # type: ignore[attr-defined]
    assert "counted among the 6 cases where `not answerable`" in row.message  # type: ignore[attr-defined]


def test_a_population_of_zero_is_an_error_not_a_pass(tmp_path: Path) -> None:
    rows = _gate_rows(tmp_path, "version: 1\nceilings:\n  unknown: {max_rate: 0.5, "
                                "per: \"query_type == 'comparison'\"}\n", [case("a")])
    assert rows["unknown"].verdict == "error"  # type: ignore[attr-defined]
    assert "holds no case" in rows["unknown"].message  # type: ignore[attr-defined]


def test_slices_give_items_per_value_and_category(tmp_path: Path) -> None:
    cases = [category_case("retrieval_miss", f"r{i}") for i in range(3)]
    cases += [{**category_case("retrieval_miss", "c1"), "query_type": "comparison",
               "attempt_latency": [1, 2]}]
    text = ("version: 1\nslices: [query_type]\nceilings:\n  retrieval_miss: 5\n"
            "  query_type=comparison:\n    retrieval_miss: 0\n")
    rows = _gate_rows(tmp_path, text, cases)
    assert rows["query_type=single_doc::retrieval_miss"].count == 3  # type: ignore[attr-defined]
    assert rows["query_type=single_doc::retrieval_miss"].verdict == "pass"  # type: ignore[attr-defined]
    comparison = rows["query_type=comparison::retrieval_miss"]
    assert (comparison.count, comparison.verdict) == (1, "fail")  # type: ignore[attr-defined]
    assert rows["retrieval_miss"].verdict == "pass"  # type: ignore[attr-defined]


def test_slice_items_have_readable_node_ids(pytester: pytest.Pytester) -> None:
    write_summary(pytester.path / "reports" / "run.json",
                  [category_case("retrieval_miss", "r1"), case("ok")])
    (pytester.path / "ceilings.yaml").write_text(
        "version: 1\nslices: [query_type]\nceilings:\n  retrieval_miss: 1\n")
    result = pytester.runpytest("--failgate=reports", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["ceilings.yaml::run::query_type=single_doc::retrieval_miss"])


def test_a_slice_not_declared_is_an_error(tmp_path: Path) -> None:
    ceilings = tmp_path / "c.yaml"
    ceilings.write_text("version: 1\nceilings:\n  query_type=comparison:\n    unknown: 1\n")
    with pytest.raises(FailgateError, match="is a slice of 'query_type', which is not declared"):
        load_ceilings(ceilings, BUILTIN)


def test_contracts_hold_between_counts_and_recorded_aggregates(tmp_path: Path) -> None:
    # The rag classifier's "finding 1" contract (docs/design.md), on the real n=221 aggregates.
    ceilings = tmp_path / "c.yaml"
    ceilings.write_text((ROOT / "ceilings.yaml").read_text() + (
        "contracts:\n  finding_1:\n"
        "    check: verifier_false_negative == abstention_outcomes.incorrect_answer\n"
        "    reports: [real100/baseline.aggregate, real100/failure_distribution.aggregate]\n"
        "  everywhere: verifier_false_negative <= abstention_outcomes.incorrect_answer\n"))
    rows = {(r.report, r.name): r
            for r in run_gate(GateConfig((EXAMPLES / "reports",), ceilings)).result().rows}
    assert rows[("real100/baseline.aggregate", "contract:finding_1")].verdict == "pass"
    assert rows[("real100/failure_distribution.aggregate", "contract:finding_1")].verdict == (
        "pass")
    assert ("eval_summary", "contract:finding_1") not in rows
    missing = rows[("eval_summary", "contract:everywhere")]
    assert missing.verdict == "error"
    assert "does not record abstention_outcomes" in missing.message


def test_a_broken_contract_shows_the_values(tmp_path: Path) -> None:
    ceilings = tmp_path / "c.yaml"
    ceilings.write_text((ROOT / "ceilings.yaml").read_text() + (
        "contracts:\n  off_by_one:\n"
        "    check: verifier_false_negative == abstention_outcomes.incorrect_answer + 1\n"
        "    reports: [real100/baseline.aggregate]\n"))
    [row] = [r for r in run_gate(GateConfig((EXAMPLES / "reports",), ceilings)).result().rows
             if r.name == "contract:off_by_one"]
    assert row.verdict == "fail"
    assert "  values   verifier_false_negative = 76, abstention_outcomes = " in row.message


def test_caveats_are_counted_and_never_fail(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TAXONOMY.replace(
        "categories:", "caveats: [{name: slow, when: latency_ms > 1000}]\ncategories:"))
    cases = [case(f"c{i}", latency_ms=500 * i) for i in range(5)]
    write_summary(tmp_path / "r" / "run.json", cases)
    ceilings = tmp_path / "c.yaml"
    ceilings.write_text("version: 1\ntaxonomy: t.yaml\n")
    [report] = run_gate(GateConfig((tmp_path / "r",), ceilings)).result().reports
    assert report.caveats == {"slow": 2}
    assert all(row.verdict == "pass" for row in report.rows)


def test_a_rule_that_cannot_evaluate_a_case_names_the_rule_and_case(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TAXONOMY.replace("answerable and not evidence_doc_ids",
                                                      "len(query_type) > 3"))
    write_summary(tmp_path / "r" / "run.json", [case("a", accuracy=0.0, query_type=7)])
    ceilings = tmp_path / "c.yaml"
    ceilings.write_text("version: 1\ntaxonomy: t.yaml\n")
    [report] = run_gate(GateConfig((tmp_path / "r",), ceilings)).reports
    assert "case #1: miss: " in str(report.error)
    assert str(report.error).startswith(str(tmp_path / "r" / "run.json") + ":")


def test_explain_shows_what_first_match_hid_in_pytest_and_the_cli(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    # The trap of docs/design.md: an early, broad rule swallows cases a later rule matches.
    (pytester.path / "broad.yaml").write_text(
        "name: broad\nfailed: accuracy != 1.0\ncategories:\n"
        "  - {name: parse_or_metadata_issue, when: \"accuracy is not None\"}\n"
        "  - {name: retrieval_miss, when: \"not evidence_doc_ids\"}\n"
        "  - {name: never, when: \"query_type == 'nope'\"}\n"
        "  - {name: unknown}\n")
    cases = [case(f"r{i}", accuracy=0.0, evidence_doc_ids=[]) for i in range(4)]
    cases += [case(f"u{i}", accuracy=None, query_type="odd") for i in range(2)]
    write_summary(pytester.path / "reports" / "run.json", cases)
    (pytester.path / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: broad.yaml\nceilings:\n  parse_or_metadata_issue: 4\n"
        "  unknown: 2\n")
    result = pytester.runpytest("--failgate=reports", "--failgate-explain")
    result.assert_outcomes(passed=4)
    expected = [
        "    parse_or_metadata_issue: 4; also retrieval_miss 4",
        "  rules that matched no failed case: never",
        "*unknown (2 cases), most common field values:",
        '    2 x accuracy=null, evidence_doc_ids=["doc-a", "doc-b"], query_type="odd"',
    ]
    result.stdout.fnmatch_lines(expected)
    capsys.readouterr()
    assert cli_main(["check", "reports", "--explain"]) == 0
    pytest.LineMatcher(capsys.readouterr().out.splitlines()).fnmatch_lines(expected)


def test_conftest_hooks_contribute_a_taxonomy_and_a_reader(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('''
from pytest_failgate.core.reports.readers import ReaderOutput
from pytest_failgate.core.taxonomy import Rule, Taxonomy

def _failed(case):
    return case.get("status") != "ok"

def _timeout(case):
    return case.get("status") == "timeout"

def pytest_failgate_taxonomies(config):
    return {"status": Taxonomy("status", "by status", (), Rule("failed", _failed, ("status",),
            "status is not ok"), (Rule("timeout", _timeout, ("status",), "timed out"),),
            "other")}

class Lines:
    name = "lines"
    suffixes = (".txt",)

    def read(self, path):
        rows = [line.split(",") for line in path.read_text().splitlines() if line]
        return ReaderOutput(cases=[{"id": i, "status": s} for i, s in rows])

def pytest_failgate_readers(config):
    return [Lines()]
''')
    (pytester.path / "reports").mkdir()
    (pytester.path / "reports" / "run.txt").write_text("a,ok\nb,timeout\nc,timeout\nd,crash\n")
    (pytester.path / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: status\nceilings:\n  timeout: 1\n  other: 1\n")
    result = pytester.runpytest("--failgate=reports")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["timeout: 2 cases, 1 over the ceiling of 1",
                                 "  cases    b, c"])
