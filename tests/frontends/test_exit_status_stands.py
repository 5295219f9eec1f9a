"""A failed gate's exit status stands against every hook that assigns another.

The project holds a regression (two gate items over their ceilings, exit 1). Each
``conftest.py`` or ``-p`` plugin below then tries to make the run exit 0 the way a pull
request could, at a later point than the one before: a ``trylast`` ``pytest_sessionfinish``
(the issue's route), one that runs first, a wrapper around it, ``pytest.exit``, a
``pytest_unconfigure``, a wrapper around ``pytest_cmdline_main`` itself. The run still exits
1, and the terminal still counts the two gate items failed. The same hooks leaving the
status alone change nothing, and a passing gate keeps the status they give it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

_ZERO = "session.exitstatus = 0"

# Each sets the exit status to 0 once the gate has decided it.
OVERWRITERS = {
    "trylast sessionfinish": f'''
import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    {_ZERO}
''',
    "tryfirst sessionfinish": f'''
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    {_ZERO}
''',
    "sessionfinish wrapper": f'''
import pytest

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    yield
    {_ZERO}
''',
    "old-style sessionfinish hookwrapper": f'''
import pytest

@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_sessionfinish(session, exitstatus):
    yield
    {_ZERO}
''',
    "pytest.exit with 0": '''
import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    pytest.exit("all good", returncode=0)
''',
    "unconfigure": f'''
import pytest

SESSIONS = []

def pytest_sessionstart(session):
    SESSIONS.append(session)

@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    for session in SESSIONS:
        {_ZERO}
''',
    "makereport flip and sessionfinish": f'''
import pytest

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.nodeid.startswith("ceilings.yaml::") and report.failed:
        report.outcome = "passed"
        report.longrepr = None
    return report

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    {_ZERO}
''',
}

# A plugin given with ``-p`` that wraps pytest's main hook and returns 0.
CMDLINE_WRAPPER = '''
import pytest

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_cmdline_main(config):
    yield
    return 0
'''

# The same hooks, leaving the status as it was.
NEUTRAL = '''
import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    session.config.stash_seen = session.exitstatus

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    return (yield)
'''


@pytest.mark.parametrize("name", list(OVERWRITERS))
def test_a_conftest_that_sets_the_exit_status_to_0_cannot_pass_a_failed_gate(
    pytester: pytest.Pytester, regression: Path, name: str
) -> None:
    pytester.makeconftest(OVERWRITERS[name])
    result = pytester.runpytest("--failgate=reports")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    if name != "pytest.exit with 0":  # which stops the run before the terminal's summary
        result.assert_outcomes(failed=2, passed=22)  # the terminal agrees with the status


def test_the_summary_names_the_hook_that_set_the_exit_status(
    pytester: pytest.Pytester, regression: Path
) -> None:
    pytester.makeconftest(OVERWRITERS["trylast sessionfinish"])
    result = pytester.runpytest("--failgate=reports")
    result.stdout.fnmatch_lines([
        "failgate: the gate failed, but the exit status was set to 0 by conftest.py "
        "(pytest_sessionfinish); the gate's exit status (1) stands"])


def test_a_p_plugin_that_sets_the_exit_status_to_0_cannot_pass_a_failed_gate(
    pytester: pytest.Pytester, regression: Path
) -> None:
    pytester.makepyfile(overwrite=OVERWRITERS["trylast sessionfinish"])
    pytester.syspathinsert()
    result = pytester.runpytest("-p", "overwrite", "--failgate=reports")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.assert_outcomes(failed=2, passed=22)


def test_a_p_plugin_wrapping_pytests_main_hook_cannot_return_0_for_a_failed_gate(
    pytester: pytest.Pytester, regression: Path
) -> None:
    pytester.makepyfile(mainwrap=CMDLINE_WRAPPER)
    pytester.syspathinsert()
    result = pytester.runpytest("-p", "mainwrap", "--failgate=reports")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()


def test_a_makereport_flip_leaves_the_gate_items_failed_in_the_terminal(
    pytester: pytest.Pytester, regression: Path
) -> None:
    pytester.makeconftest(OVERWRITERS["makereport flip and sessionfinish"])
    result = pytester.runpytest("--failgate=reports", "-rf")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*the gate failed this item; another hook reported it passed: "
                                 "the gate's outcome stands*"])
    result.stdout.fnmatch_lines([
        "FAILED ceilings.yaml::eval_summary::retrieval_miss - the gate failed this*",
        "*2 failed, 22 passed*"])
    result.stdout.fnmatch_lines(["failgate: the gate failed 2 item(s), but another hook "
                                 "rewrote the outcome by conftest.py (*"])


@pytest.mark.slow
def test_the_exit_status_stands_under_xdist(pytester: pytest.Pytester, regression: Path) -> None:
    pytester.makeconftest(OVERWRITERS["makereport flip and sessionfinish"])
    result = pytester.runpytest("--failgate=reports", "-n", "2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.assert_outcomes(failed=2, passed=22)


@pytest.mark.heavy
@pytest.mark.parametrize("name", ["trylast sessionfinish", "sessionfinish wrapper",
                                  "unconfigure"])
def test_the_exit_status_stands_in_a_pytest_process(
    pytester: pytest.Pytester, regression: Path, name: str
) -> None:
    pytester.makeconftest(OVERWRITERS[name])
    result = pytester.runpytest_subprocess("--failgate=reports")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["*2 failed, 22 passed*"])


def test_hooks_that_leave_the_status_alone_change_nothing(
    pytester: pytest.Pytester, regression: Path
) -> None:
    pytester.makeconftest(NEUTRAL)
    result = pytester.runpytest("--failgate=reports")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=2, passed=22)


def test_a_passing_gate_keeps_the_status_a_hook_gives_it(
    pytester: pytest.Pytester, project: Path
) -> None:
    """The floor is the gate's: a hook may still fail a run the gate passed."""
    pytester.makeconftest('''
import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 3
''')
    result = pytester.runpytest("--failgate=reports")
    assert result.ret == 3
    pytester.makeconftest(OVERWRITERS["trylast sessionfinish"])
    assert pytester.runpytest("--failgate=reports").ret == pytest.ExitCode.OK


@pytest.mark.parametrize("broken", ["a report that is not JSON", "no reports at all"])
def test_a_gate_that_could_not_judge_exits_as_without_the_hook(
    pytester: pytest.Pytester, project: Path, broken: str
) -> None:
    if broken == "no reports at all":
        for report in (project / "reports").rglob("*.json"):
            report.unlink()
    else:
        (project / "reports" / "eval_summary.json").write_text("{not json")
    plain = pytester.runpytest("--failgate=reports").ret
    assert plain != pytest.ExitCode.OK
    pytester.makeconftest(OVERWRITERS["tryfirst sessionfinish"])
    result = pytester.runpytest("--failgate=reports")
    assert result.ret == plain, result.stdout.str()
