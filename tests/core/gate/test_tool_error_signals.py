"""Each tool's own signal that a case was not graded: outside the system, never a pass.

DeepEval's default ``deepeval test run`` writes a metric whose judge raised as ``success:
true`` with a null score (``tests/data/deepeval/judge_errors``, made with the real
DeepEval by ``scripts/fixtures/deepeval_judge_errors.py``): counting it as a pass let a
run with its judge down on 10 of 16 cases pass and offer a ratchet.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_failgate.cli import main
from pytest_failgate.core.base.result import GateResult

DATA = Path(__file__).resolve().parents[2] / "data"
JUDGE_ERRORS = DATA / "deepeval" / "judge_errors"

CEILINGS = """\
version: 1
taxonomy: deepeval
ceilings:
  metric_error: 1
  other_metric: 7
  total: 9
"""


def test_deepeval_cases_whose_judge_raised_are_judge_errors_not_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(JUDGE_ERRORS, tmp_path / "run")
    Path("ceilings.yaml").write_text(CEILINGS, encoding="utf-8")
    before = Path("ceilings.yaml").read_text(encoding="utf-8")
    assert main(["check", "run", "--json", "gate.json"]) == 3  # inconclusive, not a pass
    result = GateResult.model_validate_json(Path("gate.json").read_text(encoding="utf-8"))
    [report] = result.reports
    assert (report.n_cases, report.failed) == (16, 13)  # 3 graded failures, 10 not graded
    assert report.inconclusive is not None
    assert "metric_error 10" in report.inconclusive
    assert not result.lowerings  # nothing is offered from it
    assert main(["ratchet", "run"]) != 0
    assert Path("ceilings.yaml").read_text(encoding="utf-8") == before
    capsys.readouterr()
    # init records nothing from it either
    Path("ceilings.yaml").unlink()
    assert main(["init", "run"]) != 0
    assert not Path("ceilings.yaml").exists()
