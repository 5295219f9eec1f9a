"""The CLI as a person expects: help per command, exit codes, colour, usage on a typo, and
hints that say where a path is looked for."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from helpers import EXAMPLES, run_cli

from pytest_failgate.cli import _parser, main
from pytest_failgate.core.reports.discover import discover
from pytest_failgate.output.colour import GREEN, RED, paint, use_colour

DOCS = EXAMPLES.parent / "docs"


def _help(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*args, "--help"])
    assert exited.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines anywhere


def test_each_commands_help_speaks_of_its_own_context_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    check = _help(capsys, "check")
    assert "in pytest" not in check
    assert "giving it turns failgate on" not in check
    assert "init writes" not in check
    assert "a baseline comparison uses its bands" in check
    show = _help(capsys, "show")
    assert "for init" not in show
    assert "written as the new ceilings file's taxonomy" not in show
    assert "instead of the ceilings file's" in show
    init = _help(capsys, "init")
    assert "each ceiling is written as observed + allowance" in init
    assert "written as the new ceilings file's taxonomy:" in init


def test_pytest_help_keeps_what_the_option_does_in_pytest(pytester: pytest.Pytester) -> None:
    text = " ".join(pytester.runpytest("--help").stdout.str().split())
    assert "(repeatable; giving it turns failgate on)" in text
    assert "--failgate-taxonomy=NAME|PATH" in text
    assert "failgate_taxonomy" in text


def test_the_top_level_help_lists_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for code, meaning in (("0", "the gate passed"), ("1", "it failed"),
                          ("2", "a usage or input error"), ("3", "inconclusive")):
        assert re.search(rf"^  {code}  {meaning}", out, re.M), out


def test_a_misspelled_flag_prints_the_commands_usage_and_the_nearest_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check", "reports", "--stirct"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: failgate check ")
    assert "failgate check: error: unrecognized arguments: --stirct (did you mean --strict?)" \
        in err


@pytest.mark.parametrize(("choice", "env", "tty", "expected"), [
    ("auto", {}, True, True),
    ("auto", {}, False, False),  # a pipe or a file
    ("auto", {"NO_COLOR": "1"}, True, False),
    ("auto", {"NO_COLOR": ""}, True, True),  # set but empty: no preference
    ("auto", {"FORCE_COLOR": "1"}, False, True),
    ("auto", {"TERM": "dumb"}, True, False),
    ("yes", {"NO_COLOR": "1"}, False, True),
    ("no", {"FORCE_COLOR": "1"}, True, False),
])
def test_colour_follows_the_flag_then_no_color_force_color_and_the_terminal(
    monkeypatch: pytest.MonkeyPatch, choice: str, env: dict[str, str], tty: bool,
    expected: bool,
) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return tty

    assert use_colour(choice, Stream()) is expected


def test_colour_paints_statuses_and_failures_and_keeps_the_text() -> None:
    row = "  retrieval_miss                   4  1              -3  FAIL"
    assert paint(row) == row.replace("FAIL", f"{RED}FAIL\x1b[0m")
    assert paint("  no_docs  1  1  0  ok") == f"  no_docs  1  1  0  {GREEN}ok\x1b[0m"
    assert paint("FAILED ceilings.yaml::a::b").startswith(RED)
    assert paint("eval_summary  26 cases, 7 failed") == "eval_summary  26 cases, 7 failed"
    assert paint("  cases    ok-1, FAILING-2") == "  cases    ok-1, FAILING-2"  # data stays


def test_the_cli_paints_with_color_yes_and_not_through_a_pipe(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    code, out, _ = run_cli(capsys, "check", "examples/reports", "--color=yes")
    assert code == 0
    assert f"{GREEN}ok\x1b[0m" in out
    code, out, _ = run_cli(capsys, "--color", "yes", "check", "examples/reports")
    assert f"{GREEN}ok\x1b[0m" in out
    code, out, _ = run_cli(capsys, "check", "examples/reports")  # captured: not a terminal
    assert "\x1b[" not in out
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in run_cli(capsys, "check", "examples/reports")[1]
    assert "\x1b[" not in run_cli(capsys, "check", "examples/reports", "--color=no")[1]


def test_every_command_is_in_the_options_page() -> None:
    page = (DOCS / "options.md").read_text(encoding="utf-8")
    commands = next(action for action in _parser()._actions
                    if action.dest == "command").choices
    assert commands is not None
    assert [name for name in commands if f"`failgate {name}" not in page] == []


@pytest.mark.parametrize("argv", [
    ["check", "reports/", "--md", "gate.md", "--strict", "--baseline", "b/", "--color", "no"],
    ["show", "r.json", "--top", "5"],
    ["diff", "base/", "candidate/"],
    ["guard", "--base", "origin/main"],
    ["watch", "results.jsonl", "--replay", "--delta", "0.01"],
    ["sql", "--dialect", "spark"],
])
def test_a_command_line_parses_alike_with_only_its_command_built(argv: list[str]) -> None:
    """A run builds the parser of the command it names alone: same values, same help."""
    every, alone = _parser().parse_args(argv), _parser(argv[0]).parse_args(argv)
    assert every.command_parser.format_help() == alone.command_parser.format_help()
    del every.command_parser, alone.command_parser
    assert vars(every) == vars(alone)
    assert vars(alone)["command"] == argv[0]


def test_a_first_word_that_is_no_command_is_refused_by_the_whole_parser(
    capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        _parser("chek").parse_args(["chek"])
    assert "invalid choice: 'chek' (choose from 'check', 'init'," in capsys.readouterr().err


def test_a_missing_report_path_says_paths_are_relative_to_the_working_directory(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    (workdir / "sub").mkdir()
    monkeypatch.chdir(workdir / "sub")
    code, _, err = run_cli(capsys, "check", "examples/reports", "--ceilings", "../ceilings.yaml")
    assert code == 2
    assert (f"examples/reports: no such file or directory (a report path given on the command "
            f"line is relative to the working directory, {workdir.name}/sub;") in err


def test_pytest_given_the_ceilings_file_without_reports_says_to_add_them(
    pytester: pytest.Pytester,
) -> None:
    shutil.copy(EXAMPLES.parent / "ceilings.yaml", pytester.path / "ceilings.yaml")
    result = pytester.runpytest("ceilings.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "ERROR: ceilings.yaml is failgate's ceilings file, and failgate is off: give the "
        "reports it gates with --failgate=REPORTS (pytest --failgate=reports/ ceilings.yaml)*"])


def test_licence_and_readme_files_beside_reports_are_not_listed_as_skipped(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    for name in ("LICENSE", "README.md", "NOTICE.txt", ".gitkeep", "run.jsonl", "notes.csv"):
        (folder / name).write_text("{}\n" if name.endswith(".jsonl") else "x\n")
    found, skipped = discover((folder,))
    assert [f.path.name for f in found] == ["run.jsonl"]
    assert [s.path.name for s in skipped] == ["notes.csv"]  # not a report by its name: said


@pytest.mark.parametrize(("reports", "code"), [("reports", 0), ("regression", 1)])
def test_a_reader_that_left_does_not_change_the_verdicts_exit_code(
        reports: str, code: int) -> None:
    """``failgate check ... | head -1``: the pipe's reader is gone before failgate writes
    (its read end closed here, so every write fails), and the exit code is still the
    gate's verdict (0 pass, 1 fail), not a failure made up by the broken pipe."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_failgate", "check", str(EXAMPLES / reports),
             "--ceilings", str(EXAMPLES.parent / "ceilings.yaml")],
            stdout=write, stderr=subprocess.PIPE, text=True, check=False)
    finally:
        os.close(write)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    assert "BrokenPipeError" not in done.stderr
