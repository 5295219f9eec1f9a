"""The gate runs whenever it is on: no green exit without gating, in projects configured
like real ones (``testpaths``, test paths given, ``addopts``, an ini ceilings path, xdist).

Each project holds a regression (retrieval_miss and total over their ceilings) and a
passing test of its own, so a run that did not gate would exit 0.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest
from helpers import EXAMPLES, run_cli, write_jsonl, write_summary

from pytest_failgate.plugin.selection import selection_options

if TYPE_CHECKING:
    from pathlib import Path

GATE_ITEMS = 24
FAILING = ["FAILED ceilings.yaml::eval_summary::retrieval_miss *",
           "FAILED ceilings.yaml::eval_summary::total *"]


@pytest.fixture
def configured(pytester: pytest.Pytester, regression: Path) -> Path:
    """A project with its own tests under tests/ and the regression's reports."""
    pytester.mkdir("tests")
    (regression / "tests" / "test_own.py").write_text("def test_own():\n    pass\n",
                                                      encoding="utf-8")
    return regression


# Seven configured projects: the ini, then the command line after --failgate=reports.
PROJECTS = {
    "testpaths": ("[pytest]\ntestpaths = tests\n", []),
    "test folder given": ("[pytest]\n", ["tests"]),
    "test file given": ("[pytest]\ntestpaths = tests\n", ["tests/test_own.py"]),
    "addopts -m not slow": ('[pytest]\ntestpaths = tests\naddopts = -m "not slow"\n'
                            "markers = slow\n", []),
    "-x": ("[pytest]\ntestpaths = tests\n", ["-x"]),
    "xdist": ("[pytest]\ntestpaths = tests\n", ["-n", "2"]),
    "xdist, test file given": ("[pytest]\ntestpaths = tests\n", ["-n", "2",
                                                                "tests/test_own.py"]),
}


# Each pytest-xdist run starts two workers (seconds of CPU): CI runs the xdist variants
# (CI=true); the default run keeps the in-process ones.
XDIST_IN_CI = {"xdist", "xdist, test file given"}


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.heavy) if name in XDIST_IN_CI else name
    for name in PROJECTS])
def test_an_exceeded_ceiling_fails_in_every_configured_project(
    pytester: pytest.Pytester, configured: Path, name: str
) -> None:
    ini, args = PROJECTS[name]
    pytester.makeini(ini)
    result = pytester.runpytest("--failgate=reports", *args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*= failgate =*"])
    if name == "-x":  # the gate's items come first, so -x stops on the gate's first failure
        result.assert_outcomes(failed=1, passed=2)
        return
    for line in FAILING:  # in either order under xdist
        result.stdout.fnmatch_lines([line])
    result.assert_outcomes(passed=GATE_ITEMS - 2 + 1, failed=2)


def test_an_ini_ceilings_path_and_ini_reports_gate_under_testpaths(
    pytester: pytest.Pytester, configured: Path
) -> None:
    (configured / "gate").mkdir()
    (configured / "ceilings.yaml").rename(configured / "gate" / "limits.yaml")
    pytester.makeini("[pytest]\ntestpaths = tests\nfailgate = reports\n"
                     "failgate_ceilings = gate/limits.yaml\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["FAILED gate/limits.yaml::eval_summary::retrieval_miss *"])


@pytest.mark.parametrize("xdist", [[], pytest.param(["-n", "2"], marks=pytest.mark.slow)],
                         ids=["no xdist", "xdist"])
@pytest.mark.parametrize(("addopts", "dropped"), [
    ('-m "not failgate"', GATE_ITEMS),
    ("--deselect ceilings.yaml::eval_summary::retrieval_miss", 1),
], ids=["-m not failgate", "--deselect one item"])
def test_a_configuration_that_deselects_gate_items_fails_the_session(
    pytester: pytest.Pytester, configured: Path, addopts: str, dropped: int, xdist: list[str]
) -> None:
    # the regression's only failing items are deselected or not run: without the check
    # this run would be green for the deselected item, or entirely
    pytester.makeini(f"[pytest]\ntestpaths = tests\naddopts = {addopts}\n")
    (configured / "reports" / "eval_summary.json").write_bytes(
        (EXAMPLES / "reports" / "eval_summary.json").read_bytes())
    result = pytester.runpytest("--failgate=reports", *xdist)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        f"failgate: {dropped} of {GATE_ITEMS} gate items were deselected by the pytest "
        "configuration (addopts or PYTEST_ADDOPTS), not on the command line; *"])


def test_pytest_addopts_in_the_environment_is_configuration_too(
    pytester: pytest.Pytester, configured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-k test_own")
    result = pytester.runpytest("--failgate=reports")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["failgate: 24 of 24 gate items were deselected by the pytest "
                                 "configuration*"])


@pytest.mark.parametrize("args", [["-k", "test_own"], ["-m", "not failgate"], ["-ktest_own"]])
def test_a_deselection_on_the_command_line_is_shown_and_exits_as_pytest_would(
    pytester: pytest.Pytester, configured: Path, args: list[str]
) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    result = pytester.runpytest("--failgate=reports", *args)
    assert result.ret == pytest.ExitCode.OK  # the user chose to run their own test only
    result.assert_outcomes(passed=1, deselected=GATE_ITEMS)
    option = "-m" if "-m" in args else "-k"
    result.stdout.fnmatch_lines([f"failgate: 24 of 24 gate items deselected by {option} on the "
                                 "command line; the gate did not run"])


def test_a_partial_command_line_selection_says_how_much_of_the_gate_ran(
    pytester: pytest.Pytester, configured: Path
) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    result = pytester.runpytest("--failgate=reports", "-k", "retrieval_miss")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["failgate: 21 of 24 gate items deselected by -k on the "
                                 "command line; 3 ran"])


@pytest.mark.slow
def test_a_run_that_stops_before_any_gate_item_ran_fails(
    pytester: pytest.Pytester, configured: Path
) -> None:
    # a plugin that moves the gate last, and a failing test that -x stops on: nothing gated
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    (configured / "reports" / "eval_summary.json").write_bytes(
        (EXAMPLES / "reports" / "eval_summary.json").read_bytes())
    pytester.makeconftest("""
import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: "failgate" in item.keywords)

def pytest_runtest_call(item):
    if "failgate" not in item.keywords:
        pytest.exit("stopped by the project", returncode=0)
""")
    result = pytester.runpytest("--failgate=reports")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["failgate: no gate item ran: the run stopped before the gate "
                                 "(24 selected)"])


def test_the_ceilings_file_given_as_a_path_is_gated_once(
    pytester: pytest.Pytester, configured: Path
) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    result = pytester.runpytest("--failgate=reports", "tests", "ceilings.yaml")
    result.assert_outcomes(passed=GATE_ITEMS - 2 + 1, failed=2)


def test_collect_only_lists_the_gate_and_does_not_fail(
    pytester: pytest.Pytester, configured: Path
) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    result = pytester.runpytest("--failgate=reports", "--co", "-q")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["ceilings.yaml::eval_summary::retrieval_miss",
                                 "tests/test_own.py::test_own"], consecutive=False)


@pytest.mark.heavy
@pytest.mark.parametrize("disable", ["-p no:failgate", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"])
def test_required_plugins_stops_a_run_that_would_load_no_gate(
    pytester: pytest.Pytester, configured: Path, monkeypatch: pytest.MonkeyPatch, disable: str
) -> None:
    """The documented guard against switching the plugin off: pytest's own
    ``required_plugins`` (failgate cannot run code when it is not loaded)."""
    pytester.makeini("[pytest]\ntestpaths = tests\nfailgate = reports\n"
                     "required_plugins = pytest-failgate\n")
    args = ["-p", "no:failgate"] if disable.startswith("-p") else []
    if not args:
        monkeypatch.setenv(disable, "1")
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*Missing required plugins: pytest-failgate*"])
    # and loaded by name, the gate runs
    if not args:
        result = pytester.runpytest_subprocess("-p", "failgate")
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines(FAILING[:1])


@pytest.mark.parametrize(("args", "expected"), [
    (["-k", "x"], ["-k"]), (["-kx"], ["-k"]), (["-vk", "x"], ["-k"]), (["-m", "a"], ["-m"]),
    (["--deselect=a::b"], ["--deselect"]), (["--lf"], ["--lf"]), (["--sw"], ["--sw"]),
    (["-p", "no:x"], []), (["--keep-duplicates"], []), (["-n", "2"], []), (["-W", "k"], []),
    (["--", "-k"], []), (["tests/test_k.py"], []),
])
def test_selection_options_are_read_from_the_command_line(
    args: list[str], expected: list[str]
) -> None:
    assert selection_options(args) == expected


def test_without_the_gate_on_nothing_is_checked(
    pytester: pytest.Pytester, configured: Path
) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    shutil.rmtree(configured / "reports")
    result = pytester.runpytest("-k", "test_own")
    assert result.ret == pytest.ExitCode.OK
    assert "= failgate =" not in result.stdout.str()


@pytest.mark.slow
@pytest.mark.parametrize("required", ["", "required_plugins = pytest-failgate>=0.1\n"])
def test_init_advises_required_plugins_unless_the_configuration_has_it(
    pytester: pytest.Pytester, configured: Path, required: str
) -> None:
    (configured / "ceilings.yaml").unlink()
    pytester.makeini(f"[pytest]\ntestpaths = tests\n{required}")
    result = pytester.runpytest("--failgate=reports", "--failgate-init")
    advice = "init: so that `-p no:failgate` * add `required_plugins = pytest-failgate` *"
    if required:
        result.stdout.no_fnmatch_line(advice)
    else:
        result.stdout.fnmatch_lines([advice])
    assert (configured / "ceilings.yaml").exists()


# ------------------------------------------------ a field that decides `failed` absent everywhere

SCORE_TAXONOMY = """\
name: scored
id_field: id
types: {score: number | null, latency: number | null}
failed: score < 0.5
categories:
  - {name: slow, when: latency > 10}
  - {name: other}
"""


def _scored(workdir: Path, key: str, suffix: str) -> Path:
    """Cases that write their score under ``key``; the taxonomy reads ``score``."""
    (workdir / "scored.yaml").write_text(SCORE_TAXONOMY, encoding="utf-8")
    (workdir / "ceilings.yaml").write_text("version: 1\ntaxonomy: scored.yaml\n",
                                           encoding="utf-8")
    reports = workdir / "reports"
    reports.mkdir()
    cases = [{"id": f"c{i}", key: i / 10, "latency": i * 2} for i in range(10)]
    if suffix == ".jsonl":
        return write_jsonl(reports / "run.jsonl", cases)
    return write_summary(reports / "run.json", cases)


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_a_field_deciding_failed_that_no_case_has_is_an_error_not_zero_failed(
    workdir: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    _scored(workdir, "Score", suffix)  # the report writes Score: every case would pass
    code, out, _ = run_cli(capsys, "check", "reports")
    assert code == 2
    assert (f"reports/run{suffix}: none of the 10 cases has 'score', which taxonomy scored "
            "reads to decide whether a case failed") in out


def test_the_same_cases_with_the_field_gate_normally(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _scored(workdir, "score", ".json")
    code, out, _ = run_cli(capsys, "show", "reports", "--taxonomy", "scored.yaml")
    assert code == 0, out
    assert "run  10 cases, 5 failed" in out


def test_duckdb_refuses_the_same_report_as_python(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("duckdb")
    _scored(workdir, "Score", ".jsonl")
    code, out, _ = run_cli(capsys, "check", "reports", "--engine", "duckdb")
    assert code == 2
    assert "none of the 10 cases has 'score', which taxonomy scored reads" in out


def test_a_default_makes_an_absent_deciding_field_legitimate(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # rag's answerable defaults to true: reports without it are ordinary
    reports = workdir / "reports"
    reports.mkdir()
    write_summary(reports / "eval_summary.json", [
        {"id": "a", "accuracy": 1.0}, {"id": "b", "accuracy": 0.0}])
    code, out, _ = run_cli(capsys, "show", "reports")
    assert code == 0, out
    assert "eval_summary  2 cases, 1 failed" in out


def test_a_deciding_field_only_some_cases_need_may_be_absent_everywhere(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # rag reads abstained and evidence_doc_ids only for unanswerable cases: a report of
    # answerable cases without them is ordinary, one without accuracy is not
    reports = workdir / "reports"
    reports.mkdir()
    write_summary(reports / "eval_summary.json", [
        {"id": "a", "accuracy": 1.0, "answerable": True},
        {"id": "b", "accuracy": 1.0, "answerable": True}])
    code, out, _ = run_cli(capsys, "show", "reports")
    assert code == 0, out
    assert "eval_summary  2 cases, 0 failed" in out
    write_summary(reports / "eval_summary.json", [
        {"id": "a", "answerable": True, "abstained": False, "expected_doc_ids": ["d"]},
        {"id": "b", "answerable": True, "abstained": False, "expected_doc_ids": ["d"]}])
    code, out, _ = run_cli(capsys, "show", "reports")
    assert code == 2  # every case would be failed, whatever the system did
    assert "none of the 2 cases has 'accuracy', which taxonomy rag reads" in out


def test_pytest_shows_the_undecidable_report_as_a_failing_load_item(
    pytester: pytest.Pytester,
) -> None:
    _scored(pytester.path, "Score", ".json")
    result = pytester.runpytest("--failgate=reports")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*none of the 10 cases has 'score', which taxonomy scored "
                                 "reads to decide whether a case failed*"])


# ------------------------------------------------ --lf after only the project's test failed


@pytest.mark.slow
@pytest.mark.parametrize("xdist", [[], pytest.param(["-n", "2"], marks=pytest.mark.slow)],
                         ids=["no xdist", "xdist"])
def test_last_failed_after_a_failing_project_test_shows_that_the_gate_was_left_out(
    pytester: pytest.Pytester, project: Path, xdist: list[str]
) -> None:
    # pytest's --lf skips every file without a last failure, the ceilings file included:
    # the gate's items must still be counted, so the summary says --lf left them out
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("tests")
    own = project / "tests" / "test_own.py"
    own.write_text("def test_own():\n    assert 0\n", encoding="utf-8")
    first = pytester.runpytest("--failgate=reports")
    first.assert_outcomes(failed=1, passed=GATE_ITEMS)
    own.write_text("def test_own():\n    pass\n", encoding="utf-8")
    shutil.copy(EXAMPLES / "regression" / "eval_summary.json",
                project / "reports" / "eval_summary.json")
    result = pytester.runpytest("--failgate=reports", "--lf", *xdist)
    result.stdout.fnmatch_lines(["*= failgate =*",
                                 "failgate: 24 of 24 gate items deselected by --lf on the "
                                 "command line; the gate did not run"])
    assert result.ret == pytest.ExitCode.OK  # the person chose to rerun their own test


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--setup-plan"], ["--setup-only"], ["--fixtures"],
                                  ["--co", "-q"], pytest.param(["--setup-plan", "-n", "2"],
                                                               marks=pytest.mark.slow)])
def test_a_run_of_no_test_asked_for_on_the_command_line_says_the_gate_did_not_run(
    pytester: pytest.Pytester, regression: Path, args: list[str]
) -> None:
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest("--failgate=reports", *args)
    assert result.ret == pytest.ExitCode.OK  # as pytest exits: nothing was meant to run
    result.stdout.fnmatch_lines([f"failgate: {args[0]} runs no test; the gate did not run"])
    result.stdout.no_fnmatch_line("*no gate item ran*")


@pytest.mark.slow
@pytest.mark.parametrize("addopts", ["--co", "--setup-plan", "--setup-only"])
def test_a_configuration_that_runs_no_test_fails_the_session(
    pytester: pytest.Pytester, regression: Path, addopts: str
) -> None:
    pytester.makeini(f"[pytest]\naddopts = {addopts}\n")
    result = pytester.runpytest("--failgate=reports")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"failgate: {addopts} in the pytest configuration (addopts or "
                                 "PYTEST_ADDOPTS) runs no test, so the gate did not run; *"])
