"""Loading one report file: JSON (``eval_summary`` shape, aggregate, array) or JSONL.

Cases are streamed into a ``Tallier`` one at a time and only the fields the
taxonomy reads are decoded (see ``jsonscan``). Every problem becomes a
``FailgateError`` naming the file, the line and the case.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import FailgateError, did_you_mean, line_col
from ..taxonomy import Tallier, Taxonomy, kind_of
from .jsonscan import (
    FieldPicker,
    FieldValueError,
    JsonSyntaxError,
    decode_at,
    next_element,
    read_key,
    skip_value,
    skip_ws,
    Wanted,
)
from .model import Report, ReportFile, SkippedFile

# Top-level aggregates kept from a report for cross-checks; everything else is skipped.
RECORDED_KEYS = ("failure_category_counts", "num_predictions", "abstention_outcomes")

Locate = Callable[[int], tuple[int, int]]


def _id_problem(value: Any) -> str | None:
    if isinstance(value, str) or type(value) is int or value is None:
        return None
    return f"is {kind_of(value)}; a case id must be a string or an integer"


class _CaseSink:
    """Turns picked cases into tallied ones, checking that ids are unique."""

    def __init__(self, report: ReportFile, taxonomy: Taxonomy) -> None:
        self.report = report
        self.tallier = Tallier(taxonomy)
        self._names = [f.name for f in taxonomy.fields]
        id_only = [name for name in taxonomy.id_fields if name not in self._names]
        self.picker = FieldPicker(
            [Wanted(f.name, f.default, f.problem) for f in taxonomy.fields]
            + [Wanted(name, None, _id_problem, memo=False) for name in id_only]
        )
        fields = self.picker.fields
        self._id_slots = [(fields.index(name), 1 << fields.index(name))
                          for name in taxonomy.id_fields]
        self._seen: dict[str, int] = {}

    def add(self, values: list[Any], absent: int) -> None:
        """One picked case: its values in picker field order and its absent-field bits."""
        position = self.tallier.n_cases + 1
        case_id = f"#{position}"
        for slot, bit in self._id_slots:
            value = values[slot]
            if value is not None and not absent & bit:
                case_id = value if isinstance(value, str) else str(value)
                first = self._seen.setdefault(case_id, position)
                if first != position:
                    raise FailgateError(
                        f"case #{position}: duplicate case id '{case_id}' (also case #{first})",
                        self.report.path,
                    )
                break
        self.tallier.add_complete(case_id, dict(zip(self._names, values, strict=False)), absent)

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
        )


def load_report(report: ReportFile, taxonomy: Taxonomy) -> Report | SkippedFile:
    """Read one report file, or say why it is not a report."""
    if report.path.suffix == ".jsonl":
        return _read_jsonl(report, taxonomy)
    text = _read_text(report)
    try:
        return _read_json(report, taxonomy, text)
    except JsonSyntaxError as exc:
        line, col = exc.place(text)
        raise FailgateError(f"invalid JSON: {exc.message}", report.path, line, col) from None


def _read_text(report: ReportFile) -> str:
    try:
        data = report.path.read_bytes()
    except OSError as exc:
        raise FailgateError(f"cannot read: {exc.strerror}", report.path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FailgateError(f"not UTF-8 text (byte {exc.start})", report.path) from None
    return text[1:] if text.startswith("\ufeff") else text


def _read_json(report: ReportFile, taxonomy: Taxonomy, text: str) -> Report | SkippedFile:
    start = skip_ws(text, 0)
    if start == len(text):
        raise FailgateError("the file is empty", report.path)

    def locate(index: int) -> tuple[int, int]:
        return line_col(text, index)

    opener = text[start]
    if opener == "[":
        sink = _CaseSink(report, taxonomy)
        end = _read_cases(text, start, sink, locate, report)
        _expect_end(text, end)
        return sink.finish()
    if opener != "{":
        value, end = decode_at(text, start)
        _expect_end(text, end)
        return SkippedFile(report.path, f"a JSON {kind_of(value)}, not a report")

    sink = None
    recorded: dict[str, Any] = {}
    places: dict[str, int] = {}
    index = skip_ws(text, start + 1)
    if text.startswith("}", index):
        end = index + 1
    else:
        while True:
            key, value_at = read_key(text, index)
            if key == "case_results":
                if sink is not None:
                    raise FailgateError("'case_results' appears twice", report.path,
                                        *locate(index))
                if not text.startswith("[", value_at):
                    raise FailgateError("'case_results' must be a list of cases",
                                        report.path, *locate(value_at))
                sink = _CaseSink(report, taxonomy)
                end = _read_cases(text, value_at, sink, locate, report)
            elif key in RECORDED_KEYS:
                recorded[key], end = decode_at(text, value_at)
                places[key] = value_at
            else:
                end = skip_value(text, value_at)
            following = next_element(text, end, "}")
            if following is None:
                end = skip_ws(text, end) + 1
                break
            index = following
    _expect_end(text, end)

    def where(key: str) -> tuple[int, int]:
        return locate(places[key])

    if sink is not None:
        result = sink.finish()
        result.recorded = _check_recorded(report, recorded, where, taxonomy, strict=False)
        return result
    if "failure_category_counts" in recorded:
        return _aggregate(report, taxonomy, recorded, where)
    return SkippedFile(report.path, "JSON without case_results or failure_category_counts")


def _read_cases(text: str, start: int, sink: _CaseSink, locate: Locate,
                report: ReportFile) -> int:
    """Read the case array at ``text[start] == "["``; returns the index after it."""
    pick = sink.picker.pick
    add = sink.add
    index = skip_ws(text, start + 1)
    if text.startswith("]", index):
        return index + 1
    while True:
        if not text.startswith("{", index):
            value, _ = decode_at(text, index)
            raise FailgateError(
                f"case #{sink.tallier.n_cases + 1} is {kind_of(value)}, not an object",
                report.path, *locate(index),
            )
        try:
            values, absent, end, comma = pick(text, index)
        except FieldValueError as exc:
            raise sink.field_error(exc, locate) from None
        add(values, absent)
        if comma:
            if text.startswith("]", end):
                raise JsonSyntaxError("trailing comma before ']'", end)
            index = end
        elif text.startswith("]", end):
            return end + 1
        else:
            found = "the end of the file" if end >= len(text) else repr(text[end])
            raise JsonSyntaxError(f"expected ',' or ']' after a case, found {found}", end)


def _expect_end(text: str, end: int) -> None:
    rest = skip_ws(text, end)
    if rest != len(text):
        raise JsonSyntaxError("extra data after the JSON value", rest)


def _read_jsonl(report: ReportFile, taxonomy: Taxonomy) -> Report:
    sink = _CaseSink(report, taxonomy)
    pick = sink.picker.pick
    try:
        handle = report.path.open("rb")
    except OSError as exc:
        raise FailgateError(f"cannot read: {exc.strerror}", report.path) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise FailgateError(
                    f"not UTF-8 text (byte {exc.start} of the line)", report.path, number
                ) from None
            if number == 1 and line.startswith("\ufeff"):
                line = line[1:]
            start = skip_ws(line, 0)
            if start == len(line):
                continue

            def locate(index: int, number: int = number) -> tuple[int, int]:
                return number, index + 1

            try:
                if line[start] != "{":
                    value, _ = decode_at(line, start)
                    raise FailgateError(
                        f"case #{sink.tallier.n_cases + 1} is {kind_of(value)}, not an object",
                        report.path, number, start + 1,
                    )
                values, absent, end, comma = pick(line, start)
                if comma:
                    raise JsonSyntaxError("unexpected ',' after the case", end - 1)
                _expect_end(line, end)
            except JsonSyntaxError as exc:
                raise FailgateError(
                    f"invalid JSON: {exc.message}", report.path, number, exc.index + 1
                ) from None
            except FieldValueError as exc:
                raise sink.field_error(exc, locate) from None
            sink.add(values, absent)
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
