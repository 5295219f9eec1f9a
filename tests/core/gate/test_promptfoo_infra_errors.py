"""promptfoo's checks that could not run are outside the system, never model failures.

``tests/data/promptfoo/infra`` was made with the real promptfoo (0.121.20, offline) by
``scripts/fixtures/promptfoo_infra.sh``: a python assertion without an interpreter ("Python
3 not found"), one whose script raised, a javascript assertion that threw, a grader that
could not be reached. Counted as the model's failures (``code``, ``model_graded``), they let
a run whose checks never ran fail as a regression, or pass and lower the ceilings.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_failgate.cli import main
from pytest_failgate.core.base.result import GateResult
from pytest_failgate.core.reports.promptfoo import could_not_run

DATA = Path(__file__).resolve().parents[2] / "data" / "promptfoo" / "infra"

CEILINGS = """\
version: 1
taxonomy: promptfoo
ceilings:
  provider_error: 0
  assertion_error: 0
  text_match: 1
  code: 1
  model_graded: 1
  total: 6
"""


def _gate(tmp_path: Path, run: str) -> GateResult:
    shutil.copytree(DATA / run, tmp_path / run)
    Path("ceilings.yaml").write_text(CEILINGS, encoding="utf-8")
    assert main(["check", run, "--json", "gate.json"]) == 3  # inconclusive
    return GateResult.model_validate_json(Path("gate.json").read_text(encoding="utf-8"))


def test_checks_that_could_not_run_are_assertion_errors_and_the_run_is_inconclusive(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    result = _gate(tmp_path, "missing")
    [report] = result.reports
    cases = {row.name: row.first_cases for row in report.rows if row.slice is None}
    assert sorted(cases["assertion_error"]) == sorted([
        "echo/0/python check without an interpreter", "echo/0/javascript check that throws",
        "echo/0/grader unavailable"])
    # the script file that crashed: promptfoo records the row as an error of the call
    assert cases["provider_error"] == ["echo/0/javascript file check that crashes"]
    assert cases["text_match"] == ["echo/0/order number echoed"]  # an ordinary failure
    assert cases["code"] == []
    assert cases["model_graded"] == []
    assert report.inconclusive is not None
    assert "assertion_error 3" in report.inconclusive
    assert not result.lowerings
    before = Path("ceilings.yaml").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["ratchet", "missing"]) != 0
    assert Path("ceilings.yaml").read_text(encoding="utf-8") == before


def test_a_python_assertion_that_raised_is_an_assertion_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    [report] = _gate(tmp_path, "crash").reports
    cases = {row.name: row.first_cases for row in report.rows if row.slice is None}
    assert cases["assertion_error"] == ["echo/0/python check that crashes"]
    assert cases["code"] == []


def test_one_check_that_ran_and_failed_makes_the_row_the_system_s_failure() -> None:
    """A row with a crashed check and a check that ran and failed says the output failed."""
    crashed = {"pass": False, "reason": "Custom function threw error: boom",
               "assertion": {"type": "javascript"}}
    failed = {"pass": False, "reason": 'Expected output to contain "30 days"',
              "assertion": {"type": "contains"}}
    assert could_not_run({"pass": False, "componentResults": [crashed]})
    assert not could_not_run({"pass": False, "componentResults": [crashed, failed]})
    assert not could_not_run({"pass": False, "componentResults": [failed]})
    assert not could_not_run(None)
