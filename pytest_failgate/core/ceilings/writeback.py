"""Writing a gate's outcome back to the ceilings file: ratchet and init.

Shared by the pytest plugin (which knows how each item ended in the run) and the
CLI (where every check "ran"), so both refuse and write in exactly the same cases.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..base.formatting import plural
from ..base.result import ceilings_lowered
from ..base.yamlsource import digest, read_text
from .rewrite import remove_stale_temps, rewrite, write_atomic
from .target import check_target, locked

if TYPE_CHECKING:
    from ..base.result import GateResult

@dataclass(frozen=True)
class Rewrite:
    """What init or a ratchet did to the ceilings file: whether it wrote it, and the lines
    that say what happened (for people; the decision is ``written``)."""

    written: bool
    lines: list[str]


def outcomes_from_verdicts(result: GateResult) -> dict[tuple[str, str, str], str]:
    """Outcomes when every check runs, as in the CLI."""
    return {row.key: "passed" if row.verdict in ("pass", "record") else "skipped"
            if row.verdict == "skip" else "failed" for row in result.rows}


def ratchet_refusal(result: GateResult, outcomes: Outcomes) -> str | None:
    """Why this run cannot ratchet, if it cannot: a ratchet needs the whole gate, judged."""
    if result.load_errors:
        return f"{plural(len(result.load_errors), 'report')} failed to load"
    if result.inconclusive:
        return f"the run is inconclusive ({'; '.join(result.inconclusive)})"
    regressed = result.regressions
    if regressed:  # a case that moved into a regressed category left a false gain behind
        return (f"the run fails ({', '.join(regressed)} above its ceiling); a count that "
                "fell beside a regression may only have moved into it: fix the regression "
                "first")
    missing = [row for row in result.rows if row.key not in outcomes]
    if missing:
        return (f"{len(missing)} of {len(result.rows)} gate items did not run "
                "(deselected or stopped early); ratchet needs the whole gate")
    return None


Outcomes = Mapping[tuple[str, str, str], str]  # (report, slice, name) -> how the item ended


def ratchet(path: Path, result: GateResult, outcomes: Outcomes,
            root: Path | None = None) -> Rewrite:
    """Lower the ceilings the result plans to lower; the lines say what happened.

    Raises ``FailgateError`` when the file may not be written (a link, outside the
    repository of ``root``, read-only: ``target``) or the rewritten file would not read
    back as intended (the file is then left as it was). The file is compared with what
    the gate read and replaced under a lock, so of two ratchets at once one writes and
    the other finds the file changed: a ``FailgateError`` too (exit 2 in the CLI, a failed
    session under pytest), so CI can tell that a lowering was lost.
    """
    check_target(path, root)
    remove_stale_temps(path)  # a killed ratchet's leftover goes even when nothing is lowered
    refusal = ratchet_refusal(result, outcomes)
    if refusal:
        return Rewrite(False, [f"ratchet: {result.ceilings_path} not written: {refusal}"])
    # A lowering's items passed by construction; one that did not (a crash) keeps its ceiling.
    lowerings = [low for low in result.lowerings
                 if all(outcomes.get(tuple(key)) == "passed"  # type: ignore[arg-type]
                        for key in low.governs)]
    if not lowerings:
        what = "no count fell past its allowance" if result.noise else "nothing to lower"
        return Rewrite(False, [f"ratchet: {what}; {result.ceilings_path} unchanged"])
    with locked(path):
        text = read_text(path)
        if digest(text) != result.ceilings_sha256:
            raise FailgateError(
                "changed during the run (another ratchet, or an edit): the lowering of "
                f"{plural(ceilings_lowered(lowerings), 'ceiling')} was not written; run the "
                "ratchet again",
                Path(result.ceilings_path))  # as the gate shows it
        write_atomic(path, rewrite(path, text, lowerings))
    lines = [f"ratchet: lowered {plural(ceilings_lowered(lowerings), 'ceiling')} in "
             f"{result.ceilings_path}:"]
    lines += [f"  {lowering.description}" for lowering in lowerings]
    return Rewrite(True, [*lines, "commit it, so the gain cannot silently erode"])


def init(path: Path, result: GateResult, replace: bool = False,
         reason: str | None = None) -> Rewrite:
    """Write a new ceilings file from the result's counts; never through a link
    (``target``), and over an existing file only when ``replace`` (``init --force``)."""
    if result.init_text is None and result.inconclusive:  # an outage is not the system's count
        return Rewrite(False, [
            f"init: {result.ceilings_path} not written: the run is inconclusive "
            f"({'; '.join(result.inconclusive)}); run the evaluation again"])
    if result.init_text is None:
        return Rewrite(False, [f"init: {result.ceilings_path} not written: no report loaded"])
    check_target(path, None)
    try:
        replaced = replace and path.exists()
        text = result.init_text
        if reason is not None:  # on every entry: what the guard names is reviewed (--force)
            from .reasoned import with_reason

            text = with_reason(text, reason)
        write_atomic(path, text, exclusive=not replace)
    except FailgateError as exc:
        return Rewrite(False, [f"init: not written: {exc}"])
    loaded = [r.name for r in result.reports if r.error is None and r.inconclusive is None]
    lines = [f"init: {'replaced' if replaced else 'wrote'} {result.ceilings_path} from the "
             f"current counts of {plural(len(loaded), 'report')}; review and commit it"]
    if replaced and reason is None:  # what it raised is a loosening: reviewed as one
        lines.append("init: the guard names every ceiling this raised (and a noise band "
                     "turned on) as a loosening: write why with init --force --reason "
                     "\"...\" (on every entry and at the top), or as {max: N, reason: "
                     "\"...\"} on those entries")
    if result.inconclusive:  # each is gated by the defaults, and inconclusive until re-run
        lines.append(f"init: not recorded, as {plural(len(result.inconclusive), 'report')} "
                     f"cannot be judged (run them again): {'; '.join(result.inconclusive)}")
    broken = [r.name for r in result.reports if r.error is not None]
    if broken:  # each stays an error item in every gate until it is fixed or removed
        lines.append(f"init: not gated, as {plural(len(broken), 'report')} failed to load "
                     f"(each is an error item until fixed or moved away): {', '.join(broken)}")
    return Rewrite(True, lines)
