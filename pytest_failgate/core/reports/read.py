"""Loading one report file: JSON (``eval_summary`` shape, aggregate, array) or JSONL.

Only the fields the taxonomy, measures and ids read are decoded (see
``jsondecode``); the cases go to a ``CaseSink`` like every other reader's. A
``.json`` file is read whole (its bytes, not its decoded text); JSONL streams a
line at a time. Every problem becomes a ``FailgateError`` naming the file, the
line and the case.
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.errors import FailgateError, did_you_mean
from ..base.safeopen import read_limit
from ..taxonomy import Taxonomy, kind_of
from ..taxonomy.expr.regex import group_matcher
from .jsondecode import JsonSyntaxError, LineError, ShapeError, case_line, decoder, start_of
from .jsonfile import describe, loads, top_level
from .locate import place
from .model import OWN_FORMAT, Report, ReportFile, SkippedFile
from .readers import ReaderOutput
from .sink import CaseProblem, CaseSink
from .source import HEAD_BYTES, ReportSource, reading
from .spec import ReadSpec

# ReadSpec: where callers import it
__all__ = ["RECORDED_KEYS", "Detected", "ReadSpec", "classify", "detect", "load_report"]

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .choice import TaxonomyChoice


# Top-level aggregates kept from a report for cross-checks; everything else is skipped.
RECORDED_KEYS = ("failure_category_counts", "num_predictions", "abstention_outcomes", "config")
# the object the seed's run format nests its aggregates under (``aggregate:
# {failure_category_counts: ...}``): its recorded keys are read as the top level's
NESTED = "aggregate"


@dataclass(frozen=True, kw_only=True)
class Detected:
    """A report file's format and the taxonomy that classifies it, decided in one step
    (``detect``): what every later step of reading the file receives."""

    file: ReportFile  # under the name its reader (or its taxonomy's ``report_name``) gives it
    format: str  # the reader that recognised it, or failgate's own shapes (``OWN_FORMAT``)
    format_default: str | None  # the taxonomy its reader names (None: none)
    taxonomy: Taxonomy  # what classifies its cases
    # a reader's cases; None: failgate's own shapes, read by suffix (or ``records:``)
    output: ReaderOutput | None = None


def load_report(report: ReportFile, choice: TaxonomyChoice,
                spec: ReadSpec | None = None) -> Report | SkippedFile:
    """Read one report file, or say why it is not a report.

    The file is opened once (``source.reading``): a FIFO or a device would block or never
    end, a file over the limit or a sparse text file is refused unread, and every read of
    it after (the readers' included) is served from that handle. Its format and its
    taxonomy are decided in one step (``detect``), with the run's ``choice`` (made once per
    run, at the gate level), then its cases are classified.
    """
    spec = spec or ReadSpec()
    with read_limit(spec.max_bytes), reading(report.path, spec.max_bytes) as source:
        # read_limit: an archive's members decompress within it too
        detected = detect(report, choice, spec, source)
        if isinstance(detected, SkippedFile):
            return detected
        return classify(detected, spec, source)


def probe_report(report: ReportFile, choice: TaxonomyChoice, spec: ReadSpec
                 ) -> tuple[str, str] | SkippedFile:
    """The report's name and format, as ``load_report`` would give them, learnt from its
    head (the readers' byte probe and ``claims``, ``detect``) without decoding its cases
    in failgate's own shapes: what the guard is told of a run. A reader's file is given to
    the reader as ``detect`` gives it (its name may be in the file: Inspect's header); a
    ``.json`` of failgate's own shapes whose head shows it is no report (a JSON scalar, an
    object ending without ``case_results`` or ``failure_category_counts``) is skipped as
    reading it would skip it."""
    with read_limit(spec.max_bytes), reading(report.path, spec.max_bytes) as source:
        detected = detect(report, choice, spec, source)
        if isinstance(detected, SkippedFile) or detected.format != OWN_FORMAT:
            return detected if isinstance(detected, SkippedFile) else (detected.file.name,
                                                                        detected.format)
        if report.path.suffix == ".json" and not detected.taxonomy.records:
            why = _not_a_report(_without_bom(source.head()), report.path)
            if why is not None:
                return SkippedFile(report.path, why)
    return detected.file.name, detected.format


def _not_a_report(head: bytes, path: Path) -> str | None:
    """Why a ``.json`` file whose first bytes are ``head`` is skipped as no report, where
    those bytes already say (``_read_json``'s reasons), else None."""
    first = head[start_of(head):start_of(head) + 1]
    whole = len(head) < HEAD_BYTES  # the head is the file
    if first in (b"[", b"") or not (whole or first == b"{"):
        return None  # a list of cases, an empty file (an error), or more than the head
    if first != b"{":
        return f"a JSON {kind_of(loads(head, path))}, not a report"
    found = top_level(head)
    if found is None or not found[1] or {b"case_results", b"failure_category_counts"} & set(
            found[0]):
        return None
    return "JSON without case_results or failure_category_counts"


def detect(report: ReportFile, choice: TaxonomyChoice, spec: ReadSpec,
           source: ReportSource) -> Detected | SkippedFile:
    """The file's format and its taxonomy, decided once.

    A taxonomy written for this report that describes its own format (``records:``)
    reads it before any reader. Else the readers (plugins' first, then the built-in
    formats) are offered the file in order, and the first to recognise it reads it; the
    taxonomy is the one ``choice`` picks for its name and format. A file none recognises
    is failgate's own JSON shapes.
    """
    suffix = report.path.suffix
    described = choice.describing(report.name)
    if described is not None and suffix == ".json":  # a format in YAML: its own reading
        return Detected(file=_pattern_named(report, described), format=OWN_FORMAT,
                        format_default=None, taxonomy=described)
    for reader in spec.readers:
        if suffix not in reader.suffixes or not reader.claims(_without_bom(source.head())):
            continue
        output = reader.read(report.path)
        if output is not None and output.skipped is not None:
            return SkippedFile(report.path, output.skipped, reader.name)
        if output is not None:
            named = renamed(report, output)
            return Detected(file=named, format=reader.name, format_default=reader.taxonomy,
                            taxonomy=choice.pick(named.name, reader.name, reader.taxonomy),
                            output=output)
    if suffix not in (".json", ".jsonl"):
        return SkippedFile(report.path, f"no reader for {suffix} files")
    chosen = choice.pick(report.name, OWN_FORMAT, None)
    return Detected(file=_pattern_named(report, chosen), format=OWN_FORMAT,
                    format_default=None, taxonomy=chosen)


def classify(detected: Detected, spec: ReadSpec, source: ReportSource) -> Report | SkippedFile:
    """The detected file's cases, checked and classified by its taxonomy."""
    if detected.output is not None:
        return _from_reader(detected, detected.output, spec)
    if detected.file.path.suffix == ".jsonl":
        return _read_jsonl(detected, spec, source)
    if detected.taxonomy.records:
        return _read_records(detected, spec, source)
    return _read_json(detected, spec, source)


def _pattern_named(report: ReportFile, taxonomy: Taxonomy) -> ReportFile:
    """The report under its taxonomy's ``report_name`` pattern (a timestamp dropped)."""
    if taxonomy.report_name is None:
        return report
    stem = report.name.rpartition("/")[2]
    name = group_matcher(taxonomy.report_name)(stem)  # linear time: no backtracking
    return renamed(report, ReaderOutput(cases=[], name=name)) if name else report


def _read_records(detected: Detected, spec: ReadSpec, source: ReportSource) -> Report:
    """A JSON file whose cases sit at the taxonomy's ``records`` path (a format in YAML)."""
    report, taxonomy = detected.file, detected.taxonomy
    data = _without_bom(source.data())
    value = loads(data, report.path)
    for depth, key in enumerate(taxonomy.records, start=1):
        if not isinstance(value, dict) or key not in value:
            where = ".".join(taxonomy.records[:depth])
            raise FailgateError(f"no '{where}' in the file: taxonomy {taxonomy.name} reads its "
                                f"cases from {'.'.join(taxonomy.records)}, so this is another "
                                "format", report.path)
        value = value[key]
    if not isinstance(value, list):
        raise FailgateError(f"{'.'.join(taxonomy.records)} is {describe(value)}; expected the "
                            "list of cases", report.path, *place(data, taxonomy.records))
    sink = CaseSink(report, taxonomy, spec)
    try:
        sink.add_all(value)
    except CaseProblem as exc:
        loc: tuple[str | int, ...] = (*taxonomy.records, exc.position - 1,
                                      *([exc.field] if exc.field else []))
        raise FailgateError(str(exc), report.path, *place(data, loc)) from None
    return sink.finish()


def renamed(report: ReportFile, output: ReaderOutput) -> ReportFile:
    """The report under the name its reader gives it (a stem without timestamp, a folder)."""
    if output.name is None:
        return report
    folder, _, _ = report.name.rpartition("/")
    if output.name == "":
        return ReportFile(report.path, folder or report.path.parent.name)
    return ReportFile(report.path, f"{folder}/{output.name}" if folder else output.name)


def _without_bom(data: bytes) -> bytes:
    return data[3:] if data.startswith(codecs.BOM_UTF8) else data


def _place(source: ReportSource, loc: tuple[str | int, ...]) -> tuple[int | None, int | None]:
    """Where ``loc`` is in the file (its bytes read again: only errors need places)."""
    return place(_without_bom(source.data()), loc)


def _read_json(detected: Detected, spec: ReadSpec, source: ReportSource) -> Report | SkippedFile:
    """Failgate's own JSON shapes: ``eval_summary`` (cases under ``case_results``), an
    array of cases, or an aggregate (``failure_category_counts``)."""
    report, taxonomy = detected.file, detected.taxonomy
    data = _without_bom(source.data())
    if start_of(data) == len(data):
        raise FailgateError("the file is empty", report.path)
    sink = CaseSink(report, taxonomy, spec)
    recorded_keys = tuple(dict.fromkeys((*RECORDED_KEYS, NESTED, *spec.recorded)))
    try:
        document = decoder().document(data, sink.fields, recorded_keys)
    except JsonSyntaxError as exc:
        raise FailgateError(f"invalid JSON: {exc.message}", report.path, exc.line,
                            exc.col) from None
    except ShapeError as exc:
        what = ("'case_results' must be a list of cases" if exc.loc == ("case_results",)
                else f"case #{int(exc.loc[-1]) + 1} {exc.message}")
        raise FailgateError(what, report.path, *place(data, exc.loc)) from None
    del data  # a large report's bytes need not outlive decoding
    source.release()

    if document.kind not in ("object", "array"):
        return SkippedFile(report.path, f"a JSON {document.kind}, not a report")
    nested = _lift_nested(document.top, report, source)
    if NESTED not in spec.recorded:  # kept only where a contract or floor asks for it
        document.top.pop(NESTED, None)

    def where(key: str) -> tuple[int | None, int | None]:
        return _place(source, nested.get(key, (key,)))
    if document.cases is None:
        if "failure_category_counts" in document.top:
            return _aggregate(report, taxonomy, document.top, where)
        return SkippedFile(report.path, "JSON without case_results or failure_category_counts")
    array: tuple[str | int, ...] = ("case_results",) if document.kind == "object" else ()
    cases, document.cases = document.cases, None
    form = document.form
    try:
        sink.add_all(cases, form.struct, form.missing, form.to_mapping)
    except CaseProblem as exc:
        loc = (*array, exc.position - 1, *([exc.field] if exc.field else []))
        raise FailgateError(str(exc), report.path, *_place(source, loc)) from None
    del cases  # the decoded cases need not outlive classifying
    result = sink.finish()
    result.recorded = _check_recorded(report, document.top, where, taxonomy, strict=False)
    config = result.recorded.pop("config", None)  # an eval_summary's run configuration
    result.config = config if isinstance(config, dict) else None
    return result


def _lift_nested(top: dict[str, Any], report: ReportFile,
                 source: ReportSource) -> dict[str, tuple[str, ...]]:
    """Read the recorded keys nested under ``aggregate`` (the seed's format) as if at the
    top level (in place), so they are cross-checked the same way; the place of each one
    lifted. The same key at both levels with two values is refused: which one the run
    recorded cannot be told."""
    nested = top.get(NESTED)
    if not isinstance(nested, dict):
        return {}
    lifted: dict[str, tuple[str, ...]] = {}
    for key in RECORDED_KEYS:
        if key not in nested or key == "config":
            continue
        if key in top and top[key] != nested[key]:
            raise FailgateError(
                f"{NESTED}.{key} differs from the top level's {key}; record it once",
                report.path, *_place(source, (NESTED, key)))
        top[key] = nested[key]
        lifted[key] = (NESTED, key)
    return lifted


def _read_jsonl(detected: Detected, spec: ReadSpec, source: ReportSource) -> Report:
    """Failgate's own JSON Lines, streamed from the open file and decoded a block of lines
    at a time (``jsondecode.stream``); an error names its line, found again for a case's."""
    report, taxonomy = detected.file, detected.taxonomy
    sink = CaseSink(report, taxonomy, spec)
    found = decoder()
    form = found.form(sink.fields)
    with source.handle() as handle:
        try:
            sink.add_all(found.lines(handle, sink.fields), form.struct, form.missing,
                         form.to_mapping)
        except LineError as exc:
            if isinstance(exc.error, JsonSyntaxError):
                raise FailgateError(f"invalid JSON: {exc.error.message}", report.path,
                                    exc.number, exc.error.col) from None
            raise FailgateError(f"case #{exc.case} {exc.error.message}", report.path,
                                exc.number, exc.col) from None
        except CaseProblem as exc:
            handle.seek(0)
            raise FailgateError(str(exc), report.path,
                                *case_line(handle, exc.position)) from None
    return sink.finish()


def _check_recorded(
    report: ReportFile,
    recorded: dict[str, Any],
    where: Callable[[str], tuple[int | None, int | None]],
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
                    f"failure_category_counts has {name!r}, which is not a category of "
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
    where: Callable[[str], tuple[int | None, int | None]],
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
        taxonomy=taxonomy,
        recorded=recorded,
    )


def _from_reader(detected: Detected, output: ReaderOutput, spec: ReadSpec) -> Report:
    """Classify a reader's cases into a report, checking them as failgate's own reader does."""
    file, taxonomy = detected.file, detected.taxonomy
    if output.uncounted is not None:
        return _uncounted(detected, output)
    sink = CaseSink(file, taxonomy, spec)
    try:
        sink.add_all(output.cases)
    except CaseProblem as exc:
        raise FailgateError(str(exc), file.path) from None
    report = sink.finish(recorded=output.recorded, contradictions=output.contradictions,
                         format_name=detected.format, format_default=detected.format_default,
                         config=output.config)
    report.run_order = output.run_order
    report.repeat_unit = output.repeat_unit
    report.interrupted = output.interrupted or short_of(report.n_cases, output.expected)
    report.instrument = output.instrument
    return report


def short_of(n_cases: int | None, expected: int | None) -> str | None:
    """Why a run whose tool declared ``expected`` cases and wrote fewer did not finish;
    None when it has them all (or declared nothing)."""
    if expected is None or n_cases is None or n_cases >= expected:
        return None
    return (f"it holds {n_cases} of the {expected} cases its run declared "
            f"({expected - n_cases} missing): it stopped part way")


def _uncounted(detected: Detected, output: ReaderOutput) -> Report:
    """An aggregate that counts no category (``ReaderOutput.uncounted``): its size and
    recorded values only. A case handed over with it would be silently dropped: refused."""
    file, taxonomy, format_name = detected.file, detected.taxonomy, detected.format
    if any(True for _ in output.cases):
        raise FailgateError(f"the {format_name} reader gave cases and said the file has none",
                            file.path)
    n = output.recorded.get("num_predictions")
    return Report(name=file.name, path=file.path, kind="aggregate", counts={},
                  n_cases=n if type(n) is int else None, recorded=output.recorded,
                  taxonomy=taxonomy, format=format_name, uncounted=output.uncounted,
                  run_order=output.run_order, interrupted=output.interrupted,
                  instrument=output.instrument)
