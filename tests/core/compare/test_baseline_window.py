"""A baseline is evidence too: when it was measured is read, and a pairing outside the window
is inconclusive, never a regression (issue: yesterday's main as the baseline failed a quarter
of unchanged pull requests, and nothing in the output spoke of the day).

Each front end is driven as a user drives it: the CLI, pytest, the CI step
(``python -I -m pytest_failgate.ci``) and the MCP server's ``check`` tool.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers import run_cli

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.base.result import GateResult
from pytest_failgate.core.compare.window import RunTime, gap, parse_window

T0 = datetime(2026, 11, 10, 9, 0, tzinfo=timezone.utc)
OTHERS = ["hallucination"] * 4 + ["over_answer"] * 3


def write_run(folder: Path, missed: int, ran: datetime | None, judge: str = "gpt-4o") -> Path:
    """A regression-gate run folder of 80 cases, the first ``missed`` retrieval misses; its
    header's ``timestamp`` is ``ran`` (None: no timestamp)."""
    folder.mkdir(parents=True)
    outcomes = ["retrieval_miss"] * missed + ["correct"] * (60 - missed) + OTHERS
    outcomes += ["correct"] * (80 - len(outcomes))
    lines = [json.dumps({"id": f"q{i:03d}", "primary_failure": mode})
             for i, mode in enumerate(outcomes)]
    (folder / "attribution.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    header = {"type": "header", "judge_model": judge, "n_cases": len(outcomes),
              "config": {"top_k": 5}}
    if ran is not None:
        header["timestamp"] = ran.isoformat()
    (folder / "run.jsonl").write_text(json.dumps(header) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A baseline of 10 retrieval misses on T0, and a regressed run (30) a day and a half
    later, one the same day, and one without a time; no ceilings file (the comparison
    alone decides)."""
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path / "base", 10, T0)
    write_run(tmp_path / "late", 30, T0 + timedelta(hours=30))
    write_run(tmp_path / "today", 30, T0 + timedelta(hours=2))
    return tmp_path


def check(capsys: pytest.CaptureFixture[str], run: str, *more: str
          ) -> tuple[int, str, GateResult]:
    code, out, err = run_cli(capsys, "check", run, "--baseline", "base", "--ceilings",
                             "none.yaml", "--json", "gate.json", *more)
    return code, out + err, GateResult.model_validate_json(Path("gate.json").read_text())


TIMES = ("the baseline 2026-11-10T09:00:00Z (run.jsonl timestamp), this run "
         "2026-11-11T15:00:00Z (run.jsonl timestamp)")


def test_a_baseline_from_another_day_is_inconclusive_naming_both_times(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, result = check(capsys, "late")
    assert code == 3, out  # inconclusive: not a regression, not a pass
    [report] = result.reports
    assert report.inconclusive == ("the baseline was measured 30.0 hours apart from this run, "
                                   "outside the window of 12 hours of each other: " + TIMES)
    assert "inconclusive, the baseline was measured outside the window" in out
    assert result.verdict == "inconclusive"
    assert not result.regressions
    times = result.times
    assert times is not None
    assert (times.run.ran, times.run.time_from) == ("2026-11-11T15:00:00Z",
                                                    "run.jsonl timestamp")
    assert times.baseline is not None
    assert times.baseline.ran == "2026-11-10T09:00:00Z"
    assert times.window == "12 hours of each other"
    assert times.accepted is None
    assert len(times.gaps) == 1


def test_the_same_regression_on_the_same_day_fails(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, result = check(capsys, "today")
    assert code == 1, out
    assert result.reports[0].inconclusive is None
    assert result.times is not None
    assert result.times.gaps == []
    assert "retrieval_miss" in " ".join(result.regressions)


def test_an_accepted_gap_is_judged_and_the_summary_says_it_was_accepted(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, result = check(capsys, "late", "--accept-baseline-gap", "main's nightly run")
    assert code == 1, out  # judged: the regression fails
    assert result.reports[0].inconclusive is None
    assert result.times is not None
    assert result.times.accepted == "main's nightly run"
    [note] = [w for w in result.warnings if "accepted" in w]
    assert note == ("baseline: attribution: the baseline was measured 30.0 hours apart from "
                    "this run, outside the window of 12 hours of each other: " + TIMES
                    + "; accepted (accept-baseline-gap: main's nightly run): the day-to-day "
                    "drift is in this comparison")


@pytest.mark.parametrize(("window", "code"), [("48", 1), ("36h", 1), ("day", 3), ("24", 3)])
def test_the_window_is_a_setting(project: Path, capsys: pytest.CaptureFixture[str],
                                 window: str, code: int) -> None:
    assert check(capsys, "late", "--baseline-window", window)[0] == code


def test_the_same_calendar_day_is_a_window_of_its_own() -> None:
    day = parse_window("day")
    assert day.holds(T0, T0 + timedelta(hours=14))  # 09:00 and 23:00 UTC
    assert not day.holds(T0 + timedelta(hours=14), T0 + timedelta(hours=16))  # past midnight
    assert parse_window(None).hours == 12


@pytest.mark.parametrize("text", ["0", "-3", "a day", "1.5", "12 hours"])
def test_a_window_that_is_no_window_is_one_error_naming_the_setting(text: str) -> None:
    with pytest.raises(FailgateError, match=r"^baseline-window: .* is not a window; write a "
                                            "whole number of hours"):
        parse_window(text)


def test_a_bad_window_on_the_command_line_fails_the_run_with_exit_2(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "check", "late", "--baseline", "base", "--ceilings",
                             "none.yaml", "--baseline-window", "soon")
    assert code == 2
    assert "baseline-window: 'soon' is not a window" in out + err
    assert "Traceback" not in out + err


def test_a_run_with_no_time_at_all_is_named_as_such() -> None:
    found = gap("the baseline", RunTime(None, "no time recorded"),
                RunTime(T0, "eval.created"), parse_window(None))
    assert found is not None
    assert not found.measured
    assert found.text == ("the baseline records no time of measurement (the baseline no time "
                          "recorded; this run 2026-11-10T09:00:00Z (eval.created)): whether the "
                          "two were made within 12 hours of each other cannot be checked")


def test_a_baseline_without_a_recorded_time_is_marked_as_a_file_time(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(project / "untimed", 30, None)
    code, out, result = check(capsys, "untimed")
    assert result.times is not None
    assert result.times.run.time_from == "file mtime"
    # the files were written now, the baseline says T0: outside the window, and the message
    # marks the file's time as what it is
    assert code == 3, out
    assert "(file mtime: a copy or a checkout changes it)" in (result.reports[0].inconclusive
                                                               or "")


def test_pytest_makes_the_report_inconclusive(project: Path, pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    done = pytester.runpytest_subprocess(
        f"--failgate={project / 'late'}", f"--failgate-baseline={project / 'base'}",
        f"--failgate-ceilings={project / 'none.yaml'}", "-p", "no:cacheprovider")
    assert done.ret == pytest.ExitCode.TESTS_FAILED
    text = done.stdout.str()
    assert "none.yaml::attribution::inconclusive - attribution: inconclusive" in text
    assert "outside the window of 12 hours of each other: " + TIMES in " ".join(text.split())
    accepted = pytester.runpytest_subprocess(
        f"--failgate={project / 'late'}", f"--failgate-baseline={project / 'base'}",
        f"--failgate-ceilings={project / 'none.yaml'}", "-p", "no:cacheprovider",
        "--failgate-accept-baseline-gap=nightly main")
    assert accepted.ret == pytest.ExitCode.TESTS_FAILED
    assert "none.yaml::attribution::retrieval_miss - " in accepted.stdout.str()
    assert "::inconclusive" not in accepted.stdout.str()


def test_the_ci_step_says_inconclusive(project: Path) -> None:
    command = [sys.executable, "-I", "-m", "pytest_failgate.ci", "late", "--ceilings",
               "none.yaml", "--check-arg=--baseline=base", "--out-dir", "out"]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "failgate ci: inconclusive (exit 3)" in done.stdout
    document = json.loads((project / "out" / "gate.json").read_text(encoding="utf-8"))
    assert document["verdict"] == "inconclusive"
    assert document["times"]["baseline"]["ran"] == "2026-11-10T09:00:00Z"


@pytest.mark.slow
def test_the_mcp_check_tool_says_inconclusive_and_takes_the_acceptance(project: Path) -> None:
    from helpers import mcp_calls

    _, (late, accepted) = mcp_calls(project, [
        ("check", {"paths": ["late"], "baseline": ["base"], "ceilings": "none.yaml"}),
        ("check", {"paths": ["late"], "baseline": ["base"], "ceilings": "none.yaml",
                   "accept_baseline_gap": "nightly main"})])
    assert late.structured_content["verdict"] == "inconclusive"
    [report] = late.structured_content["reports"]
    assert report["inconclusive"].endswith(TIMES)
    assert accepted.structured_content["verdict"] == "fail"
    assert accepted.structured_content["times"]["accepted"] == "nightly main"


def test_a_paired_sequential_run_refuses_a_baseline_from_another_day(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``watch --baseline``: the baseline report's time (its file's, marked so) against the
    replayed report's; refused before any case is gated, unless the gap is accepted."""
    import os

    from helpers import cases_for, write_ceilings, write_jsonl

    monkeypatch.chdir(tmp_path)
    write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 60})
    cases = cases_for({"retrieval_miss": 5}, passed=95, seed=6)
    write_jsonl(tmp_path / "baseline.jsonl", cases)
    write_jsonl(tmp_path / "run.jsonl", cases)
    moment = (T0 + timedelta(hours=40)).timestamp()
    os.utime(tmp_path / "run.jsonl", (moment, moment))
    os.utime(tmp_path / "baseline.jsonl", (T0.timestamp(), T0.timestamp()))
    code, out, err = run_cli(capsys, "watch", "run.jsonl", "--replay", "--baseline",
                             "baseline.jsonl")
    assert code == 2, out + err
    assert ("baseline.jsonl: the baseline was measured 40.0 hours apart from this run, outside "
            "the window of 12 hours of each other: the baseline 2026-11-10T09:00:00Z (file "
            "mtime: a copy or a checkout changes it), this run 2026-11-12T01:00:00Z (file "
            "mtime: a copy or a checkout changes it)") in err
    code, out, err = run_cli(capsys, "watch", "run.jsonl", "--replay", "--baseline",
                             "baseline.jsonl", "--accept-baseline-gap", "same judge, pinned")
    assert code == 0, out + err
