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
import random
import secrets
from dataclasses import field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..core.base.classes import dataclass
from ..core.base.errors import FailgateError
from ..core.gate.sequential import (
    Futility,
    PlannedOrder,
    SequentialGate,
    SequentialItem,
    describe,
    gate_items,
    quoted,
)
from ..core.stats.sequential import DEFAULT_DELTA
from ..core.taxonomy.model import DEFAULT_ID_FIELDS

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence
    from pathlib import Path

    from ..core.base.result import GateResult
    from ..core.gate.sequential import ItemLook, Settled
    from ..core.reports.sink import CaseSink
    from ..core.taxonomy import Taxonomy
    from .app import Failgate
    from .config import Config

PLAN_FORMAT = "failgate-plan/1"


@dataclass(frozen=True)
class Plan:
    """The planned order of a run's cases and the seed it was drawn with."""

    ids: tuple[str, ...]
    seed: int
    source: str
    strata: tuple[str, ...] | None = None  # each planned case's stratum (--strata)
    field: str | None = None  # the case field the strata are the values of


def _parse_json(text: str, path: Path, line: int = 1) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FailgateError(
            f"invalid JSON: {exc.msg}", path, line + exc.lineno - 1, exc.colno
        ) from None
    except RecursionError:
        raise FailgateError("invalid JSON: nested too deeply", path, line) from None


def _case_id(case: Any, position: int, path: Path, line: int,
             id_field: str | None = None) -> str:
    """A case's id as the gate compares it: its ``id_field`` when one is named (a case
    without it is an error), else ``id``, ``case_id``, ``question_id``, ``sample_id``,
    else ``#<position>``."""
    if not isinstance(case, dict):
        raise FailgateError(f"case #{position} is not an object", path, line)
    for name in DEFAULT_ID_FIELDS if id_field is None else (id_field,):
        value = case.get(name)
        if isinstance(value, str) or type(value) is int:
            return str(value)
        if value is None and id_field is not None:
            raise FailgateError(f"case #{position} has no '{id_field}' (--id)", path, line)
        if value is not None:
            raise FailgateError(
                f"case #{position}: the case id '{name}' must be a string or an integer",
                path, line
            )
    return f"#{position}"


def case_ids(path: Path, id_field: str | None = None) -> list[str]:
    """The case ids of a dataset file or a report: JSON Lines, a JSON array of cases, an
    object with ``case_results``, or CSV (a header, then a case a row: promptfoo's tests)."""
    return [case_id for case_id, _, _ in case_records(path, id_field)]


def case_records(path: Path, id_field: str | None = None
                 ) -> list[tuple[str, dict[str, Any], int]]:
    """Each case of a dataset file or a report: its id, the case, its line."""
    text = path.read_text(encoding="utf-8-sig")
    records = []
    if path.suffix.lower() == ".csv":
        records = [(_case_id(case, i, path, line, id_field), case, line)
                   for i, (case, line) in enumerate(_csv_rows(text, path), start=1)]
    elif _is_json_document(text, path):
        document = _parse_json(text, path)
        cases = document.get("case_results") if isinstance(document, dict) else document
        if not isinstance(cases, list):
            raise FailgateError("neither a list of cases nor an object with case_results", path)
        records = [(_case_id(case, i, path, 1, id_field), case, 1)
                   for i, case in enumerate(cases, start=1)]
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                case = _parse_json(line, path, number)
                records.append((_case_id(case, len(records) + 1, path, number, id_field), case,
                                number))
    if not records:
        raise FailgateError("no cases: a plan over nothing would settle nothing", path)
    return records


def _csv_rows(text: str, path: Path) -> Iterator[tuple[dict[str, Any], int]]:
    """A CSV file's rows as cases (its header names the fields), each with its line."""
    rows = csv.DictReader(io.StringIO(text, newline=""))
    try:
        rows.fieldnames  # noqa: B018 - reads the header
        line = rows.line_num
        for row in rows:
            if None in row:
                raise FailgateError("the row has more cells than the header names", path,
                                    line + 1)
            yield dict(row), line + 1
            line = rows.line_num
    except csv.Error as exc:
        raise FailgateError(f"invalid CSV: {exc}", path, rows.line_num) from None


def write_ordered(plan: Plan, source: Path, out: Path, id_field: str | None = None) -> None:
    """``source``'s cases in the plan's order, in ``source``'s own format (CSV, JSON Lines,
    a JSON array, ``case_results``): a harness that runs a file's cases in the file's order
    (promptfoo's ``--filter-range``) then walks the plan's random order."""
    records = {case_id: (case, line) for case_id, case, line in case_records(source, id_field)}
    text = source.read_text(encoding="utf-8-sig")
    ordered = [records[case_id][0] for case_id in plan.ids]
    if source.suffix.lower() == ".csv":
        buffer = io.StringIO(newline="")
        header = next(csv.reader(io.StringIO(text, newline="")))
        writer = csv.DictWriter(buffer, header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(ordered)
        written = buffer.getvalue()
    elif _is_json_document(text, source):
        document = _parse_json(text, source)
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


def _strata_of(path: Path, field_name: str, id_field: str | None = None
               ) -> tuple[list[str], dict[str, str]]:
    """The case ids and each one's stratum: its ``field_name``, as text (a string, an
    integer or a boolean; a case without it is an error naming the case)."""
    ids, strata = [], {}
    for case_id, case, line in case_records(path, id_field):
        value = case.get(field_name)
        if not (isinstance(value, (str, bool)) or type(value) is int):
            raise FailgateError(
                f"case {quoted(case_id)}: the stratum field '{field_name}' must be a string, "
                "an integer or a boolean", path, line)
        ids.append(case_id)
        strata[case_id] = json.dumps(value) if isinstance(value, bool) else str(value)
    return ids, strata


def _is_json_document(text: str, path: Path) -> bool:
    """Whether a file is one JSON document (an array of cases, ``case_results``), not JSON
    Lines: a ``.jsonl`` file never is, even of one line."""
    return (path.suffix.lower() != ".jsonl" and text.lstrip().startswith(("[", "{"))
            and not _is_json_lines(text))


def _is_json_lines(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    try:
        return all(isinstance(json.loads(line), dict) for line in lines[:2])
    except json.JSONDecodeError:
        return False


def make_plan(source: Path, seed: int | None = None, strata: str | None = None,
              id_field: str | None = None) -> Plan:
    """A uniformly random order of ``source``'s cases, drawn from ``seed`` (a fresh one
    when none is given: the order must be fixed before the run, not chosen after it).

    With ``strata`` (a case field), the cases are permuted within each stratum and the
    strata interleaved in proportion (the ``k``-th of a stratum of ``s`` cases at
    ``(k + 1/2) / s`` of the run); the gate then keeps a confidence sequence per stratum,
    valid whatever the interleaving."""
    if strata is None:
        ids, of = case_ids(source, id_field), None
    else:
        ids, of = _strata_of(source, strata, id_field)
    duplicated = len(ids) - len(set(ids))
    if duplicated:
        raise FailgateError(
            f"{duplicated} case ids appear more than once; a plan orders distinct cases", source
        )
    drawn = secrets.randbits(32) if seed is None else seed
    rng = random.Random(drawn)
    if of is None:
        order = list(ids)
        rng.shuffle(order)
        return Plan(tuple(order), drawn, source.name)
    order = stratified_order(ids, of, rng)
    return Plan(tuple(order), drawn, source.name, tuple(of[i] for i in order), strata)


def stratified_order(ids: Sequence[str], of: Mapping[str, str], rng: random.Random
                     ) -> list[str]:
    """``ids`` permuted within each stratum (``of``: id -> stratum) and the strata
    interleaved in proportion: the ``k``-th of a stratum of ``s`` cases at ``(k + 1/2) / s``
    of the run (ties in the strata's sorted order)."""
    groups: dict[str, list[str]] = {}
    for case_id in ids:
        groups.setdefault(of[case_id], []).append(case_id)
    placed = []
    for rank, (_, members) in enumerate(sorted(groups.items())):
        rng.shuffle(members)
        size = len(members)
        placed += [(Fraction(2 * k + 1, 2 * size), rank, case_id)
                   for k, case_id in enumerate(members)]
    return [case_id for _, _, case_id in sorted(placed)]


def write_plan(plan: Plan, out: Path) -> None:
    document = {
        "format": PLAN_FORMAT,
        "seed": plan.seed,
        "source": plan.source,
        "cases": list(plan.ids),
    }
    if plan.strata is not None:
        document["strata"] = {"field": plan.field, "of": list(plan.strata)}
    temporary = out.with_name(out.name + ".tmp")
    temporary.write_text(
        json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    temporary.replace(out)


def read_plan(path: Path) -> Plan:
    from ..core.base.safeopen import read_regular
    from ..core.gate.sequential import MAX_PLANNED

    # a FIFO or a device refused, the size bounded: a plan of the most planned cases, each
    # id of 64 bytes
    text = read_regular(path, 64 * MAX_PLANNED).decode("utf-8", errors="replace")
    document = _parse_json(text, path)
    if not isinstance(document, dict) or document.get("format") != PLAN_FORMAT:
        raise FailgateError(f"not a plan: `failgate plan` writes one (format {PLAN_FORMAT})", path)
    ids, seed = document.get("cases"), document.get("seed")
    if (
        not isinstance(ids, list)
        or not ids
        or not all(isinstance(i, str) for i in ids)
        or type(seed) is not int
    ):
        raise FailgateError(
            "a plan needs a non-empty list of case ids (cases) and an integer seed", path
        )
    if len(set(ids)) != len(ids):
        raise FailgateError("the plan lists a case more than once", path)
    strata = document.get("strata")
    if strata is None:
        return Plan(tuple(ids), seed, str(document.get("source", "")))
    of = strata.get("of") if isinstance(strata, dict) else None
    field_name = strata.get("field") if isinstance(strata, dict) else None
    if (not isinstance(of, list) or len(of) != len(ids) or not all(isinstance(s, str) for s in of)
            or not isinstance(field_name, str)):
        raise FailgateError(
            "a plan's strata need a field and a stratum (a string) for each case", path
        )
    return Plan(tuple(ids), seed, str(document.get("source", "")), tuple(of), field_name)


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
        self.path = path if path is not None else Path(name)
        self.sink: CaseSink = CaseSink(ReportFile(self.path, name), taxonomy, app.read_spec())
        self.line = 0
        self._states = {look.name: look.state for look in self.gate.looks()}

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
        from ..core.reports.sink import CaseProblem

        try:
            case_id, category = self.sink.add(case)
        except CaseProblem as exc:
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
        released = (
            [(case_id, category)] if self.order is None else self.order.finish(case_id, category)
        )
        if not released:
            yield (
                f"finished {quoted(case_id)} ({category or 'passed'}): waiting for the "
                f"cases planned before it"
            )
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
            yield from self.changes(_parse_json(text, self.path, self.line))

    def _changes(self, case_id: str, category: str | None) -> Iterator[str]:
        yield (
            f"case {self.gate.n} of {self.gate.planned} {quoted(case_id)}: {category or 'passed'}"
        )
        for look in self.gate.looks():
            if look.state != self._states[look.name]:
                self._states[look.name] = look.state
                yield f"  {_look_text(look)}"


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
            count = sum(1 for line in handle if line.strip())
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
                    format_name, futility=request.futility, baseline=one_baseline(app))


def ended(feed: CaseGate, paid: int | None = None) -> Watched:
    """How a watched run ended: its outcome, settled or not, and the cases it ``paid`` for
    (started: at least those it settled on)."""
    done = Watched(feed.result(paid), feed.gate.settled)
    if done.settled is None:
        done.ended = (f"the run ended after {feed.gate.n} of {feed.gate.planned} planned "
                      "cases, before the verdict was settled")
    return done


def one_baseline(app: Failgate) -> Path | None:
    """The baseline run's report for paired mode: one file, or none."""
    given = app.config.baseline
    if not given:
        return None
    if len(given) > 1 or not given[0].is_file():
        raise FailgateError(
            "watch compares with one baseline report file (--baseline FILE)", given[0]
        )
    return given[0]
