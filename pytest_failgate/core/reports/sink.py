"""Where every reader's cases go: checked, given a unique id, classified and counted.

A reader (failgate's own JSON and JSONL, karenina, any plugin's) decodes cases
into mappings and hands them to a ``CaseSink`` one at a time, so every format
gets the same checks (field kinds, unique ids) and the same classification, and
no report needs to be held in memory as a whole.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring  # the C encoder: canonical, ensure_ascii=False
from typing import TYPE_CHECKING, Any

from ..errors import FailgateError
from ..taxonomy import kind_of
from ..taxonomy.expr import ExprRuntimeError
from ..taxonomy.model import COMPOSITE
from ..taxonomy.tally import RuleError, nested_absent
from .model import OWN_FORMAT, Report, case_id

if TYPE_CHECKING:
    from ..taxonomy import Taxonomy
    from ..taxonomy.model import CaseMetric, Field
    from .model import ReportFile
    from .read import ReadSpec


SAMPLE = 64  # cases kept to see which fields ``failed`` reads (``undecided_fields``)


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


_TYPES: dict[str, tuple[type, ...]] = {
    "bool": (bool,), "number": (int, float), "string": (str,), "null": (type(None),),
    "object": (dict,), "array": (list, tuple)}


def _surely_fine(field: Field) -> tuple[frozenset[type], frozenset[type] | None]:
    """Python types whose every value ``field.problem`` accepts, and for a list field with
    item kinds the item types it accepts (``None``: no list passes unchecked); a shortcut
    for the hot loop, the checks themselves stay in ``problem``."""
    kinds = field.kinds if field.kinds is not None else frozenset(_TYPES)
    items = None
    if field.item_kinds is not None and "array" in kinds:
        kinds = kinds - {"array"}
        items = frozenset(t for kind in field.item_kinds for t in _TYPES[kind]
                          if t not in (list, tuple))
    return frozenset(t for kind in kinds for t in _TYPES[kind]), items


class CaseSink:
    """Takes decoded cases one at a time and turns them into a ``Report``."""

    def __init__(self, file: ReportFile, taxonomy: Taxonomy, spec: ReadSpec) -> None:
        self.file = file
        self.taxonomy = taxonomy
        self.tallier = spec.tallier(taxonomy)
        self._lacks = taxonomy.lacks if taxonomy.required else None
        self._id_fields = taxonomy.id_fields
        self._checks = [(f.name, self.tallier.bit(f.name), *_surely_fine(f), f.problem)
                        for f in taxonomy.fields]
        self._nested = [(path, self.tallier.bit(path)) for path in taxonomy.nested_paths
                        if path not in taxonomy.field_index]
        # The top-level keys a JSON reader must decode: what rules, measures and ids read.
        names = [f.name for f in taxonomy.fields] + spec.reads()
        names += [part.split(".")[0] for name in taxonomy.id_fields
                  for part in name.split(COMPOSITE)]
        self.fields = tuple(dict.fromkeys(names))
        self._seen: dict[bytes, int] = {}
        self._metrics = taxonomy.metrics
        self._sample: list[Mapping[str, Any]] = []  # the first cases, for ``check_fit``
        self.case_metrics: dict[str, dict[str, float]] = {m.name: {} for m in taxonomy.metrics}

    @property
    def n_cases(self) -> int:
        return self.tallier.n_cases

    def add(self, case: Any) -> None:
        """Check, identify, classify and count one case; a ``CaseProblem`` if it is wrong."""
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
            raise CaseProblem(position, f"duplicate case id '{case_id(key)}' (also case #{first})")
        try:
            decision = self.tallier.decide(view)
        except RuleError as exc:
            raise CaseProblem(position, str(exc)) from None
        self.tallier.record(case_id(key) if decision[0] else "", decision, absent, view)
        if len(self._sample) < SAMPLE:
            self._sample.append(view)
        for metric in self._metrics:
            value = _metric_value(metric, view, position)
            if value is not None:
                self.case_metrics[metric.name][case_id(key)] = value

    def _key(self, case: Mapping[str, Any], position: int) -> bytes:
        """The case's id as the canonical JSON string it is compared by."""
        for name in self._id_fields:
            if COMPOSITE in name:  # provider.id+testIdx: every part, joined with "/"
                parts = [path_value(case, part) for part in name.split(COMPOSITE)]
                if any(part is None for part in parts):
                    continue
                for part, value in zip(name.split(COMPOSITE), parts, strict=True):
                    if type(value) is not int and not isinstance(value, str):
                        raise CaseProblem(position, f"the case id part '{part}' is "
                                          f"{kind_of(value)}; it must be a string or an integer")
                joined = "/".join(str(part) for part in parts)
                return encode_basestring(joined).encode("utf-8", "surrogatepass")
            value = case.get(name) if "." not in name else path_value(case, name)
            if value is None:
                continue
            if isinstance(value, str):
                return encode_basestring(value).encode("utf-8", "surrogatepass")
            if type(value) is int:
                return b'"%d"' % value
            raise CaseProblem(position, f"the case id '{name}' is {kind_of(value)}; it must be "
                              "a string or an integer")
        return b'"#%d"' % position

    def finish(self, recorded: dict[str, Any] | None = None,
               contradictions: list[str] | None = None, format_name: str = OWN_FORMAT,
               format_default: str | None = None,
               config: dict[str, Any] | None = None) -> Report:
        """The report; zero cases is an error (a gate over nothing would pass vacuously),
        and so is a taxonomy none of whose fields any case has (``check_fit``)."""
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
            format=format_name, config=config, case_metrics=self.case_metrics)


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
        message += ("; is it another tool's output? give a taxonomy for its fields "
                    "(taxonomy: path/to/taxonomy.yaml)")
    raise FailgateError(message, file.path)


def _metric_value(metric: CaseMetric, case: Mapping[str, Any], position: int) -> float | None:
    """A case's value of a taxonomy metric: a bool counts 1 or 0; null, it does not apply."""
    try:
        value = metric.value(case)
    except ExprRuntimeError as exc:
        raise CaseProblem(position, f"metric {metric.name}: {exc}") from None
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    raise CaseProblem(position, f"metric {metric.name} is {value!r}; a metric is true/false, a "
                      "number, or null where it does not apply")


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
