"""A killed run is never a finished one: Inspect AI's real killed ``.eval``.

``scripts/fixtures/inspect_killed.py`` killed a 20-sample ``inspect eval`` (SIGKILL) once
its log held 2 samples: the archive has no ``header.json``, only the journal's
``_journal/start.json``, which has no status. Inspect's own ``read_eval_log`` reads it as
``started``; so does failgate: ``check`` is inconclusive (exit 3), ``init`` and the ratchet
write nothing (exit 3, the file byte-identical), through the CLI, pytest, the CI step and
MCP. Before, the run read as finished: exit 0, and the ratchet lowered every ceiling to the
two samples' counts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import mcp_calls

from pytest_failgate.cli import main
from pytest_failgate.core.reports.inspect_ai import InspectReader

DATA = Path(__file__).resolve().parents[2] / "data" / "inspect_ai"
KILLED = DATA / "killed" / "2026-12-04T18-21-28-00-00_lookups_aE4JR2kMEoi5Xn3b59VTFY.eval"
STARTED = ("the run did not finish: the log's status is started: it never finished "
           "(still running, or killed)")
# the ceilings of the full run (20 samples), as the project had committed them
CEILINGS = """version: 1
taxonomy: inspect_ai
ceilings:
  incorrect: 5
  partial: 2
  total: 11
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    shutil.copy(KILLED, tmp_path / "logs")
    (tmp_path / "ceilings.yaml").write_text(CEILINGS)
    return tmp_path


def test_the_killed_log_reads_as_started() -> None:
    output = InspectReader().read(KILLED)
    assert output is not None
    assert output.interrupted == "the log's status is started: it never finished (still " \
                                 "running, or killed)"
    assert len(list(output.cases)) == 2
    assert output.recorded["status"] == "started"


def test_check_is_inconclusive(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "logs", "--json", "gate.json"]) == 3
    capsys.readouterr()
    result = json.loads(Path("gate.json").read_text())
    assert result["verdict"] == "inconclusive"
    assert result["reports"][0]["inconclusive"] == STARTED


@pytest.mark.parametrize("mode", ["ratchet", "init"])
def test_init_and_the_ratchet_write_nothing(project: Path, mode: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    if mode == "init":
        Path("ceilings.yaml").unlink()
    before = Path("ceilings.yaml").read_bytes() if mode == "ratchet" else None
    assert main([mode, "logs"]) == 3
    out = capsys.readouterr().out
    assert "not written" in out
    if before is None:
        assert not Path("ceilings.yaml").exists()
    else:
        assert Path("ceilings.yaml").read_bytes() == before


def test_pytest_fails_the_inconclusive_item_and_ratchets_nothing(
        pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeini("[pytest]\n")
    shutil.copytree(project / "logs", pytester.path / "logs")
    (pytester.path / "ceilings.yaml").write_text(CEILINGS)
    result = pytester.runpytest("--failgate=logs", "--failgate-ratchet")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*inconclusive, the run did not finish*"])
    assert (pytester.path / "ceilings.yaml").read_text() == CEILINGS


@pytest.mark.heavy
def test_the_ci_step_and_mcp_are_inconclusive(project: Path) -> None:
    import subprocess
    import sys

    step = subprocess.run([sys.executable, "-I", "-m", "pytest_failgate.ci", "logs",
                           "--out-dir", "ci"], cwd=project, capture_output=True, text=True,
                          check=False)
    assert step.returncode == 3, step.stdout + step.stderr
    assert json.loads((project / "ci" / "verdict.json").read_text())["verdict"] == \
        "inconclusive"
    _, results = mcp_calls(project, [("check", {"paths": ["logs"]}),
                                     ("ratchet", {"paths": ["logs"]})])
    assert results[0].structured_content["verdict"] == "inconclusive"
    assert (project / "ceilings.yaml").read_text() == CEILINGS


def test_a_run_folder_short_of_its_declared_cases_is_inconclusive(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A run folder's header declares ``n_cases`` before the cases are written: a folder
    whose attribution.jsonl stopped at 5 of 77 (the harness killed) is inconclusive, naming
    the 72 missing, and the ratchet writes nothing from it."""
    from helpers import SAME_DAY_CEILINGS, same_day_outcomes, same_day_run

    monkeypatch.chdir(tmp_path)
    run = same_day_run(tmp_path / "run", same_day_outcomes(16))
    Path("ceilings.yaml").write_text(SAME_DAY_CEILINGS)
    assert main(["check", "run"]) == 0
    attribution = run / "attribution.jsonl"
    attribution.write_text("".join(attribution.read_text().splitlines(True)[:5]))
    assert main(["check", "run", "--json", "gate.json"]) == 3
    [report] = json.loads(Path("gate.json").read_text())["reports"]
    assert report["inconclusive"] == ("the run did not finish: it holds 5 of the 77 cases its "
                                      "run declared (72 missing): it stopped part way")
    assert main(["ratchet", "run"]) == 3
    assert Path("ceilings.yaml").read_text() == SAME_DAY_CEILINGS
    capsys.readouterr()


PROMPTFOO_JSONL = DATA.parent / "promptfoo" / "workflows" / "jsonl" / "results.jsonl"


@pytest.fixture
def cut_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """promptfoo's JSON Lines output, its ceilings set from the whole run (init records
    the case set's size), then the file cut to its first 3 rows: nothing in the format says
    a run stopped (each row is complete)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    shutil.copy(PROMPTFOO_JSONL, tmp_path / "evals")
    assert main(["init", "evals"]) == 0
    results = tmp_path / "evals" / "results.jsonl"
    results.write_text("".join(results.read_text().splitlines(True)[:3]))
    return tmp_path


def test_init_records_the_size_of_the_case_set(cut_short: Path) -> None:
    assert '  results: {cases: "16"}' in Path("ceilings.yaml").read_text()


def test_a_run_missing_cases_of_the_ceilings_case_set_is_inconclusive(
        cut_short: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = Path("ceilings.yaml").read_bytes()
    assert main(["check", "evals", "--json", "gate.json"]) == 3
    [report] = json.loads(Path("gate.json").read_text())["reports"]
    assert report["inconclusive"] == (
        "it holds 3 of the 16 cases the ceilings were set from (13 missing): a run that "
        "stopped part way, or a smaller case set (init it anew for one)")
    assert main(["ratchet", "evals"]) == 3
    assert Path("ceilings.yaml").read_bytes() == before
    capsys.readouterr()


def test_pytest_is_inconclusive_on_a_run_missing_cases(
        pytester: pytest.Pytester, cut_short: Path) -> None:
    pytester.makeini("[pytest]\n")
    shutil.copytree(cut_short / "evals", pytester.path / "evals")
    shutil.copy(cut_short / "ceilings.yaml", pytester.path / "ceilings.yaml")
    before = (pytester.path / "ceilings.yaml").read_bytes()
    result = pytester.runpytest("--failgate=evals", "--failgate-ratchet")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*inconclusive, the run did not finish*",
                                 "*it holds 3 of the 16 cases the ceilings were set from*"])
    assert (pytester.path / "ceilings.yaml").read_bytes() == before


@pytest.mark.heavy
def test_the_ci_step_and_mcp_are_inconclusive_on_a_run_missing_cases(cut_short: Path) -> None:
    import subprocess
    import sys

    step = subprocess.run([sys.executable, "-I", "-m", "pytest_failgate.ci", "evals",
                           "--out-dir", "ci"], cwd=cut_short, capture_output=True, text=True,
                          check=False)
    assert step.returncode == 3, step.stdout + step.stderr
    before = (cut_short / "ceilings.yaml").read_bytes()
    _, results = mcp_calls(cut_short, [("check", {"paths": ["evals"]}),
                                       ("ratchet", {"paths": ["evals"]})])
    assert results[0].structured_content["verdict"] == "inconclusive"
    assert (cut_short / "ceilings.yaml").read_bytes() == before
