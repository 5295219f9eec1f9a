"""Advice names the command of the front end in use, with the paths and the ceilings file it
was given, so pasting it does what it says (and to the file the run gated)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from helpers import EXAMPLES
from helpers import run_cli as run

from pytest_failgate import mcpserver

ROOT = EXAMPLES.parent
SLACK = ("  unknown: 35", "  unknown: 40")


def _project(root: Path) -> Path:
    """Reports, an untouched ceilings.yaml, and c2.yaml with slack on `unknown`."""
    shutil.copytree(EXAMPLES / "reports", root / "reports")
    text = (ROOT / "ceilings.yaml").read_text()
    (root / "ceilings.yaml").write_text(text)
    (root / "c2.yaml").write_text(text.replace(*SLACK))
    return root


def _pasted(text: str) -> list[str]:
    """The command a message suggests, between backticks after "run"."""
    found = re.search(r"run `([^`]+)`", text)
    assert found is not None, text
    return shlex.split(found.group(1))


def test_the_cli_advises_its_own_ratchet_with_the_ceilings_file_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    code, out, _ = run(capsys, "check", "reports", "--ceilings", "c2.yaml", "--strict")
    assert code == 1
    assert "  fix      run `failgate ratchet reports --ceilings c2.yaml` and commit c2.yaml" in out
    assert "--failgate" not in out
    command = _pasted(out)
    assert command[:2] == ["failgate", "ratchet"]
    assert run(capsys, *command[1:])[0] == 0
    assert "  unknown: 35" in (root / "c2.yaml").read_text()
    assert (root / "ceilings.yaml").read_text() == (ROOT / "ceilings.yaml").read_text()
    (root / "new.yaml").unlink(missing_ok=True)
    code, _, err = run(capsys, "check", "reports", "--ceilings", "new.yaml")
    assert err == ("failgate: error: new.yaml: not found; create it from the current counts "
                   "with `failgate init reports --ceilings new.yaml`\n")


def test_advice_from_a_subfolder_of_the_project_names_the_paths_as_typed_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run from the project's tests/ folder, the paths given (``../reports``) come back
    relative as typed, not as the machine's absolute paths, and pasting them there works."""
    root = _project(tmp_path)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "tests").mkdir()
    monkeypatch.chdir(root / "tests")
    code, out, _ = run(capsys, "check", "../reports", "--ceilings", "../c2.yaml", "--strict")
    assert code == 1
    assert "run `failgate ratchet ../reports --ceilings ../c2.yaml`" in out
    assert str(tmp_path) not in _pasted(out)[2] + _pasted(out)[4]
    assert run(capsys, *_pasted(out)[1:])[0] == 0
    assert "  unknown: 35" in (root / "c2.yaml").read_text()


@pytest.mark.slow
def test_pytest_advises_its_flags_with_the_ceilings_file_given(
    pytester: pytest.Pytester
) -> None:
    root = _project(pytester.path)
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest("--failgate=reports", "--failgate-ceilings=c2.yaml",
                                "--failgate-strict")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["  fix      run `pytest --failgate=reports "
                                 "--failgate-ceilings=c2.yaml --failgate-ratchet` and commit "
                                 "c2.yaml"])
    command = _pasted(result.stdout.str())
    assert pytester.runpytest(*command[1:]).ret == 0
    assert "  unknown: 35" in (root / "c2.yaml").read_text()
    assert (root / "ceilings.yaml").read_text() == (ROOT / "ceilings.yaml").read_text()


def test_mcp_advises_its_ratchet_tool_with_the_arguments_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    document = mcpserver.check(paths=["reports"], ceilings="c2.yaml")
    advice = document["ratchet_advice"]
    assert advice == 'the `ratchet` tool with `{"paths": ["reports"], "ceilings": "c2.yaml"}`'
    found = re.search(r"the `(\w+)` tool with `(.+)`", advice)
    assert found is not None
    done = getattr(mcpserver, found.group(1))(**json.loads(found.group(2)))
    assert done["lines"][0] == "ratchet: lowered 1 ceiling in c2.yaml:"
    assert "  unknown: 35" in (root / "c2.yaml").read_text()
    assert (root / "ceilings.yaml").read_text() == (ROOT / "ceilings.yaml").read_text()
