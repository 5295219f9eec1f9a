"""The plugin as users run it: pytest --failgate=reports/ and friends."""

from __future__ import annotations

import errno
import json
import subprocess
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import pytest
from helpers import case, cases_for, write_ceilings, write_jsonl, write_summary

import pytest_failgate.core.ceilings.writeback

if TYPE_CHECKING:
    from pathlib import Path

GATE_ITEMS = 24  # 3 example reports x (7 categories + total)


def test_the_example_gate_passes(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("--failgate=reports")
    result.assert_outcomes(passed=GATE_ITEMS)
    result.stdout.fnmatch_lines([
        "*= failgate =*",
        "ceilings ceilings.yaml, taxonomy rag, 3 reports (468 cases)",
        "eval_summary  26 cases, 7 failed",
        "  verifier_false_negative *6  6 *0  ok",
        "  retrieval_miss *1  1 *0  ok",
        "ratchet: every ceiling is at its count",
    ])


def test_a_regression_fails_exactly_the_categories_over_their_ceiling(
    pytester: pytest.Pytester, regression: Path
) -> None:
    result = pytester.runpytest("--failgate=reports")
    result.assert_outcomes(passed=GATE_ITEMS - 2, failed=2)
    result.stdout.fnmatch_lines([
        "FAILED ceilings.yaml::eval_summary::retrieval_miss - retrieval_miss: 4 cases,*",
        "FAILED ceilings.yaml::eval_summary::total - total: 10 cases, 3 over the ceili*",
    ])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "every ceiling is at its count" not in result.stdout.str()  # two are over theirs


def test_a_failing_item_explains_itself_in_a_few_lines(
    pytester: pytest.Pytester, regression: Path
) -> None:
    result = pytester.runpytest("--failgate=reports", "-k", "retrieval_miss and eval")
    result.stdout.fnmatch_lines([
        "*_ eval_summary::retrieval_miss _*",
        "retrieval_miss: 4 cases, 3 over the ceiling of 1",
        "  ceiling  max 1 at ceilings.yaml:21 (reports.eval_summary.retrieval_miss)",
        "  report   eval_summary: 26 cases, 10 failed",
        "  rule     3 of 7: answerable and expected_doc_ids non-empty and no expected doc*",
        "  cases    single_doc_chatbot_latency, multi_doc_security_controls, "
        "follow_up_c_response_target, follow_up_state_a_security",
    ])
    assert "Traceback" not in result.stdout.str()
    assert "runtest" not in result.stdout.str()


def test_node_ids_are_readable_and_stable(pytester: pytest.Pytester, project: Path) -> None:
    first = pytester.runpytest("--failgate=reports", "--collect-only", "-q")
    second = pytester.runpytest("--failgate=reports", "--collect-only", "-q")
    ids = [line for line in first.outlines if line.startswith("ceilings.yaml::")]
    assert len(ids) == GATE_ITEMS
    assert ids == [line for line in second.outlines if line.startswith("ceilings.yaml::")]
    assert ids[:3] == [
        "ceilings.yaml::eval_summary::verifier_false_negative",
        "ceilings.yaml::eval_summary::verifier_false_positive",
        "ceilings.yaml::eval_summary::retrieval_miss",
    ]
    assert "ceilings.yaml::real100/baseline.aggregate::total" in ids


@pytest.mark.slow
def test_k_and_marker_selection(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makepyfile(test_other="def test_unrelated(): pass")
    pytester.runpytest("--failgate=reports", "-k", "retrieval_miss").assert_outcomes(passed=3)
    pytester.runpytest("--failgate=reports", "-m", "failgate").assert_outcomes(
        passed=GATE_ITEMS)
    pytester.runpytest("--failgate=reports", "-m", "not failgate").assert_outcomes(passed=1)
    pytester.runpytest("--failgate=reports", "-k", "real100/baseline").assert_outcomes(passed=8)


def test_a_node_id_can_be_run_directly(pytester: pytest.Pytester, regression: Path) -> None:
    result = pytester.runpytest("--failgate=reports", "ceilings.yaml::eval_summary::total")
    result.assert_outcomes(failed=1)


@pytest.mark.slow
def test_last_failed_reruns_only_the_failing_gate_items(
    pytester: pytest.Pytester, regression: Path
) -> None:
    pytester.runpytest("--failgate=reports", "-p", "cacheprovider").assert_outcomes(
        passed=GATE_ITEMS - 2, failed=2)
    again = pytester.runpytest("--failgate=reports", "--lf")
    again.assert_outcomes(failed=2, deselected=GATE_ITEMS - 2)


def test_junit_xml_carries_count_ceiling_and_cases(
    pytester: pytest.Pytester, regression: Path
) -> None:
    pytester.runpytest("--failgate=reports", "--junitxml=out.xml")
    tree = ET.parse(pytester.path / "out.xml")
    testcases = {(tc.get("classname"), tc.get("name")): tc for tc in tree.iter("testcase")}
    assert len(testcases) == GATE_ITEMS
    item = testcases[("ceilings.yaml.eval_summary", "retrieval_miss")]
    properties = {p.get("name"): p.get("value") for p in item.iter("property")}
    assert properties["count"] == "4"
    assert properties["ceiling"] == "1"
    assert properties["cases"] == "26"
    assert properties["rate"] == "0.153846"
    assert item.find("failure") is not None


@pytest.mark.heavy  # whole pytest-xdist or pre-commit runs: CI runs it (CI=true)
def test_xdist_gives_the_same_outcomes_and_one_summary(
    pytester: pytest.Pytester, regression: Path
) -> None:
    result = pytester.runpytest("--failgate=reports", "-n", "2")
    result.assert_outcomes(passed=GATE_ITEMS - 2, failed=2)
    output = result.stdout.str()
    assert output.count("= failgate =") == 1
    result.stdout.fnmatch_lines(["  retrieval_miss *4  1 *-3  FAIL"])


@pytest.mark.heavy  # whole pytest-xdist or pre-commit runs: CI runs it (CI=true)
def test_under_xdist_the_controller_runs_the_gate_once_and_workers_read_its_result(
    pytester: pytest.Pytester, regression: Path
) -> None:
    # the readers hook is asked once per gate run: in the controller only, never in a worker
    pytester.makeconftest("""
def pytest_failgate_readers(config):
    role = "worker" if hasattr(config, "workerinput") else "controller"
    with open("gate-runs.txt", "a", encoding="utf-8") as log:
        log.write(role + "\\n")
    return []
""")
    result = pytester.runpytest("--failgate=reports", "-n", "2")
    result.assert_outcomes(passed=GATE_ITEMS - 2, failed=2)
    assert (regression / "gate-runs.txt").read_text(encoding="utf-8") == "controller\n"


@pytest.mark.slow
@pytest.mark.parametrize("xdist", [  # a whole xdist run: CI runs it (CI=true)
    [], pytest.param(["-n", "2"], marks=pytest.mark.slow)], ids=["no xdist", "xdist"])
def test_a_gate_that_cannot_run_exits_2_with_and_without_xdist(
    pytester: pytest.Pytester, project: Path, xdist: list[str]
) -> None:
    (project / "ceilings.yaml").write_text("version: 1\nceilings: {retrieval_miss: [}\n")
    result = pytester.runpytest("--failgate=reports", *xdist)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ceilings.yaml:2:29: invalid YAML*"])


@pytest.mark.slow
def test_ratchet_lowers_ceilings_and_then_strict_passes(
    pytester: pytest.Pytester, project: Path
) -> None:
    ceilings = project / "ceilings.yaml"
    before = ceilings.read_text()
    loosened = before.replace("verifier_false_negative: 6", "verifier_false_negative: 9")
    loosened = loosened.replace("{max: 64, reason", "{max: 70, reason")
    ceilings.write_text(loosened)
    strict = pytester.runpytest("--failgate=reports", "--failgate-strict")
    strict.assert_outcomes(passed=GATE_ITEMS - 2, failed=2)
    strict.stdout.fnmatch_lines(["*the ceiling has slack (count 6)*",
                                 "*run `pytest --failgate=reports --failgate-ratchet`*"])
    ratchet = pytester.runpytest("--failgate=reports", "--failgate-ratchet")
    ratchet.assert_outcomes(passed=GATE_ITEMS)
    ratchet.stdout.fnmatch_lines([
        "ratchet: lowered 2 ceilings in ceilings.yaml:",
        "  reports.eval_summary.verifier_false_negative 9 -> 6 (line 19)",
        "  reports.real100/baseline.aggregate.retrieval_miss.max 70 -> 64 (line 28)",
    ])
    assert ceilings.read_text() == before
    pytester.runpytest("--failgate=reports", "--failgate-strict").assert_outcomes(
        passed=GATE_ITEMS)


@pytest.mark.heavy  # whole pytest-xdist or pre-commit runs: CI runs it (CI=true)
def test_ratchet_under_xdist_writes_once_from_the_controller(
    pytester: pytest.Pytester, project: Path
) -> None:
    ceilings = project / "ceilings.yaml"
    before = ceilings.read_text()
    ceilings.write_text(before.replace("  unknown: 35", "  unknown: 40"))
    result = pytester.runpytest("--failgate=reports", "--failgate-ratchet", "-n", "2")
    result.assert_outcomes(passed=GATE_ITEMS)
    assert ceilings.read_text() == before
    assert result.stdout.str().count("ratchet: lowered 1 ceiling") == 1


@pytest.fixture
def loosened(project: Path) -> tuple[Path, str]:
    """The project's ceilings with slack in 'unknown', so a ratchet would have work to do."""
    ceilings = project / "ceilings.yaml"
    text = ceilings.read_text().replace("  unknown: 35", "  unknown: 40")
    ceilings.write_text(text)
    return ceilings, text


def test_ratchet_refuses_when_only_part_of_the_gate_ran(
    pytester: pytest.Pytester, loosened: tuple[Path, str]
) -> None:
    ceilings, before = loosened
    result = pytester.runpytest("--failgate=reports", "--failgate-ratchet", "-k", "unknown")
    result.stdout.fnmatch_lines(["ratchet: ceilings.yaml not written: 21 of 24 gate items "
                                 "did not run*"])
    assert ceilings.read_text() == before


def test_ratchet_refuses_when_a_report_fails_to_load(
    pytester: pytest.Pytester, project: Path, loosened: tuple[Path, str]
) -> None:
    ceilings, before = loosened
    (project / "reports" / "broken.jsonl").write_text('{"id": 1}\n{"id": \n')
    result = pytester.runpytest("--failgate=reports", "--failgate-ratchet",
                                "--continue-on-collection-errors")
    result.stdout.fnmatch_lines(["*reports/broken.jsonl:2:*invalid JSON*",
                                 "ratchet: ceilings.yaml not written: 1 report failed to load"])
    assert ceilings.read_text() == before
    assert result.ret != 0


def test_a_ceilings_file_that_cannot_be_written_fails_the_run_with_a_message(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ceilings = project / "ceilings.yaml"
    ceilings.write_text(ceilings.read_text().replace("  unknown: 35", "  unknown: 40"))

    def refuse(path: Path, text: str, *, exclusive: bool = False) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(pytest_failgate.core.ceilings.writeback, "write_atomic", refuse)
    result = pytester.runpytest("--failgate=reports", "--failgate-ratchet")
    result.stdout.fnmatch_lines(["ratchet: could not write ceilings.yaml: Permission denied"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "Traceback" not in result.stdout.str()


def test_init_writes_a_file_that_then_gates_exactly(
    pytester: pytest.Pytester, project: Path
) -> None:
    (project / "ceilings.yaml").unlink()
    init = pytester.runpytest("--failgate=reports", "--failgate-init")
    init.assert_outcomes(skipped=GATE_ITEMS)
    init.stdout.fnmatch_lines(["init: wrote ceilings.yaml from the current counts*"])
    pytester.runpytest("--failgate=reports", "--failgate-strict").assert_outcomes(
        passed=GATE_ITEMS)


def test_init_refuses_to_overwrite(pytester: pytest.Pytester, project: Path) -> None:
    before = (project / "ceilings.yaml").read_text()
    result = pytester.runpytest("--failgate=reports", "--failgate-init")
    result.stdout.fnmatch_lines(["*ceilings.yaml: already exists; init only creates a new "
                                 "ceilings file (lower the ceilings of an existing one with "
                                 "`pytest --failgate=reports --failgate-ratchet`)"])
    assert result.ret != 0
    assert (project / "ceilings.yaml").read_text() == before


def test_init_and_ratchet_together_is_a_usage_error(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = pytester.runpytest("--failgate=reports", "--failgate-init", "--failgate-ratchet")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*use one of them*"])


def test_ini_keys_turn_the_gate_on(pytester: pytest.Pytester, project: Path) -> None:
    (project / "gate").mkdir()
    (project / "ceilings.yaml").rename(project / "gate" / "limits.yaml")
    pytester.makeini("[pytest]\nfailgate = reports\nfailgate_ceilings = gate/limits.yaml\n"
                     "failgate_strict = true\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=GATE_ITEMS)
    assert "gate/limits.yaml::eval_summary::total PASSED" in \
        pytester.runpytest("-v").stdout.str()


def test_without_failgate_the_plugin_adds_nothing(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(test_other="def test_unrelated(): pass")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "= failgate =" not in result.stdout.str()
    assert "ceilings.yaml" not in result.stdout.str()


def test_consistency_item_shows_where_recorded_and_recomputed_differ(
    pytester: pytest.Pytester,
) -> None:
    recorded = {"verifier_false_negative": 2, "retrieval_miss": 1}
    write_summary(pytester.path / "reports" / "run.json",
                  cases_for({"verifier_false_negative": 2, "retrieval_miss": 2}, passed=3),
                  num_predictions=8, failure_category_counts=recorded)
    write_ceilings(pytester.path / "ceilings.yaml",
                   {"verifier_false_negative": 2, "retrieval_miss": 2})
    result = pytester.runpytest("--failgate=reports")
    result.assert_outcomes(passed=7, failed=1)
    result.stdout.fnmatch_lines([
        "consistency: the report's recorded aggregates disagree with its 7 cases",
        "  verifier_false_positive: not recorded, recomputed 0",
        "  retrieval_miss: recorded 1, recomputed 2",
        "  num_predictions: recorded 8, the report has 7 cases",
    ])


def test_missing_fields_are_reported_in_the_summary(pytester: pytest.Pytester) -> None:
    records = [case(f"c{i}", accuracy=0.0, query_type="comparison") for i in range(3)]
    write_jsonl(pytester.path / "reports" / "run.jsonl", records)
    write_ceilings(pytester.path / "ceilings.yaml", {"planner_under_decomposition": 3})
    result = pytester.runpytest("--failgate=reports")
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines([
        "  warning: rule planner_under_decomposition: 'attempt_latency' absent in 3 of the 3 "
        "cases it examined (read as null)",
    ])


# -- bad input: one clear message, a failed run, no traceback ------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("ceilings-typo", "ceilings.yaml:8:3: 'verifier_false_negativ' is not a category*"
                          "did you mean 'verifier_false_negative'?"),
        ("no-ceilings", "*ceilings.yaml: not found; create it from the current counts with "
                        "`pytest --failgate=reports --failgate-init`"),
        ("no-reports", "*no report found under reports: a gate over nothing would pass*"),
        ("missing-path", "*nowhere: no such file or directory (a report path given*"),
        ("bad-json", "reports/eval_summary.json:1:*invalid JSON*"),
        ("mistyped", "reports/run.jsonl:1:*case #1: 'abstained' is \"no\" (a string)*"),
    ],
)
def test_bad_input_is_one_message_and_a_failed_run(
    pytester: pytest.Pytester, project: Path, setup: str, expected: str
) -> None:
    args = ["--failgate=reports"]
    if setup == "ceilings-typo":
        text = (project / "ceilings.yaml").read_text()
        (project / "ceilings.yaml").write_text(
            text.replace("  verifier_false_negative: 76", "  verifier_false_negativ: 76"))
    elif setup == "no-ceilings":
        (project / "ceilings.yaml").unlink()
    elif setup == "no-reports":
        for path in sorted((project / "reports").rglob("*.json"), reverse=True):
            path.unlink()
    elif setup == "missing-path":
        args = ["--failgate=nowhere"]
    elif setup == "bad-json":
        (project / "reports" / "eval_summary.json").write_text("{oops")
    elif setup == "mistyped":
        write_jsonl(project / "reports" / "run.jsonl", [case("a", abstained="no")])
    result = pytester.runpytest(*args)
    result.stdout.fnmatch_lines([expected])
    assert result.ret not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "def collect" not in result.stdout.str()


def test_one_broken_report_does_not_hide_the_others(
    pytester: pytest.Pytester, project: Path
) -> None:
    (project / "reports" / "broken.json").write_text(json.dumps({"case_results": [1]}))
    result = pytester.runpytest("--failgate=reports")  # no collection error stops the run
    result.assert_outcomes(passed=GATE_ITEMS, failed=1)
    result.stdout.fnmatch_lines(["*_ broken: not loaded _*",
                                 "reports/broken.json:1:19: case #1 is number, not an object",
                                 "*= failgate =*",
                                 "broken: not loaded",
                                 "ratchet: not assessed while 1 report did not load",
                                 "FAILED ceilings.yaml::broken::load*"])
    assert "every ceiling is at its count" not in result.stdout.str()


def test_guard_item_fails_when_a_ceiling_was_loosened_since_the_ref(
    pytester: pytest.Pytester, project: Path
) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("-c", "user.email=ci@example.com", "-c", "user.name=ci", "commit", "-q",
        "--allow-empty", "-m", "start")
    git("add", "ceilings.yaml")
    git("-c", "user.email=ci@example.com", "-c", "user.name=ci", "commit", "-q", "-m", "base")
    ceilings = project / "ceilings.yaml"
    ceilings.write_text(ceilings.read_text().replace("  unknown: 35", "  unknown: 40"))
    result = pytester.runpytest("--failgate=reports", "--failgate-guard=main", "-k", "guard")
    result.assert_outcomes(failed=1, deselected=GATE_ITEMS)
    result.stdout.fnmatch_lines([
        "*_ guard against main _*",
        "guard: 1 of 1 loosening in ceilings.yaml since main has no reason written*",
        "  ceilings.yaml:14 ceilings.unknown: 35 -> 40  (no reason written)",
    ])
    ceilings.write_text(ceilings.read_text().replace(
        "  unknown: 40", '  unknown: {max: 40, reason: "harder eval set"}'))
    pytester.runpytest("--failgate=reports", "--failgate-guard=main", "-k", "guard"
                       ).assert_outcomes(passed=1, deselected=GATE_ITEMS)


@pytest.mark.heavy  # whole pytest-xdist or pre-commit runs: CI runs it (CI=true)
def test_reports_are_written_once_under_xdist(pytester: pytest.Pytester, regression: Path) -> None:
    result = pytester.runpytest("--failgate=reports", "-n", "2", "--failgate-md=gate.md",
                                "--failgate-json=gate.json", "--failgate-html=gate.html")
    result.assert_outcomes(passed=GATE_ITEMS - 2, failed=2)
    result.stdout.fnmatch_lines(["wrote gate.md", "wrote gate.json", "wrote gate.html"])
    assert (regression / "gate.md").read_text().startswith(
        "### failgate: ❌ 2 of 24 checks failed")
    assert json.loads((regression / "gate.json").read_text())["schema_version"] == 1
    assert "2 of 24 checks failed" in (regression / "gate.html").read_text()
