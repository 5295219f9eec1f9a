"""failgate's early stopping inside a real Inspect AI task (offline: the mockllm model).

The task runs in a fresh interpreter with its own home folder, as a user's eval would, so
Inspect's own warnings and files stay out of this test session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from helpers import run_cli as run

pytestmark = pytest.mark.slow  # a real Inspect run: about 30 s each on a loaded machine


@pytest.fixture(autouse=True)
def _inspect_installed() -> None:
    """Skip where inspect-ai is not installed, as a test that ran: a module-level skip would
    also show in runs that deselect these tests (.ci/run's spark step fails on any skip)."""
    pytest.importorskip("inspect_ai")

if TYPE_CHECKING:
    from pathlib import Path

CEILINGS = """\
version: 1
taxonomy: inspect_ai
ceilings:
  incorrect: 8
  partial: 8
  no_answer: 8
  message_limit: 8
  token_limit: 8
  time_limit: 8
  context_limit: 8
  other_limit: 8
  unknown: 8
  error: 30
  unscored: 30
"""

TASK = """\
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate
from pytest_failgate.drivers.inspect_ai import FailgateEarlyStopping

right, samples = sys.argv[1] == "right", int(sys.argv[2])

def answer(*_):
    output = ModelOutput.from_content("mockllm/model", "2" if right else "I do not know.")
    # usage given: Inspect never needs tiktoken's downloaded encodings
    output.usage = ModelUsage(input_tokens=5, output_tokens=4, total_tokens=9)
    return output

dataset = MemoryDataset([Sample(id=f"s{i}", input="What is 1 + 1?", target="2")
                         for i in range(samples)])
dataset.shuffle(seed=7)  # the random order, fixed before the run
task = Task(dataset=dataset, solver=generate(), scorer=match(),
            early_stopping=FailgateEarlyStopping(ceilings="ceilings.yaml"))
log = eval(task, model=get_model("mockllm/model", custom_outputs=answer), log_dir="logs",
           display="none", max_samples=4)[0]
stopping = log.results.early_stopping
print(json.dumps({"status": log.status, "error": log.error and log.error.message,
                  "metadata": stopping.metadata,
                  "early_stops": [stop.reason for stop in stopping.early_stops],
                  "samples": len(log.samples),
                  "scored": sum(1 for sample in log.samples if sample.scores)}))
"""


def _run_task(folder: Path, right: bool, samples: int) -> dict[str, Any]:
    (folder / "ceilings.yaml").write_text(CEILINGS)
    (folder / "task.py").write_text(TASK)
    (folder / "home").mkdir()
    env = {**os.environ, "HOME": str(folder / "home"), "INSPECT_LOG_DIR": "logs"}
    done = subprocess.run([sys.executable, "task.py", "right" if right else "wrong",
                           str(samples)], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "success", result["error"]
    return result


def test_a_broken_solver_is_stopped_early_with_the_full_runs_verdict(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run_task(tmp_path, right=False, samples=80)
    assert result["metadata"]["verdict"] == "fail"
    assert result["metadata"]["cases"] < 40
    assert result["scored"] < 80
    assert len(result["early_stops"]) == 80 - result["samples"] > 0
    assert result["early_stops"][0].startswith("verdict fail: settled after ")
    # paid: every sample run was started, and at most the concurrency window (4) beside the
    # settling one; the log's metadata and the early stops' reason say so
    metadata = result["metadata"]
    assert metadata["paid"] == result["samples"]
    assert metadata["cases"] <= metadata["paid"] <= metadata["cases"] + 4 - 1
    assert f"({metadata['paid']} started and paid for)" in result["early_stops"][0]
    # failgate check on the log of the samples run agrees
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "check", "logs")[0] == 1


def test_a_right_solver_settles_as_a_pass(tmp_path: Path) -> None:
    result = _run_task(tmp_path, right=True, samples=20)
    assert result["metadata"]["verdict"] == "pass"
    assert result["scored"] == result["samples"]
    assert result["metadata"]["cases"] <= result["scored"]
    assert result["metadata"]["paid"] == result["samples"]
