"""``failgate plan`` and ``failgate watch``: a random case order fixed before the run, and
the gate that settles on it as soon as the cases decide.

``plan`` writes a seeded permutation of a case set's ids (from a dataset file or a
report). ``watch`` reads a JSON Lines report as it is written (or, ``--replay``, a
finished one as if it were), classifies each case with the ceilings file's taxonomy as
``check`` would, feeds the completed prefix of the planned order to the sequential gate
(``core.gate.sequential``) and stops as soon as the verdict is settled, stopping the
harness it runs if it was given one. The verdict is the full run's with probability at
least ``1 - delta``, provided the order is the plan's (or, without a plan, that the
report's order was random and fixed before the run).
"""

from __future__ import annotations

import csv
import io
import json
import secrets
import time
from dataclasses import field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..core.base.classes import dataclass
from ..core.base.defaults import DEFAULT_DELTA
from ..core.base.errors import FailgateError
from ..core.gate import plan as plans
from ..core.gate.sequential import (
    Futility,
    PlannedOrder,
    SequentialGate,
    SequentialItem,
    describe,
    gate_items,
    quoted,
)
from ..core.reports.caseset import is_json_document, parse_json
from .app import Failgate

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from pathlib import Path

    from ..core.base.result import GateResult
    from ..core.gate.sequential import ItemLook, Settled
    from ..core.reports.caseset import CaseSet
    from ..core.reports.jsondecode import Form
    from ..core.reports.sink import CaseSink
    from ..core.taxonomy import Taxonomy
    from .app import Failgate
    from .config import Config

STOP_GRACE_SECONDS = 5.0  # between SIGTERM and SIGKILL for a harness that was settled
PLAN_FORMAT = plans.PLAN_FORMAT
Plan = plans.Plan
stratified_order = plans.stratified_order  # where the pytest plugin imported it from
_parse_json = parse_json


def read_cases(app: Failgate | None, path: Path, id_field: str | None = None,
               name: str | None = None) -> CaseSet:
    """A case set (a dataset file or a report) as the gate reads it (``core.reports.caseset``):
    with ``app``, the readers, the size limit and the id field of the taxonomy its ceilings
    file picks; without, failgate's own shapes and the default id fields."""
    from ..core.reports.caseset import read_case_set
    from ..core.reports.choice import TaxonomyChoice
    from ..core.reports.spec import ReadSpec

    if app is None:
        return read_case_set(path, TaxonomyChoice(), ReadSpec(), name, id_field)
    return read_case_set(path, app.choice(), app.read_spec(), name, id_field)


def case_ids(path: Path, id_field: str | None = None) -> list[str]:
    """The case ids of a dataset file or a report in failgate's own shapes."""
    return list(read_cases(None, path, id_field).ids)


def case_records(path: Path, id_field: str | None = None
                 ) -> list[tuple[str, Mapping[str, Any], int]]:
    """Each case of a dataset file or a report: its id, the case, its line."""
    found = read_cases(None, path, id_field)
    return list(zip(found.ids, found.cases, found.lines, strict=True))


def write_ordered(plan: Plan, cases: CaseSet, out: Path) -> None:
    """The case set's cases in the plan's order, in its own format (CSV, JSON Lines, a JSON
    array, ``case_results``): a harness that runs a file's cases in the file's order
    (promptfoo's ``--filter-range``) then walks the plan's random order."""
    source, text = cases.path, cases.text
    if text is None:
        raise FailgateError(f"--ordered writes failgate's own shapes and CSV; this is a "
                            f"{cases.format} file", source)
    records = {case_id: (case, line)
               for case_id, case, line in zip(cases.ids, cases.cases, cases.lines, strict=True)}
    ordered = [records[case_id][0] for case_id in plan.ids]
    if source.suffix.lower() == ".csv":
        buffer = io.StringIO(newline="")
        header = next(csv.reader(io.StringIO(text, newline="")))
        writer = csv.DictWriter(buffer, header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(ordered)
        written = buffer.getvalue()
    elif is_json_document(text, source):
        document = parse_json(text, source)
        document = ({**document, "case_results": ordered} if isinstance(document, dict)
                    else ordered)
        written = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    else:
        lines = text.splitlines()
        written = "".join(lines[records[case_id][1] - 1] + "\n" for case_id in plan.ids)
    if out.resolve() == source.resolve():
        raise FailgateError("--ordered would overwrite the dataset it reorders", out)
    temporary = out.with_name(out.name + ".tmp")
    temporary.write_text(written, encoding="utf-8")
    temporary.replace(out)


def _strata_of(cases: CaseSet, field_name: str) -> dict[str, str]:
    """Each case's stratum: its ``field_name``, as text (a string, an integer or a
    boolean; a case without it is an error naming the case)."""
    strata = {}
    for case_id, case, line in zip(cases.ids, cases.cases, cases.lines, strict=True):
        value = case.get(field_name)
        if not (isinstance(value, (str, bool)) or type(value) is int):
            raise FailgateError(
                f"case {quoted(case_id)}: the stratum field '{field_name}' must be a string, "
                "an integer or a boolean", cases.path, line)
        strata[case_id] = json.dumps(value) if isinstance(value, bool) else str(value)
    return strata


def make_plan(cases: CaseSet, seed: int | None = None, strata: str | None = None) -> Plan:
    """A uniformly random order of a case set's cases, drawn from ``seed`` (a fresh one
    when none is given: the order must be fixed before the run, not chosen after it).

    With ``strata`` (a case field), the cases are permuted within each stratum and the
    strata interleaved in proportion (``core.gate.plan``); the gate then keeps a
    confidence sequence per stratum, valid whatever the interleaving."""
    of = None if strata is None else _strata_of(cases, strata)
    drawn = secrets.randbits(32) if seed is None else seed
    used = ", ".join(cases.used) if cases.used else None
    try:
        return plans.draw(cases.ids, drawn, cases.path.name, of, strata,
                          used if not cases.positions else None)
    except FailgateError as exc:
        raise FailgateError(exc.message, cases.path) from None


def plan_command(app: Failgate, source: Path, seed: int | None, strata: str | None,
                 id_field: str | None, name: str | None, out: Path, ordered: str | None
                 ) -> list[str]:
    """``failgate plan``: the case set read with the ids the gate will read (the ceilings
    file's taxonomy's id field), the plan drawn and written; what to print."""
    from pathlib import Path

    cases = read_cases(app, source, id_field, name)
    plan = make_plan(cases, seed, strata)
    if ordered:
        write_ordered(plan, cases, Path(ordered))
    write_plan(plan, out)
    within = ("" if plan.strata is None else
              f" within each of {len(set(plan.strata))} strata of {plan.field}")
    lines = [f"plan: {len(plan.ids)} cases of {source} in a random order{within} (seed "
             f"{plan.seed}) -> {out}"]
    if ordered:
        lines.append(f"the cases in the plan's order -> {ordered}")
    return [*lines, cases.id_source()]


def write_plan(plan: Plan, out: Path) -> None:
    temporary = out.with_name(out.name + ".tmp")
    temporary.write_text(
        json.dumps(plans.to_document(plan), indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8")
    temporary.replace(out)


def read_plan(path: Path, limit: int | None = None) -> Plan:
    """A plan file (``failgate plan``), read as a report is (a regular file: a FIFO or a
    device refused; within the size limit, at most a plan of the most planned cases, each
    id of 64 bytes) and verified: its order must be the one its seed draws over its cases."""
    from ..core.base.safeopen import read_regular
    from ..core.gate.sequential import MAX_PLANNED

    cap = 64 * MAX_PLANNED
    data = read_regular(path, cap if limit is None else min(limit, cap))
    return plans.from_document(parse_json(data.decode("utf-8-sig", errors="replace"), path),
                               path)


@dataclass
class Watch:
    """What ``watch`` was asked: the report, the plan or the planned count, the level."""

    report: Path
    planned: int | None = None
    plan: Plan | None = None
    delta: Fraction = DEFAULT_DELTA
    replay: bool = False
    name: str | None = None  # the report's name in the ceilings file
    command: Sequence[str] = ()
    idle_seconds: float = 300.0
    poll_seconds: float = 0.2
    futility: Futility | None = None  # the futility stop (default off)
    batch: int | str | None = None  # run the command once per batch of this many planned
    # cases ("auto": sizes grown geometrically, ``batches.batch_sizes``)
    batch_key: str = "id"  # the field of a batch report's case that holds its planned id


@dataclass
class Watched:
    """How it ended: the settled verdict, or why the run ended without one."""

    result: GateResult
    settled: Settled | None = None
    ended: str = ""  # why an unsettled run ended (inconclusive)
    lines: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return self.result.verdict


class CaseGate:
    """The sequential gate over a run's cases, classified as ``check`` classifies them:
    fed one case (a mapping, as a report holds it) at a time in the planned order, it
    returns the settled verdict, or None while the run is still open.

    ``api.sequential_gate`` builds one for any harness; ``watch`` feeds it report lines.
    """

    def __init__(
        self,
        app: Failgate,
        planned: int,
        delta: Fraction = DEFAULT_DELTA,
        name: str = "run",
        plan: Plan | None = None,
        path: Path | None = None,
        format_name: str | None = None,
        futility: Futility | None = None,
        baseline: Path | None = None,
    ) -> None:
        from pathlib import Path

        from ..core.ceilings.load import load_ceilings
        from ..core.gate.runner import taxonomy_choice
        from ..core.reports.model import OWN_FORMAT, ReportFile
        from ..core.reports.sink import CaseSink

        if not app.config.ceilings.exists():
            raise FailgateError(
                "the ceilings file was not found; `failgate init` writes one from a finished run",
                app.config.ceilings,
            )
        ceilings = load_ceilings(app.config.ceilings, app.plugins.taxonomies)
        # the report's own taxonomy in the ceilings file, else its format's, else the default
        taxonomy = taxonomy_choice(app.plugins.taxonomies, None, ceilings).pick(
            name, format_name or OWN_FORMAT, None)
        # a plan drawn within strata: a confidence sequence per stratum (``StratifiedCount``)
        self._stratum: dict[str, int] = {}
        sizes = None
        if plan is not None and plan.strata is not None:
            labels = sorted(set(plan.strata))
            index = {label: i for i, label in enumerate(labels)}
            self._stratum = {i: index[s] for i, s in zip(plan.ids, plan.strata, strict=True)}
            sizes = [plan.strata.count(label) for label in labels]
        # paired mode: each case's category in the baseline run, each category compared
        self._baseline: dict[str, str | None] | None = None
        self.baseline = baseline
        paired: list[SequentialItem] = []
        if baseline is not None:
            self._baseline = _baseline_categories(baseline, taxonomy, app)
            paired = [SequentialItem(c, frozenset({c}), 0) for c in taxonomy.category_names]
        self._unpaired = 0  # cases gated that the baseline did not run
        if plan is not None and self._baseline is not None:
            self._unpaired_limit(sum(i not in self._baseline for i in plan.ids), planned)
        self.gate = SequentialGate(
            gate_items(taxonomy, ceilings, name, planned), planned, delta, futility, sizes,
            paired,
        )
        self._ceilings, self._taxonomy, self.name = ceilings, taxonomy.name, name
        self._advice = app.config.advice.ratchet
        self.order = PlannedOrder(plan.ids) if plan is not None else None
        self.plan = plan
        self.path = path if path is not None else Path(name)
        self.sink: CaseSink = CaseSink(ReportFile(self.path, name), taxonomy, app.read_spec())
        self.line = 0
        self.cases_read = 0  # lines that were not blank, each a case (or an error)
        self._states = {look.name: look.state for look in self.gate.looks()}
        self.progress = Pace()
        self._decode: Callable[[bytes], Any] | None = None  # ``add_raw``'s: ``check``'s
        # ``add_lines``': ``check``'s decoder of a line (a struct with ``[fast]``), its form
        self._bulk: tuple[Callable[[bytes], Any], Form] | None = None
        from ..core.reports.jsondecode import JsonSyntaxError, ShapeError
        from ..core.reports.sink import CaseProblem

        self._problem = CaseProblem  # imported once, not once a case
        self._refused = (JsonSyntaxError, ShapeError)

    @property
    def settled(self) -> Settled | None:
        return self.gate.settled

    def result(self, paid: int | None = None) -> GateResult:
        """The outcome as it stands, as every output renders it (settled, or stopped
        before it was: inconclusive), saying n of N planned cases, 1 - delta and the cases
        ``paid`` for (started), when the front end knows them."""
        from ..core.gate.settled import sequential_result

        return sequential_result(self.gate, self._ceilings, self.name, self.path,
                                 self._taxonomy, self._advice, paid)

    def add(self, case: Any) -> Settled | None:
        """One finished case; the settled verdict, or None."""
        for _ in self.changes(case):
            pass
        return self.gate.settled

    def changes(self, case: Any, planned_id: str | None = None) -> Iterator[str]:
        """One finished case, and what it changed, as lines to print; ``planned_id``: the
        plan's id of the case, when the report names it otherwise (``watch --batch``)."""
        try:
            case_id, category = self.sink.add(case)
        except self._problem as exc:
            raise FailgateError(str(exc), self.path, self.line or None) from None
        yield from self.finished(case_id if planned_id is None else planned_id, category)

    def finish(self, case_id: str, category: str | None) -> Settled | None:
        """One finished case already classified (a test's outcome and category, in
        ``--failgate-sequential``); the settled verdict, or None."""
        if category is not None and category not in self.sink.taxonomy.category_names:
            raise FailgateError(
                f"case {quoted(case_id)}: {quoted(category)} is not a category of the "
                f"taxonomy {self.sink.taxonomy.name}"
            )
        for _ in self.finished(case_id, category):
            pass
        return self.gate.settled

    def finished(self, case_id: str, category: str | None) -> Iterator[str]:
        """A case finished in ``category``: the planned cases it releases, gated, as lines."""
        if self.plan is not None and case_id not in self.order_ids:
            raise FailgateError(self._not_planned(case_id), self.path, self.line or None)
        released = (
            [(case_id, category)] if self.order is None else self.order.finish(case_id, category)
        )
        if not released and self.progress.allows(_waiting_line, case_id, category):
            yield _waiting_line(case_id, category)
        for one_id, one in released:
            if self.gate.settled is not None:
                return
            before = one  # a case the baseline did not run: not compared (unchanged)
            if self._baseline is not None:
                if one_id in self._baseline:
                    before = self._baseline[one_id]
                else:
                    self._unpaired += 1
                    self._unpaired_limit(self._unpaired, self.gate.planned)
            self.gate.add(one, self._stratum.get(one_id, 0), before)
            yield from self._changes(one_id, one)

    @cached_property
    def order_ids(self) -> frozenset[str]:
        return frozenset(() if self.plan is None else self.plan.ids)

    def _not_planned(self, case_id: str) -> str:
        """A case the plan does not hold: most often a plan drawn over other ids than the
        report's (positions, or another field), so the message says both and the option."""
        assert self.plan is not None
        fields = self.sink.taxonomy.id_fields
        read = fields[0] if len(fields) == 1 else ", ".join(fields[:-1]) + " or " + fields[-1]
        drawn = (f"the field {self.plan.id_field}" if self.plan.id_field
                 else f"positions or other fields (such as {quoted(self.plan.ids[0])})")
        return (f"case {quoted(case_id)} is not in the plan: the report's case ids are read "
                f"from {read} (the taxonomy {self.sink.taxonomy.name}), the plan's from "
                f"{drawn}; draw the plan over the same ids: `failgate plan DATASET --id "
                f"FIELD` (the ceilings file's id_field is its default)")

    def _unpaired_limit(self, unpaired: int, planned: int) -> None:
        """Paired mode compares the cases both runs ran: as ``check --baseline``, a run of
        which more than half has no counterpart in the baseline is an error, not a comparison
        of the few that match (or of none, when the ids are not the baseline's)."""
        if 2 * unpaired > planned:
            raise FailgateError(
                f"{unpaired} of the {planned} planned cases are not in the baseline; a "
                "comparison needs the same cases (pairs are matched by id)", self.baseline,
            )

    def add_line(self, text: str) -> Iterator[str]:
        """One line of a JSON Lines report: what it changed, as lines to print."""
        self.line += 1
        if text.strip():
            self.cases_read += 1
            yield from self.changes(_parse_json(text, self.path, self.line))

    def add_raw(self, raw: bytes, text: Callable[[bytes], str]) -> Iterator[str]:
        """One line of a JSON Lines report as read (bytes): what it changed, as lines to
        print. Decoded as ``check`` decodes a line (only the fields the taxonomy reads;
        msgspec with the ``fast`` extra); a line that decoder refuses is read as
        ``add_line`` reads its ``text``, which decides and words the error."""
        if self._decode is None:
            self._decode = _case_decoder(self.sink.fields)
        if raw and not raw.isspace():  # blank as ``bytes.strip`` says, without a copy
            try:
                case = self._decode(raw)
            except self._refused:
                pass
            else:
                self.line += 1
                self.cases_read += 1
                yield from self.changes(case)
                return
        yield from self.add_line(text(raw))

    def add_lines(self, raws: list[bytes], text: Callable[[bytes, int], str]
                  ) -> Iterator[str]:
        """Lines of a JSON Lines report already read (bytes), as ``add_raw`` takes each one,
        stopping at the settled verdict: each run of lines the decoder takes is decoded,
        then classified in bulk by ``check``'s generated loop (``CaseSink.classify``), then
        gated case by case, so the verdict settles on the same case as one line at a time
        (the cases after it were classified, never gated: the result is the gate's alone).
        A blank or refused line goes to ``add_raw``, with ``text(raw, lines before it)``;
        a case refused is the error ``add_raw`` raises, once the cases before it are gated."""
        if self._bulk is None:
            from ..core.reports.jsondecode import decoder

            found = decoder()
            self._bulk = (found.case_decoder(self.sink.fields), found.form(self.sink.fields))
        decode, form = self._bulk
        refused, gate = self._refused, self.gate
        at, count = 0, len(raws)
        while at < count and gate.settled is None:
            cases: list[Any] = []
            stop = at
            for raw in raws[at:]:
                if not raw or raw.isspace():
                    break
                try:
                    cases.append(decode(raw))
                except refused:
                    break
                stop += 1
            if cases:
                done: list[tuple[str, str | None]] = []
                problem = None
                try:
                    self.sink.classify(cases, done, form.struct, form.missing,
                                       form.to_mapping)
                except self._problem as exc:
                    problem = exc
                yield from self._gate_all(done)
                if gate.settled is not None:
                    return
                if problem is not None:
                    self.line += 1
                    self.cases_read += 1
                    raise FailgateError(str(problem), self.path, self.line) from None
            if stop < count:
                yield from self.add_raw(raws[stop], _text_after(text, self.line))
            at = stop + 1

    def _gate_all(self, done: list[tuple[str, str | None]]) -> Iterator[str]:
        """Cases classified (``add_lines``), gated in the planned order until the verdict
        settles. Without a baseline, and past the first ``PROGRESS_BURST`` cases (each
        shown), a plain gate takes them in bulk (``SequentialGate.advance``: up to the
        first that may change a state, shown with what it changed): all of them without
        a plan, else each run of cases that come in the plan's order (each released
        alone, ``PlannedOrder.next_is``); the others one at a time, as ``finished``
        takes them. Progress is then shown at most once a bulk, still at ``Pace``'s
        rate."""
        gate, order = self.gate, self.order
        bulk = self._baseline is None and gate.plain
        at = ready = 0  # done[at:ready]: released in the plan's order, not yet gated
        count = len(done)
        categories = [category for _, category in done] if bulk else []
        while at < count and gate.settled is None:
            if ready == at and bulk and gate.n >= PROGRESS_BURST:
                if order is None:
                    ready = count
                else:
                    while ready < count and order.next_is(done[ready][0]):
                        order.finish(*done[ready])
                        ready += 1
            if ready == at:  # one at a time
                case_id, category = done[at]
                self.line += 1
                self.cases_read += 1
                yield from self.finished(case_id, category)
                at += 1
                ready = at
                continue
            added = gate.advance(categories[at:ready])
            at += added
            self.line += added
            self.cases_read += added
            yield from self._changes(*done[at - 1])

    def pending(self) -> Iterator[str]:
        """The latest progress line not printed (``Pace``): printed when the run ends, or
        stops on an error, so the last case gated is always shown."""
        held = self.progress.held
        if held is not None:
            self.progress.held = None
            yield held[0](*held[1:])

    def _changes(self, case_id: str, category: str | None) -> Iterator[str]:
        gate = self.gate
        if gate.changed:
            changed = [look for look in gate.looks() if look.state != self._states[look.name]]
            if changed:  # a case that changed a state is always shown, with what changed
                self.progress.shown()
                yield _case_line(gate.n, gate.planned, case_id, category)
                for look in changed:
                    self._states[look.name] = look.state
                    yield f"  {_look_text(look)}"
                return
        if self.progress.allows(_case_line, gate.n, gate.planned, case_id, category):
            yield _case_line(gate.n, gate.planned, case_id, category)


PROGRESS_BURST = 100  # progress lines printed one a case before the rate applies
PROGRESS_RATE = 10.0  # progress lines a second after the burst: what a person reads


def _text_after(text: Callable[[bytes, int], str], line: int) -> Callable[[bytes], str]:
    """``text`` of a line read after ``line`` lines, as ``add_raw`` takes it."""
    return lambda raw: text(raw, line)


def _case_line(n: int, planned: int, case_id: str, category: str | None) -> str:
    return f"case {n} of {planned} {quoted(case_id)}: {category or 'passed'}"


def _waiting_line(case_id: str, category: str | None) -> str:
    return (f"finished {quoted(case_id)} ({category or 'passed'}): waiting for the cases "
            "planned before it")


class Pace:
    """Progress at a human rate: a token bucket of ``PROGRESS_BURST`` lines refilled at
    ``PROGRESS_RATE`` a second, so a short run shows every case and a run of 100,000
    cases in seconds prints a few lines a second, not one a case (the terminal, not the
    gate, was most of a fast harness's cost). A line held back is kept (``held``: the
    function that words it and its arguments), worded only if it is printed at last."""

    def __init__(self) -> None:
        self._tokens = float(PROGRESS_BURST)
        self._stamp = time.monotonic()
        self.held: tuple[Any, ...] | None = None

    def allows(self, line: Callable[..., str], *args: Any) -> bool:
        """Whether to print the line ``line(*args)`` words now; if not, it is held."""
        if self._tokens < 1:
            now = time.monotonic()
            self._tokens = min(PROGRESS_BURST, self._tokens + (now - self._stamp) * PROGRESS_RATE)
            self._stamp = now
            if self._tokens < 1:
                self.held = (line, *args)
                return False
        self._tokens -= 1
        self.held = None
        return True

    def shown(self) -> None:
        """A line printed whatever the rate (a case that changed a state)."""
        self._tokens = max(self._tokens - 1, 0.0)
        self.held = None


def _case_decoder(fields: tuple[str, ...]) -> Callable[[bytes], Any]:
    """``check``'s decoder of one JSON Lines case, handing over dicts (``CaseSink.add``
    takes mappings): only ``fields`` decoded."""
    from ..core.reports.jsondecode import decoder

    return decoder().mapping_decoder(fields)


def _baseline_categories(path: Path, taxonomy: Taxonomy, app: Failgate
                         ) -> dict[str, str | None]:
    """Each case of the baseline run's report (failgate's JSON Lines, a JSON array, or
    ``case_results``), classified as this run's cases are: id -> category (None: passed)."""
    from ..core.reports.model import ReportFile
    from ..core.reports.sink import CaseProblem, CaseSink

    sink = CaseSink(ReportFile(path, path.stem), taxonomy, app.read_spec())
    found: dict[str, str | None] = {}
    for _, case, line in case_records(path):
        try:
            case_id, category = sink.add(case)
        except CaseProblem as exc:
            raise FailgateError(str(exc), path, line) from None
        found[case_id] = category
    return found


def _look_text(look: ItemLook) -> str:
    return describe(look)


def planned_count(watch: Watch) -> int:
    """N: the plan's cases, else ``--planned``, else (replay) the report's cases."""
    if watch.plan is not None:
        if watch.planned is not None and watch.planned != len(watch.plan.ids):
            raise FailgateError(
                f"--planned {watch.planned} disagrees with the plan's {len(watch.plan.ids)} cases"
            )
        return len(watch.plan.ids)
    if watch.planned is not None:
        if watch.planned < 1:
            raise FailgateError(f"--planned must be at least 1, not {watch.planned}")
        return watch.planned
    if watch.replay:
        with watch.report.open("rb") as handle:
            count = sum(1 for line in handle if not line.isspace())  # no copy of a line
        if not count:
            raise FailgateError(
                "the report has no cases; a gate over zero cases would pass vacuously", watch.report
            )
        return count
    raise FailgateError(
        "watch needs the planned number of cases (--planned N) or a plan "
        "(--plan FILE; `failgate plan` writes one)"
    )


def futility_of(config: Config, beta_flag: str = "futility", margin_flag: str = "margin"
                ) -> Futility | None:
    """The futility stop a run was given (``futility``, ``margin``), or None (off); a value
    that is not a number is one error naming the flag."""
    if config.futility is None:
        return None
    try:
        beta = Fraction(config.futility)
    except (ValueError, ZeroDivisionError):
        raise FailgateError(f"{beta_flag} must be a number between 0 and 1, not "
                            f"{config.futility}") from None
    try:
        margin = int(config.margin or "10")
    except ValueError:
        raise FailgateError(f"{margin_flag} must be a whole number of cases, not "
                            f"{config.margin}") from None
    return Futility(beta, margin)


def watched_gate(app: Failgate, request: Watch, format_name: str | None = None) -> CaseGate:
    """The gate ``watch`` feeds: the planned cases, the level, the report's name and
    format, the futility stop and the baseline run (paired mode) it was asked for."""
    return CaseGate(app, planned_count(request), request.delta,
                    request.name or request.report.stem, request.plan, request.report,
                    format_name, futility=request.futility,
                    baseline=one_baseline(app, request.report if request.replay else None))


def ended(feed: CaseGate, paid: int | None = None) -> Watched:
    """How a watched run ended: its outcome, settled or not, and the cases it ``paid`` for
    (started: at least those it settled on)."""
    done = Watched(feed.result(paid), feed.gate.settled)
    if done.settled is None:
        done.ended = (f"the run ended after {feed.gate.n} of {feed.gate.planned} planned "
                      "cases, before the verdict was settled")
    return done


def one_baseline(app: Failgate, replayed: Path | None = None) -> Path | None:
    """The baseline run's report for paired mode: one file, or none; measured within the
    window of this run (now, or the ``replayed`` report's time: ``gate.dated``)."""
    given = app.config.baseline
    if not given:
        return None
    if len(given) > 1 or not given[0].is_file():
        raise FailgateError(
            "watch compares with one baseline report file (--baseline FILE)", given[0]
        )
    from ..core.gate.dated import refuse_sequential_baseline

    refuse_sequential_baseline(app.config.baseline_window, app.config.accept_baseline_gap,
                               given[0], replayed)
    return given[0]
