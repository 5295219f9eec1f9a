"""The CI step (``python -I -m pytest_failgate.ci``) runs the guard against the pull request's
base with the run's reports: a baseline swapped, a hook that resets the exit status, the
reports narrowed on the CI step's own line, each fails the step's guard with the route named.

Each test is a pull request's checkout (a clone one commit deep, without main, as CI leaves
it) whose main holds the example reports, the repository's ceilings and ``extra`` files.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from action_runner import run_action
from helpers import EXAMPLES
from test_action import BASE_ENV, PR_EVENT, _commit, _git

from pytest_failgate.ci.__main__ import main as ci_main

ROOT = EXAMPLES.parent
PYPROJECT = '[tool.pytest.ini_options]\nfailgate = "reports"\n'


def _pull_request(tmp_path: Path, main: Callable[[Path], None],
                  change: Callable[[Path], None]) -> Path:
    seed = tmp_path / "seed"
    seed.mkdir()
    _git(seed, "init", "-q", "-b", "main")
    shutil.copytree(EXAMPLES / "reports", seed / "reports")
    shutil.copy(ROOT / "ceilings.yaml", seed / "ceilings.yaml")
    main(seed)
    _commit(seed, "main")
    _git(seed, "checkout", "-qb", "change")
    bare = tmp_path / "origin.git"
    _git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", "--depth=1", "--no-single-branch", bare.as_uri(), str(work))
    _git(work, "checkout", "-q", "change")
    change(work)
    _commit(work, "the change")
    _git(work, "update-ref", "-d", "refs/remotes/origin/main")
    return work


def _step(work: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[dict[str, object],
                                                                             str]:
    monkeypatch.chdir(work)
    ci_main([*args, "--guard-base", "origin/main", "--out-dir", "out"], {})
    verdict = json.loads((work / "out" / "verdict.json").read_text())
    return verdict, (work / "out" / "failgate.md").read_text()


def test_a_swapped_baseline_fails_the_ci_steps_guard(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def main(repo: Path) -> None:
        shutil.copytree(EXAMPLES / "reports", repo / "baseline")
        (repo / "pyproject.toml").write_text(PYPROJECT + 'failgate_baseline = ["baseline"]\n')

    def swap(repo: Path) -> None:
        shutil.copy(EXAMPLES / "regression" / "eval_summary.json", repo / "baseline")

    verdict, report = _step(_pull_request(tmp_path, main, swap), monkeypatch, "reports")
    assert verdict["guard"] == "fail", report
    assert "failgate_baseline content" in report
    assert "baseline/eval_summary.json" in report


def test_a_conftest_resetting_the_exit_status_fails_the_ci_steps_guard(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def hook(repo: Path) -> None:
        (repo / "conftest.py").write_text(
            "import pytest\n\n\n@pytest.hookimpl(trylast=True)\n"
            "def pytest_sessionfinish(session):\n    session.exitstatus = 0\n")

    verdict, report = _step(_pull_request(tmp_path, lambda repo: None, hook), monkeypatch,
                            "reports")
    assert verdict["guard"] == "fail", report
    assert "hook conftest.py" in report
    assert "pytest_sessionfinish" in report


def test_reports_narrowed_on_the_ci_steps_own_line_fail_its_guard(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = "      - run: python -I -m pytest_failgate.ci {} --guard-base origin/main\n"

    def workflow(repo: Path, reports: str) -> None:
        folder = repo / ".github" / "workflows"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "gate.yml").write_text("on: pull_request\njobs:\n  gate:\n"
                                         "    runs-on: ubuntu-latest\n    steps:\n"
                                         + line.format(reports))

    work = _pull_request(tmp_path, lambda repo: workflow(repo, "reports/"),
                         lambda repo: workflow(repo, "reports/real100"))
    verdict, report = _step(work, monkeypatch, "reports/real100")
    assert verdict["guard"] == "fail", report
    assert ".github/workflows/gate.yml:6" in report
    assert "failgate: reports/ -> reports/real100" in report


WORKFLOW = ("on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: octo-org/pytest-failgate@v1\n        with:\n"
            "          reports: reports\n")


@pytest.mark.heavy
def test_the_actions_guard_names_its_gate_job_allowed_to_fail(tmp_path: Path) -> None:
    """Run as the Action (its steps as a runner runs them): a change that lets another
    workflow's gate job fail is named, and the Action's verdict is fail."""
    def main(repo: Path) -> None:
        (repo / ".github" / "workflows").mkdir(parents=True)
        (repo / ".github" / "workflows" / "nightly.yml").write_text(WORKFLOW)

    def allow(repo: Path) -> None:
        (repo / ".github" / "workflows" / "nightly.yml").write_text(WORKFLOW.replace(
            "    runs-on:", "    continue-on-error: true\n    runs-on:"))

    work = _pull_request(tmp_path, main, allow)
    done = run_action(work, {"reports": "reports", "status": ""}, event=PR_EVENT,
                      extra_env=BASE_ENV, temp=tmp_path / "runner")
    assert done.outputs["verdict"] == "fail", done.summary
    assert "gate step .github/workflows/nightly.yml:6 job gate (the failgate Action) job " \
        "continue-on-error: not set -> true" in done.summary
