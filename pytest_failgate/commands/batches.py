"""``failgate watch REPORT --plan plan.json --batch B -- CMD ...``: a harness with no
per-case hook, run in batches of the plan's order and stopped between batches.

promptfoo and lm-eval write their results at the end of a run, and neither lets an
outside program stop one case at a time; both can run a chosen part of a case set
(promptfoo's ``--filter-range start:end`` over the tests file's order, lm-eval's
``--samples`` of document indices). So the plan is cut into batches of ``B`` cases, in
its order, and the harness is run once per batch with the batch written into its
arguments (``PLACEHOLDERS``). After each batch its report is read with failgate's
readers (promptfoo's output, lm-eval's samples, failgate's own JSON Lines), every case is
matched to its planned case by ``--batch-key`` (the case field holding the plan's id)
and fed to the sequential gate in the plan's order; once the verdict is settled no
further batch starts. A batch's report must hold exactly its planned cases, once each: a
case missing, unplanned or twice is one error naming the report, since the gate would
otherwise judge a run that is not the plan's.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from typing import TYPE_CHECKING, Any

from ..core.base.classes import dataclass
from ..core.base.errors import FailgateError
from ..core.gate.sequential import quoted

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    from .app import Failgate
    from .sequential import Plan, Watch, Watched

# what a batch's command and report path may say: the batch's half-open range of plan
# positions, its number (from 1), its planned ids in the plan's order (comma-separated),
# and the same ids as a JSON list of integers in ascending order (lm-eval's --samples: its
# 0.4.13 evaluator labels the k-th selected document with the k-th index given, so the
# indices must be sorted)
PLACEHOLDERS = ("start", "end", "batch", "ids", "indices")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")  # linear: no nested quantifier
_INTEGER = re.compile(r"0|[1-9][0-9]*")
SHOWN = 160  # the most of a batch's command line printed (its ids can be many)


@dataclass(frozen=True)
class Batch:
    """The plan's cases ``start`` to ``end`` (end excluded): the ``number``-th batch."""

    number: int
    start: int
    end: int
    ids: tuple[str, ...]

    def values(self) -> dict[str, str]:
        return {"start": str(self.start), "end": str(self.end), "batch": str(self.number),
                "ids": ",".join(self.ids), "indices": _indices(self)}

    @property
    def span(self) -> str:
        return f"{self.start}:{self.end}"


def _indices(batch: Batch) -> str:
    if not all(_INTEGER.fullmatch(case_id) for case_id in batch.ids):
        return ""  # refused by ``render`` when a word asks for it
    return json.dumps(sorted(int(case_id) for case_id in batch.ids))


def plan_batches(plan: Plan, size: int) -> list[Batch]:
    """The plan cut into batches of ``size`` cases, in its order (the last may be shorter)."""
    if size < 1:
        raise FailgateError(f"--batch must be at least 1 case, not {size}")
    count = len(plan.ids)
    return [Batch(number, start, min(start + size, count), plan.ids[start:start + size])
            for number, start in enumerate(range(0, count, size), start=1)]


def check_placeholders(words: Sequence[str]) -> None:
    """Every ``{name}`` in the command (and the report's path) is one of ``PLACEHOLDERS``."""
    for position, word in enumerate(words):
        for found in _PLACEHOLDER.finditer(word):
            if found.group(1) not in PLACEHOLDERS:
                where = "the report's path" if position == 0 else f"argument {position}"
                raise FailgateError(
                    f"{where} ({json.dumps(word)}): {{{found.group(1)}}} is no placeholder; "
                    f"a batch fills in {', '.join('{' + name + '}' for name in PLACEHOLDERS)}")


def render(word: str, batch: Batch) -> str:
    """``word`` with the batch's values in its placeholders."""
    values = batch.values()

    def value(found: re.Match[str]) -> str:
        name = found.group(1)
        if name == "indices" and not values[name]:
            raise FailgateError(
                f"{{indices}} fills in the batch's ids as document indices, and the plan's ids "
                f"are not all whole numbers (batch {batch.number}: {quoted(batch.ids[0])}, ...)")
        if name == "ids" and any("," in case_id for case_id in batch.ids):
            comma = next(case_id for case_id in batch.ids if "," in case_id)
            raise FailgateError(
                f"{{ids}} separates the batch's ids with commas, and the plan's id "
                f"{quoted(comma)} holds one (batch {batch.number})")
        return values[name]

    return _PLACEHOLDER.sub(value, word)


def batch_cases(app: Failgate, path: Path) -> tuple[list[Any], str | None]:
    """A batch's report, read as a gate reads it: its cases and the reader that read them
    (None: failgate's own JSON shapes)."""
    from ..core.base.safeopen import read_limit
    from ..core.reports.model import ReportFile, SkippedFile
    from ..core.reports.read import detect
    from ..core.reports.source import reading
    from .sequential import case_records

    spec = app.read_spec()
    with read_limit(spec.max_bytes), reading(path, spec.max_bytes) as source:
        detected = detect(ReportFile(path, path.stem), app.choice(), spec, source)
        if isinstance(detected, SkippedFile):
            raise FailgateError(f"not a report failgate reads: {detected.reason}", path)
        if detected.output is not None:
            return list(detected.output.cases), detected.format
    return [case for _, case, _ in case_records(path)], None


def in_plan_order(batch: Batch, cases: list[Any], key: str, path: Path) -> list[Any]:
    """The batch's cases in the plan's order, each matched to its planned case by the case
    field ``key``; exactly the batch's planned cases, once each, or one error."""
    place = {case_id: index for index, case_id in enumerate(batch.ids)}
    placed: dict[int, Any] = {}
    for number, case in enumerate(cases, start=1):
        value = case.get(key) if isinstance(case, dict) else None
        if not (isinstance(value, str) or type(value) is int):
            raise FailgateError(
                f"batch {batch.number}: case #{number} has no {key!r} (a string or an integer) "
                "to match it to its planned case (--batch-key)", path)
        index = place.get(str(value))
        if index is None:
            raise FailgateError(
                f"batch {batch.number}: case {quoted(str(value))} is not among the plan's cases "
                f"{batch.span} the batch ran", path)
        if index in placed:
            raise FailgateError(
                f"batch {batch.number}: case {quoted(str(value))} appears twice; a batch's "
                "report holds one case per planned case", path)
        placed[index] = case
    missing = [case_id for case_id, index in place.items() if index not in placed]
    if missing:
        raise FailgateError(
            f"batch {batch.number} (the plan's cases {batch.span}): its report lacks "
            f"{len(missing)} of them ({', '.join(quoted(i) for i in missing[:3])}"
            f"{', ...' if len(missing) > 3 else ''})", path)
    return [placed[index] for index in range(len(batch.ids))]


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return status.st_mtime_ns, status.st_size


def run_batch(command: Sequence[str], report: Path) -> int:
    """Run one batch's command to its end; its exit code. A harness may exit non-zero when
    cases failed (promptfoo: 100), so the code alone decides nothing: the report must be
    written anew."""
    before = _stamp(report)
    try:
        code = subprocess.run(list(command), check=False).returncode  # the user's harness
    except OSError as exc:
        raise FailgateError(f"the batch command {json.dumps(command[0])} could not be run: "
                            f"{exc.strerror or exc}") from None
    if _stamp(report) in (None, before):
        raise FailgateError(
            f"the batch command (exit {code}) did not write its report", report)
    return code


def watch_batches(app: Failgate, request: Watch) -> Iterator[str | Watched]:
    """Run the plan in batches until the verdict is settled (``watch --batch``): lines to
    print, and last how it ended."""
    from pathlib import Path

    from .sequential import ended, watched_gate

    plan, size = request.plan, request.batch
    if plan is None or size is None:
        raise FailgateError("--batch runs the plan's cases in batches: it needs --plan FILE")
    if request.replay or not request.command:
        raise FailgateError("--batch runs a harness once per batch: give its command after --")
    if app.config.baseline:  # its cases' ids are not the plan's (--batch-key): none compared
        raise FailgateError("--batch does not compare with a baseline run: leave out --baseline")
    words = (str(request.report), *request.command)
    check_placeholders(words)
    batches = plan_batches(plan, size)
    rendered = [[render(word, batch) for word in words] for batch in batches]  # errors first
    feed = watched_gate(app, request)  # a ceilings file it cannot mirror: before any batch
    for batch, (report, *command) in zip(batches, rendered, strict=True):
        shown = shlex.join(command)
        shown = shown if len(shown) <= SHOWN else shown[:SHOWN - 3] + "..."
        yield f"batch {batch.number} of {len(batches)}: the plan's cases {batch.span}: {shown}"
        path = Path(report)
        code = run_batch(command, path)
        cases, found = batch_cases(app, path)
        if batch.number == 1 and found is not None:  # classify as check would this format
            feed = watched_gate(app, request, found)
        yield f"batch {batch.number}: exit {code}, {len(cases)} cases in {report}"
        feed.path = path  # a case the taxonomy cannot read: an error naming this report
        for planned_id, case in zip(batch.ids,
                                    in_plan_order(batch, cases, request.batch_key, path),
                                    strict=True):
            yield from feed.changes(case, planned_id)
            if feed.gate.settled is not None:
                break
        if feed.gate.settled is not None:
            left = len(batches) - batch.number
            if left:
                yield f"settled: the {left} later batches are not run"
            break
    yield ended(feed)
