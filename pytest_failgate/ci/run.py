"""One CI step: ``failgate check`` and ``failgate guard``, one verdict, one report.

Exit codes go through one table (``OUTCOMES``): the gate's codes are the ``failgate``
command's, the guard's are 0 (nothing loosened without a reason), 1 (a loosening)
and 2 (it could not compare). The run's verdict is the worst of the two by the
table's order: an error (a check that could not be made) before a fail (a
regression or a loosening) before "inconclusive" (the run itself broke) before a
pass. A code the table does not know is an error, never a pass.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..cli import EXIT
from ..core.base.errors import FailgateError, display_path
from ..core.base.formatting import one_line
from ..core.base.inifile import DEFAULT_CEILINGS
from ..core.guard.gitref import git
from ..output.github import inert

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core.base.result import GateResult
    from ..core.base.verdict import RunVerdict
    from ..core.guard.loosening import GuardResult


@dataclass(frozen=True)
class Outcome:
    code: int  # the exit code this outcome gives the CI step
    verdict: RunVerdict
    mark: str  # its sign in Markdown
    rank: int  # higher wins when the gate and the guard disagree


# The run verdicts in the order they win, with their signs; the codes are the failgate
# command's own (cli.EXIT), so a code it adds or moves moves here too.
_ORDER: tuple[tuple[RunVerdict, str], ...] = (
    ("pass", "✅"), ("inconclusive", "❔"), ("fail", "❌"), ("error", "⚠️"))
OUTCOMES: dict[int, Outcome] = {EXIT[verdict]: Outcome(EXIT[verdict], verdict, mark, rank)
                                for rank, (verdict, mark) in enumerate(_ORDER)}
ERROR = OUTCOMES[EXIT["error"]]


def outcome(code: int) -> Outcome:
    """The outcome of an exit code; one the table does not know is an error."""
    return OUTCOMES.get(code, ERROR)


@dataclass(frozen=True)
class Settings:
    """What to gate, as a CI job says it (the Action's inputs, or the command line)."""

    reports: tuple[str, ...]
    ceilings: str | None = None  # None: the command's own default
    guard_base: str | None = None  # None: no guard
    noise: str | None = None
    strict: bool = False
    check_args: tuple[str, ...] = ()  # more `failgate check` options, as given
    out_dir: Path = Path("failgate-report")


@dataclass
class Step:
    """The gate or the guard: its outcome and the lines that explain it."""

    name: str
    outcome: Outcome
    notes: list[str] = field(default_factory=list)


@dataclass
class Run:
    settings: Settings
    gate: Step
    guard: Step | None
    guard_result: GuardResult | None
    result: GateResult | None
    markdown: str
    failed: list[str]

    @property
    def outcome(self) -> Outcome:
        steps = [self.gate] + ([self.guard] if self.guard else [])
        return max((step.outcome for step in steps), key=lambda o: o.rank)

    @property
    def ceilings_path(self) -> str:
        if self.result is not None:
            return self.result.ceilings_path
        return self.settings.ceilings or DEFAULT_CEILINGS


def run(settings: Settings, guard_note: str | None = None) -> Run:
    """Gate, then guard, then write ``failgate.md`` and ``verdict.json`` in ``out_dir``.

    ``guard_note``: why no guard ran, when ``guard_base`` is None (shown in the report).
    """
    out = settings.out_dir
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FailgateError(f"cannot create the report folder: {exc.strerror}", out) from None
    gate_md, gate_json = out / "gate.md", out / "gate.json"
    for stale in (gate_md, gate_json):
        stale.unlink(missing_ok=True)
    gate = _gate(settings, gate_md, gate_json)
    result = _load_result(gate_json)
    guard_step, guard_result = (None, None)
    if settings.guard_base is not None:
        guard_step, guard_result = _guard(settings)
    done = Run(settings, gate, guard_step, guard_result, result, "", [])
    done.failed = _failed(done)
    done.markdown = _markdown(done, gate_md.read_text(encoding="utf-8")
                              if gate_md.is_file() else None, guard_note)
    try:
        (out / "failgate.md").write_text(done.markdown, encoding="utf-8")
        (out / "verdict.json").write_text(json.dumps(verdict_document(done), indent=2) + "\n",
                                          encoding="utf-8")
    except OSError as exc:
        raise FailgateError(f"cannot write the report: {exc.strerror}", out) from None
    return done


def verdict_document(run: Run) -> dict[str, object]:
    """What the run decided, for machines: the Action's outputs and other CIs' scripts."""
    return {
        "verdict": run.outcome.verdict, "exit_code": run.outcome.code,
        "gate": run.gate.outcome.verdict,
        "guard": run.guard.outcome.verdict if run.guard else None,
        "failed": run.failed,
    }


class _Tee(io.StringIO):
    """Writes through to the real stream and keeps a copy (the messages for the report)."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(text)
        return super().write(text)


def _gate(settings: Settings, markdown: Path, json_path: Path) -> Step:
    from ..cli import main

    argv = ["check", *settings.reports]
    if settings.ceilings:
        argv += ["--ceilings", settings.ceilings]
    if settings.strict:
        argv.append("--strict")
    if settings.noise:
        argv += ["--noise", settings.noise]
    argv += [*settings.check_args, "--md", str(markdown), "--json", str(json_path)]
    print("+ failgate " + " ".join(argv), flush=True)
    errors = _Tee(sys.stderr)
    try:
        with contextlib.redirect_stderr(errors):
            code = main(argv)
    except SystemExit as exc:  # argparse: a usage error (already printed)
        code = exc.code if isinstance(exc.code, int) else 2
    except Exception as exc:  # a bug must still leave a report and a verdict
        print(inert(f"failgate: internal error: {type(exc).__name__}: {exc}"), file=sys.stderr)
        return Step("gate", ERROR, [f"internal error: {type(exc).__name__}: {exc}"])
    notes = [line.removeprefix("failgate: ") for line in errors.getvalue().splitlines()
             if line.strip()]
    return Step("gate", outcome(code), notes)


def _load_result(path: Path) -> GateResult | None:
    if not path.is_file():
        return None
    from ..core.base.result import GateResult

    return GateResult.model_validate_json(path.read_text(encoding="utf-8"))


def ensure_ref(ref: str, cwd: Path) -> str | None:
    """Fetch ``origin/BRANCH`` (one commit deep) when a shallow CI checkout lacks it;
    returns why that failed, if it did."""
    if git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd).returncode == 0:
        return None
    remote, _, branch = ref.partition("/")
    if not branch or not re.fullmatch(r"[\w.-]+", remote):
        return None  # not a remote branch: the guard says the ref is unknown
    print(f"+ git fetch --no-tags --depth=1 {remote} {branch}", flush=True)
    done = git(["fetch", "--no-tags", "--depth=1", remote,
                f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}"], cwd)
    if done.returncode == 0:
        return None
    said = done.stderr.strip().splitlines()
    return said[-1] if said else f"git fetch exited {done.returncode}"


def _guard(settings: Settings) -> tuple[Step, GuardResult | None]:
    """The guard on the ceilings file the gate used (the ini file's, unless given), told
    the reports the gate was given; its structured result, for annotations on the lines
    that loosened."""
    from ..commands.config import load
    from ..commands.runs import compare_with_ref

    ref = settings.guard_base
    assert ref is not None
    notes: list[str] = []
    try:
        config = load({"ceilings": settings.ceilings, "paths": list(settings.reports)})
        path = config.ceilings
        fetched = ensure_ref(ref, path.parent if path.parent.is_dir() else Path.cwd())
        if fetched is not None:
            notes.append(f"could not fetch {ref}: {fetched}")
        shown = " ".join(shlex.quote(report) for report in settings.reports)
        print(f"+ failgate guard --base {ref} --ceilings {display_path(path)} {shown}".rstrip(),
              flush=True)
        result = compare_with_ref(config, ref)
    except FailgateError as exc:
        print(inert(f"failgate: error: {exc}"), file=sys.stderr)
        return Step("guard", ERROR, [*notes, str(exc)]), None
    for line in result.lines():
        print(inert(line))
    return Step("guard", outcome(EXIT["pass"] if result.passed else EXIT["fail"]), notes), result


def _failed(run: Run) -> list[str]:
    """The failing items, named as pytest names them (``ceilings.yaml::report::check``)."""
    ceilings = run.ceilings_path
    failed: list[str] = []
    if run.result is not None:
        for report in run.result.reports:
            if report.error is not None:
                failed.append(f"{ceilings}::{report.name}::load")
            failed += [f"{ceilings}::{report.name}::{row.name}" for row in report.rows
                       if row.failing]
    if run.guard is not None and run.guard.outcome.verdict != "pass":
        failed.append(f"{ceilings}::guard")
    return failed


def _markdown(run: Run, gate_md: str | None, guard_note: str | None) -> str:
    from ..core.base.result import GuardResultModel
    from ..output.markdown import guard_markdown

    verdict = run.outcome
    lines = [f"## failgate: {verdict.mark} {verdict.verdict}", ""]
    if gate_md is not None:
        lines += [gate_md.rstrip("\n"), ""]
    else:
        lines += [f"{run.gate.outcome.mark} the gate did not run to its report:", ""]
    lines += [f"- {run.gate.outcome.mark} `{_code(note)}`" for note in run.gate.notes]
    if run.gate.notes:
        lines.append("")
    if run.guard is not None:
        lines += [f"- ⚠️ `{_code(note)}`" for note in run.guard.notes]
        if run.guard_result is not None:
            model = GuardResultModel(ref=run.guard_result.ref, passed=run.guard_result.passed,
                                     lines=list(run.guard_result.lines()))
            lines += guard_markdown(model)
        elif not run.guard.notes:
            lines += [f"{ERROR.mark} the guard could not run", ""]
        else:
            lines.append("")
    elif guard_note:
        lines += [f"The loosening guard did not run: {guard_note}.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _code(text: str) -> str:
    return one_line(text).replace("`", "'")


def settings_from_args(argv: Sequence[str] | None = None) -> Settings:
    """The command line of ``python -m pytest_failgate.ci`` (other CIs than GitHub)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m pytest_failgate.ci",
        description="failgate check and failgate guard as one CI step: one verdict (exit 0 "
                    "pass, 1 fail, 2 error, 3 inconclusive), failgate.md and verdict.json.")
    parser.add_argument("reports", nargs="+", metavar="PATH", help="the reports to gate")
    parser.add_argument("--ceilings", metavar="FILE", help="the ceilings file")
    parser.add_argument("--guard-base", metavar="REF",
                        help="also run the guard against REF (origin/BRANCH is fetched if "
                             "missing)")
    parser.add_argument("--noise", metavar="FILE", help="a noise_band.json for the gate")
    parser.add_argument("--strict", action="store_true", help="slack fails (gains must be "
                                                              "committed)")
    parser.add_argument("--check-arg", action="append", default=[], metavar="ARG",
                        help="one more argument for failgate check (repeatable)")
    parser.add_argument("--out-dir", default="failgate-report", metavar="DIR",
                        help="where failgate.md and verdict.json go (default: failgate-report)")
    args = parser.parse_args(argv)
    return Settings(tuple(args.reports), args.ceilings, args.guard_base, args.noise,
                    args.strict, tuple(args.check_arg), Path(args.out_dir))
