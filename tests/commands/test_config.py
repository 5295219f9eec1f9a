"""One configuration for every front end: the ini file as pytest reads it, in the CLI and MCP.

pytest itself is the oracle: for each layout of configuration files, the file, rootdir and
values ``core.base.inifile`` finds are those pytest's own ``Config`` has, and the ``Config`` the
``failgate`` command resolves equals the one the pytest plugin resolves.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import EXAMPLES
from helpers import run_cli as run

from pytest_failgate import mcpserver
from pytest_failgate.commands.config import load
from pytest_failgate.core.base.inifile import Kind, _pytest_major, locate
from pytest_failgate.plugin import resolved_config

ROOT = EXAMPLES.parent
PYTEST_9 = _pytest_major() >= 9

LAYOUTS: dict[str, tuple[dict[str, str], str]] = {
    "pytest.ini wins over pyproject.toml": ({
        "pytest.ini": "[pytest]\nfailgate_ceilings = gate/a.yaml\nfailgate = r1 'r 2'\n",
        "pyproject.toml": '[tool.pytest.ini_options]\nfailgate_ceilings = "b.yaml"\n'}, "."),
    "pyproject ini_options": ({
        "pyproject.toml": '[tool.pytest.ini_options]\nfailgate_ceilings = "b.yaml"\n'
                          'failgate = ["r1", "r 2"]\nfailgate_strict = true\n'}, "."),
    "setup.cfg, tox.ini without [pytest]": ({
        "tox.ini": "[tox]\nenvlist = py\n",
        "setup.cfg": "[tool:pytest]\nfailgate_ceilings = s.yaml\nfailgate_strict = yes\n"}, "."),
    "tox.ini found from a subfolder": ({
        "tox.ini": "[pytest]\nfailgate_ceilings = t.yaml\nfailgate_baseline = base\n",
        "sub/notes.txt": ""}, "sub"),
    "a pyproject without pytest settings roots the run": ({
        "pyproject.toml": "[project]\nname = 'x'\n", "sub/tox.ini": "[tox]\n"}, "sub"),
    "the nearer file wins": ({
        ".pytest.ini": "[pytest]\nfailgate_ceilings = far.yaml\n",
        "sub/pytest.ini": "[pytest]\nfailgate_ceilings = ../near.yaml\n"}, "sub"),
    "an empty pytest.ini configures": ({
        "pytest.ini": "", "sub/setup.cfg": "[metadata]\nname = x\n"}, "sub"),
    "setup.py roots the run": ({"setup.py": "", "sub/notes.txt": ""}, "sub"),
}
if PYTEST_9:
    LAYOUTS |= {
        "pytest.toml": ({"pytest.toml": '[pytest]\nfailgate_ceilings = "p.yaml"\n'
                                        'failgate = ["r1"]\nfailgate_strict = true\n',
                         "pytest.ini": "[pytest]\nfailgate_ceilings = no.yaml\n"}, "."),
        "[tool.pytest] native": ({"pyproject.toml": '[tool.pytest]\nfailgate_ceilings = '
                                                    '"n.yaml"\nfailgate_explain = true\n'}, "."),
    }


@pytest.mark.slow
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_cli_finds_and_reads_the_configuration_pytest_uses(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    files, start = LAYOUTS[layout]
    for name, text in files.items():
        (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / name).write_text(text, encoding="utf-8")
    where = (pytester.path / start).resolve()
    monkeypatch.chdir(where)
    config = pytester.parseconfig()
    found = locate(where)
    assert (found.path, found.rootdir) == (config.inipath, config.rootpath)
    keys: list[tuple[str, Kind]] = [("failgate_ceilings", "path"), ("failgate", "paths"),
                                    ("failgate_strict", "flag"), ("failgate_baseline", "paths")]
    for key, kind in keys:
        ours = found.get(key, kind)
        theirs = config.getini(key)
        assert ours == theirs or (ours is None and not theirs), key
    assert replace(load({}, where), advice=resolved_config(config).advice) == \
        resolved_config(config)


def test_a_malformed_ini_file_is_one_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "check", "reports")
    assert code == 2
    assert err.startswith("failgate: error: pyproject.toml: not valid TOML")
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\nfailgate_strict = 2\n")
    code, _, err = run(capsys, "check", "reports")
    assert (code, err) == (2, "failgate: error: pyproject.toml: failgate_strict: '2' is not "
                              "true or false\n")


def _move_ceilings(root: Path) -> Path:
    """A project after a reviewed move of its ceilings file: ``failgate_ceilings`` names it,
    and a change made retrieval miss three more cases."""
    shutil.copytree(EXAMPLES / "regression", root / "reports")
    (root / "gate").mkdir()
    shutil.copy(ROOT / "ceilings.yaml", root / "gate" / "ceilings.yaml")
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nfailgate_ceilings = "gate/ceilings.yaml"\n')
    return root


@pytest.fixture
def moved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return _move_ceilings(tmp_path)


def test_ini_failgate_ceilings_is_honoured_by_pytest_the_cli_and_mcp(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """The MCP tool is called in-process here (``test_mcp`` drives the served tools over
    stdio with the SDK's client)."""
    moved = _move_ceilings(pytester.path)
    plugin = pytester.runpytest("--failgate=reports")
    plugin.stdout.fnmatch_lines(["*ceilings gate/ceilings.yaml, taxonomy rag, 3 reports*",
                                 "FAILED gate/ceilings.yaml::eval_summary::retrieval_miss*"])
    assert plugin.ret == 1
    code, out, _ = run(capsys, "check", "reports")
    assert code == 1
    assert "FAILED gate/ceilings.yaml::eval_summary::retrieval_miss" in out
    (moved / "sub").mkdir()
    monkeypatch.chdir(moved / "sub")
    check = mcpserver.check(paths=["../reports"])
    assert check["verdict"] == "fail"
    assert check["ceilings_path"] == str(moved / "gate" / "ceilings.yaml")
    failing = [row["name"] for report in check["reports"] for row in report["rows"]
               if row["verdict"] == "fail"]
    assert failing == ["retrieval_miss", "total"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=ci@example.com", "-c", "user.name=ci", *args],
                   cwd=cwd, check=True, capture_output=True, text=True)


def test_the_guard_finds_the_ceilings_the_ini_names_now_and_at_the_ref(
    moved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The guard's recipe, ``failgate guard --base main``, after a reviewed move."""
    git(moved, "init", "-q", "-b", "main")
    git(moved, "add", "-A")
    git(moved, "commit", "-qm", "base")
    code, out, _ = run(capsys, "guard", "--base", "main")
    assert (code, out.splitlines()[0]) == (
        0, "guard: nothing in gate/ceilings.yaml is looser than at main")
    assert "the guard was not told the run's reports" in out  # the ini names none
    path = moved / "gate" / "ceilings.yaml"
    path.write_text(path.read_text().replace("  unknown: 35", "  unknown: 40"))
    code, out, _ = run(capsys, "guard", "--base", "main")
    assert code == 1
    assert "gate/ceilings.yaml:14 ceilings.unknown: 35 -> 40  (no reason written)" in out


def test_a_moved_ceilings_file_naming_the_same_taxonomy_file_is_not_a_loosening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    taxonomy = (ROOT / "pytest_failgate" / "core" / "taxonomy" / "builtin" / "rag.yaml")
    (tmp_path / "rules.yaml").write_text(taxonomy.read_text().replace("name: rag", "name: own"))
    (tmp_path / "ceilings.yaml").write_text("version: 1\ntaxonomy: rules.yaml\nceilings:\n"
                                            "  unknown: 3\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "gate").mkdir()
    (tmp_path / "gate" / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: ../rules.yaml\nceilings:\n  unknown: 3\n")
    (tmp_path / "ceilings.yaml").unlink()
    (tmp_path / "pytest.ini").write_text("[pytest]\nfailgate_ceilings = gate/ceilings.yaml\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "guard", "--base", "main")
    assert (code, out) == (0, "guard: nothing in gate/ceilings.yaml is looser than at main\n"
                              "  compared with ceilings.yaml at main\n")


def test_every_ini_setting_reaches_the_cli(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not only the ceilings file: the reports, strict mode and the outputs come from the
    ini file too, and the command line wins over it."""
    ceilings = workdir / "ceilings.yaml"
    ceilings.write_text(ceilings.read_text().replace("  unknown: 35", "  unknown: 40"))
    (workdir / "pytest.ini").write_text("[pytest]\nfailgate = examples/reports\n"
                                        "failgate_strict = true\nfailgate_md = gate.md\n")
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "the ceiling has slack (count 35), and strict mode wants gains committed" in out
    assert "run `failgate ratchet` and commit ceilings.yaml" in out
    assert (workdir / "gate.md").read_text().startswith("### failgate: ❌ 1 of 24 checks failed")
    code, _, _ = run(capsys, "check", "examples/regression", "--md", "other.md")
    assert (workdir / "other.md").read_text().startswith("### failgate: ❌ 3 of 24 checks")
    (workdir / "pytest.ini").write_text("[pytest]\n")
    code, _, err = run(capsys, "check")
    assert (code, err) == (2, "failgate: error: no report to gate: give the reports' paths, "
                              "or set the ini key failgate\n")
