"""The first hour held out (issue 47's check): an Inspect AI team, an lm-eval team in a
``src/`` layout and a promptfoo team in a nested project folder, each driven with the
commands the docs give on the tools' real files; and check's next steps in its tool's words."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import run_cli

DATA = Path(__file__).resolve().parents[1] / "data"

# -- check's next steps come from what the reader knows of its tool -----------------------


def _ceilings(path: Path, taxonomy: str, ceilings: dict[str, int]) -> None:
    lines = ["version: 1", f"taxonomy: {taxonomy}", "ceilings:",
             *(f"  {name}: {value}" for name, value in ceilings.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_an_outage_names_the_tools_own_run_as_the_next_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A promptfoo run whose provider failed is inconclusive; check's ``next`` line names
    promptfoo's command (``Reader.run``), as init's next steps do."""
    (tmp_path / "evals").mkdir()
    shutil.copy(DATA / "promptfoo" / "workflows" / "outage_jsonl" / "results.jsonl",
                tmp_path / "evals" / "results.jsonl")
    _ceilings(tmp_path / "ceilings.yaml", "promptfoo", {"provider_error": 0, "total": 8})
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "check", "evals")
    assert code == 3, out
    assert ("  next     fix what failed (the provider, the quota, the judge) and run the "
            "evaluation again (`npx promptfoo eval -o results.json`); init and the ratchet "
            "record nothing from this run") in out


def test_a_killed_inspect_run_is_run_again_to_its_end_with_inspects_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(DATA / "inspect_ai" / "killed", tmp_path / "logs")
    _ceilings(tmp_path / "ceilings.yaml", "inspect_ai", {"incorrect": 2, "total": 2})
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "check", "logs")
    assert code == 3, out
    assert ("  next     run the evaluation again, to its end (`inspect eval task.py --log-dir "
            "logs`)") in out
    assert "the provider, the quota" not in out  # nothing failed but the run's end


def test_a_report_of_no_tool_keeps_the_plain_next_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """failgate's own JSON Lines has no tool to name: the next step stays in no tool's words."""
    from pytest_failgate.core.gate.inconclusive import NEXT

    (tmp_path / "reports").mkdir()
    lines = "".join(f'{{"id": "q{n}", "status": "timeout"}}\n' for n in range(4))
    (tmp_path / "reports" / "run.jsonl").write_text(lines, encoding="utf-8")
    (tmp_path / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy:\n  name: own\n  failed: status != 'ok'\n  categories:\n"
        "    - {name: infra, when: status == 'timeout', outside: true}\n    - name: other\n"
        "ceilings: {infra: 0, other: 0}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "check", "reports")
    assert code == 3, out
    assert f"  next     {NEXT}" in out


def test_a_folder_of_lm_eval_aggregates_only_says_how_to_write_the_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """lm_eval without ``--log_samples`` writes only ``results_*.json``: check's error says
    what the tool needs (``Reader.run``'s note and command), not only what was skipped."""
    (tmp_path / "results").mkdir()
    for path in (DATA / "lm_eval").glob("results_*.json"):
        shutil.copy(path, tmp_path / "results" / path.name)
    _ceilings(tmp_path / "ceilings.yaml", "lm-eval", {"wrong": 10})
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "check", "results")
    assert code == 2, err
    assert "no report found under results" in err
    assert ("; lm_eval writes per-case samples only with --log_samples (`lm_eval --model hf "
            "--tasks TASK --output_path results --log_samples`)") in err
