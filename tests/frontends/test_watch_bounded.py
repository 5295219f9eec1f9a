"""``failgate watch`` bounded on bad input: a planned count no gate can hold, a FIFO as the
report or the plan, a report growing forever (blank lines, or one line that never ends),
levels that are 0 in arithmetic, a futility margin above the run, case ids carried into a
shell's script or read as an option. Each is one error (exit 2) or an inconclusive end,
never a hang or a traceback. What could hang or eat memory on a watch without these bounds
runs in a subprocess with a timeout and a memory limit."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import case, cases_for, category_case, write_ceilings, write_jsonl
from helpers import run_cli as run

WAIT = 120.0


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 4})
    write_jsonl(tmp_path / "run.jsonl", cases_for({"retrieval_miss": 1}, passed=20, seed=1))
    return tmp_path


def _limited() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def _watch(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``failgate watch`` in a subprocess, bounded in time and memory (2 GB)."""
    return subprocess.run([sys.executable, "-m", "pytest_failgate", "watch", *args],
                          cwd=project, capture_output=True, text=True, timeout=WAIT,
                          check=False, preexec_fn=_limited)


def _one_error(done: subprocess.CompletedProcess[str], said: str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.startswith("failgate: error: "), done.stderr[-2000:]
    assert said in done.stderr
    assert done.stderr.count("\n") == 1


def test_a_planned_count_no_gate_can_hold_is_one_error_not_a_memory_error(
        project: Path) -> None:
    done = _watch(project, "run.jsonl", "--replay", "--planned", "1000000000")
    _one_error(done, "1,000,000,000 planned cases are more than the 10,000,000 a sequential "
                     "gate holds")


@pytest.mark.parametrize("which", ["report", "plan"])
def test_a_fifo_as_the_report_or_the_plan_is_refused_not_waited_on(
        project: Path, capsys: pytest.CaptureFixture[str], which: str) -> None:
    assert run(capsys, "plan", "run.jsonl", "--seed", "3", "--out", "plan.json")[0] == 0
    os.mkfifo(project / "pipe")
    args = (["pipe", "--planned", "21"] if which == "report"
            else ["run.jsonl", "--plan", "pipe", "--replay"])
    _one_error(_watch(project, *args, "--idle-seconds", "600"),
               "pipe: expected a regular file, found a FIFO (named pipe)")


def test_a_plan_over_the_size_limit_is_refused_unread(project: Path) -> None:
    with (project / "plan.json").open("wb") as out:
        out.truncate(64 * 10_000_000 + 1)  # sparse: nothing is written
    _one_error(_watch(project, "run.jsonl", "--plan", "plan.json", "--replay"),
               "more than the limit of 640,000,000")


# a harness writing a report that grows forever: blank lines, or one line never ended
GROWER = """\
import sys
chunk = b"\\n" * (1 << 16) if sys.argv[1] == "blank" else b"x" * (1 << 16)
with open("results.jsonl", "wb") as out:
    out.write(open("first.jsonl", "rb").read())
    while True:
        out.write(chunk)
        out.flush()
"""


def test_a_report_growing_forever_with_blank_lines_ends_after_idle_seconds(
        project: Path) -> None:
    (project / "grower.py").write_text(GROWER)
    write_jsonl(project / "first.jsonl", [case("a")])
    done = _watch(project, "results.jsonl", "--planned", "10", "--idle-seconds", "2", "--",
                  sys.executable, "grower.py", "blank")
    assert done.returncode == 3, done.stderr[-2000:]
    assert "no new case in results.jsonl for 2 seconds (--idle-seconds)" in done.stdout


def test_a_line_that_never_ends_is_one_error_at_the_line_limit(project: Path) -> None:
    (project / "grower.py").write_text(GROWER)
    write_jsonl(project / "first.jsonl", [case("a")])
    done = _watch(project, "results.jsonl", "--planned", "10", "--", sys.executable,
                  "grower.py", "long")
    _one_error(done, "results.jsonl:2: the line is longer than 67,108,864 bytes without "
                     "ending")


@pytest.mark.parametrize(("args", "said"), [
    (["--delta", "1e-400"], "delta must be at least 1e-12, not 0"),
    (["--delta", "1e-13"], "delta must be at least 1e-12, not 1e-13"),
    (["--futility", "1e-400"], "beta must be at least 1e-12"),
    (["--futility", "0.05", "--margin", "22"],
     "the futility margin (22 cases) is larger than the run (21 planned cases)"),
])
def test_levels_that_are_zero_in_arithmetic_and_a_margin_above_the_run_are_refused(
        project: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str) -> None:
    code, _, err = run(capsys, "watch", "run.jsonl", "--replay", *args)
    assert (code, err.count("\n")) == (2, 1), err
    assert said in err


def test_a_margin_of_the_runs_size_is_still_a_futility_stop(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The control: the largest margin the run allows is accepted."""
    code, _, err = run(capsys, "watch", "run.jsonl", "--replay", "--futility", "0.05",
                         "--margin", "21")
    assert code == 0, err


# the batch harness: records each argument it was given, writes the batch's cases
BATCH = """\
import json, sys
cases = {case["id"]: case for case in json.load(open("cases.json"))}
with open("argv.log", "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
ids = [i for word in sys.argv[2:] for i in word.removeprefix("--ids=").split(",") if i in cases]
with open(sys.argv[1], "w") as out:
    out.writelines(json.dumps(cases[i]) + "\\n" for i in ids)
"""


def _batch_project(project: Path, capsys: pytest.CaptureFixture[str],
                   ids: list[str]) -> None:
    (project / "cases.json").write_text(json.dumps([case(i) for i in ids]))
    (project / "batch.py").write_text(BATCH)
    assert run(capsys, "plan", "cases.json", "--seed", "1")[0] == 0


@pytest.mark.parametrize("shell", [["sh", "-c"], ["/bin/bash", "-lc"], ["env", "sh", "-ec"]])
def test_ids_inside_a_shells_script_are_refused_before_any_batch(
        project: Path, capsys: pytest.CaptureFixture[str], shell: list[str]) -> None:
    _batch_project(project, capsys, ["a", "b$(touch owned)", "c"])
    code, _, err = run(capsys, "watch", "out.jsonl", "--plan", "plan.json", "--batch", "2",
                       "--", *shell, f'{sys.executable} batch.py out.jsonl "{{ids}}"')
    assert code == 2, err
    assert "is a shell's script, and {ids} would put case ids in it" in err
    assert not (project / "argv.log").exists()
    assert not (project / "owned").exists()


def test_ids_passed_to_a_shell_as_arguments_of_their_own_are_only_text(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The control: ``sh -c 'run "$@"' sh {ids}`` runs, and no id is run as code."""
    _batch_project(project, capsys, ["a", "b$(touch owned)", "c"])
    code, _, err = run(capsys, "watch", "out.jsonl", "--plan", "plan.json", "--batch", "3",
                         "--", "sh", "-c", f'{sys.executable} batch.py out.jsonl "$@"', "sh",
                         "{ids}")
    assert code == 0, err
    assert not (project / "owned").exists()
    logged = json.loads((project / "argv.log").read_text())
    assert sorted(logged[1].split(",")) == ["a", "b$(touch owned)", "c"]


def test_an_id_that_would_reach_the_harness_as_an_option_is_refused(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _batch_project(project, capsys, ["-rf", "b", "c"])
    code, _, err = run(capsys, "watch", "out.jsonl", "--plan", "plan.json", "--batch", "1",
                       "--", sys.executable, "batch.py", "out.jsonl", "{ids}")
    assert code == 2, err
    assert "would begin with '-' (the plan's id \"-rf\")" in err
    assert not (project / "argv.log").exists()  # refused before the first batch
    # the control: after a prefix, the same id is a value
    code, _, err = run(capsys, "watch", "out.jsonl", "--plan", "plan.json", "--batch", "1",
                       "--", sys.executable, "batch.py", "out.jsonl", "--ids={ids}")
    assert code == 0, err


def test_batch_auto_grows_batches_and_every_output_says_what_was_paid(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--batch auto: batches of 1/50 of the plan, each twice the last; the run settled in a
    batch paid for the whole batch, and the terminal, JSON, Markdown and HTML say so."""
    ids = [f"c{i}" for i in range(100)]
    (project / "cases.json").write_text(json.dumps(
        [case(i) if n % 2 else category_case("retrieval_miss", i) for n, i in enumerate(ids)]))
    (project / "batch.py").write_text(BATCH)
    assert run(capsys, "plan", "cases.json", "--seed", "1")[0] == 0
    code, out, err = run(capsys, "watch", "out.jsonl", "--plan", "plan.json", "--batch", "auto",
                         "--json", "gate.json", "--md", "gate.md", "--html", "gate.html", "--",
                         sys.executable, "batch.py", "out.jsonl", "{ids}")
    assert code == 1, err
    sizes = [len(json.loads(line)[1].split(",")) for line in
             (project / "argv.log").read_text().splitlines()]
    assert sizes == [2, 4, 8, 16, 32, 38][:len(sizes)]
    record = json.loads((project / "gate.json").read_text())["sequential"]
    assert record["paid"] == sum(sizes) > record["n"]
    said = f"settled after {record['n']} of 100 planned cases ({sum(sizes)} started and paid for)"
    assert said in out.splitlines()[-1]
    assert said in (project / "gate.md").read_text()
    assert said in (project / "gate.html").read_text()
