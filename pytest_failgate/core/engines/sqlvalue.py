"""A SQL value as the rule compiler sees it, and the refusal of what has no exact form."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass

if TYPE_CHECKING:
    from .sqltypes import SqlType

RAISES = "error('"  # in every guard: DuckDB's error(...), Spark's raise_error(...)


class SqlUnsupported(Exception):
    """The rule has no exact SQL form; the message says which part and why."""


@dataclass(frozen=True)
class V:
    """A SQL expression, its static type, and whether it may raise (a guard)."""

    sql: str
    type: SqlType
    raises: bool = False
    never_null: bool = False  # ``x or []``: an empty list where x is null
    constant: Any = ...  # the Python value when known at compile time
    json_path: str | None = None  # where the value is in the raw JSON object, if kept
