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
import time
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
CARRY_IDS = ("ids",)  # carries case ids as written ({indices}: whole numbers only)
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish",
                    "csh", "tcsh", "pwsh", "powershell", "cmd", "cmd.exe"})
AUTO = "auto"  # --batch auto: sizes grown geometrically from FIRST_SHARE of the plan
FIRST_SHARE = 50  # the first automatic batch: 1/50 of the plan (at least one case)
GROWTH = 2  # each automatic batch twice the one before


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


def batch_size(given: int | str) -> int | None:
    """``--batch``: a whole number of cases, or ``auto`` (None: ``batch_sizes``)."""
    if given == AUTO:
        return None
    try:
        return int(given)
    except ValueError:
        raise FailgateError(f"--batch is a whole number of cases or {AUTO}, not {given}"
                            ) from None


def plan_batches(plan: Plan, size: int | None) -> list[Batch]:
    """The plan cut into batches of ``size`` cases, in its order (the last may be shorter);
    ``None`` (``--batch auto``): ``batch_sizes``."""
    if size is not None and size < 1:
        raise FailgateError(f"--batch must be at least 1 case, not {size}")
    count = len(plan.ids)
    sizes = batch_sizes(count) if size is None else [size] * -(-count // size)
    batches, start = [], 0
    for number, one in enumerate(sizes, start=1):
        end = min(start + one, count)
        batches.append(Batch(number, start, end, plan.ids[start:end]))
        start = end
    return batches


def batch_sizes(count: int) -> list[int]:
    """``--batch auto``: a first batch of ``1/FIRST_SHARE`` of the plan, each next one
    ``GROWTH`` times the last. A harness's start-up is paid once a batch: with sizes that
    double, a run of N cases takes about ``log2(FIRST_SHARE) + 1`` batches (7 for any N
    of 64 or more), not N/B; and a run settled in batch k paid for fewer than twice the
    cases it had run before that batch, plus the first batch."""
    size, left, sizes = max(1, -(-count // FIRST_SHARE)), count, []
    while left > 0:
        sizes.append(min(size, left))
        left -= sizes[-1]
        size *= GROWTH
    return sizes


def check_placeholders(words: Sequence[str]) -> None:
    """Every ``{name}`` in the command (and the report's path) is one of ``PLACEHOLDERS``,
    and none that carries case ids sits inside a shell's script (``sh -c '... {ids}'``):
    ids are report content, and a shell would run ``$(...)`` or ``;`` in them. Passed as
    arguments of their own (``sh -c 'run "$@"' sh {ids}``) they are only text."""
    script = _shell_script(words)
    for position, word in enumerate(words):
        where = "the report's path" if position == 0 else f"argument {position}"
        for found in _PLACEHOLDER.finditer(word):
            if found.group(1) not in PLACEHOLDERS:
                raise FailgateError(
                    f"{where} ({json.dumps(word)}): {{{found.group(1)}}} is no placeholder; "
                    f"a batch fills in {', '.join('{' + name + '}' for name in PLACEHOLDERS)}")
            if position == script and found.group(1) in CARRY_IDS:
                raise FailgateError(
                    f"{where} is a shell's script, and {{{found.group(1)}}} would put case ids "
                    "in it, where the shell would run what they hold; pass them as arguments "
                    "of their own after the script (sh -c 'run \"$@\"' sh {ids})")


def _shell_script(words: Sequence[str]) -> int | None:
    """The position of the script a shell in the command runs (``sh -c SCRIPT``, ``bash
    -lc SCRIPT``, ``cmd /c ...``), if the command runs one."""
    for position, word in enumerate(words[1:], start=1):
        name = word.replace("\\", "/").rsplit("/", 1)[-1].lower()
        if name.removesuffix(".exe") not in SHELLS:
            continue
        for later in range(position + 1, len(words)):
            flag = words[later]
            if flag.startswith("/") and flag.lower() in ("/c", "/k"):  # cmd.exe
                return later + 1
            if not flag.startswith("-") or flag == "--":
                break
            if not flag.startswith("--") and "c" in flag[1:].lower():
                return later + 1
    return None


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

    rendered = _PLACEHOLDER.sub(value, word)
    if rendered.startswith("-") and not word.startswith("-"):
        raise FailgateError(
            f"batch {batch.number}: the argument {json.dumps(word)} would begin with '-' "
            f"(the plan's id {quoted(batch.ids[0])}), and the harness would read it as an "
            "option; rename the case or put the placeholder after a prefix (--ids={ids})")
    return rendered


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


def run_batch(command: Sequence[str], report: Path, idle_seconds: float) -> int | None:
    """Run one batch's command to its end, in a session of its own (``harness``: stopped as
    a whole if ``watch`` is); its exit code. A harness may exit non-zero when cases failed
    (promptfoo: 100), so the code alone decides nothing: the report must be written anew.

    A harness that neither exits nor writes its report for ``idle_seconds`` (a hung
    provider, a prompt waiting for input, ``sleep 911``) is stopped, its whole group, as
    ``watch`` without ``--batch`` stops one whose report gets no new case: None. Any write
    of the report is progress (a batch harness may write it only at its end)."""
    from .harness import POLL_SECONDS, Harness

    before = _stamp(report)
    with Harness(command) as harness:
        seen, progress = before, time.monotonic()
        while (code := harness.poll()) is None:
            now = _stamp(report)
            if now != seen:
                seen, progress = now, time.monotonic()
            elif time.monotonic() - progress > idle_seconds:
                return None  # leaving the block stops the harness's group
            time.sleep(POLL_SECONDS)
    if _stamp(report) in (None, before):
        raise FailgateError(
            f"the batch command (exit {code}) did not write its report", report)
    return code


def watch_batches(app: Failgate, request: Watch) -> Iterator[str | Watched]:
    """Run the plan in batches until the verdict is settled (``watch --batch``): lines to
    print, and last how it ended."""
    from pathlib import Path

    from .sequential import ended, watched_gate

    plan = request.plan
    if plan is None or request.batch is None:
        raise FailgateError("--batch runs the plan's cases in batches: it needs --plan FILE")
    if request.replay or not request.command:
        raise FailgateError("--batch runs a harness once per batch: give its command after --")
    if app.config.baseline:  # its cases' ids are not the plan's (--batch-key): none compared
        raise FailgateError("--batch does not compare with a baseline run: leave out --baseline")
    size = batch_size(request.batch)
    words = (str(request.report), *request.command)
    check_placeholders(words)
    batches = plan_batches(plan, size)
    rendered = [[render(word, batch) for word in words] for batch in batches]  # errors first
    feed = watched_gate(app, request)  # a ceilings file it cannot mirror: before any batch
    paid = 0  # the cases of the batches run: what the run paid for
    for batch, (report, *command) in zip(batches, rendered, strict=True):
        shown = shlex.join(command)
        shown = shown if len(shown) <= SHOWN else shown[:SHOWN - 3] + "..."
        yield f"batch {batch.number} of {len(batches)}: the plan's cases {batch.span}: {shown}"
        path = Path(report)
        began = time.monotonic()
        code = run_batch(command, path, request.idle_seconds)
        paid += len(batch.ids)
        if code is None:  # unsettled, as a watched run whose report stalls: inconclusive
            yield (f"batch {batch.number}: no new write of {report} for "
                   f"{request.idle_seconds:g} seconds (--idle-seconds): the harness is "
                   "stopped, and no later batch is run")
            break
        cases, found = batch_cases(app, path)
        if batch.number == 1 and found is not None:  # classify as check would this format
            feed = watched_gate(app, request, found)
        yield (f"batch {batch.number}: exit {code}, {len(cases)} cases in {report} "
               f"({time.monotonic() - began:.1f} s)")
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
    yield ended(feed, paid)
