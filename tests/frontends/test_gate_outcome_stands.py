"""The gate's own outcome cannot be rewritten by other code.

The project holds a regression (two gate items over their ceilings). A conftest.py that
turns those failures green through a pytest hook must not give a green run: the session
fails and names the conftest.py. A conftest.py with the same hooks that leaves outcomes
alone changes nothing (the control).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

# xdist runs take seconds each: the main rewrite and its control run under it too
XDIST = pytest.mark.parametrize("xdist", [
    [], pytest.param(["-n", "2"], marks=pytest.mark.slow)], ids=["plain", "xdist"])

# Each marks the gate's failed items passed (or hides them), the way a pull request could.
REWRITERS = {
    "makereport wrapper": '''
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.nodeid.startswith("ceilings.yaml::") and report.failed:
        report.outcome = "passed"
        report.longrepr = None
    return report
''',
    "old-style hookwrapper": '''
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if "ceilings.yaml::" in report.nodeid:
        report.outcome = "passed"
''',
    "logreport editor": '''
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    if report.nodeid.startswith("ceilings.yaml::") and report.failed:
        report.outcome = "skipped"
        report.longrepr = ("ceilings.yaml", 1, "flaky")
''',
    "xfail mark": '''
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        if item.nodeid.startswith("ceilings.yaml::"):
            item.add_marker(pytest.mark.xfail(reason="known"))
''',
}

# The same hooks, leaving every outcome as it was.
NEUTRAL = '''
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.user_properties.append(("seen_by_conftest", True))
    return report

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    report.sections.append(("conftest", "looked"))
'''


@pytest.mark.slow
@pytest.mark.parametrize(("name", "xdist"), [
    *(pytest.param(name, [], id=name) for name in REWRITERS),
    pytest.param("makereport wrapper", ["-n", "2"], marks=pytest.mark.slow, id="xdist"),
    pytest.param("logreport editor", ["-n", "2"], marks=pytest.mark.slow, id="xdist-logreport"),
])
def test_a_conftest_that_rewrites_the_gates_outcome_fails_the_session_naming_it(
    pytester: pytest.Pytester, regression: Path, name: str, xdist: list[str]
) -> None:
    pytester.makeconftest(REWRITERS[name])
    result = pytester.runpytest("--failgate=reports", *xdist)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines([
        "failgate: the gate failed 2 item(s), but another hook rewrote the outcome by "
        "conftest.py (*); the gate's outcome stands:"])
    # both items, in the gate's order (whatever order xdist ran them in)
    result.stdout.fnmatch_lines(["  ceilings.yaml::eval_summary::retrieval_miss (reported *)",
                                 "  ceilings.yaml::eval_summary::total (reported *)"])


def test_a_teststatus_hook_that_files_a_failure_as_passed_is_a_rewrite(
    pytester: pytest.Pytester, regression: Path
) -> None:
    pytester.makeconftest('''
def pytest_report_teststatus(report, config):
    if report.nodeid.startswith("ceilings.yaml::") and report.when == "call":
        return "passed", ".", "PASSED"
''')
    result = pytester.runpytest("--failgate=reports")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "failgate: the gate failed 2 item(s), but another hook rewrote the outcome by "
        "conftest.py (pytest_report_teststatus); *",
        "  ceilings.yaml::eval_summary::retrieval_miss (not counted as failed in the summary)"])


@XDIST
def test_a_conftest_that_leaves_outcomes_alone_changes_nothing(
    pytester: pytest.Pytester, regression: Path, xdist: list[str]
) -> None:
    pytester.makeconftest(NEUTRAL)
    result = pytester.runpytest("--failgate=reports", *xdist)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the regression, as without it
    result.assert_outcomes(failed=2, passed=22)
    assert "rewrote the outcome" not in result.stdout.str()


def test_a_passing_gate_with_a_rewriting_conftest_stays_green(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makeconftest(REWRITERS["makereport wrapper"])  # nothing failed: nothing to rewrite
    result = pytester.runpytest("--failgate=reports")
    assert result.ret == pytest.ExitCode.OK
    assert "rewrote the outcome" not in result.stdout.str()


def test_a_ratchet_does_not_write_from_rewritten_outcomes(
    pytester: pytest.Pytester, regression: Path
) -> None:
    before = (regression / "ceilings.yaml").read_bytes()
    pytester.makeconftest(REWRITERS["makereport wrapper"])
    result = pytester.runpytest("--failgate=reports", "--failgate-ratchet")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["ratchet: ceilings.yaml not written: the gate's outcomes "
                                 "were rewritten (above)"])
    assert (regression / "ceilings.yaml").read_bytes() == before
