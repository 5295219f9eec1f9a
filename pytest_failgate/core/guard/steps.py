"""The gate's own step in CI: removed, skipped or allowed to fail by the change.

The recommended workflow runs on ``pull_request``, so a pull request can delete the step
that runs the gate, or keep it and add ``if: false`` or ``continue-on-error: true`` to it or
its job: the check goes green with every number in place. The guard compares the gate steps
of the CI files at the ref and now: GitHub workflows' steps (the failgate Action, the CI
step ``python -m pytest_failgate.ci``, ``failgate check`` or ``guard``, ``pytest
--failgate``, and ``pytest`` where the ini file turns the gate on) and GitLab jobs' script
lines of the same commands. A gate step that is gone (its step, its job or its file), or
whose condition changed (a step's or job's ``if:`` and ``continue-on-error``, with the
``matrix`` and ``env`` values they read; a GitLab job's ``allow_failure``, ``when``,
``rules``, ``only``, ``except``), whose shell discards its failure (``|| true``, a pipe,
``set +e``), that runs in another folder, or whose Action reports another commit status
(or none), or a workflow no longer run on
an event it ran on (or on it with other filters: ``paths``, ``branches``, ``types``), is a
loosening unless the ceilings file's top-level ``reason``, written in this change, says why;
so is a step added that sets a commit status or check run itself (it can meet the rule that
requires the gate's status).

The guard runs inside the workflow the pull request edits, so a change that removes the
guard's own step is never checked by it: that is why the gate must also be a required
status (docs/ci.md, "Make the gate required"); this comparison names what it can see (a
guard run from another workflow, or locally).
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..base.yamlsource import load_yaml
from .cifiles import _COMMAND, _split
from .enforced import Change

if TYPE_CHECKING:
    from .gitref import Tree

WORKFLOWS = ".github/workflows"
GITLAB = ".gitlab-ci.yml"
_ACTION = "pytest-failgate"
_STEP_CONDITIONS = ("if", "continue-on-error")
_GITLAB_CONDITIONS = ("allow_failure", "when", "rules", "only", "except")
_GATE_COMMANDS = ("check", "guard")
# what may run a program in its place: an interpreter, a runner, a wrapper
_LAUNCHERS = frozenset({"python", "python3", "uv", "uvx", "run", "poetry", "pdm", "hatch",
                        "rye", "pipx", "exec", "time", "env", "sudo", "coverage", "nox",
                        "tox", "xvfb-run", "then", "do", "else"})
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=\S*")
# the shell's stop-on-error switched off, or an exit trap that ends the script with 0
_ERREXIT_OFF = re.compile(r"\bset\s+\+\w*e\w*\b|\bset\s+\+o\s+errexit\b"
                          r"|\btrap\b[^\n]*\bexit(?:\s+0)?\b[^\n]*\bEXIT\b")
ACTION_KIND = "the failgate Action"
STATUS_KIND = "a step that sets a commit status or check run"
_STATUS_CALL = re.compile(r"/statuses/|/check-runs|createCommitStatus|checks\.create"
                          r"|checks\.update|gh\s+api\b[^\n]*\bstatuses\b")


@dataclass(frozen=True)
class Step:
    """One step that runs the gate, where it is and what decides whether it counts."""

    file: str
    job: str
    kind: str  # "the failgate Action", "failgate check", "pytest --failgate", ...
    index: int  # the how-many-th step of this kind in its job
    line: int | None
    conditions: tuple[tuple[str, str], ...]  # (where: key, value), "" values left out
    events: tuple[str, ...]  # the workflow's events (GitHub), else ()

    @property
    def shown(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where} job {self.job} ({self.kind})"


def gate_steps(tree: Tree, gate_on: bool) -> list[Step]:
    """Every step of the CI files in ``tree`` that runs the gate (``gate_on``: the ini
    file turns the gate on, so a plain ``pytest`` runs it)."""
    found: list[Step] = []
    files = [relative for relative in tree.under(WORKFLOWS)
             if relative.endswith((".yml", ".yaml"))]
    docs = []
    for relative in [*files, GITLAB]:
        text = tree.read(relative)
        if text is None:
            continue
        try:
            doc = load_yaml(tree.top / relative, text)
        except FailgateError:
            continue  # not YAML the guard reads: CI refuses it too
        if not isinstance(doc.data, dict):
            continue
        if relative == GITLAB:
            found += _gitlab_steps(relative, doc.data, doc.keys, gate_on)
        else:
            docs.append((relative, doc))
            found += _github_steps(relative, doc.data, doc.keys, gate_on)
    # a job that calls a reusable workflow of the repository holding a gate step runs the
    # gate: its ``if:`` skips it, whatever the called file is named
    gated = {step.file for step in found}
    for relative, doc in docs:
        found += _callers(relative, doc.data, doc.keys, gated)
    return found


def _callers(relative: str, data: dict[Any, Any], keys: dict[Any, Any], gated: set[str]
             ) -> list[Step]:
    """The jobs of a workflow that call a reusable workflow running the gate (one of
    ``gated``, or a file named ``gate...``/``failgate...`` elsewhere)."""
    jobs = data.get("jobs")
    events = _events(data.get("on", data.get(True)))
    found: list[Step] = []
    for job, spec in (jobs.items() if isinstance(jobs, dict) else ()):
        uses = spec.get("uses") if isinstance(spec, dict) else None
        if not isinstance(uses, str):
            continue
        called = uses.split("@", 1)[0]
        local = posixpath.normpath(called[2:]) if called.startswith("./") else None
        if local in gated or posixpath.basename(called).startswith(("failgate", "gate")):
            found.append(Step(relative, str(job), f"reusable workflow {uses}", 1,
                              _line(keys, ("jobs", job)),
                              _conditions(spec, _STEP_CONDITIONS, "job ", (spec, {
                                  **_env(data), **_env(spec)})), events))
    return found


def step_changes(old: list[Step], new: list[Step], reason: str | None) -> list[Change]:
    """Each gate step of ``old`` removed, or skipped or allowed to fail, in ``new``."""
    changes: list[Change] = []
    left = list(new)
    pairs: list[tuple[Step, Step | None]] = []
    for step in old:
        same = next((s for s in left if (s.file, s.job, s.kind, s.index) ==
                     (step.file, step.job, step.kind, step.index)), None)
        if same is not None:
            left.remove(same)
        pairs.append((step, same))
    for number, (step, same) in enumerate(pairs):
        if same is None:  # a workflow or job renamed: the same command elsewhere
            same = next((s for s in left if s.kind == step.kind), None)
            if same is not None:
                left.remove(same)
                pairs[number] = (step, same)
    for step in left:  # a status set by hand, new in this change
        if step.kind == STATUS_KIND and not any(o.kind == STATUS_KIND and o.file == step.file
                                                and o.job == step.job for o in old):
            changes.append(Change(f"status step {step.shown}", "none", "sets a commit "
                                  "status or check run itself: a branch rule that requires "
                                  "the gate's status can be met whatever the gate said",
                                  None, reason))
    for step, same in pairs:
        if step.kind == STATUS_KIND:
            continue  # not a gate step: removing it loosens nothing
        label = f"gate step {step.shown}"
        if same is None:
            changes.append(Change(label, "runs the gate", "removed: the gate no longer runs "
                                  "there", None, reason))
            continue
        was, now = dict(step.conditions), dict(same.conditions)
        for key in sorted({*was, *now}):
            if was.get(key) != now.get(key) and key in now:
                changes.append(Change(f"{label} {key}", was.get(key, "not set"), now[key],
                                      None, reason))
        gone = [event for event in step.events if event not in same.events]
        if gone:
            changes.append(Change(f"{label} on", " ".join(step.events),
                                  " ".join(same.events) or "none", None, reason))
    return changes


def _github_steps(relative: str, data: dict[Any, Any], keys: dict[Any, Any], gate_on: bool
                  ) -> list[Step]:
    events = _events(data.get("on", data.get(True)))
    workflow_env = _env(data)
    jobs = data.get("jobs")
    found: list[Step] = []
    if not isinstance(jobs, dict):
        return found
    for job, spec in jobs.items():
        if not isinstance(spec, dict):
            continue
        job_env = {**workflow_env, **_env(spec)}
        run = {**_run_defaults(data), **_run_defaults(spec)}  # ``defaults: run:``
        job_conditions = _conditions(spec, _STEP_CONDITIONS, "job ", (spec, job_env))
        counts: dict[str, int] = {}
        steps = spec.get("steps")
        for index, step in enumerate(steps if isinstance(steps, list) else []):
            if not isinstance(step, dict):
                continue
            kind = _step_kind(step, gate_on)
            if kind is None:
                continue
            counts[kind] = counts.get(kind, 0) + 1
            found.append(Step(relative, str(job), kind, counts[kind],
                              _line(keys, ("jobs", job, "steps", index)),
                              (*job_conditions, *_conditions(
                                  step, _STEP_CONDITIONS, "step ",
                                  (spec, {**job_env, **_env(step)})), *_status(step, kind),
                               *_kept(step.get("run"), step.get("shell", run.get("shell")),
                                      gate_on),
                               *_folder(step.get("working-directory",
                                                 run.get("working-directory")))),
                              events))
    return found


def _gitlab_steps(relative: str, data: dict[Any, Any], keys: dict[Any, Any], gate_on: bool
                  ) -> list[Step]:
    found: list[Step] = []
    for job, spec in data.items():
        if not isinstance(spec, dict) or "script" not in spec:
            continue
        script = spec["script"]
        lines = script if isinstance(script, list) else [script]
        counts: dict[str, int] = {}
        for line in lines:
            kind = _command_kind(str(line), gate_on) if isinstance(line, str) else None
            if kind is None:
                continue
            counts[kind] = counts.get(kind, 0) + 1
            found.append(Step(relative, str(job), kind, counts[kind],
                              _line(keys, (job,)),
                              (*_conditions(spec, _GITLAB_CONDITIONS, "job "),
                               *_kept("\n".join(str(x) for x in lines), None, gate_on)), ()))
    return found


def _step_kind(step: dict[Any, Any], gate_on: bool) -> str | None:
    uses = step.get("uses")
    if isinstance(uses, str) and uses.split("@", 1)[0].rstrip("/").rpartition("/")[2] == (
            _ACTION):
        return ACTION_KIND
    run = step.get("run")
    kind = _command_kind(run, gate_on) if isinstance(run, str) else None
    if kind is None and _sets_status(step):
        return STATUS_KIND
    return kind


def _kept(run: object, shell: object, gate_on: bool) -> tuple[tuple[str, str], ...]:
    """What lets a gate command's failure end its step green: its status read by ``||``,
    lost in a pipe (a pipe's status is its last command's) or a background ``&``, the
    shell's stop-on-error switched off (``set +e``, a custom ``shell:`` without ``-e``),
    a trap that exits 0. GitHub and GitLab run a script with ``-e``: a failing command
    ends it, so what follows on other lines cannot turn it green."""
    found: list[str] = []
    text = run.replace("\\\n", " ") if isinstance(run, str) else ""
    if isinstance(shell, str) and "{0}" in shell and not re.search(r"\s-\w*e", shell):
        found.append(f"shell {shell} (no -e)")
    found += [match.group(0) for match in _ERREXIT_OFF.finditer(text)]
    for line in text.splitlines():
        for match in _COMMAND.finditer(line + " "):
            if not _runs(line[:match.start(1)]):
                continue
            operator = _next_operator(line[match.end():])
            if operator in ("||", "|", "&"):
                found.append(f"{match.group(1)} ... {operator}")
    return (("step exit status", "; ".join(dict.fromkeys(found))),) if found else ()


def _run_defaults(spec: dict[Any, Any]) -> dict[Any, Any]:
    """A workflow's or job's ``defaults: run:`` (its steps' shell and folder)."""
    defaults = spec.get("defaults")
    run = defaults.get("run") if isinstance(defaults, dict) else None
    return run if isinstance(run, dict) else {}


def _folder(value: object) -> tuple[tuple[str, str], ...]:
    """The folder a gate step runs in: another one finds another ceilings file, pytest
    configuration and reports (``sub/ceilings.yaml``, written loose), none of which the
    guard, run from the top, compares."""
    return (("step working-directory", _text(value)),) if _text(value) else ()


def _next_operator(rest: str) -> str:
    """The first shell operator of ``rest`` outside quotes (``||``, ``|``, ``&&``, ``&``,
    ``;``), or ``""``."""
    quote = ""
    index = 0
    while index < len(rest):
        char = rest[index]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "|&;":
            double = rest[index:index + 2]
            return double if double in ("||", "&&") else char
        elif char == "#" and (index == 0 or rest[index - 1].isspace()):
            return ""
        index += 1
    return ""


def _status(step: dict[Any, Any], kind: str) -> tuple[tuple[str, str], ...]:
    """The commit status failgate's Action reports (its ``status`` input): emptied (none
    set) or renamed, a branch rule requiring the old name waits on nothing the gate says."""
    if kind != ACTION_KIND:
        return ()
    inputs = step.get("with")
    value = inputs.get("status") if isinstance(inputs, dict) else None
    shown = ("the Action's default" if value is None else _text(value)
             or "none: no commit status")
    return (("step with.status", shown),)


def _sets_status(step: dict[Any, Any]) -> bool:
    """A step that sets a commit status or check run itself (the REST API's ``statuses``
    or ``check-runs``, ``github-script``'s calls): it can report a required gate status as
    passed whatever the gate said."""
    texts = [step.get("run"), *(step["with"].values() if isinstance(step.get("with"), dict)
                                else ())]
    return any(isinstance(text, str) and _STATUS_CALL.search(text) is not None
               for text in texts)


def _command_kind(text: str, gate_on: bool) -> str | None:
    """Which gate command a shell text runs, if any (the first found)."""
    for line in text.replace("\\\n", " ").splitlines():
        for match in _COMMAND.finditer(line + " "):
            if not _runs(line[:match.start(1)]):
                continue  # a word of another command (``pip install pytest``, an echo)
            program = match.group(1)
            words = _split(line[match.end():])
            if program.startswith("pytest_failgate.ci"):
                return "the CI step python -m pytest_failgate.ci"
            if program.startswith(("failgate", "pytest_failgate")):
                command = next((w for w in words if not w.startswith("-")), "")
                if command in _GATE_COMMANDS:
                    return f"failgate {command}"
            elif any(w == "--failgate" or w.startswith("--failgate=") for w in words):
                return "pytest --failgate"
            elif gate_on:
                return "pytest (the ini file turns the gate on)"
    return None


def _runs(prefix: str) -> bool:
    """Whether a program found after ``prefix`` is run there: the first word of a command
    (after ``;``, ``&&``, ``|``, ``(``), after environment assignments, or run by a
    launcher (``python -m``, ``uv run``, ``poetry run``, a path to python)."""
    prefix = re.sub(r"[^\s;&|(`'\"]*/$", "", prefix)  # the program's own path
    words = re.split(r"[;&|(`]", prefix)[-1].split()
    if words[:1] == ["-"]:  # a YAML list item read as text
        words = words[1:]
    return all(word in _LAUNCHERS or word.startswith("-") or _ASSIGNMENT.fullmatch(word)
               or word.endswith(("/python", "/python3")) for word in words)


def _conditions(spec: dict[Any, Any], names: tuple[str, ...], prefix: str,
                scope: tuple[dict[Any, Any], dict[Any, Any]] | None = None
                ) -> tuple[tuple[str, str], ...]:
    """The conditions written on a step or job, each with the values of the ``matrix`` and
    ``env`` contexts it reads (``scope``: the job, and the environment at the step), so that
    ``continue-on-error: ${{ matrix.experimental }}`` kept as written while the matrix
    turns it on is a changed condition."""
    return tuple((prefix + name, _resolved(_text(spec[name]), scope)) for name in names
                 if name in spec and _text(spec[name]) != "")


def _env(spec: dict[Any, Any]) -> dict[Any, Any]:
    """The ``env:`` a workflow, job or step sets (none when it is not a mapping)."""
    env = spec.get("env")
    return env if isinstance(env, dict) else {}


# a context a GitHub expression reads that the workflow file itself sets
_CONTEXT = re.compile(r"\b(matrix|env)\.([A-Za-z_][\w-]*)")


def _resolved(text: str, scope: tuple[dict[Any, Any], dict[Any, Any]] | None) -> str:
    """``text`` with what its ``matrix.NAME`` (the name's values, and the matrix's
    ``include`` and ``exclude``, which can set or drop any) and ``env.NAME`` read, as
    written in the file (a matrix from an expression, as its text)."""
    if scope is None:
        return text
    job, env = scope
    found = []
    for kind, name in dict.fromkeys(_CONTEXT.findall(text)):
        if kind == "matrix":
            strategy = job.get("strategy")
            matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
            matrix = matrix if isinstance(matrix, dict) else {"": matrix}
            # the name's values, and the entries include and exclude add or take away
            shown = {key: matrix[key] for key in (name, "include", "exclude", "")
                     if key in matrix}
            found.append(f"matrix.{name} {json.dumps(shown, sort_keys=True, default=str)}")
        else:
            found.append(f"env.{name} {_text(env.get(name, 'not set'))}")
    return f"{text} ({'; '.join(dict.fromkeys(found))})" if found else text


def _text(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return ""
    return str(value).strip()


def _events(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    if isinstance(value, dict):  # an event with filters (paths, branches, types) is its filters
        return tuple(f"{k} {_text(v)}" if isinstance(v, dict) and v else str(k)
                     for k, v in value.items())
    return ()


def _line(keys: dict[Any, Any], loc: tuple[Any, ...]) -> int | None:
    lines = [span.line for key, span in keys.items() if key[:len(loc)] == loc]
    return min(lines) if lines else None
