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


# -- a promptfoo project nested in its repository, gated from the root or a subfolder -----


def _nested_promptfoo(root: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A repository whose promptfoo project is ``apps/bot`` (a JSON Lines output), its
    ceilings written by ``failgate init evals`` there, as the docs say."""
    import os

    (root / ".git").mkdir()
    bot = root / "apps" / "bot"
    (bot / "evals").mkdir(parents=True)
    shutil.copy(DATA / "promptfoo" / "workflows" / "jsonl" / "results.jsonl",
                bot / "evals" / "results.jsonl")
    here = Path.cwd()
    os.chdir(bot)
    try:
        assert run_cli(capsys, "init", "evals")[0] == 0
    finally:
        os.chdir(here)
    return bot


def test_gated_from_the_repository_root_names_the_projects_own_ceilings_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """From the root (where a CI job starts), ``failgate check apps/bot/evals`` said only
    "create it with `failgate init apps/bot/evals`": a second ceilings file at the root.
    It names the project's file, where to run and the setting that names it."""
    bot = _nested_promptfoo(tmp_path, capsys)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "check", "apps/bot/evals")
    assert code == 2
    assert ("ceilings.yaml: not found here, but apps/bot/ceilings.yaml is: run the gate from "
            "apps/bot (the Action's `working-directory: apps/bot`), or name that file with "
            "`--ceilings FILE`; to start another file here, create it from the current "
            "counts with `failgate init apps/bot/evals`") in err
    assert not (tmp_path / "ceilings.yaml").exists()
    # each way out it names works
    assert run_cli(capsys, "check", "apps/bot/evals", "--ceilings",
                   "apps/bot/ceilings.yaml")[0] == 0
    monkeypatch.chdir(bot)
    assert run_cli(capsys, "check", "evals")[0] == 0


def test_gated_from_a_subfolder_names_the_file_above_it_in_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = _nested_promptfoo(tmp_path, capsys)
    monkeypatch.chdir(bot / "evals")
    code, _, err = run_cli(capsys, "check", ".")
    assert code == 2
    assert "not found here, but ../ceilings.yaml is: run the gate from .., or name" in err
    assert "working-directory" not in err  # the Action's is relative to the root, not here
    assert run_cli(capsys, "check", ".", "--ceilings", "../ceilings.yaml")[0] == 0


def test_pytest_from_the_root_names_the_file_in_pytests_words(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _nested_promptfoo(pytester.path, capsys)
    done = pytester.runpytest("-p", "no:cacheprovider", "--failgate=apps/bot/evals")
    assert done.ret == pytest.ExitCode.INTERRUPTED  # the gate could not run: exit 2
    done.stdout.fnmatch_lines(["*not found here, but apps/bot/ceilings.yaml is: run the gate "
                               "from apps/bot*`--failgate-ceilings=FILE` (or the ini key "
                               "`failgate_ceilings`)*"])


def test_no_file_near_or_one_outside_the_repository_keeps_the_init_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ceilings file above the repository is none of its own: not named."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "evals").mkdir()
    shutil.copy(DATA / "promptfoo" / "workflows" / "jsonl" / "results.jsonl",
                repo / "evals" / "results.jsonl")
    (tmp_path / "ceilings.yaml").write_text("version: 1\nceilings: {}\n", encoding="utf-8")
    monkeypatch.chdir(repo)
    code, _, err = run_cli(capsys, "check", "evals")
    assert code == 2
    assert ("ceilings.yaml: not found; create it from the current counts with "
            "`failgate init evals`") in err


# -- an lm-eval team: every run of one --output_path lands in one folder ------------------


def test_a_second_lm_eval_run_beside_the_first_is_gated_as_the_latest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``lm_eval ... --output_path results --log_samples`` run twice writes two timestamped
    samples files of one task in ``results/<model>/``: "two reports are both named" stopped
    the gate; the latest is gated (by the name's timestamp), the older skipped, naming it."""
    model = tmp_path / "results" / "pythia"
    model.mkdir(parents=True)
    samples = next((DATA / "lm_eval").glob("samples_*.jsonl"))
    older = model / "samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl"
    newer = model / "samples_math_perturbed_full_2026-01-21T15-02-09.000001.jsonl"
    shutil.copy(samples, older)
    lines = samples.read_text(encoding="utf-8").splitlines(keepends=True)
    newer.write_text("".join(lines[:4]), encoding="utf-8")  # the later run: 4 cases
    for path in (DATA / "lm_eval").glob("results_*.json"):
        shutil.copy(path, model / path.name)
    _ceilings(tmp_path / "ceilings.yaml", "lm-eval", {"wrong": 4, "total": 4})
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "check", "results")
    assert code == 0, out + err
    assert "pythia/samples_math_perturbed_full  4 cases, 4 failed" in out
    assert (f"results/pythia/{older.name} (results/pythia/{newer.name} is gated instead: the "
            "latest lm-eval file of report 'pythia/samples_math_perturbed_full'") in out


def test_mcp_names_the_nested_projects_file_as_its_ceilings_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_failgate import mcpserver
    from pytest_failgate.core.base.errors import FailgateError

    _nested_promptfoo(tmp_path, capsys)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FailgateError, match="name that file with the `ceilings` argument"):
        mcpserver.check(paths=["apps/bot/evals"])
    assert mcpserver.check(paths=["apps/bot/evals"],
                           ceilings="apps/bot/ceilings.yaml")["verdict"] == "pass"
