"""Where every reader's cases go: checked, given a unique id, classified and counted.

A reader (failgate's own JSON and JSONL, karenina, any plugin's) decodes cases
into mappings and hands them to a ``CaseSink`` (``add_all``), so every format gets
the same checks (field kinds, unique ids) and the same classification, and no
report needs to be held in memory as a whole. ``add`` is the reference, one case at
a time; ``add_all`` runs the taxonomy's generated loop (``scan``), which hands
``add`` every case it does not take plainly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

from ..base.confine import shown
from ..base.errors import FailgateError
from ..taxonomy import kind_of
from ..taxonomy.expr import ExprRuntimeError
from ..taxonomy.model import COMPOSITE, metric_number
from ..taxonomy.tally import RuleError, nested_absent
from .model import OWN_FORMAT, Report
from .scan import MISSING, LoopState, Scan, build_scan, fine_types

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from pathlib import Path

    from ..taxonomy import Taxonomy
    from ..taxonomy.model import CaseMetric
    from .model import ReportFile
    from .spec import ReadSpec


SAMPLE = 64  # cases kept to see which fields ``failed`` reads (``undecided_fields``)

# Cases taken one at a time by ``add`` before the generated loop is built (and used for
# the rest): a report this small is done before the loop would be.
SCAN_AFTER = 1000
DIGEST_CHARS = 16  # a case's content digest: the first 64 bits of its SHA-256, in hex


def content_digest(case: Mapping[str, Any], names: Sequence[str]) -> str:
    """A case's content as its taxonomy reads it: the declared fields it has (the fields
    the rules read), canonical JSON, hashed. A gold label is valid for this content only:
    a case whose answer changed so that a rule could read it differently is another case.
    """
    import hashlib  # (only a labelled run keeps digests)

    present = {name: case[name] for name in names if name in case}
    text = json.dumps(present, sort_keys=True, ensure_ascii=True, default=repr,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:DIGEST_CHARS]


class UnfitTaxonomy(FailgateError):
    """A report of failgate's own shape none of whose cases has the fields its taxonomy
    reads: the gate adds how to give another taxonomy, in the words of the front end and
    the stage of the project (a new ceilings file, or the ``taxonomy:`` of one)."""


class CaseProblem(Exception):
    """Something wrong with the case at 1-based ``position`` (and in its ``field``, if
    one); its reader adds the place."""

    def __init__(self, position: int, message: str, field: str | None = None) -> None:
        super().__init__(f"case #{position}: {message}")
        self.position = position
        self.message = message
        self.field = field


def path_value(case: Mapping[str, Any], path: str) -> Any:
    """A dotted path's value in a case (``metadata.question_id``); ``None`` when absent."""
    value: Any = case
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def case_id(case: Mapping[str, Any], id_fields: Sequence[str], position: int
            ) -> tuple[str, str | None]:
    """The gate's case-id rule, stated once (the gate's reading and ``failgate plan``'s):
    the first of ``id_fields`` the case has (a dotted path, or parts joined with ``+``,
    their values joined with "/"), as the string it is compared by (an integer id as its
    digits, so ``5`` and ``"5"`` are one id), and the field it came from; ``#<position>``
    and None for a case without one."""
    for name in id_fields:
        if COMPOSITE in name:  # provider.id+testIdx: every part, joined with "/"
            parts = [path_value(case, part) for part in name.split(COMPOSITE)]
            if any(part is None for part in parts):
                continue
            for part, value in zip(name.split(COMPOSITE), parts, strict=True):
                if type(value) is not int and not isinstance(value, str):
                    raise CaseProblem(position, f"the case id part '{part}' is "
                                      f"{kind_of(value)}; it must be a string or an integer")
            return "/".join(str(part) for part in parts), name
        value = case.get(name) if "." not in name else path_value(case, name)
        if value is None:
            continue
        if isinstance(value, str):
            return (value if type(value) is str else str.__str__(value)), name
        if type(value) is int:
            return str(value), name
        raise CaseProblem(position, f"the case id '{name}' is {kind_of(value)}; it must be "
                          "a string or an integer")
    return f"#{position}", None


class CaseSink:
    """Takes decoded cases one at a time and turns them into a ``Report``."""

    def __init__(self, file: ReportFile, taxonomy: Taxonomy, spec: ReadSpec) -> None:
        self.file = file
        self.taxonomy = taxonomy
        self.tallier = spec.tallier(taxonomy)
        self._lacks = taxonomy.lacks if taxonomy.required else None
        self._id_fields = taxonomy.id_fields
        self._checks = [(f.name, self.tallier.bit(f.name), *fine_types(f)[:2], f.problem)
                        for f in taxonomy.fields]
        self._spec = spec
        self._nested = [(path, self.tallier.bit(path)) for path in taxonomy.nested_paths
                        if path not in taxonomy.field_index]
        # The top-level keys a JSON reader must decode: what rules, measures and ids read.
        names = [f.name for f in taxonomy.fields] + spec.reads()
        names += [part.split(".")[0] for name in taxonomy.id_fields
                  for part in name.split(COMPOSITE)]
        self.fields = tuple(dict.fromkeys(names))
        self._seen: dict[str, int] = {}  # case id -> its position
        self._metrics = taxonomy.metrics
        self._sample: list[Mapping[str, Any]] = []  # the first cases, for ``check_fit``
        self.case_metrics: dict[str, dict[str, float]] = {m.name: {} for m in taxonomy.metrics}
        # the cases a rule met a NaN or infinite number in (position, id, what): a whole
        # report is read first, so the error gives their count (``add_all``, ``finish``)
        self._nonfinite: list[tuple[int, str, str]] = []
        self._bulk = False
        self._digests: dict[str, str] | None = {} if spec.digests else None
        self._declared = tuple(f.name for f in taxonomy.fields)

    @property
    def n_cases(self) -> int:
        return self.tallier.n_cases

    def add(self, case: Any) -> tuple[str, str | None]:
        """Check, identify, classify and count one case; a ``CaseProblem`` if it is wrong.
        Returns its id and its category (None: it passed), for a reader of one case at a
        time (``failgate watch``)."""
        position = self.tallier.n_cases + 1
        if not isinstance(case, Mapping):
            raise CaseProblem(position, f"is {kind_of(case)}, not an object")
        absent = 0
        for name, bit, fine, fine_items, problem in self._checks:
            if name not in case:
                absent |= bit
                continue
            value = case[name]
            if type(value) in fine or (type(value) is list and fine_items is not None
                                       and all(type(item) in fine_items for item in value)):
                continue
            found = problem(tuple(value) if type(value) is list else value)
            if found is not None:
                raise CaseProblem(position, f"'{name}' {found}", name)
        view = {k: tuple(v) if type(v) is list else v for k, v in case.items()}
        for path, bit in self._nested:
            if nested_absent(view, path):
                absent |= bit
        if self._lacks is not None:
            lacking = self._lacks(view)
            if lacking is not None:
                raise CaseProblem(position, f"no '{lacking}', which taxonomy "
                                  f"{self.taxonomy.name} requires")
        key = self._key(view, position)
        first = self._seen.setdefault(key, position)
        if first != position:
            raise CaseProblem(position, f"duplicate case id {shown(repr(str(key)))} "
                                        f"(also case #{first})")
        try:
            decision = self.tallier.decide(view)
        except RuleError as exc:
            return self._undecided(position, key, exc)
        category = self.tallier.record(key if decision[0] else "", decision, absent, view)
        self._keep(key, view, position)
        return key, category

    def _keep(self, key: str, view: Mapping[str, Any], position: int) -> None:
        """What the report keeps of one case beyond its category: its content digest, a
        few first cases, its metrics' values."""
        if self._digests is not None:
            self._digests[key] = content_digest(view, self._declared)
        if len(self._sample) < SAMPLE:
            self._sample.append(view)
        for metric in self._metrics:
            value = _metric_value(metric, view, position)
            if value is not None:
                self.case_metrics[metric.name][key] = value

    def _undecided(self, position: int, key: str, exc: RuleError) -> tuple[str, None]:
        """A case its rules could not decide: a ``CaseProblem``, unless a rule met a NaN
        or infinite number while a whole report is read, which is counted and named with
        the others at its end (``nonfinite_error``)."""
        if not (exc.nonfinite and self._bulk):
            raise CaseProblem(position, str(exc)) from None
        self._nonfinite.append((position, key, str(exc)))
        self.tallier.n_cases += 1
        return key, None

    def add_all(self, cases: Iterable[Any], struct: type | None = None, missing: Any = MISSING,
                to_mapping: Callable[[Any], Any] | None = None) -> None:
        """``add`` every case, through the taxonomy's generated loop where it has one.

        Cases are dicts, or instances of a decoder's ``struct`` (attributes ``f0``, ...
        for ``fields``, ``missing`` where absent) that ``to_mapping`` turns into dicts
        for ``add``. The loop hands ``add`` every case it does not take plainly.
        """
        self._bulk = True
        try:
            self._add_all(cases, struct, missing, to_mapping)
        finally:
            self._bulk = False

    def _add_all(self, cases: Iterable[Any], struct: type | None, missing: Any,
                 to_mapping: Callable[[Any], Any] | None) -> None:
        convert = to_mapping or (lambda case: case)
        rest: Iterator[Any] = iter(cases)
        scan = None
        if not isinstance(cases, list) or len(cases) > SCAN_AFTER:
            # the first cases one by one: building the loop costs about as much
            for case in islice(rest, SCAN_AFTER):
                self.add(convert(case))
            following = next(rest, MISSING)
            if following is not MISSING:
                rest = chain((following,), rest)
                scan = _scan(self, struct, missing)
        if scan is None:
            for case in rest:
                self.add(convert(case))
            return
        tallier = self.tallier

        def slow(case: Any, n_cases: int) -> int:
            tallier.n_cases = n_cases
            self.add(convert(case))
            return tallier.n_cases

        def count(n_cases: int) -> None:
            tallier.n_cases = n_cases

        scan.function(rest, self._state(scan), slow, count)

    def classify(self, cases: list[Any], out: list[tuple[str, str | None]],
                 struct: type | None = None, missing: Any = MISSING,
                 to_mapping: Callable[[Any], Any] | None = None) -> None:
        """``add`` each case (as ``add_all`` takes them) in order, through the generated
        loop where the taxonomy has one, appending each one's id and category (None:
        passed) to ``out``: what ``add`` returns, for a reader of cases already there in
        bulk (``failgate watch``).
        Unlike ``add_all``, a case a rule cannot decide raises, as ``add`` does; on a
        ``CaseProblem`` ``out`` holds the cases before the one refused.

        The loop returns nothing a case; it records every case's id in ``_seen`` in the
        cases' order (the position it maps to rising) and every failed case's id at the
        end of its category's list, so those, read from their ends, are what it decided."""
        scan = _scan(self, struct, missing)
        convert = to_mapping or (lambda case: case)
        seen, before = self._seen, len(self._seen)
        lists = list(self.tallier.id_lists.items())
        marks = [len(ids) for _, ids in lists]
        refused: CaseProblem | None = None
        try:
            if scan is None:
                for case in cases:
                    self.add(convert(case))
            else:
                tallier, add = self.tallier, self.add

                def slow(case: Any, n_cases: int) -> int:
                    tallier.n_cases = n_cases
                    add(convert(case))
                    return tallier.n_cases

                def count(n_cases: int) -> None:
                    tallier.n_cases = n_cases

                scan.function(cases, self._state(scan), slow, count)
        except CaseProblem as exc:
            refused = exc
            raise
        finally:
            failed = {key: name for (name, ids), mark in zip(lists, marks, strict=True)
                      for key in ids[mark:]}
            keys = list(islice(reversed(seen), len(seen) - before))
            keys.reverse()
            if refused is not None:  # ``add`` may have seen the refused case's id
                keys = [key for key in keys if seen[key] < refused.position]
            out.extend((key, failed.get(key)) for key in keys)

    def _state(self, scan: Scan) -> LoopState:
        """What the generated loop updates, and the sink's own code it calls where a case
        needs it (views of a case for examples, metrics and dotted ids)."""
        names = scan.view_names
        bits = [1 << i for i in range(len(names))]

        def view(mask: int, values: tuple[Any, ...]) -> dict[str, Any]:
            return {name: value for name, value, bit in zip(names, values, bits, strict=True)
                    if not mask & bit}

        def metrics(case: Mapping[str, Any], position: int) -> list[tuple[str, float]]:
            found = [(m.name, _metric_value(m, case, position)) for m in self._metrics]
            return [(name, value) for name, value in found if value is not None]

        def store_metrics(key: str, values: list[tuple[str, float]]) -> None:
            for name, value in values:
                self.case_metrics[name][key] = value

        digests, declared = self._digests, self._declared

        def store_digest(key: str, case: Mapping[str, Any]) -> None:
            if digests is not None:
                digests[key] = content_digest(case, declared)

        return LoopState(tally=self.tallier.target(), seen=self._seen,
                         n_cases=self.tallier.n_cases, view=view, key_of=self._key,
                         metrics=metrics, store_metrics=store_metrics, sample=self._sample,
                         room=max(0, SAMPLE - len(self._sample)), store_digest=store_digest)

    def _key(self, case: Mapping[str, Any], position: int) -> str:
        """The case's id as the string it is compared by (``case_id``)."""
        return case_id(case, self._id_fields, position)[0]

    def finish(self, *, recorded: dict[str, Any] | None = None,
               contradictions: list[str] | None = None, format_name: str = OWN_FORMAT,
               format_default: str | None = None,
               config: dict[str, Any] | None = None) -> Report:
        """The report; zero cases is an error (a gate over nothing would pass vacuously),
        and so is a taxonomy none of whose fields any case has (``check_fit``)."""
        if self._nonfinite:
            raise self.nonfinite_error()
        tally = self.tallier.result()
        if tally.n_cases == 0:
            raise FailgateError(
                "the report has no cases; a gate over zero cases would pass vacuously",
                self.file.path)
        check_fit(self.file, self.taxonomy, tally.absent, tally.n_cases, self._sample,
                  format_name, format_default)
        return Report(
            name=self.file.name, path=self.file.path, kind="cases", counts=dict(tally.counts),
            n_cases=tally.n_cases, tally=tally, recorded=recorded or {},
            id_keys=list(self._seen), contradictions=contradictions, taxonomy=self.taxonomy,
            format=format_name, config=config, case_metrics=self.case_metrics,
            digests=self._digests)


    def nonfinite_error(self) -> FailgateError:
        """The cases in which a rule compared a NaN or infinite number, with their count:
        an error, not a category. Such a comparison has no answer (NaN is neither below
        nor above 0.5), so the case can be called neither failed nor passed; calling it
        passed (Python's ``nan < 0.5`` is False) let a broken scorer pass its cases."""
        position, key, what = self._nonfinite[0]
        count = len(self._nonfinite)
        also = ""
        if count > 1:
            more = ", ".join(f"#{p}" for p, _, _ in self._nonfinite[1:6])
            also = f"; also {more}" + (", ..." if count > 6 else "")
        return FailgateError(
            f"{count} of {self.tallier.n_cases} cases have a number that is NaN or infinite "
            f"where a rule compares it; the first, case #{position} "
            f"({shown(repr(key))}): {what}{also}. Such a comparison has no answer: have the "
            "scorer write a finite number, or null where it has none", self.file.path)


def check_fit(file: ReportFile, taxonomy: Taxonomy, absent: Mapping[str, int], n_cases: int,
              sample: Sequence[Mapping[str, Any]], format_name: str,
              format_default: str | None) -> None:
    """Refuse a taxonomy that cannot tell a failed case from a passed one on these cases.

    The default ``rag`` taxonomy on a HELM file calls all 10 cases failed; a taxonomy
    whose ``failed`` reads a field no case has (``score`` where the report writes
    ``Score``) calls every case passed or every case failed, whatever the system did.
    Either is a wrong configuration, not a result, so it is an error naming the format.
    ``absent`` counts, per field, the cases without it (the SQL engines give the fields
    their source has no column for: a column of nulls is not an absent field there);
    ``sample`` holds the first cases, on which ``failed`` shows what it reads.
    """
    fields = taxonomy.rule_fields
    if not fields:
        return
    if not all(absent.get(name, 0) >= n_cases for name in fields):
        _refuse_absent_rule_field(file, taxonomy, absent, n_cases, sample)
    if all(absent.get(name, 0) >= n_cases for name in fields):
        shown = ", ".join(fields[:6]) + (", ..." if len(fields) > 6 else "")
        message = (f"none of the {n_cases} cases has any field taxonomy {taxonomy.name} "
                   f"reads ({shown})")
    else:
        deciding = undecided_fields(taxonomy, absent, n_cases, sample)
        if not deciding:
            return
        message = (f"none of the {n_cases} cases has "
                   f"{' or '.join(repr(name) for name in deciding)}, which taxonomy "
                   f"{taxonomy.name} reads to decide whether a case failed; a gate that "
                   "cannot tell failed cases from passed ones would pass or fail on nothing")
    if format_name != OWN_FORMAT and format_default and format_default != taxonomy.name:
        message += (f"; this is a {format_name} report: use its taxonomy with "
                    f"`taxonomies: {{{format_name}: {format_default}}}` (or `taxonomy: "
                    f"{format_default}`) in the ceilings file")
    elif format_name != OWN_FORMAT:
        message += f"; this is a {format_name} report: give a taxonomy written for it"
    else:
        message += "; is it another tool's output? give a taxonomy for its fields"
        raise UnfitTaxonomy(message, file.path)
    raise FailgateError(message, file.path)


def _refuse_absent_rule_field(file: ReportFile, taxonomy: Taxonomy,
                              absent: Mapping[str, int], n_cases: int,
                              sample: Sequence[Mapping[str, Any]]) -> None:
    """A category rule reading a field none of the cases has (``empty(retrieved_docs)``
    where the report writes ``retrieved``) matches every failed case or none, whatever
    the system did: an error naming the field, the case field it most resembles and the
    ``types:`` entry the taxonomy declared for it. A field declared optional, with a
    default (``defaults:``) or a type that allows null (rag's ``attempt_latency: list |
    null``), may be absent from every case."""
    from ..base.errors import closest
    from ..taxonomy.model import describe_kinds

    for rule in taxonomy.categories:
        for name in rule.reads:
            declared = taxonomy.field_index.get(name)
            if absent.get(name, 0) < n_cases or (declared is not None and (
                    declared.default is not None
                    or (declared.kinds is not None and "null" in declared.kinds))):
                continue  # present in a case, or declared optional (a default, or null)
            present = sorted({key for case in sample for key in case}
                             | _first_case_keys(file.path))
            declared_as = ""
            if declared is not None and declared.kinds is not None:
                declared_as = f", declared in types: as {describe_kinds(declared.kinds)}"
            guess = closest(name, present)
            if guess is not None:
                nearest = f"; did you mean '{guess}'?"
            elif present:
                nearest = f"; the cases have: {', '.join(present[:12])}" + (
                    ", ..." if len(present) > 12 else "")
            else:
                nearest = ""
            message = (f"rule {rule.name} of taxonomy {taxonomy.name} reads '{name}'"
                       f"{declared_as}, which none of the {n_cases} cases has, so it would "
                       f"match every case or none{nearest} (fix the field's name in the "
                       "taxonomy)")
            raise FailgateError(message, file.path)


PEEK_BYTES = 1 << 20  # of a JSON Lines file, for the fields of its first case


def _first_case_keys(path: Path) -> set[str]:
    """The fields of a JSON Lines file's first case, for a did-you-mean: a reader decodes
    only the fields the taxonomy reads, so the cases kept do not show the others."""
    import json

    from .source import open_source

    if path.suffix != ".jsonl":
        return set()
    try:
        with open_source(path) as handle:
            first = handle.readline(PEEK_BYTES)
        case = json.loads(first)
    except (FailgateError, OSError, ValueError):
        return set()
    return {key for key in case if isinstance(key, str)} if isinstance(case, dict) else set()


def _metric_value(metric: CaseMetric, case: Mapping[str, Any], position: int) -> float | None:
    """A case's value of a taxonomy metric (``metric_number``: true 1, false 0, null None)."""
    try:
        value = metric_number(metric.value(case))
    except ExprRuntimeError as exc:
        raise CaseProblem(position, f"metric {metric.name}: {exc}") from None
    except ValueError as exc:
        raise CaseProblem(position, f"metric {metric.name} {exc}") from None
    return None if value is None else float(value)


def undecided_fields(taxonomy: Taxonomy, absent: Mapping[str, int], n_cases: int,
                     sample: Sequence[Mapping[str, Any]]) -> list[str]:
    """The fields no case has that ``failed`` reads to decide the sampled cases.

    ``failed`` is run on the sample to see which fields it reads: rag's reads
    ``abstained`` only for unanswerable cases, so a report of answerable cases
    without that field is an ordinary report, while one without ``accuracy`` is not.
    A field with a default is never missing (rag's ``answerable`` reads as true).
    """
    candidates = []
    for name in taxonomy.failed.reads:
        declared = taxonomy.field_index.get(name)
        if (declared is None or declared.default is None) and absent.get(name, 0) >= n_cases:
            candidates.append(name)
    if not candidates:
        return []
    read: set[str] = set()
    for case in sample:
        traced = _Reads(case)
        try:
            taxonomy.failed.predicate(traced)
        except Exception:  # a case the rule cannot decide shows no reads
            continue
        read |= traced.reads
    return [name for name in candidates if name in read]


class _Reads(dict[str, Any]):
    """A case that records the fields a rule looks up (compiled rules call ``get``)."""

    def __init__(self, case: Mapping[str, Any]) -> None:
        super().__init__(case)
        self.reads: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.reads.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.reads.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.reads.add(key)
        return super().__contains__(key)


_SCANS: dict[tuple[Any, ...], tuple[Taxonomy, ReadSpec, Scan | None]] = {}


def _scan(sink: CaseSink, struct: type | None, missing: Any) -> Scan | None:
    """The generated loop for this sink's taxonomy, spec and fields (built once each)."""
    key = (id(sink.taxonomy), id(sink._spec), sink.fields, struct, id(missing))
    found = _SCANS.get(key)
    if found is None or found[0] is not sink.taxonomy or found[1] is not sink._spec:
        if len(_SCANS) >= 64:
            _SCANS.clear()
        built = build_scan(sink.taxonomy, sink._spec, sink.fields, sink.tallier.flag_names,
                           struct, missing)
        found = _SCANS[key] = (sink.taxonomy, sink._spec, built)
    return found[2]
