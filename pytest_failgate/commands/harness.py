"""The harness ``watch`` runs (``failgate watch FILE ... -- CMD``): started in a session
of its own and stopped as a whole.

A harness is rarely one process: ``sh -c "python run.py; echo done"``, ``make eval``,
``uv run``, ``npx`` and any harness with worker processes leave the work to children.
Stopping only the process ``watch`` started (the shell) leaves them running to the end,
paid for after the verdict was settled. So the command runs as the leader of a new
session (its own process group), and stopping it signals the group: SIGTERM, then
SIGKILL to whatever is left after the grace period (``STOP_GRACE_SECONDS``), which
also stops a harness that ignores SIGTERM.

``watch`` stops the group however it ends: settled, the run over, an error, Ctrl-C
(SIGINT), SIGTERM or SIGHUP to ``watch`` itself (each turned into an exit that stops the
group first, with the usual ``128 + signal`` code). SIGKILL cannot be caught; for it a
watchdog (a small process in a session of its own, holding the read end of a pipe only
``watch`` writes to) sees the pipe close when ``watch`` dies and stops the group the same
way. What remains out of reach: a harness process that leaves the group itself
(``setsid``, a daemon, a container started through a daemon such as Docker's) is no
longer the group's, and a watchdog killed together with ``watch`` (SIGKILL sent to both)
cannot act. On Windows the command gets a process group of its own and is terminated
alone (no group signal there).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from ..core.base.errors import FailgateError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import FrameType, TracebackType

STOP_GRACE_SECONDS = 5.0  # between SIGTERM and SIGKILL for a harness being stopped
POLL_SECONDS = 0.05  # how often a stop looks whether the group has gone
SIGNALS = ("SIGTERM", "SIGHUP")  # turned into an exit that stops the harness (SIGINT is
# Python's KeyboardInterrupt already)
GROUPS = os.name == "posix"  # process groups and killpg exist

# The watchdog: waits for its stdin to close; "done" first means watch stopped the group
# itself, anything else (watch died, even by SIGKILL) means stop it now. Its own session:
# a signal sent to watch's process group does not reach it.
WATCHDOG = """\
import os, signal, sys, time
pgid, grace = int(sys.argv[1]), float(sys.argv[2])
for name in ("SIGINT", "SIGHUP", "SIGTERM"):
    signal.signal(getattr(signal, name), signal.SIG_IGN)
said = sys.stdin.buffer.read()
if said == b"done":
    sys.exit(0)
def alive():
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
if alive():
    os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive():
        os.killpg(pgid, signal.SIGKILL)
"""


class Harness:
    """One run of the user's command, in its own session; a context manager that stops
    the whole group on the way out, however the way out is taken."""

    def __init__(self, command: Sequence[str], grace: float | None = None) -> None:
        if not command:
            raise FailgateError("no harness command to run (give it after --)")
        self.command = list(command)
        self.grace = STOP_GRACE_SECONDS if grace is None else grace
        self.process: subprocess.Popen[bytes] | None = None
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._previous: dict[int, Any] = {}
        self._stopping = False

    def __enter__(self) -> Harness:
        self._catch_signals()
        try:
            self.process = _start(self.command)
            if GROUPS:
                self._watchdog = _start_watchdog(self.process.pid, self.grace)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    def poll(self) -> int | None:
        """The leader's exit code, or None while it runs."""
        return None if self.process is None else self.process.poll()

    def wait(self) -> int:
        """Wait for the leader to exit (a batch runs to its end); its exit code."""
        assert self.process is not None
        return self.process.wait()

    def stop(self) -> None:
        """Stop the whole group (SIGTERM, then SIGKILL after the grace period), reap the
        leader, dismiss the watchdog and give the signals back."""
        if self._stopping:
            return
        self._stopping = True
        try:
            if self.process is not None:
                _stop_group(self.process, self.grace)
        finally:
            self._dismiss_watchdog()
            self._restore_signals()

    def _dismiss_watchdog(self) -> None:
        dog = self._watchdog
        if dog is None:
            return
        try:
            assert dog.stdin is not None
            dog.stdin.write(b"done")
            dog.stdin.close()
        except OSError:  # it died: nothing to dismiss
            pass
        try:
            dog.wait(timeout=self.grace + 5)
        except subprocess.TimeoutExpired:
            dog.kill()
            dog.wait()

    def _catch_signals(self) -> None:
        """SIGTERM and SIGHUP to ``watch`` become an exit (``128 + signal``) that stops the
        harness on its way out; only the main thread can set handlers (an embedding program
        running watch in a thread keeps its own)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for name in SIGNALS:
            number = getattr(signal, name, None)
            if number is not None:
                self._previous[number] = signal.signal(number, self._on_signal)

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        if self._stopping:
            return  # a second signal while the group is being stopped: finish stopping it
        raise SystemExit(128 + number)

    def _restore_signals(self) -> None:
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous.clear()


def _start(command: list[str]) -> subprocess.Popen[bytes]:
    try:
        if GROUPS:
            return subprocess.Popen(command, start_new_session=True)  # the user's harness
        return subprocess.Popen(  # pragma: no cover - Windows
            command, creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0))
    except OSError as exc:
        raise FailgateError(f"the harness command {json.dumps(command[0])} could not be run: "
                            f"{exc.strerror or exc}") from None


def _start_watchdog(pgid: int, grace: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", WATCHDOG, str(pgid), str(grace)],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is left (a zombie leader is reaped first)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _signal_group(pgid: int, number: int) -> None:
    with suppress(ProcessLookupError, PermissionError):  # the group has gone
        os.killpg(pgid, number)


def _stop_group(process: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM to the harness's group, SIGKILL to what is left after ``grace`` seconds."""
    if not GROUPS:  # pragma: no cover - Windows: the command alone
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        return
    pgid = process.pid
    process.poll()  # reap a leader that already exited: its zombie would count as alive
    if not group_alive(pgid):
        return
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while True:
        process.poll()
        if not group_alive(pgid):
            break
        if time.monotonic() >= deadline:
            _signal_group(pgid, signal.SIGKILL)
            break
        time.sleep(POLL_SECONDS)
    process.wait()
