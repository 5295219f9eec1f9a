"""The Action reports the gate as its own commit status, so a branch protection rule can
require it: a pull request that removes the step or its job leaves the status missing.

The status step runs the Action's steps as a runner does (``action_runner``) with a fake
``curl`` first on ``PATH`` that records the request (its arguments, the configuration it
reads from stdin, the body) instead of sending it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from action_runner import ROOT, ActionRun, run_action
from test_action import BASE_ENV, checkout, origin, regress_and_loosen

__all__ = ["origin"]  # the fixture, used by name

HEAD = "0123456789abcdef0123456789abcdef01234567"
EVENT = {"pull_request": {"number": 7, "base": {"ref": "main"}, "head": {"sha": HEAD}}}
TOKEN = "ghs_status0token"
FAKE_CURL = """#!/bin/bash
log="$FAKE_CURL_LOG"
printf '%s\\n' "$@" > "$log.args"
cat > "$log.config"
prev=""
for arg in "$@"; do
  [ "$prev" = --data-binary ] && cp "${arg#@}" "$log.body"
  prev="$arg"
done
exit "${FAKE_CURL_EXIT:-0}"
"""


def _gate(work: Path, tmp_path: Path, *, inputs: dict[str, str] | None = None,
          curl_exit: int = 0, token: str = TOKEN) -> tuple[ActionRun, Path]:
    fake = tmp_path / "fakebin"
    fake.mkdir(exist_ok=True)
    (fake / "curl").write_text(FAKE_CURL)
    (fake / "curl").chmod(0o755)
    log = tmp_path / "curl"
    env = {**BASE_ENV, "FAKE_CURL_LOG": str(log), "FAKE_CURL_EXIT": str(curl_exit),
           "GITHUB_SHA": "f" * 40,
           "PATH": os.pathsep.join([str(fake), str(Path(sys.executable).parent),
                                    os.environ.get("PATH", "")])}
    done = run_action(work, {"reports": "reports", **(inputs or {})}, event=EVENT,
                      extra_env=env, temp=tmp_path / "runner", token=token)
    return done, log


@pytest.mark.heavy
def test_a_failing_gate_sets_the_failgate_status_failure_on_the_head_commit(
        origin: Path, tmp_path: Path) -> None:
    work = checkout(origin, tmp_path, regress_and_loosen)
    done, log = _gate(work, tmp_path)
    assert done.step("gate").returncode == 1  # the gate failed, and the status step still ran
    assert done.step("status").returncode == 0, done.step("status").stderr
    args = log.with_suffix(".args").read_text().splitlines()
    assert args[-1] == f"http://127.0.0.1:9/repos/octo-org/octo-repo/statuses/{HEAD}"
    assert args[args.index("-X") + 1] == "POST"
    assert "Accept: application/vnd.github+json" in args
    assert "X-GitHub-Api-Version: 2022-11-28" in args
    assert TOKEN not in " ".join(args)  # never on a command line
    assert log.with_suffix(".config").read_text() == (
        f'header = "Authorization: Bearer {TOKEN}"\n')
    body = json.loads(log.with_suffix(".body").read_text())
    assert body == {"state": "failure", "context": "failgate",
                    "description": "failgate: fail (exit 1)"}


@pytest.mark.heavy
def test_a_passing_gate_sets_success_under_the_name_given(
        origin: Path, tmp_path: Path) -> None:
    work = checkout(origin, tmp_path)
    done, log = _gate(work, tmp_path, inputs={"status": "eval gate \"rag\"",
                                              "status-token": "ghs_other"})
    assert not done.failed, done.stdout
    body = json.loads(log.with_suffix(".body").read_text())
    assert body == {"state": "success", "context": "eval gate \"rag\"",
                    "description": "failgate: pass (exit 0)"}
    assert "ghs_other" in log.with_suffix(".config").read_text()


@pytest.mark.heavy
def test_a_status_that_cannot_be_set_warns_and_keeps_the_verdict(
        origin: Path, tmp_path: Path) -> None:
    work = checkout(origin, tmp_path)
    done, _ = _gate(work, tmp_path, curl_exit=22)
    assert not done.failed
    assert done.outputs["verdict"] == "pass"
    assert any(a.startswith("::warning title=failgate::the commit status failgate could not "
                            "be set") for a in done.annotations)


@pytest.mark.heavy
def test_no_status_is_set_when_turned_off_or_without_a_token(
        origin: Path, tmp_path: Path) -> None:
    work = checkout(origin, tmp_path)
    done, log = _gate(work, tmp_path, inputs={"status": ""})
    assert not done.failed
    assert not log.with_suffix(".args").exists()
    done, log = _gate(work, tmp_path, token="")
    assert not log.with_suffix(".args").exists()
    assert any("the commit status failgate is not set" in a for a in done.annotations)


def test_the_recommended_workflow_grants_the_status_its_permission() -> None:
    docs = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "permissions: {contents: read, pull-requests: write, statuses: write}" in docs
    assert "## Make the gate required" in docs


@pytest.mark.heavy
def test_a_gate_that_could_not_run_sets_error(origin: Path, tmp_path: Path) -> None:
    work = checkout(origin, tmp_path)
    done, log = _gate(work, tmp_path, inputs={"install": "sometimes"})
    assert done.steps[0].returncode == 2
    assert [step.id for step in done.steps] == ["install", "status"]  # the gate was skipped
    body = json.loads(log.with_suffix(".body").read_text())
    assert body["state"] == "error"
    assert body["description"] == "failgate: error (exit 2)"
