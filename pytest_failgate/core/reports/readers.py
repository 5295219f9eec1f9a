"""Readers for report formats beyond failgate's own JSON: the interface, and the tallying.

A reader recognises a file and hands over its cases as decoded mappings; failgate
does the rest exactly as for its own formats (kinds checked, ids unique, cases
classified). Third-party readers come in through the ``pytest_failgate_readers``
hook; the built-in karenina readers use the same interface.

```python
class MyReader:
    name = "my-format"
    suffixes = (".json",)

    def read(self, path: Path) -> ReaderOutput | None:
        if not looks_like_mine(path):
            return None                      # not this format: let others try
        return ReaderOutput(cases=iter_cases(path), recorded={"num_predictions": n})
```
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import FailgateError
from ..taxonomy import kind_of
from ..taxonomy.tally import RuleError
from .model import Report, case_id

if TYPE_CHECKING:
    from pathlib import Path

    from ..taxonomy import Taxonomy
    from .model import ReportFile
    from .read import ReadSpec


@dataclass
class ReaderOutput:
    """What a reader found in a file.

    ``contradictions`` lists cases whose own fields contradict what the file records
    about them (for example a recorded category its fields rule out); a non-empty
    list fails the report's ``consistency`` item. ``None`` means the format offers
    nothing to cross-check.
    """

    cases: Iterable[Any]
    recorded: dict[str, Any] = field(default_factory=dict)
    contradictions: list[str] | None = None


class ReportReader(Protocol):
    """A report format: a name, the file suffixes it may read, and ``read``."""

    name: str
    suffixes: tuple[str, ...]

    def read(self, path: Path) -> ReaderOutput | None:
        """The file's cases, or ``None`` when it is not in this format.

        Raise ``FailgateError`` (with the file and place) for a file that is in this
        format but malformed.
        """
        ...


def path_value(case: Mapping[str, Any], path: str) -> Any:
    """A dotted path's value in a case (``metadata.question_id``); ``None`` when absent."""
    value: Any = case
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def report_from_cases(file: ReportFile, taxonomy: Taxonomy, spec: ReadSpec,
                      output: ReaderOutput) -> Report:
    """Classify a reader's cases into a report, checking them as failgate's own reader does."""
    tallier = spec.tallier(taxonomy)
    fields = [(f.name, f) for f in taxonomy.fields]
    bits = {name: tallier.bit(name) for name, _ in fields}
    seen: dict[bytes, int] = {}
    position = 0
    for position, case in enumerate(output.cases, start=1):
        if not isinstance(case, Mapping):
            raise FailgateError(f"case #{position} is {kind_of(case)}, not an object", file.path)
        absent = 0
        for name, spec_field in fields:
            if name not in case:
                absent |= bits[name]
                continue
            value = case[name]
            if type(value) is list:
                value = tuple(value)
            problem = spec_field.problem(value)
            if problem is not None:
                raise FailgateError(f"case #{position}: '{name}' {problem}", file.path)
        view = {k: tuple(v) if type(v) is list else v for k, v in case.items()}
        key = _id_key(view, taxonomy.id_fields, position, file)
        first = seen.setdefault(key, position)
        if first != position:
            raise FailgateError(
                f"case #{position}: duplicate case id '{case_id(key)}' (also case #{first})",
                file.path)
        try:
            decision = tallier.decide(view)
        except RuleError as exc:
            raise FailgateError(f"case #{position}: {exc}", file.path) from None
        tallier.record(case_id(key) if decision[0] else "", decision, absent, view)
    if position == 0:
        raise FailgateError("the report has no cases; a gate over zero cases would pass "
                            "vacuously", file.path)
    tally = tallier.result()
    return Report(
        name=file.name, path=file.path, kind="cases", counts=dict(tally.counts),
        n_cases=tally.n_cases, tally=tally, recorded=output.recorded, id_keys=list(seen),
        contradictions=output.contradictions,
    )


def _id_key(case: Mapping[str, Any], id_fields: tuple[str, ...], position: int,
            file: ReportFile) -> bytes:
    for name in id_fields:
        value = path_value(case, name)
        if value is None:
            continue
        if isinstance(value, str):
            return json.dumps(value, ensure_ascii=False).encode("utf-8")
        if type(value) is int:
            return b'"%d"' % value
        raise FailgateError(f"case #{position}: the case id '{name}' is {kind_of(value)}; it "
                            "must be a string or an integer", file.path)
    return b'"#%d"' % position


def builtin_readers() -> tuple[ReportReader, ...]:
    """The readers shipped with failgate, after any a plugin contributes."""
    from .karenina import KareninaCsvReader, KareninaJsonReader  # here: karenina imports us

    return (KareninaJsonReader(), KareninaCsvReader())
