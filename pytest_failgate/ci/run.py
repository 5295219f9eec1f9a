"""One CI step: ``failgate check`` with the guard, one verdict, one report.

The step runs the gate through ``commands/`` as ``failgate check`` does, with the guard
set (``guard``): the guard then compares the ceilings file with its ref **with this run's
inputs** (its reports' names, its plugins' taxonomies and readers), as the gate's own
guard setting does. The verdict is the result's (``GateResult.headline``, decided once in
the core); this module renders it: the exit code and the Markdown sign through one table
(``OUTCOMES``, the ``failgate`` command's codes). A run without a result (the gate could
not start: a bad input, a usage error) is an error, never a pass.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.base.classes import dataclass
from ..core.base.errors import FailgateError
from ..core.base.formatting import one_line
from ..core.base.inifile import DEFAULT_CEILINGS
from ..core.base.verdict import EXIT
from ..core.guard.gitref import git
from ..output.github import inert
from ..output.markdown import RUN_MARK

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..commands.app import Failgate
    from ..commands.config import Config
    from ..core.base.result import GateResult, GuardResultModel
    from ..core.base.verdict import RunVerdict


@dataclass(frozen=True)
class Outcome:
    code: int  # the exit code this outcome gives the CI step
    verdict: RunVerdict
    mark: str  # its sign in Markdown


# The run verdicts with their codes (verdict.EXIT, every front end's) and signs (the
# comment's, output.markdown.RUN_MARK): a code the command adds or moves moves here too.
OUTCOMES: dict[int, Outcome] = {EXIT[verdict]: Outcome(EXIT[verdict], verdict, mark)
                                for verdict, mark in RUN_MARK.items()}
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
    labels: str | None = None  # gold labels: gate the corrected counts (check --labels)


@dataclass
class Run:
    """The step: the gate's result (None when it could not run), and what else to say."""

    settings: Settings
    result: GateResult | None
    notes: list[str] = field(default_factory=list)  # why there is no result; a failed fetch
    # the guard on its own, when the gate could not run (the result holds it otherwise)
    guard: GuardResultModel | None = None
    unwritten: bool = False  # a report file the step had to write was not written
    markdown: str = ""
    failed: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> Outcome:
        """The result's verdict; an error without a result or a report written."""
        if self.result is None or self.unwritten:
            return ERROR
        return OUTCOMES[EXIT[self.result.verdict]]

    @property
    def guard_result(self) -> GuardResultModel | None:
        return self.result.guard if self.result is not None else self.guard

    @property
    def ceilings_path(self) -> str:
        if self.result is not None:
            return self.result.ceilings_path
        return self.settings.ceilings or DEFAULT_CEILINGS


def run(settings: Settings, guard_note: str | None = None) -> Run:
    """Gate (with the guard when ``guard_base`` is set), then write ``failgate.md``,
    ``gate.json`` and ``verdict.json`` in ``out_dir``.

    ``guard_note``: why no guard ran, when ``guard_base`` is None (shown in the report).
    """
    out = settings.out_dir
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FailgateError(f"cannot create the report folder: {exc.strerror}", out) from None
    (out / "gate.json").unlink(missing_ok=True)
    done = _gate(settings, out / "gate.json")
    done.failed = _failed(done)
    done.markdown = _markdown(done, guard_note)
    try:
        (out / "failgate.md").write_text(done.markdown, encoding="utf-8")
        (out / "verdict.json").write_text(json.dumps(verdict_document(done), indent=2) + "\n",
                                          encoding="utf-8")
    except OSError as exc:
        raise FailgateError(f"cannot write the report: {exc.strerror}", out) from None
    return done


def verdict_document(run: Run) -> dict[str, object]:
    """What the run decided, for machines: the Action's outputs and other CIs' scripts."""
    headline = run.result.headline if run.result is not None else None
    guard = run.guard_result
    return {
        "verdict": run.outcome.verdict, "exit_code": run.outcome.code,
        "gate": headline.gate if headline is not None else ERROR.verdict,
        "guard": guard.verdict if guard is not None else None,
        "failed": run.failed,
    }


def _config(settings: Settings, json_path: Path) -> Config:
    """``failgate check``'s configuration for the step, with the guard and ``gate.json``."""
    from ..cli import check_config

    argv = [*settings.reports]
    if settings.ceilings:
        argv += ["--ceilings", settings.ceilings]
    if settings.strict:
        argv.append("--strict")
    if settings.noise:
        argv += ["--noise", settings.noise]
    if settings.labels:
        argv += ["--labels", settings.labels]
    config = check_config([*argv, *settings.check_args])
    guard = settings.guard_base if settings.guard_base is not None else config.guard
    return replace(config, guard=guard, json=json_path.absolute())


def _gate(settings: Settings, json_path: Path) -> Run:
    """The gate through ``commands`` (as ``failgate check``), printed as the command
    prints it; its reports written. A gate that cannot run leaves the notes why."""
    from ..commands.app import Failgate
    from ..commands.gating import check, write_reports

    app = None
    try:
        config = _config(settings, json_path)
        app = Failgate(config)
        fetched = _fetch(config)
        print("+ failgate check " + inert(" ".join([*settings.reports, *settings.check_args]))
              + (f" (guard against {config.guard})" if config.guard else ""), flush=True)
        result = _with_fetch_error(check(app), fetched)
    except SystemExit as exc:  # argparse: a usage error (already printed)
        return Run(settings, None, [f"usage error in the check arguments (exit {exc.code})"])
    except (FailgateError, OSError) as exc:
        print(inert(f"failgate: error: {exc}"), file=sys.stderr)
        guard = _guard_alone(app)
        if fetched and guard is not None and guard.error is not None:
            guard = _fetch_error(guard, fetched[0])
        return Run(settings, None, [str(exc)], guard)
    except Exception as exc:  # a bug must still leave a report and a verdict
        print(inert(f"failgate: internal error: {type(exc).__name__}: {exc}"), file=sys.stderr)
        return Run(settings, None, [f"internal error: {type(exc).__name__}: {exc}"])
    _print(result)
    written = write_reports(app, result)
    notes = [*(fetched if result.guard is None or result.guard.error is None else []),
             *(line for line in written.lines if not line.startswith("wrote "))]
    return Run(settings, result, notes, unwritten=written.failed)


def _with_fetch_error(result: GateResult, fetched: list[str]) -> GateResult:
    """The result, its guard's "unknown git ref" replaced by why the fetch of that ref
    failed (git's own words), when it did: "fetch it first" would say to do what failed."""
    guard = result.guard
    if not fetched or guard is None or guard.error is None:
        return result
    return result.model_copy(update={"guard": _fetch_error(guard, fetched[0])})


def _fetch_error(guard: GuardResultModel, fetched: str) -> GuardResultModel:
    """A guard that could not compare, saying why the fetch of its ref failed."""
    return guard.model_copy(update={"error": fetched, "lines": [
        f"guard: could not compare with {guard.ref}: {fetched}"]})


def _fetch(config: Config) -> list[str]:
    """Fetch the guard's ref when a shallow checkout lacks it; why that failed, if it did."""
    if not config.guard:
        return []
    path = config.ceilings
    fetched = ensure_ref(config.guard, path.parent if path.parent.is_dir() else Path.cwd())
    return [] if fetched is None else [f"could not fetch {config.guard}: {fetched}"]


def _print(result: GateResult) -> None:
    """The step's log: the failing items, then the terminal summary, as the command's."""
    from ..core.ceilings.writeback import outcomes_from_verdicts
    from ..output.text import item_id, summary_lines

    for row in result.rows:
        if row.message and row.failing:
            print(inert(f"FAILED {item_id(result.ceilings_path, row)}\n{row.message}\n"))
    for line in summary_lines(result, outcomes_from_verdicts(result)):
        print(inert(line))


def _guard_alone(app: Failgate | None) -> GuardResultModel | None:
    """The guard on the ceilings file alone, when the gate could not run (its inputs are
    then unknown), so the report still says whether anything was loosened."""
    from ..commands.app import Failgate
    from ..commands.runs import guard
    from ..core.base.result import GuardResultModel

    if app is None or not app.config.guard:
        return None
    try:
        return guard(Failgate(replace(app.config, paths=())), app.config.guard)
    except FailgateError as exc:
        return GuardResultModel(ref=app.config.guard, passed=False, error=str(exc),
                                lines=[f"guard: could not compare with {app.config.guard}: "
                                       f"{exc}"])


def ensure_ref(ref: str, cwd: Path) -> str | None:
    """Fetch ``origin/BRANCH`` (one commit deep) when a shallow CI checkout lacks it;
    returns why that failed, if it did."""
    if git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd).returncode == 0:
        return None
    remote, _, branch = ref.partition("/")
    if not branch or not re.fullmatch(r"[\w.-]+", remote):
        return None  # not a remote branch: the guard says the ref is unknown
    command = f"git fetch --no-tags --depth=1 {remote} {branch}"
    print(f"+ {command}", flush=True)
    done = git(["fetch", "--no-tags", "--depth=1", remote,
                f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}"], cwd)
    if done.returncode == 0:
        return None
    # git's first error line says why ("fatal: couldn't find remote ref main"); the lines
    # after it are advice ("Please make sure you have the correct access rights")
    said = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    errors = [line for line in said if line.startswith(("fatal:", "error:"))]
    why = errors[0] if errors else said[-1] if said else f"exit {done.returncode}"
    return f"`{command}` failed: {why}"


def _failed(run: Run) -> list[str]:
    """The failing items, named as pytest names them (``ceilings.yaml::report::check``)."""
    from ..core.base.items import GUARD, gate_nodes

    ceilings = run.ceilings_path
    failed: list[str] = []
    if run.result is not None:  # the item tree's, the guard last
        failed += [node.node_id(ceilings) for node in gate_nodes(run.result)
                   if node.kind != "guard" and node.outcome == "failed"]
    guard = run.guard_result
    if guard is not None and guard.verdict != "pass":
        failed.append(f"{ceilings}::{GUARD}")
    return failed


def _markdown(run: Run, guard_note: str | None) -> str:
    from ..output.markdown import guard_markdown, render_markdown

    verdict = run.outcome
    lines = [f"## failgate: {verdict.mark} {verdict.verdict}", ""]
    if run.result is not None:
        lines += [render_markdown(run.result).rstrip("\n"), ""]
    else:
        lines += [f"{verdict.mark} the gate did not run to its report:", ""]
    lines += [f"- {RUN_MARK['error']} `{_code(note)}`" for note in run.notes]
    if run.notes:
        lines.append("")
    if run.result is None and run.guard is not None:
        lines += guard_markdown(run.guard)
    if run.guard_result is None and guard_note:
        lines += [f"The loosening guard did not run: {guard_note}.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _code(text: str) -> str:
    return one_line(text).replace("`", "'")


NO_GUARD = ("none", "false", "off")  # a guard base that turns the guard off, everywhere


def guard_ref(value: str | None) -> str | None:
    """The guard's ref as the step's settings give it: ``none`` (``NO_GUARD``) is no guard
    on the command line as in the Action's ``guard-base`` input, never a git ref."""
    return None if value is None or value.strip().lower() in NO_GUARD else value


def settings_from_args(argv: Sequence[str] | None = None) -> Settings:
    """The command line of ``python -m pytest_failgate.ci`` (other CIs than GitHub): the
    step's own arguments, and every option of ``failgate check`` the table does not say
    the step leaves out (``Option.unserved``), as the command takes it."""
    import argparse

    from .. import options

    parser = argparse.ArgumentParser(
        prog="python -m pytest_failgate.ci", allow_abbrev=False,
        description="failgate check and failgate guard as one CI step: one verdict (exit 0 "
                    "pass, 1 fail, 2 error, 3 inconclusive), failgate.md and verdict.json.")
    parser.add_argument("reports", nargs="+", metavar="PATH", help="the reports to gate")
    parser.add_argument("--guard-base", metavar="REF",
                        help="also run the guard against REF (origin/BRANCH is fetched if "
                             "missing); none: no guard, as the Action's guard-base: none")
    checks = [option for option in options.for_command("check")
              if option.served_by("ci") and not option.positional]
    for option in checks:
        options.add_argument(parser, option, "check")
    parser.add_argument("--check-arg", action="append", default=[], metavar="ARG",
                        help="one more argument for failgate check (repeatable)")
    parser.add_argument("--out-dir", default="failgate-report", metavar="DIR",
                        help="where failgate.md and verdict.json go (default: failgate-report)")
    args = parser.parse_args(argv)
    given = [word for option in checks if option.name != "ceilings"
             for word in options.words(option, getattr(args, option.attribute))]
    return Settings(tuple(args.reports), args.ceilings, guard_ref(args.guard_base),
                    check_args=(*given, *args.check_arg), out_dir=Path(args.out_dir))
