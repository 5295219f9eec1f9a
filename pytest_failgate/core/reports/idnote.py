"""The note for a report whose cases carry no id the taxonomy reads.

A case without one of the taxonomy's id fields (``id``, ``case_id``, ``question_id``,
``sample_id`` unless the taxonomy says ``id_field:``) is named by its position (``#12``):
the failures then list positions, and a baseline pairs cases by line number, which pairs
the wrong cases as soon as a line is added or the order changes. A project's own cases
usually do carry an id, under a name of its own (``qid``, ``ticket``): the note names the
field the first case most likely identifies itself by, and the ``id_field:`` line that
makes the taxonomy read it.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from ..base.errors import FailgateError, display_path

if TYPE_CHECKING:
    from pathlib import Path

    from .model import Report

_POSITION = re.compile(r"#[0-9]+")
_PEEK_BYTES = 1 << 20  # of a JSON Lines file, for the fields of its first case
# names that identify a case in the reports teams write, besides any name ending in "id"
_ID_WORDS = ("key", "uuid", "uid", "ticket", "slug", "name")


def id_field_note(report: Report) -> str | None:
    """Why the report's cases are named by position and how to name them by their own id;
    None when a case has an id (or the report has no cases of its own)."""
    keys = report.id_keys
    if report.kind != "cases" or not keys or not all(_POSITION.fullmatch(k) for k in keys):
        return None
    taxonomy = report.taxonomy
    fields = ", ".join(taxonomy.id_fields)
    note = (f"no case has an id field taxonomy {taxonomy.name} reads ({fields}), so cases "
            f"are named by position ({keys[0]}): failures list positions, and a baseline "
            "pairs cases by line number")
    likely = likely_id_field(report.path, set(taxonomy.rule_fields))
    where = (display_path(taxonomy.source) if taxonomy.source is not None
             else "the taxonomy")
    if likely is not None:
        return f"{note}; the cases have '{likely}': write `id_field: {likely}` in {where}"
    return f"{note}; name the field that identifies a case with `id_field:` in {where}"


def likely_id_field(path: Path, rule_fields: set[str]) -> str | None:
    """The field of a JSON Lines file's first case that most likely is its id: a name
    ending in ``id`` (``qid``, ``ticket_id``, ``uuid``) or a usual id word, with a string
    or integer value, that no rule reads; None when there is none (or the file is not
    JSON Lines: a reader decodes only the fields the taxonomy reads)."""
    from .source import open_source

    if path.suffix != ".jsonl":
        return None
    try:
        with open_source(path) as handle:
            first = handle.readline(_PEEK_BYTES)
        case = json.loads(first)
    except (FailgateError, OSError, ValueError):
        return None
    if not isinstance(case, dict):
        return None
    candidates = [key for key, value in case.items()
                  if isinstance(key, str) and key not in rule_fields
                  and (isinstance(value, str) or type(value) is int)]
    for test in (lambda k: k.lower().endswith("id"), lambda k: k.lower() in _ID_WORDS):
        found = [key for key in candidates if test(key)]
        if found:
            return found[0]
    return None
