"""Whole-file JSON for the readers of other tools' formats, with errors that name the place.

Those formats nest their cases (``results.results``, ``testRunData.testCases``) among
other blocks, and are read whole; failgate's own shapes use the field picker in
``jsondecode``. Both decode with pydantic-core, whose values are ``json``'s and whose limits
(nesting deeper than 200 levels, integers over 4,300 digits, lone surrogate escapes) are
errors with a line and column, never a crash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from ..base.errors import FailgateError
from ..taxonomy import kind_of
from .jsondecode import from_json_error
from .jsonpieces import string_end as _string_end
from .locate import place
from .source import open_source, source_bytes

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
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
    """The file's bytes; FIFOs and devices are refused before they are opened. The report
    being read is not opened again: its bytes come from the handle it was opened with."""
    return source_bytes(path)


def open_file(path: Path) -> BinaryIO:
    """The file open for binary reading from its first byte (a ``with`` block closes it);
    FIFOs and devices are refused before they are opened. The report being read is not
    opened again: this is its own handle, rewound."""
    return open_source(path)


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


def loads(data: bytes, path: Path, line: int = 1) -> Any:
    """Decode JSON bytes read from ``path`` (named in errors), found at ``line`` of it."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FailgateError(f"not UTF-8 text (byte {exc.start + 1})", path, line) from None
    from pydantic_core import from_json  # not on the path of the fast extra's decoder

    try:
        return from_json(data)
    except ValueError as exc:
        error = from_json_error(data, exc)
        where = (line + error.line - 1, error.col) if error.line is not None else (line,)
        raise FailgateError(f"invalid JSON: {error.message}", path, *where) from None


def json_lines(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON Lines file; ``what`` names
    a line's record in the error when one is not an object (``an lm-eval sample``)."""
    with open_source(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            row = loads(line, path, number)
            if not isinstance(row, dict):
                raise FailgateError(f"{what} is an object, not {describe(row)}", path, number)
            yield number, row


def describe(value: object) -> str:
    """'a list', 'an object', 'null', 'a string', ... for messages."""
    kind = kind_of(value)
    return {"array": "a list", "object": "an object", "null": "null"}.get(kind, f"a {kind}")


_QUOTE, _BACKSLASH = 0x22, 0x5C
_OPEN, _CLOSE = frozenset(b"{["), frozenset(b"}]")
_BLANK = frozenset(b" \t\r\n")


def top_level(text: bytes) -> tuple[dict[bytes, int], bool] | None:
    """The keys of the JSON object ``text`` starts with, its top level only, each with the
    first byte of its value (-1 where the text ends first), and whether the object ends
    within the text; ``None`` when the text does not start with an object. Read as far as
    the text goes: a reader's ``claims`` sees the first 64 KB of a file, and a line may run
    past them.

    So a format is recognised by its own top-level shape (``doc_id`` and a ``metrics`` list
    beside it), not by bytes anywhere in the line (a ``doc_id`` inside a nested list).
    Linear: each string is skipped with one search for its closing quote.
    """
    text = text.lstrip()
    if not text.startswith(b"{"):
        return None
    keys: dict[bytes, int] = {}
    depth, at, size, want_key, key = 0, 0, len(text), False, None
    while at < size:
        char = text[at]
        if char == _QUOTE:
            end = _string_end(text, at + 1)
            if end < 0:
                break
            if depth == 1 and want_key:
                key, want_key = text[at + 1:end], False
                keys[key] = -1
            elif depth == 1 and key is not None:
                keys[key], key = char, None
            at = end + 1
            continue
        if depth == 1 and key is not None and char not in _BLANK and char != 0x3A:  # ':'
            keys[key], key = char, None
        if char in _OPEN:
            depth += 1
            want_key = depth == 1
        elif char in _CLOSE:
            depth -= 1
            if depth == 0:
                return keys, True
        elif char == 0x2C and depth == 1:  # ','
            want_key = True
        at += 1
    return keys, False
