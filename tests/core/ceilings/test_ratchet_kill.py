"""A ratchet killed at any moment leaves the old file or the new one, never half of one.

A process loops the real ratchet write path (old -> new, then back to old with the
same atomic write) and is SIGKILLed after a random delay; after every kill the file
must be exactly the old or the new text and load as a valid ceilings file, and no
temporary file may have accumulated. The looping processes are forked by a helper
that imported failgate once, so 300 kills take seconds, not 300 interpreter starts.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import EXAMPLES

from pytest_failgate.core.ceilings.load import load_ceilings
from pytest_failgate.core.ceilings.rewrite import apply
from pytest_failgate.core.ceilings.writeback import outcomes_from_verdicts, ratchet
from pytest_failgate.core.gate.runner import GateConfig, run_gate
from pytest_failgate.core.taxonomy import builtin_taxonomies

KILLS = 300

# Single-threaded, so fork is safe: one looping child per line read, reaped after its kill.
FORKER = """\
import os, sys
from pathlib import Path
from pytest_failgate.core.ceilings import rewrite, writeback
from pytest_failgate.core.ceilings.rewrite import write_atomic
from pytest_failgate.core.base.result import GateResult
from pytest_failgate.core.base.errors import FailgateError

if sys.argv[3] == "named":  # as on systems without O_TMPFILE
    rewrite._open_unnamed = lambda directory: None
path, old = Path(sys.argv[1]), Path(sys.argv[1]).read_text()
result = GateResult.model_validate_json(Path(sys.argv[2]).read_text())
outcomes = writeback.outcomes_from_verdicts(result)
print("ready", flush=True)
for _ in sys.stdin:
    pid = os.fork()
    if pid == 0:
        try:
            while True:
                try:
                    writeback.ratchet(path, result, outcomes)
                except FailgateError:  # a kill left the new text: a ratchet refuses to lose it
                    pass
                write_atomic(path, old)
        finally:
            os._exit(1)
    print(pid, flush=True)
    os.waitpid(pid, 0)
    print("reaped", flush=True)
"""


def _slack(text: str) -> str:
    """Several ceilings above their counts, so each ratchet rewrites several numbers."""
    for old, new in (("    total: 7\n", "    total: 70\n"), ("  unknown: 35", "  unknown: 350"),
                     ("    verifier_false_negative: 6\n", "    verifier_false_negative: 60\n")):
        assert old in text
        text = text.replace(old, new)
    return text


@pytest.mark.slow
@pytest.mark.parametrize("temporary", ["unnamed", "named"])
def test_random_kills_during_ratchet_leave_the_old_or_the_new_file(
    tmp_path: Path, temporary: str
) -> None:
    shutil.copytree(EXAMPLES / "reports", tmp_path / "reports")
    path = tmp_path / "ceilings.yaml"
    old = _slack((EXAMPLES.parent / "ceilings.yaml").read_text())
    path.write_text(old)
    result = run_gate(GateConfig(paths=(tmp_path / "reports",), ceilings_path=path,
                                 mode="ratchet")).result()
    assert len(result.lowerings) >= 3
    new = apply(old, result.lowerings)
    (tmp_path / "result.json").write_text(result.model_dump_json())
    rng = random.Random(10)
    left_behind = 0
    seen = set()
    forker = subprocess.Popen([sys.executable, "-c", FORKER, str(path),
                               str(tmp_path / "result.json"), temporary], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert forker.stdin is not None
    assert forker.stdout is not None
    try:
        assert forker.stdout.readline() == "ready\n"
        for _ in range(KILLS):
            forker.stdin.write("go\n")
            forker.stdin.flush()
            pid = int(forker.stdout.readline())
            time.sleep(rng.uniform(0, 0.03))
            os.kill(pid, signal.SIGKILL)
            assert forker.stdout.readline() == "reaped\n"
            text = path.read_text()
            assert text in (old, new)
            seen.add(text)
            load_ceilings(path, builtin_taxonomies())
            temps = sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
            assert temps in ([], [".ceilings.yaml.failgate.tmp"])  # never more than the one
            left_behind += bool(temps)
            if temporary == "unnamed":  # the name exists only between link and rename
                assert left_behind <= KILLS // 50
    finally:
        forker.stdin.close()
        forker.wait(timeout=30)
        forker.stdout.close()
    assert seen == {old, new}  # kills landed on both sides of the rename
    path.write_text(old)  # the next ratchet removes a leftover, if any

    ratchet(path, result, outcomes_from_verdicts(result))
    assert path.read_text() == new
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ceilings.yaml", "reports",
                                                         "result.json"]
    print(f"{temporary}: {KILLS} kills, {left_behind} left the temporary file for the next "
          "write to remove")
