"""A case set: the cases a run will have, with their ids as the gate will read them.

``failgate plan`` orders a case set (a dataset file before the run, or a report of an
earlier one), and ``watch`` then matches each case the harness reports to its planned
place by id. So a case set is read here, beside the reports: opened as every report is
(``source.reading``: a regular file only, within the size limit), recognised by the same
readers (a promptfoo, Inspect or lm-eval file gives the cases its reader gives the gate),
and each case's id taken by the gate's own rule (``sink.case_id``) with the id fields of
the taxonomy the ceilings file picks for it (its ``id_field``). A dataset in failgate's own
shapes need not carry outcomes: JSON Lines, a JSON array of cases, an object with
``case_results``, or CSV (a header, then a case a row: promptfoo's tests).
"""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..base.safeopen import read_limit
from ..taxonomy.model import DEFAULT_ID_FIELDS
from .model import OWN_FORMAT, ReportFile, SkippedFile

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence
    from pathlib import Path

    from .choice import TaxonomyChoice
    from .spec import ReadSpec


@dataclass(frozen=True)
class CaseSet:
    """A case set's cases in its own order: each one's id, the case, its line (1 where a
    line is not known), and which fields the ids came from."""

    path: Path
    ids: tuple[str, ...]
    cases: tuple[Mapping[str, Any], ...]
    lines: tuple[int, ...]
    id_fields: tuple[str, ...]  # the fields the rule looked for, in order
    used: tuple[str, ...]  # the fields ids were found in (in id_fields' order)
    positions: int  # cases without any: their id is ``#<position>``
    format: str = OWN_FORMAT
    text: str | None = None  # failgate's own shapes: the file's text (``--ordered``)

    def id_source(self) -> str:
        """Which field the ids came from, in words (``plan`` says it)."""
        found = ", ".join(self.used)
        if not self.used:
            return (f"case ids: positions (#1 to #{len(self.ids)}): no case has "
                    f"{_any_of(self.id_fields)} (--id FIELD names the field)")
        if self.positions:
            return (f"case ids: the field {found}; {self.positions} cases without it by "
                    "position (#n)")
        return f"case ids: the field {found}"


def _any_of(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def read_case_set(path: Path, choice: TaxonomyChoice, spec: ReadSpec, name: str | None = None,
                  id_field: str | None = None) -> CaseSet:
    """The case set at ``path`` (``name``: its report's name in the ceilings file, which
    picks its taxonomy), its ids by ``id_field`` when one is given (a case without it is
    an error), else by the id fields of the taxonomy the gate would read it with."""
    from .read import detect
    from .source import reading

    report = ReportFile(path, name or path.stem)
    with read_limit(spec.max_bytes), reading(path, spec.max_bytes) as source:
        detected = detect(report, choice, spec, source)
        if not isinstance(detected, SkippedFile) and detected.output is not None:
            output = detected.output
            if output.uncounted is not None:
                raise FailgateError(f"a {detected.format} aggregate without its cases: a plan "
                                    "orders cases", path)
            records = [(case, 1) for case in output.cases]
            fields = detected.taxonomy.id_fields
            format_name = detected.format
            text = None
        else:
            if isinstance(detected, SkippedFile) and path.suffix.lower() != ".csv":
                raise FailgateError(f"not a case set: {detected.reason}", path)
            fields = (DEFAULT_ID_FIELDS if isinstance(detected, SkippedFile)
                      else detected.taxonomy.id_fields)
            text = source.data().decode("utf-8-sig", errors="replace")
            records = list(_own_cases(text, path))
            format_name = OWN_FORMAT
    return _identified(path, records, (id_field,) if id_field else fields, id_field is not None,
                       format_name, text)


def _identified(path: Path, records: list[tuple[Any, int]], fields: Sequence[str],
                required: bool, format_name: str, text: str | None) -> CaseSet:
    from .sink import CaseProblem, case_id

    ids: list[str] = []
    used: set[str] = set()
    positions = 0
    for position, (case, line) in enumerate(records, start=1):
        if not isinstance(case, dict):
            raise FailgateError(f"case #{position} is not an object", path, line)
        try:
            key, field_name = case_id(case, fields, position)
        except CaseProblem as exc:
            raise FailgateError(str(exc), path, line) from None
        if field_name is None:
            if required:
                raise FailgateError(f"case #{position} has no '{fields[0]}' (--id)", path, line)
            positions += 1
        else:
            used.add(field_name)
        ids.append(key)
    if not ids:
        raise FailgateError("no cases: a plan over nothing would settle nothing", path)
    return CaseSet(path, tuple(ids), tuple(case for case, _ in records),
                   tuple(line for _, line in records), tuple(fields),
                   tuple(name for name in fields if name in used), positions, format_name, text)


def parse_json(text: str, path: Path, line: int = 1) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FailgateError(
            f"invalid JSON: {exc.msg}", path, line + exc.lineno - 1, exc.colno
        ) from None
    except RecursionError:
        raise FailgateError("invalid JSON: nested too deeply", path, line) from None
    except ValueError:  # an integer past Python's 4,300 digits
        raise FailgateError("invalid JSON: a number too large to read (integers are limited "
                            "to 4,300 digits)", path, line) from None


def _own_cases(text: str, path: Path) -> Iterator[tuple[Any, int]]:
    """Each case of a file in failgate's own shapes, with its line."""
    if path.suffix.lower() == ".csv":
        yield from csv_rows(text, path)
    elif is_json_document(text, path):
        document = parse_json(text, path)
        cases = document.get("case_results") if isinstance(document, dict) else document
        if not isinstance(cases, list):
            raise FailgateError("neither a list of cases nor an object with case_results", path)
        yield from ((case, 1) for case in cases)
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield parse_json(line, path, number), number


def csv_rows(text: str, path: Path) -> Iterator[tuple[dict[str, Any], int]]:
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


def is_json_document(text: str, path: Path) -> bool:
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
    except ValueError:  # not JSON (JSONDecodeError), or an integer past 4,300 digits
        return False
