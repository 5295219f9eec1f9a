"""The repository's ``action.yml`` run as a GitHub runner runs a composite action.

Each step's ``run`` goes to ``bash --noprofile --norc -eo pipefail`` (the runner's
``shell: bash``) in its ``working-directory``, with its ``env:`` evaluated and the
files and variables a runner provides: ``GITHUB_STEP_SUMMARY`` (one file for the job),
``GITHUB_OUTPUT`` (one per step, read back as the step's outputs, ``name=value`` lines
and ``name<<DELIMITER`` blocks), ``GITHUB_ENV``, ``GITHUB_EVENT_PATH`` and
``GITHUB_ACTION_PATH``. Expressions are only ``${{ inputs.X }}``,
``${{ steps.ID.outputs.X }}``, ``${{ github.action_path }}`` and the ``github`` context
(``github.token``, ``github.event.X``: missing is ""): anything else fails
the run, which keeps the YAML thin. After a step fails, only the steps with ``if: always()``
run, as on a runner.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class StepRun:
    id: str | None
    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, str]


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str]
    summary: str
    env: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(step.returncode != 0 for step in self.steps)

    def step(self, id_: str) -> StepRun:
        """The step with that id (a later one may still have run: ``if: always()``)."""
        return next(step for step in self.steps if step.id == id_)

    @property
    def stdout(self) -> str:
        return "".join(step.stdout for step in self.steps)

    @property
    def annotations(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith("::")]


def read_outputs(text: str) -> dict[str, str]:
    """A ``GITHUB_OUTPUT`` file as the runner reads it."""
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, _, delimiter = line.partition("<<")
            value: list[str] = []
            for body in lines:
                if body == delimiter:
                    break
                value.append(body)
            else:
                raise AssertionError(f"output {name}: no closing {delimiter}")
            outputs[name] = "\n".join(value)
        elif line:
            name, sep, value_text = line.partition("=")
            assert sep, f"not an output line: {line!r}"
            outputs[name] = value_text
    return outputs


def _evaluate(text: str, inputs: dict[str, str], steps: dict[str, dict[str, str]],
              github: dict[str, Any] | None = None) -> str:
    def one(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression == "github.action_path":
            return str(ROOT)
        if expression.startswith("github.") and github is not None:
            value: Any = github  # the github context: a missing property is ""
            for part in expression.split(".")[1:]:
                value = value.get(part, "") if isinstance(value, dict) else ""
            return "" if value is None or isinstance(value, dict) else str(value)
        found = re.fullmatch(r"inputs\.([\w-]+)", expression)
        if found:
            assert found.group(1) in inputs, f"unknown input {found.group(1)}"
            return inputs[found.group(1)]
        found = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
        if found:
            return steps.get(found.group(1), {}).get(found.group(2), "")
        raise AssertionError(f"an expression this runner does not evaluate: {expression}")

    return _EXPRESSION.sub(one, text)


def run_action(workspace: Path, inputs: dict[str, str], *, event_name: str = "pull_request",
               event: dict[str, Any] | None = None, extra_env: dict[str, str] | None = None,
               temp: Path, token: str = "") -> ActionRun:
    """Run every step of ``action.yml`` for a job checked out in ``workspace`` (``token``:
    the workflow's ``github.token``). A step with ``if: always()`` runs after a failed one,
    as on a runner; no other condition is evaluated."""
    declared = ACTION["inputs"]
    unknown = set(inputs) - set(declared)
    assert not unknown, f"inputs the action does not declare: {unknown}"
    given = {name: str(spec.get("default", "")) for name, spec in declared.items()}
    given.update(inputs)
    for name, spec in declared.items():
        assert not (spec.get("required") and not given[name]), f"input {name} is required"
    temp.mkdir(parents=True, exist_ok=True)
    event_path = temp / "event.json"
    event_path.write_text(json.dumps(event or {}), encoding="utf-8")
    summary = temp / "step_summary.md"
    summary.touch()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    env.update({
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        "GITHUB_ACTIONS": "true", "CI": "true",
        "GITHUB_WORKSPACE": str(workspace), "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": "octo-org/octo-repo", "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_ENV": str(temp / "env"), "RUNNER_TEMP": str(temp),
        "GITHUB_API_URL": "http://127.0.0.1:9",  # nothing listens: no call may go out unasked
    })
    env.update(extra_env or {})
    steps: dict[str, dict[str, str]] = {}
    done: list[StepRun] = []
    runs = ACTION["runs"]
    assert runs["using"] == "composite"
    github = {"token": token, "event": event or {}, "event_name": event_name}
    failed = False
    for index, step in enumerate(runs["steps"]):
        assert step.get("shell") == "bash", "every step runs in bash"
        assert set(step) <= {"name", "id", "shell", "working-directory", "env", "run",
                             "if"}, step
        assert step.get("if", "always()") == "always()", "the only condition: always()"
        if failed and "if" not in step:
            continue
        output_file = temp / f"output-{index}"
        output_file.touch()
        step_env = dict(env, GITHUB_OUTPUT=str(output_file))
        for name, value in (step.get("env") or {}).items():
            step_env[name] = _evaluate(str(value), given, steps, github)
        script = temp / f"step-{index}.sh"
        assert "${{" not in step["run"], "no expression inside a script: use env"
        script.write_text(step["run"], encoding="utf-8")
        cwd = workspace / _evaluate(step.get("working-directory", "."), given, steps)
        finished = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail",
                                   str(script)], cwd=cwd, env=step_env, capture_output=True,
                                  text=True, check=False, stdin=subprocess.DEVNULL)
        outputs = read_outputs(output_file.read_text(encoding="utf-8"))
        if step.get("id"):
            steps[step["id"]] = outputs
        done.append(StepRun(step.get("id"), finished.returncode, finished.stdout,
                            finished.stderr, outputs))
        failed = failed or finished.returncode != 0
    action_outputs = {name: _evaluate(spec["value"], given, steps)
                      for name, spec in ACTION["outputs"].items()}
    return ActionRun(done, action_outputs, summary.read_text(encoding="utf-8"), env)
