"""The guard told of a run's reports learns their names and formats from their heads, not by
reading them (``gate.probed``), and asks git each of its questions once (``gitref.once``).

The names and formats are those a gate over the same paths gives (every fixture folder of
the tools failgate reads, and failgate's own shapes); no case of a report is decoded; and a
guard run over a repository with CI files asks each reading git command once.
"""

from __future__ import annotations

import collections
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLES, cases_for, commit, git, run_cli

from pytest_failgate.core.gate import probed
from pytest_failgate.core.gate.runner import load_run, run_reports
from pytest_failgate.core.guard import gitref
from pytest_failgate.core.reports import read
from pytest_failgate.core.reports.builtin import builtin_readers
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.spec import ReadSpec

DATA = Path(__file__).resolve().parents[2] / "data"
FOLDERS = sorted(p for p in DATA.iterdir() if p.is_dir())


def _gated(paths: tuple[Path, ...]) -> set[tuple[str, str | None, Path]]:
    spec = ReadSpec(readers=builtin_readers())
    try:
        gated, _ = load_run(paths, TaxonomyChoice(), spec)
    except Exception as exc:
        return {("error", type(exc).__name__, Path())}
    return set(run_reports(gated))


def _probed(paths: tuple[Path, ...]) -> set[tuple[str, str | None, Path]]:
    spec = ReadSpec(readers=builtin_readers())
    try:
        return set(probed.probe_run(paths, TaxonomyChoice(), spec))
    except Exception as exc:
        return {("error", type(exc).__name__, Path())}


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_the_names_and_formats_are_the_gates(folder: Path) -> None:
    """Each fixture folder's reports, probed, are named as the gate names them, in the
    formats the gate reads them in (a file the gate refuses, one of a format's files with no
    case, is named alike: its format is the reader's that claims it)."""
    gated, found = _gated((folder,)), _probed((folder,))
    assert {name for name, _, _ in found} == {name for name, _, _ in gated}
    assert {(name, form) for name, form, _ in found} >= {
        (name, form) for name, form, _ in gated if form is not None}


def test_own_shapes_are_named_without_reading_a_case(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cases = cases_for({"retrieval_miss": 3}, passed=40, seed=1)
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"case_results": cases}), encoding="utf-8")
    (folder / "lines.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases),
                                        encoding="utf-8")
    (folder / "list.json").write_text(json.dumps(cases), encoding="utf-8")
    (folder / "config.json").write_text(json.dumps({"model": "x"}), encoding="utf-8")
    (folder / "scalar.json").write_text('"text"', encoding="utf-8")
    want = _gated((folder,))
    assert {name for name, _, _ in want} == {"run", "lines", "list"}

    def no_reading(*args: Any) -> Any:
        raise AssertionError("a case was read")

    monkeypatch.setattr(read, "classify", no_reading)
    assert _probed((folder,)) == want
    with pytest.raises(Exception, match="not a report: a JSON string, not a report"):
        probed.probe_run((folder / "scalar.json",), TaxonomyChoice(),
                         ReadSpec(readers=builtin_readers()))


def test_a_guard_run_asks_git_each_question_once(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / "reports").mkdir()
    (repo / "reports" / "eval_summary.json").write_bytes(
        (EXAMPLES / "reports" / "eval_summary.json").read_bytes())
    (repo / ".github" / "workflows" / "ci.yml").write_text(
        "on: push\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: python -I -m pytest_failgate.ci\n", encoding="utf-8")
    (repo / "pytest.ini").write_text("[pytest]\nfailgate = reports\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    monkeypatch.chdir(repo)
    assert run_cli(capsys, "init", "reports")[0] == 0
    commit(repo, "main")
    asked: list[tuple[str, ...]] = []
    run = gitref._git

    def counting(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        asked.append((str(cwd), *args))
        return run(args, cwd)

    monkeypatch.setattr(gitref, "_git", counting)
    code, out, _ = run_cli(capsys, "guard", "--base", "main", "reports")
    assert code == 0, out
    assert asked, "the guard asked git"
    twice = [k for k, v in collections.Counter(asked).items() if v > 1]
    assert twice == []
    asked.clear()  # a second run asks again: the answers are one run's
    assert run_cli(capsys, "guard", "--base", "main", "reports")[0] == 0
    assert asked
