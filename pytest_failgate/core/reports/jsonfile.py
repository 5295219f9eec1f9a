"""Whole-file JSON for the readers of other tools' formats, with errors that name the place.

Those formats nest their cases (``results.results``, ``testRunData.testCases``) among
other blocks, and are read whole with ``json``; failgate's own shapes use the faster
field picker in ``jsonscan``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import FailgateError
from ..safeopen import read_regular
from ..taxonomy import kind_of
from .locate import place

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

Loc = tuple[str | int, ...]
T = TypeVar("T")


class Misshapen(Exception):
    """Valid JSON that is malformed for its format, at ``loc`` (keys and 0-based indexes
    from the top); ``located`` turns it into the error users see."""

    def __init__(self, message: str, loc: Loc) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc

    def located(self, path: Path, data: bytes) -> FailgateError:
        """The error naming the file, and the line and column of ``loc`` in ``data``."""
        return FailgateError(self.message, path, *place(data, self.loc))


def read_bytes(path: Path) -> bytes:
    """The file's bytes; FIFOs and devices are refused before they are opened."""
    return read_regular(path)


def parse_json_file(path: Path, parse: Callable[[Any], T]) -> T:
    """``parse`` applied to the decoded file; a ``Misshapen`` it raises becomes the error
    naming the file, line and column."""
    raw = read_bytes(path)
    try:
        return parse(loads(raw, path))
    except Misshapen as exc:
        raise exc.located(path, raw) from None


def load_json(path: Path) -> Any:
    """The decoded file (a UTF-8 byte-order mark is allowed); a ``FailgateError`` naming
    the line and column of invalid JSON."""
    return loads(read_bytes(path), path)


def loads(data: bytes, path: Path) -> Any:
    """Decode JSON bytes read from ``path`` (named in errors)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FailgateError(f"not UTF-8 text (byte {exc.start + 1})", path) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FailgateError(f"invalid JSON: {exc.msg}", path, exc.lineno, exc.colno) from None


def describe(value: object) -> str:
    """'a list', 'an object', 'null', 'a string', ... for messages."""
    kind = kind_of(value)
    return {"array": "a list", "object": "an object", "null": "null"}.get(kind, f"a {kind}")
