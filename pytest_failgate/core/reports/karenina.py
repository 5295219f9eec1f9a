"""Readers for karenina results: its JSON export (format 2.x) and its CSV / DataFrame export.

karenina (an LLM benchmarking tool) records every verification result's verdict in
``metadata.failure`` (``null`` on a pass, else ``{category, stage, reason, details,
group}``) and informational flags in ``metadata.caveats``. Both readers hand failgate
each result in the JSON export's nested shape, so the built-in ``karenina`` taxonomy
(``taxonomy/builtin/karenina.yaml``) serves both formats::

    {"metadata": {"question_id": ..., "failure": {...} | None, "caveats": [...], ...},
     "template": {"verify_result": ..., "template_verification_performed": ..., ...}}

Contradictions
    karenina's classifier (``classify_failure``) tries eight rules in order and the
    first that matches decides the failure. Both readers re-check what a result's own
    fields decide and list each result that contradicts its recorded failure. A field
    that is null or absent decides nothing, so only these are checked:

    - the recorded ``group`` is not ``CATEGORY_TO_GROUP[category]`` (JSON only; in a
      CSV a contradicting ``failure_group`` is a malformed row, an error);
    - rule 2: ``template_verification_performed`` is true and ``verify_result`` is
      false, yet the failure is not ``content`` (nor an autofail category, or
      ``connection``, which ``PlaceholderRetryAutoFail`` gives at rule 1): rule 2
      outranks everything after it, a pass included;
    - rule 2 read backwards: ``content`` is recorded, yet verification was not
      performed or ``verify_result`` is true (only rule 2 gives ``content``);
    - rule 4: ``abstention_detected`` is true, yet the failure is neither
      ``abstention`` nor one of rules 1-3 (autofail, ``content``, retry); likewise
      ``sufficiency_detected`` with ``sufficiency``;
    - rule 4 read backwards: ``abstention`` is recorded while ``abstention_detected``
      is false, or ``sufficiency`` while ``sufficiency_detected`` is false.

    Not checked, because the exported fields do not decide them: rule 1 (the autofail
    stage is not exported), rule 3 (the retry counts and error category are not
    exported as fields), rules 5-7 (the template-validation artifact and the error are
    not exported), and stage names. A result whose category is none of karenina's 14
    is not cross-checked (the taxonomy counts it as ``unrecognised``).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base.confine import shown
from ..base.errors import FailgateError, did_you_mean
from .jsonfile import describe, load_json, read_bytes
from .readers import Reader, ReaderOutput, repeat_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    _Error = Callable[[str], FailgateError]  # a message -> the error naming file and line

CATEGORY_TO_GROUP: dict[str, str] = {
    "content": "content",
    "recursion_limit": "autofail",
    "trace_validation": "autofail",
    "deep_judgment": "autofail",
    "deep_judgment_rubric": "autofail",
    "timeout": "retry",
    "connection": "retry",
    "rate_limit": "retry",
    "server_error": "retry",
    "abstention": "abstained",
    "sufficiency": "abstained",
    "template_validation": "system",
    "parsing": "system",
    "unexpected_error": "system",
}
"""karenina's ``CATEGORY_TO_GROUP``: each failure category's group, in karenina's order."""

MAX_CONTRADICTIONS = 20
"""Contradicting results listed one per line; any beyond are summed up in one more line."""

_AUTOFAIL = frozenset(c for c, g in CATEGORY_TO_GROUP.items() if g == "autofail")
_RETRY = frozenset(c for c, g in CATEGORY_TO_GROUP.items() if g == "retry")
# What may be recorded when rule 2 (content) holds: content, or rule 1's verdicts
# (an autofail category, or ``connection`` from the placeholder autofail).
_WHEN_CONTENT = _AUTOFAIL | {"connection", "content"}
# What may be recorded when rule 4 holds: its verdict, or rules 1-3's.
_BEFORE_GUARDS = _AUTOFAIL | _RETRY | {"content"}
_WHEN_ABSTENTION = _BEFORE_GUARDS | {"abstention"}
_WHEN_SUFFICIENCY = _BEFORE_GUARDS | {"sufficiency"}
_VERSION_2 = re.compile(r"2(\.\d+)*")


# ----------------------------------------------------------------------------- JSON


class KareninaJsonReader(Reader):
    """karenina's JSON results export, ``format_version`` 2.x.

    A file is karenina's when it is a JSON object with ``format_version`` and
    ``results`` and either its version is 2.x, its ``metadata`` names a
    ``karenina_version``, or its first result has ``metadata.question_id``; any
    other JSON gives ``None``. A karenina file of another version or shape is a
    ``FailgateError`` naming the file and the result. Each case is the result object
    itself; ``recorded`` keeps ``num_predictions`` (the number of results) and
    ``metadata.job_summary`` when present.
    """

    name: str = "karenina-json"
    suffixes: tuple[str, ...] = (".json",)
    taxonomy: str = "karenina"
    # a file's head holds one of these whenever ``claims`` says yes (None: no such list)
    probe: tuple[bytes, ...] | None = (b'"format_version"',)

    def claims(self, head: bytes) -> bool:
        return b'"format_version"' in head

    def read(self, path: Path) -> ReaderOutput | None:
        data = load_json(path)
        if not _looks_karenina(data):
            return None
        assert isinstance(data, dict)
        version = data["format_version"]
        if not isinstance(version, str) or not _VERSION_2.fullmatch(version):
            raise FailgateError(
                f"karenina format_version {json.dumps(version)} is not read; failgate reads "
                "karenina's JSON export format 2.x (2.0, 2.1, 2.2, ...)", path)
        results = data["results"]
        if not isinstance(results, list):
            raise FailgateError(f"karenina 'results' is {describe(results)}; expected a list of "
                                "results", path)
        contradictions: list[str] = []
        for position, result in enumerate(results, start=1):
            _check_result(result, position, path)
            contradictions += _contradictions(result)
        with_case_ids(results)
        recorded: dict[str, Any] = {"num_predictions": len(results)}
        metadata = data.get("metadata")
        if isinstance(metadata, dict) and "job_summary" in metadata:
            recorded["job_summary"] = metadata["job_summary"]
        return ReaderOutput(cases=results, recorded=recorded,
                            contradictions=_capped(contradictions), repeat_unit=repeat_of)


def _looks_karenina(data: Any) -> bool:
    if not isinstance(data, dict) or "format_version" not in data or "results" not in data:
        return False
    version, metadata, results = data["format_version"], data.get("metadata"), data["results"]
    if isinstance(version, str) and _VERSION_2.fullmatch(version):
        return True
    if isinstance(metadata, dict) and "karenina_version" in metadata:
        return True
    first = results[0] if isinstance(results, list) and results else None
    return (isinstance(first, dict) and isinstance(first.get("metadata"), dict)
            and "question_id" in first["metadata"])


def _check_result(result: Any, position: int, path: Path) -> None:
    """Raise for a result failgate cannot classify; the message names the result."""
    where = f"result #{position}"
    if not isinstance(result, dict):
        raise FailgateError(f"{where} is {describe(result)}, not an object", path)
    metadata = result.get("metadata")
    if not isinstance(metadata, dict):
        problem = "is missing" if metadata is None else f"is {describe(metadata)}, not an object"
        raise FailgateError(f"{where}: metadata {problem}", path)
    question_id = metadata.get("question_id")
    if question_id is None:
        raise FailgateError(f"{where}: metadata.question_id is missing", path)
    if not isinstance(question_id, str) or not question_id:
        raise FailgateError(f"{where}: metadata.question_id is {_show(question_id)}; expected "
                            "a non-empty string", path)
    where = f"{where} (question_id '{question_id}')"
    failure = metadata.get("failure")
    if failure is not None:
        if not isinstance(failure, dict):
            raise FailgateError(f"{where}: metadata.failure is {describe(failure)}; expected an "
                                "object or null", path)
        for key in ("category", "group"):
            value = failure.get(key)
            if not isinstance(value, str) and (key == "category" or value is not None):
                raise FailgateError(f"{where}: metadata.failure.{key} is {_show(value)}; "
                                    "expected a string", path)
    caveats = metadata.get("caveats")
    if caveats is not None and (not isinstance(caveats, list)
                                or not all(isinstance(c, str) for c in caveats)):
        raise FailgateError(f"{where}: metadata.caveats is {_show(caveats)}; expected a list "
                            "of strings", path)
    template = result.get("template")
    if template is not None and not isinstance(template, dict):
        raise FailgateError(f"{where}: template is {describe(template)}; expected an object "
                            "or null", path)


# ----------------------------------------------------------------------------- CSV

_REQUIRED = ("question_id", "failure_category")
_FAILURE_COLUMNS = ("failure_category", "failure_group", "failure_stage", "failure_reason",
                    "failure_details_json")
_CONSUMED = frozenset({"question_id", "caveats", "row_index", "success", *_FAILURE_COLUMNS})
_TEMPLATE_BOOLS = frozenset({
    "template_verification_performed", "verify_result", "embedding_check_performed",
    "embedding_override_applied", "regex_validations_performed", "regex_overall_success",
    "recursion_limit_reached", "response_timeout_partial", "usage_unavailable",
    "agentic_parsing_performed", "dynamic_parsing_performed", "abstention_check_performed",
    "abstention_detected", "abstention_override_applied", "sufficiency_check_performed",
    "sufficiency_detected", "sufficiency_override_applied",
})
_TEMPLATE_JSON = frozenset({"parsed_gt_response", "parsed_llm_response",
                            "verify_granular_result"})
_TEMPLATE_NUMBERS = frozenset({"embedding_similarity_score"})
_TEMPLATE_TEXT = frozenset({
    "raw_llm_response", "embedding_model_used", "abstention_reasoning",
    "sufficiency_reasoning", "dynamic_parse_decision", "dynamic_decision_reasoning",
    "agentic_extraction_error", "field_verification_error", "composition_strategy",
})
# The columns the contradiction checks read; a CSV with none of them offers no check.
_CHECKED = ("verify_result", "template_verification_performed", "abstention_detected",
            "sufficiency_detected")
_NULL_CELLS = frozenset({"", "n/a", "none", "null", "nan"})


class KareninaCsvReader(Reader):
    """karenina's CSV / DataFrame export: one row per result.

    A CSV is karenina's when its header has ``question_id`` and ``failure_category``;
    any other CSV gives ``None`` (it is skipped). Each row becomes a result in the
    JSON export's nested shape:

    - ``metadata.question_id``; ``metadata.failure`` is null when
      ``failure_category`` is empty, else ``{category, group, stage, reason,
      details}``: ``group`` is ``CATEGORY_TO_GROUP[category]`` (an empty
      ``failure_group`` is filled in), ``stage`` and ``reason`` are the cells' text,
      ``details`` is ``failure_details_json`` decoded (null when empty);
    - ``metadata.caveats``: the comma-joined ``caveats`` cell split into a list
      (empty cell or no column: ``[]``);
    - ``metadata.success``: ``true``/``false``, and ``abstained`` reads as true (as
      karenina's own loader reads it); empty is null;
    - ``template``: the known template columns (``verify_result``,
      ``template_verification_performed``, ``abstention_detected``,
      ``sufficiency_detected`` and the other flags) as booleans: ``true``/``false`` in
      any letter case (pandas writes ``True``, karenina's exporter ``true``), and
      ``""``, ``N/A``, ``None``, ``null``, ``NaN`` as null; the parsed responses and
      ``verify_granular_result`` decoded from JSON (kept as text when they are not
      JSON), ``embedding_similarity_score`` as a number, other known ones as text;
    - every other column as text under ``metadata`` (an empty cell is null); a
      column with an empty name (a DataFrame index) is dropped.

    A malformed file is a ``FailgateError`` naming the file and the CSV line where
    the row starts: a row with more or fewer cells than the header, an empty
    ``question_id``, a ``failure_category`` not among karenina's 14, a
    ``failure_group`` that contradicts its category, failure cells without a
    category, a flag cell that is not a boolean, invalid ``failure_details_json``.
    """

    name: str = "karenina-csv"
    suffixes: tuple[str, ...] = (".csv",)
    taxonomy: str = "karenina"
    # a file's head holds one of these whenever ``claims`` says yes (None: no such list)
    probe: tuple[bytes, ...] | None = None

    def claims(self, head: bytes) -> bool:
        return True  # the header decides, in read()

    def read(self, path: Path) -> ReaderOutput | None:
        raw = read_bytes(path)
        raw = raw.removeprefix(b"\xef\xbb\xbf")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            header_line = raw.split(b"\n", 1)[0].decode("utf-8", "replace")
            if not _is_karenina_header(next(csv.reader([header_line]), [])):
                return None
            line = raw.count(b"\n", 0, exc.start) + 1
            raise FailgateError("not UTF-8 text", path, line) from None
        rows = csv.reader(io.StringIO(text, newline=""))
        header: list[str] | None = None
        line = 0
        while header is None:
            row = _next_row(rows, path, rows.line_num + 1)
            if row is None:
                return None
            line = rows.line_num
            if row:
                header = [cell.strip() for cell in row]
        if not _is_karenina_header(header):
            return None
        columns = [name for name in header if name]
        for name in columns:
            if columns.count(name) > 1:
                raise FailgateError(f"the header names column '{name}' twice", path, line)
        results: list[dict[str, Any]] = []
        contradictions: list[str] = []
        checked = any(name in header for name in _CHECKED)
        while True:
            start = rows.line_num + 1
            row = _next_row(rows, path, start)
            if row is None:
                break
            if not row:
                continue
            if len(row) != len(header):
                raise FailgateError(f"the row has {len(row)} cells; the header has "
                                    f"{len(header)}", path, start)
            cells = {name: cell for name, cell in zip(header, row, strict=True) if name}
            result = _result_from_row(cells, path, start)
            results.append(result)
            if checked:
                contradictions += _contradictions(result, f"line {start}")
        with_case_ids(results)
        return ReaderOutput(cases=results, recorded={"num_predictions": len(results)},
                            contradictions=_capped(contradictions) if checked else None,
                            repeat_unit=repeat_of)


def with_case_ids(results: list[Any]) -> None:
    """Give each result an ``id`` that is unique across replicates and answering models.

    A question is asked once per answering model and replicate, so ``question_id``
    repeats in such exports. The id is ``question_id``, then ``@<model>`` when the file
    holds more than one answering model, then ``#<replicate>`` when one is recorded; a
    single-model export without replicates keeps its plain question ids.
    """
    models = {_answering_model(r) for r in results if isinstance(r, Mapping)}
    for result in results:
        if not isinstance(result, dict) or not isinstance(result.get("metadata"), Mapping):
            continue  # _check_result has refused it, or the sink will
        meta = result["metadata"]
        key = str(meta.get("question_id"))
        if len(models) > 1:
            key += f"@{_answering_model(result)}"
        replicate = meta.get("replicate")
        if replicate not in (None, ""):
            key += f"#{replicate}"
        result.setdefault("id", key)


def _answering_model(result: Mapping[str, Any]) -> str:
    meta = result.get("metadata")
    if not isinstance(meta, Mapping):
        return ""
    answering = meta.get("answering")
    if isinstance(answering, Mapping):
        return str(answering.get("model_name") or "")
    return str(meta.get("answering_model") or "")


def _is_karenina_header(header: list[str]) -> bool:
    names = {cell.strip() for cell in header}
    return all(name in names for name in _REQUIRED)


def _next_row(rows: Iterator[list[str]], path: Path, line: int) -> list[str] | None:
    try:
        row = next(rows)
    except StopIteration:
        return None
    except csv.Error as exc:
        raise FailgateError(f"malformed CSV: {exc}", path, line) from None
    return row


def _result_from_row(cells: dict[str, str], path: Path, line: int) -> dict[str, Any]:
    """One row as a result in the JSON export's shape (see ``KareninaCsvReader``)."""

    def error(message: str) -> FailgateError:
        return FailgateError(message, path, line)

    question_id = cells["question_id"].strip()
    if not question_id:
        raise error("question_id is empty")
    metadata: dict[str, Any] = {
        "question_id": question_id,
        "failure": _failure_from_row(cells, error),
        "caveats": [c.strip() for c in cells.get("caveats", "").split(",") if c.strip()],
    }
    template: dict[str, Any] = {}
    for name, cell in cells.items():
        if name in _CONSUMED:
            continue
        if name in _TEMPLATE_BOOLS:
            template[name] = _boolean(name, cell, error)
        elif name in _TEMPLATE_JSON:
            template[name] = _json_cell(cell)
        elif name in _TEMPLATE_NUMBERS:
            template[name] = _number(name, cell, error)
        elif name in _TEMPLATE_TEXT:
            template[name] = cell if cell else None
        else:
            metadata[name] = cell if cell else None
    if "success" in cells:
        success = cells["success"]
        metadata["success"] = (True if success.strip().lower() == "abstained"
                               else _boolean("success", success, error))
    return {"metadata": metadata, "template": template}


def _failure_from_row(cells: dict[str, str], error: _Error) -> dict[str, Any] | None:
    category = cells["failure_category"].strip()
    group = cells.get("failure_group", "").strip()
    if not category:
        stray = [name for name in _FAILURE_COLUMNS if cells.get(name, "").strip()]
        if stray:
            raise error(f"{stray[0]} is set but failure_category is empty")
        return None
    if category not in CATEGORY_TO_GROUP:
        raise error(f"failure_category '{category}' is not one of karenina's 14 categories"
                    + did_you_mean(category, CATEGORY_TO_GROUP))
    expected = CATEGORY_TO_GROUP[category]
    if group and group != expected:
        raise error(f"failure_group '{group}' contradicts failure_category '{category}', "
                    f"whose group is '{expected}' (karenina's CATEGORY_TO_GROUP)")
    details_text = cells.get("failure_details_json", "").strip()
    details = None
    if details_text:
        try:
            details = json.loads(details_text)
        except json.JSONDecodeError as exc:
            raise error(f"failure_details_json is not JSON: {exc.msg}") from None
        except ValueError:  # an integer past Python's 4,300 digits
            raise error("failure_details_json holds a number too large to read (integers "
                        "are limited to 4,300 digits)") from None
    return {"category": category, "stage": cells.get("failure_stage", "").strip(),
            "reason": cells.get("failure_reason", ""), "details": details, "group": expected}


def _boolean(name: str, cell: str, error: _Error) -> bool | None:
    word = cell.strip().lower()
    if word in _NULL_CELLS:
        return None
    if word in ("true", "false"):
        return word == "true"
    raise error(f"{name} is {_show(cell)}; expected true, false or an empty cell")


def _number(name: str, cell: str, error: _Error) -> float | None:
    if cell.strip().lower() in _NULL_CELLS:
        return None
    try:
        return float(cell)
    except ValueError:
        raise error(f"{name} is {_show(cell)}; expected a number or an empty cell") from None


def _json_cell(cell: str) -> Any:
    if cell.strip().lower() in _NULL_CELLS:
        return None
    try:
        return json.loads(cell)
    except ValueError:  # not JSON, or an integer past Python's 4,300 digits: the text
        return cell


# ----------------------------------------------------------------------- contradictions


def _contradictions(result: Mapping[str, Any], where: str | None = None) -> list[str]:
    """Why a result's own fields contradict its recorded failure (the module docstring's
    rules); one line each, none when nothing is decided or nothing contradicts."""
    metadata = result["metadata"]
    failure = metadata.get("failure")
    category = failure.get("category") if failure is not None else None
    if category is not None and category not in CATEGORY_TO_GROUP:
        return []
    template = result.get("template")
    fields = template if isinstance(template, Mapping) else {}
    performed = fields.get("template_verification_performed")
    verified = fields.get("verify_result")
    abstained = fields.get("abstention_detected")
    insufficient = fields.get("sufficiency_detected")
    recorded = f"the recorded failure is {category}" if category else "it passed"
    found: list[str] = []
    if category is not None and failure.get("group") not in (None, CATEGORY_TO_GROUP[category]):
        found.append(f"the recorded group is {failure['group']}, yet {category} belongs to "
                     f"{CATEGORY_TO_GROUP[category]}")
    if performed is True and verified is False and category not in _WHEN_CONTENT:
        found.append("verify_result is false after template verification (rule 2: content), "
                     f"yet {recorded}")
    if category == "content" and (performed is False or verified is True):
        why = "template verification was not performed" if performed is False else (
            "verify_result is true")
        found.append(f"the recorded failure is content (rule 2), yet {why}")
    if abstained is True:
        if category not in _WHEN_ABSTENTION:
            found.append(f"abstention_detected is true (rule 4: abstention), yet {recorded}")
    elif insufficient is True and category not in _WHEN_SUFFICIENCY and not (
            category == "abstention" and abstained is None):  # unknown: it may have fired
        found.append(f"sufficiency_detected is true (rule 4: sufficiency), yet {recorded}")
    if category == "abstention" and abstained is False:
        found.append("the recorded failure is abstention (rule 4), yet abstention_detected is "
                     "false")
    if category == "sufficiency" and insufficient is False:
        found.append("the recorded failure is sufficiency (rule 4), yet sufficiency_detected "
                     "is false")
    label = f"{metadata['question_id']}" + (f" ({where})" if where else "")
    return [f"{label}: {line}" for line in found]


def _capped(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_CONTRADICTIONS:
        return lines
    rest = len(lines) - MAX_CONTRADICTIONS
    return [*lines[:MAX_CONTRADICTIONS], f"... and {rest} more contradiction(s)"]


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return shown(text if len(text) <= 40 else text[:37] + "...")
