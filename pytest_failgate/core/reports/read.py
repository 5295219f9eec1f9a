"""Loading one report file: JSON (``eval_summary`` shape, aggregate, array) or JSONL.

Cases are streamed into a ``Tallier`` one at a time and only the fields the
taxonomy reads are decoded (see ``jsonscan``). Every problem becomes a
``FailgateError`` naming the file, the line and the case.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import FailgateError, did_you_mean
from ..taxonomy import Decision, Tallier, Taxonomy, kind_of
from ..taxonomy.tally import RuleError
from .jsonscan import (
    FieldPicker,
    FieldValueError,
    JsonSyntaxError,
    NotAnObject,
    Raws,
    Wanted,
    decode_at,
    next_element,
    place,
    read_key,
    skip_value,
    skip_ws,
)
from .model import Report, ReportFile, SkippedFile, case_id
from .readers import ReportReader, report_from_cases

if TYPE_CHECKING:
    from ..taxonomy.expr import Compiled
    from ..taxonomy.model import Predicate

# Top-level aggregates kept from a report for cross-checks; everything else is skipped.
RECORDED_KEYS = ("failure_category_counts", "num_predictions", "abstention_outcomes")


@dataclass(frozen=True)
class MetricSpec:
    """A metric to average over the cases: its value, and which cases answered."""

    value: Compiled
    substantive: Predicate | None = None
    substantive_reads: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReadSpec:
    """What to measure while reading, beyond the taxonomy's categories.

    ``measures`` are predicates counted over every case (rate populations),
    ``slicers`` give each case a value per slice field, ``recorded`` names further
    top-level aggregates to keep (those contracts read), ``explain`` tries every
    rule on every failed case.
    """

    measures: Mapping[str, Compiled] = field(default_factory=dict)
    slicers: Mapping[str, Compiled] = field(default_factory=dict)
    recorded: tuple[str, ...] = ()
    explain: bool = False
    readers: tuple[ReportReader, ...] = ()  # other formats, tried in order
    metrics: Mapping[str, MetricSpec] = field(default_factory=dict)

    def tallier(self, taxonomy: Taxonomy) -> Tallier:
        """A tallier measuring what this spec asks for."""
        return Tallier(
            taxonomy, {text: c.holds for text, c in self.measures.items()}, self.explain,
            {name: c.function for name, c in self.slicers.items()},
            {name: (metric.value.function, metric.substantive)
             for name, metric in self.metrics.items()})

    def reads(self) -> list[str]:
        """The case fields the measures, slices and metrics read."""
        compiled = [*self.measures.values(), *self.slicers.values(),
                    *(metric.value for metric in self.metrics.values())]
        reads = [name for c in compiled for name in c.reads]
        reads += [name for metric in self.metrics.values() for name in metric.substantive_reads]
        return list(dict.fromkeys(reads))

Locate = Callable[[int], tuple[int, int]]
# what a case's rule fields decide: (decision, absent-field bits, ids rules read, the case)
Derived = tuple[Decision, int, tuple[Any, ...], dict[str, Any]]
_ABSENT: Any = object()  # the value the picker gives a field the case does not have


class _CaseError(Exception):
    """A problem with one case as a whole; the reader adds where the case is."""

    def __init__(self, position: int, message: str) -> None:
        super().__init__(message)
        self.position = position
        self.message = message


class _CaseSink:
    """Turns picked cases into tallied ones, checking that ids are unique."""

    def __init__(self, report: ReportFile, taxonomy: Taxonomy, spec: ReadSpec) -> None:
        self.report = report
        self.tallier = spec.tallier(taxonomy)
        declared = [f.name for f in taxonomy.fields]
        names = [*declared, *(name for name in spec.reads() if name not in declared)]
        id_only = [name for name in taxonomy.id_fields if name not in names]
        read_ids = [(names.index(n), 1 << names.index(n)) for n in taxonomy.id_fields
                    if n in names]
        tallier = self.tallier

        def decide(values: list[Any], absent: int) -> Derived:
            # An id a rule reads is a keyed field: hand its value back (unique values
            # make such cases uncacheable, which is correct, merely slower).
            ids = tuple(None if absent & bit else values[i] for i, bit in read_ids)
            case = {n: v for n, v in zip(names, values, strict=True) if v is not _ABSENT}
            return tallier.decide(case), absent, ids, case

        self.picker = FieldPicker(
            [Wanted(f.name, _ABSENT, f.problem) for f in taxonomy.fields]
            + [Wanted(name, _ABSENT) for name in names[len(declared):]], id_only, decide
        )
        # Where each id field's value comes from, in the order ids are tried.
        read_names = [n for n in taxonomy.id_fields if n in names]
        self._id_sources = [
            (True, read_names.index(n)) if n in names else (False, id_only.index(n))
            for n in taxonomy.id_fields
        ]
        self._ids_unread = not read_names and bool(id_only)
        self._seen: dict[bytes, int] = {}

    def add(self, derived: Derived, raws: Raws) -> None:
        """One picked case: its (decision, absent fields, ids rules read) and raw ids.

        Ids are compared as canonical JSON strings, so the common plain-string id is
        never decoded unless its case failed (and needs listing).
        """
        position = self.tallier.n_cases + 1
        raw = raws[0] if raws else None
        if self._ids_unread and raw is not None and raw[0] == 0x22 and b"\\" not in raw:
            key = raw  # the usual case: a plain string id, the first id field
        else:
            key = self._slow_key(derived[2], raws, position) or b'"#%d"' % position
        first = self._seen.setdefault(key, position)
        if first != position:
            raise _CaseError(
                position, f"duplicate case id '{case_id(key)}' (also case #{first})"
            )
        decision = derived[0]
        self.tallier.record(case_id(key) if decision[0] else "", decision, derived[1],
                            derived[3])

    def _slow_key(self, read_ids: tuple[Any, ...], raws: Raws, position: int) -> bytes | None:
        for from_rules, slot in self._id_sources:
            if from_rules:
                if read_ids[slot] is not None:
                    return self._canonical(read_ids[slot], position)
                continue
            raw = raws[slot]
            if raw is None or raw == b"null":
                continue
            plain = raw[0] == 0x22 and b"\\" not in raw
            return raw if plain else self._canonical(decode_at(raw, 0)[0], position)
        return None

    def _canonical(self, value: Any, position: int) -> bytes:
        if isinstance(value, str):
            return json.dumps(value, ensure_ascii=False).encode("utf-8")
        if type(value) is int:
            return b'"%d"' % value
        raise _CaseError(position, f"the case id is {kind_of(value)}; "
                         "it must be a string or an integer")

    def field_error(self, exc: FieldValueError, locate: Locate) -> FailgateError:
        line, col = locate(exc.index)
        return FailgateError(
            f"case #{self.tallier.n_cases + 1}: '{exc.field}' {exc.problem}",
            self.report.path, line, col,
        )

    def finish(self) -> Report:
        tally = self.tallier.result()
        if tally.n_cases == 0:
            raise FailgateError(
                "the report has no cases; a gate over zero cases would pass vacuously",
                self.report.path,
            )
        return Report(
            name=self.report.name,
            path=self.report.path,
            kind="cases",
            counts=dict(tally.counts),
            n_cases=tally.n_cases,
            tally=tally,
            id_keys=list(self._seen),
        )


def load_report(report: ReportFile, taxonomy: Taxonomy, spec: ReadSpec | None = None
                ) -> Report | SkippedFile:
    """Read one report file, or say why it is not a report.

    failgate's own JSON shapes are read first (and fast); a file they do not
    recognise is offered to the other readers whose suffixes match, in order.
    """
    spec = spec or ReadSpec()
    suffix = report.path.suffix
    if suffix == ".jsonl":
        return _read_jsonl(report, taxonomy, spec)
    found: Report | SkippedFile = SkippedFile(report.path, f"no reader for {suffix} files")
    if suffix == ".json":
        data = _read_bytes(report)
        try:
            found = _read_json(report, taxonomy, data, spec)
        except JsonSyntaxError as exc:
            raise FailgateError(f"invalid JSON: {exc.message}", report.path,
                                *place(data, exc.index)) from None
    if isinstance(found, SkippedFile):
        for reader in spec.readers:
            if suffix in reader.suffixes:
                output = reader.read(report.path)
                if output is not None:
                    return report_from_cases(report, taxonomy, spec, output)
    return found


def _read_bytes(report: ReportFile) -> bytes:
    try:
        data = report.path.read_bytes()
    except OSError as exc:
        raise FailgateError(f"cannot read: {exc.strerror}", report.path) from None
    return data[3:] if data.startswith(codecs.BOM_UTF8) else data


def _read_json(report: ReportFile, taxonomy: Taxonomy, data: bytes, spec: ReadSpec
               ) -> Report | SkippedFile:
    start = skip_ws(data, 0)
    if start == len(data):
        raise FailgateError("the file is empty", report.path)

    def locate(index: int) -> tuple[int, int]:
        return place(data, index)

    opener = data[start:start + 1]
    if opener == b"[":
        cases = _CaseSink(report, taxonomy, spec)
        end = _read_cases(data, start, cases, locate, report)
        _expect_end(data, end)
        return cases.finish()
    if opener != b"{":
        value, end = decode_at(data, start)
        _expect_end(data, end)
        return SkippedFile(report.path, f"a JSON {kind_of(value)}, not a report")

    sink: _CaseSink | None = None
    recorded: dict[str, Any] = {}
    places: dict[str, int] = {}
    index = skip_ws(data, start + 1)
    if data.startswith(b"}", index):
        end = index + 1
    else:
        while True:
            key, value_at = read_key(data, index)
            if key == "case_results":
                if sink is not None:
                    raise FailgateError("'case_results' appears twice", report.path,
                                        *locate(index))
                if not data.startswith(b"[", value_at):
                    raise FailgateError("'case_results' must be a list of cases",
                                        report.path, *locate(value_at))
                sink = _CaseSink(report, taxonomy, spec)
                end = _read_cases(data, value_at, sink, locate, report)
            elif key in RECORDED_KEYS or key in spec.recorded:
                recorded[key], end = decode_at(data, value_at)
                places[key] = value_at
            else:
                end = skip_value(data, value_at)
            following = next_element(data, end, b"}")
            if following is None:
                end = skip_ws(data, end) + 1
                break
            index = following
    _expect_end(data, end)

    def where(key: str) -> tuple[int, int]:
        return locate(places[key])

    if sink is not None:
        result = sink.finish()
        result.recorded = _check_recorded(report, recorded, where, taxonomy, strict=False)
        return result
    if "failure_category_counts" in recorded:
        return _aggregate(report, taxonomy, recorded, where)
    return SkippedFile(report.path, "JSON without case_results or failure_category_counts")


def _read_cases(data: bytes, start: int, sink: _CaseSink, locate: Locate,
                report: ReportFile) -> int:
    """Read the case array at ``data[start] == "["``; returns the index after it."""
    picker, add = sink.picker, sink.add
    try:
        for derived, raws in picker.iter_array(data, start):
            add(derived, raws)
    except FieldValueError as exc:
        raise sink.field_error(exc, locate) from None
    except NotAnObject as exc:
        raise FailgateError(f"case #{exc.position} is {kind_of(exc.value)}, not an object",
                            report.path, *locate(exc.index)) from None
    except _CaseError as exc:
        where = locate(_case_start(data, start, exc.position))
        raise FailgateError(f"case #{exc.position}: {exc.message}", report.path,
                            *where) from None
    except RuleError as exc:
        position = sink.tallier.n_cases + 1
        raise FailgateError(f"case #{position}: {exc}", report.path,
                            *locate(_case_start(data, start, position))) from None
    return picker.end


def _case_start(data: bytes, start: int, position: int) -> int:
    """Where the case at 1-based ``position`` of the array at ``start`` begins (errors only)."""
    index = skip_ws(data, start + 1)
    for _ in range(position - 1):
        following = next_element(data, skip_value(data, index), b"]")
        assert following is not None
        index = following
    return index


def _expect_end(data: bytes, end: int) -> None:
    rest = skip_ws(data, end)
    if rest != len(data):
        raise JsonSyntaxError("extra data after the JSON value", rest)


def _read_jsonl(report: ReportFile, taxonomy: Taxonomy, spec: ReadSpec) -> Report:
    sink = _CaseSink(report, taxonomy, spec)
    pick = sink.picker.pick
    try:
        handle = report.path.open("rb")
    except OSError as exc:
        raise FailgateError(f"cannot read: {exc.strerror}", report.path) from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if number == 1 and line.startswith(codecs.BOM_UTF8):
                line = line[3:]
            start = skip_ws(line, 0)
            if start == len(line):
                continue

            def locate(index: int, number: int = number, line: bytes = line) -> tuple[int, int]:
                return number, place(line, index)[1]

            try:
                if not line.startswith(b"{", start):
                    value, _ = decode_at(line, start)
                    raise FailgateError(
                        f"case #{sink.tallier.n_cases + 1} is {kind_of(value)}, not an object",
                        report.path, number, start + 1,
                    )
                derived, raws, end, comma = pick(line, start)
                if comma:
                    raise JsonSyntaxError("unexpected ',' after the case", end - 1)
                _expect_end(line, end)
            except JsonSyntaxError as exc:
                raise FailgateError(
                    f"invalid JSON: {exc.message}", report.path, *locate(exc.index)
                ) from None
            except FieldValueError as exc:
                raise sink.field_error(exc, locate) from None
            except RuleError as exc:
                raise FailgateError(f"case #{sink.tallier.n_cases + 1}: {exc}", report.path,
                                    number, start + 1) from None
            try:
                sink.add(derived, raws)
            except _CaseError as exc:
                raise FailgateError(f"case #{exc.position}: {exc.message}", report.path,
                                    number, start + 1) from None
    return sink.finish()


def _check_recorded(
    report: ReportFile,
    recorded: dict[str, Any],
    where: Callable[[str], tuple[int, int]],
    taxonomy: Taxonomy,
    *,
    strict: bool,
) -> dict[str, Any]:
    """Validate the recorded aggregates' shapes; ``strict`` also demands every category."""
    n = recorded.get("num_predictions")
    if "num_predictions" in recorded and (type(n) is not int or n < 0):
        raise FailgateError(
            f"num_predictions is {kind_of(n)} {n!r}; expected a whole number of cases",
            report.path, *where("num_predictions"),
        )
    counts = recorded.get("failure_category_counts")
    if "failure_category_counts" not in recorded:
        return recorded
    if not isinstance(counts, dict):
        raise FailgateError(
            f"failure_category_counts is {kind_of(counts)}; expected an object of counts",
            report.path, *where("failure_category_counts"),
        )
    for name, value in counts.items():
        if type(value) is not int or value < 0:
            raise FailgateError(
                f"failure_category_counts.{name} is {value!r}; expected a whole number",
                report.path, *where("failure_category_counts"),
            )
    if strict:
        names = taxonomy.category_names
        for name in counts:
            if name not in names:
                raise FailgateError(
                    f"failure_category_counts has '{name}', which is not a category of "
                    f"taxonomy {taxonomy.name}" + did_you_mean(name, names),
                    report.path, *where("failure_category_counts"),
                )
        absent = [name for name in names if name not in counts]
        if absent:
            raise FailgateError(
                "failure_category_counts lacks " + ", ".join(absent)
                + f" (taxonomy {taxonomy.name} counts every category, zeros included)",
                report.path, *where("failure_category_counts"),
            )
    return recorded


def _aggregate(
    report: ReportFile,
    taxonomy: Taxonomy,
    recorded: dict[str, Any],
    where: Callable[[str], tuple[int, int]],
) -> Report:
    _check_recorded(report, recorded, where, taxonomy, strict=True)
    counts = recorded["failure_category_counts"]
    n = recorded.get("num_predictions")
    failed = sum(counts.values())
    if n == 0:
        raise FailgateError(
            "num_predictions is 0; a gate over zero cases would pass vacuously",
            report.path, *where("num_predictions"),
        )
    if n is None and failed == 0:
        raise FailgateError(
            "every recorded count is 0 and no num_predictions says how many cases there were; "
            "a gate over zero cases would pass vacuously (record num_predictions)",
            report.path, *where("failure_category_counts"),
        )
    if n is not None and failed > n:
        raise FailgateError(
            f"failure_category_counts add up to {failed}, more than num_predictions {n}",
            report.path, *where("failure_category_counts"),
        )
    return Report(
        name=report.name,
        path=report.path,
        kind="aggregate",
        counts={name: counts[name] for name in taxonomy.category_names},
        n_cases=n,
        recorded=recorded,
    )
