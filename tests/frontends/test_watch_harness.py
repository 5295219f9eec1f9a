"""``failgate watch FILE ... -- CMD``: the harness runs in a session of its own and is
stopped as a whole (SIGTERM, then SIGKILL), so no process of it outlives ``watch``: behind
``sh -c``, with worker processes, ignoring SIGTERM, and when ``watch`` itself is stopped
(SIGTERM, or SIGKILL through the watchdog). Each process of a harness writes its pid to
``pids``; a process is alive while ``/proc`` shows it and it is not a zombie."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import cases_for, write_ceilings
from helpers import run_cli as run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc to see which processes are alive")

# writes the cases one at a time (as a harness would), its pid first; with "workers", it
# first starts two worker processes that beat into beats.log until stopped; with "stubborn",
# every process ignores SIGTERM
HARNESS = """\
import json, os, signal, subprocess, sys, time
mode = sys.argv[3]
if "stubborn" in mode:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open("pids", "a") as pids:
    pids.write(f"{os.getpid()}\\n")
if "workers" in mode:
    for _ in range(2):
        subprocess.Popen([sys.executable, "worker.py", mode])
cases = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as out:
    for case in cases:
        out.write(json.dumps(case) + "\\n")
        out.flush()
        time.sleep(float(os.environ.get("PACE", "0.05")))
"""

WORKER = """\
import os, signal, sys, time
if "stubborn" in sys.argv[1]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open("pids", "a") as pids:
    pids.write(f"{os.getpid()}\\n")
while True:
    with open("beats.log", "a") as beats:
        beats.write(".")
    time.sleep(0.05)
"""

WAIT = 120.0  # seconds a loaded machine may take for what takes one here


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 4})
    (tmp_path / "harness.py").write_text(HARNESS)
    (tmp_path / "worker.py").write_text(WORKER)
    return tmp_path


def _cases(project: Path, failing: int, planned: int = 200) -> None:
    cases = cases_for({"retrieval_miss": failing}, passed=planned - failing, seed=5)
    (project / "cases.json").write_text(json.dumps(cases))


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _pids(project: Path) -> list[int]:
    path = project / "pids"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def _wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def _nothing_outlives(project: Path, processes: int) -> None:
    pids = _pids(project)
    assert len(pids) == processes, pids
    assert not [pid for pid in pids if _alive(pid)]
    for name in ("results.jsonl", "beats.log"):
        path = project / name
        if path.exists():
            size = path.stat().st_size
            time.sleep(0.5)  # stopped: nothing writes any more
            assert path.stat().st_size == size, name


@pytest.mark.parametrize(("mode", "processes", "wrapped"), [
    ("plain", 2, True),      # sh -c "python harness.py ...; echo done": the shell and python
    ("workers", 3, False),   # a harness that starts two worker processes
    ("workers", 3, True),    # the same behind sh -c
])
def test_no_harness_process_outlives_a_settled_watch(
        project: Path, capsys: pytest.CaptureFixture[str], mode: str, processes: int,
        wrapped: bool) -> None:
    _cases(project, failing=60)
    python = f"{sys.executable} harness.py cases.json results.jsonl {mode}"
    command = (["sh", "-c", f"echo $$ >> pids; {python}; echo done"] if wrapped
               else python.split())
    code, out, _ = run(capsys, "watch", "results.jsonl", "--planned", "200", "--", *command)
    assert code == 1, out
    assert "settled after" in out.splitlines()[-1]
    _nothing_outlives(project, processes + wrapped - (mode == "plain"))


def test_a_harness_that_ignores_sigterm_is_killed_after_the_grace_period(
        project: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pytest_failgate.commands.harness.STOP_GRACE_SECONDS", 1.0)
    _cases(project, failing=60)
    started = time.monotonic()
    code, out, _ = run(capsys, "watch", "results.jsonl", "--planned", "200", "--", "sh", "-c",
                       f"{sys.executable} harness.py cases.json results.jsonl stubborn-workers")
    assert code == 1, out
    assert time.monotonic() - started < WAIT
    _nothing_outlives(project, 3)


def test_a_harness_that_never_writes_is_stopped_after_idle_seconds(
        project: Path) -> None:
    """The harness writes nothing and never exits: watch ends, inconclusive, after
    --idle-seconds, and the harness is stopped (a subprocess: the old watch waited forever)."""
    (project / "quiet.py").write_text(
        "import os, time\nopen('pids', 'a').write(f'{os.getpid()}\\n')\ntime.sleep(10**6)\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest_failgate", "watch", "results.jsonl", "--planned", "10",
         "--idle-seconds", "1", "--", sys.executable, "quiet.py"],
        cwd=project, capture_output=True, text=True, timeout=WAIT, check=False)
    assert done.returncode == 3, done.stderr
    assert "no new case in results.jsonl for 1 seconds (--idle-seconds): the harness is stopped" \
        in done.stdout
    _wait_for(lambda: _pids(project), "the harness's pid")
    _nothing_outlives(project, 1)


def _watch_in_background(project: Path) -> subprocess.Popen[str]:
    """watch over a slow, clean harness behind sh -c that will not settle for a while."""
    _cases(project, failing=0, planned=2000)
    return subprocess.Popen(
        [sys.executable, "-m", "pytest_failgate", "watch", "results.jsonl", "--planned", "2000",
         "--", "sh", "-c",
         f"echo $$ >> pids; {sys.executable} harness.py cases.json results.jsonl workers"],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PACE": "0.2"})


@pytest.mark.slow
@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_watch_stopped_by_a_signal_stops_its_harness_first(project: Path,
                                                           sent: signal.Signals) -> None:
    watching = _watch_in_background(project)
    try:
        _wait_for(lambda: len(_pids(project)) == 4 and (project / "beats.log").exists(),
                  "the harness and its workers")
        watching.send_signal(sent)
        watching.wait(timeout=WAIT)
    finally:
        watching.kill()
        watching.communicate()
    assert watching.returncode != 0
    _nothing_outlives(project, 4)


@pytest.mark.slow
def test_watch_killed_by_sigkill_has_its_harness_stopped_by_the_watchdog(project: Path) -> None:
    watching = _watch_in_background(project)
    try:
        _wait_for(lambda: len(_pids(project)) == 4 and (project / "beats.log").exists(),
                  "the harness and its workers")
        watching.send_signal(signal.SIGKILL)
        watching.wait(timeout=WAIT)
    finally:
        watching.kill()
        watching.communicate()
    _wait_for(lambda: not [pid for pid in _pids(project) if _alive(pid)],
              "the watchdog to stop the harness")
    _nothing_outlives(project, 4)
