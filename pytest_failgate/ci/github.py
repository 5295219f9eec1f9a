"""What a GitHub Actions runner reads: inputs, the job summary, annotations, step outputs.

The Action's inputs arrive as ``INPUT_*`` environment variables (``action.yml`` maps
them, so no input is ever pasted into a shell script). The runner's files are named by
``GITHUB_STEP_SUMMARY`` and ``GITHUB_OUTPUT``; the event that started the job is the
JSON file at ``GITHUB_EVENT_PATH``.
"""

from __future__ import annotations

import json
import shlex
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.base.errors import FailgateError
from ..output.github import annotation, append_step_summary, error_annotations
from .run import Run, Settings, guard_ref

if TYPE_CHECKING:
    from collections.abc import Mapping

SUMMARY_LIMIT = 1024 * 1024  # bytes GitHub keeps of one step's summary
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


def input_value(env: Mapping[str, str], name: str) -> str:
    return env.get(f"INPUT_{name.upper().replace('-', '_')}", "").strip()


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = input_value(env, name).lower()
    if value in ("", "false", "no", "0"):
        return False
    if value in ("true", "yes", "1"):
        return True
    raise FailgateError(f"input {name}: expected true or false, got '{value}'")


def event(env: Mapping[str, str]) -> dict[str, Any]:
    """The event payload (empty when the runner gave none)."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return {}
    try:
        loaded = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def pull_request_number(env: Mapping[str, str], payload: Mapping[str, Any]) -> int | None:
    """The pull request this job runs for (a pull_request event, or a comment on one)."""
    pull = payload.get("pull_request")
    if isinstance(pull, dict) and isinstance(pull.get("number"), int):
        return int(pull["number"])
    issue = payload.get("issue")
    if isinstance(issue, dict) and issue.get("pull_request") and isinstance(
            issue.get("number"), int):
        return int(issue["number"])
    return None


def guard_base(env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """``(ref, why none)``: the input, or with ``auto`` the pull request's base branch."""
    value = input_value(env, "guard-base") or "auto"
    if guard_ref(value) is None:
        return None, "turned off (guard-base: none)"
    if value.lower() != "auto":
        return value, None
    base = env.get("GITHUB_BASE_REF", "")
    if env.get("GITHUB_EVENT_NAME") in PULL_REQUEST_EVENTS and base:
        return f"origin/{base}", None
    return None, (f"not a pull request ({env.get('GITHUB_EVENT_NAME') or 'no event'}); "
                  "give guard-base to compare with a ref")


def settings(env: Mapping[str, str]) -> tuple[Settings, str | None]:
    """The Action's inputs as ``Settings``, and why the guard will not run (if so)."""
    reports = _words(env, "reports")
    if not reports:
        raise FailgateError("input reports: give the report files or folders to gate")
    ref, why_not = guard_base(env)
    out = input_value(env, "report-dir") or str(
        Path(env.get("RUNNER_TEMP") or ".") / "failgate-report")
    return Settings(tuple(reports), input_value(env, "ceilings") or None, ref,
                    input_value(env, "noise") or None, _flag(env, "strict"),
                    tuple(_words(env, "args")), Path(out),
                    labels=input_value(env, "labels") or None), why_not


def _words(env: Mapping[str, str], name: str) -> list[str]:
    """An input holding several paths or arguments: split as a shell would (quotes for
    spaces), across lines."""
    try:
        return shlex.split(input_value(env, name))
    except ValueError as exc:
        raise FailgateError(f"input {name}: {exc}") from None


def annotation_lines(run: Run, workspace: Path | None) -> list[str]:
    """``::error`` lines on the ceilings file's lines: failing checks and loosenings."""
    lines: list[str] = []
    if run.result is not None:
        shown = _from_workspace(run.result.ceilings_path, workspace)
        lines += error_annotations(run.result.model_copy(update={"ceilings_path": shown}))
    else:
        lines += [annotation(note, title="failgate") for note in run.notes]
    guarded = run.guard_result
    if guarded is not None:
        lines += [annotation(f"loosened since {guarded.ref} without a reason: {loose.text}",
                             file=_from_workspace(loose.file, workspace), line=loose.line,
                             title="failgate guard") for loose in guarded.loosened]
        if guarded.error is not None:
            lines.append(annotation(guarded.error, title="failgate guard"))
    return lines


def _from_workspace(path: str, workspace: Path | None) -> str:
    """A path as annotations want it: relative to the repository's root."""
    if workspace is not None:
        try:
            return Path(path).absolute().relative_to(workspace.absolute()).as_posix()
        except ValueError:
            pass
    return path


def truncate(markdown: str, limit: int, note: str = "the rest is in failgate.md") -> str:
    """At most ``limit`` UTF-8 bytes, cut at a line, saying it was cut."""
    if len(markdown.encode("utf-8")) <= limit:
        return markdown
    tail = f"\n\n… (cut to fit: {note})\n"
    room = limit - len(tail.encode("utf-8"))
    kept = markdown.encode("utf-8")[:room].decode("utf-8", "ignore")
    return kept.rpartition("\n")[0] + tail


def set_outputs(env: Mapping[str, str], values: Mapping[str, str]) -> bool:
    """Step outputs, each as a block with a delimiter no value contains."""
    target = env.get("GITHUB_OUTPUT")
    if not target:
        return False
    with open(target, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            delimiter = f"failgate_{uuid.uuid4().hex}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return True


def outputs(run: Run, comment_url: str | None) -> dict[str, str]:
    out = run.settings.out_dir
    return {
        "verdict": run.outcome.verdict,
        "exit-code": str(run.outcome.code),
        "gate-verdict": run.result.headline.gate if run.result is not None else "error",
        "guard-verdict": run.guard_result.verdict if run.guard_result is not None else "",
        "failed": json.dumps(run.failed),
        "failed-count": str(len(run.failed)),
        "markdown": str((out / "failgate.md").absolute()),
        "json": str((out / "gate.json").absolute()) if run.result is not None else "",
        "comment-url": comment_url or "",
    }


def workspace(env: Mapping[str, str]) -> Path | None:
    value = env.get("GITHUB_WORKSPACE")
    return Path(value) if value else None


__all__ = ["annotation", "annotation_lines", "append_step_summary", "input_value"]
