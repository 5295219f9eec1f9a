"""A large ``.json`` report validated a piece of its case list at a time (the default
install's memory floor).

pydantic-core builds its parse tree of the whole input before it validates, so decoding
a 141 MB report whole took about 3.3x the file in memory (575 MB with failgate's own
objects), where the rule fields it hands over are a few percent of it. Here the bytes are
kept once, and the case list is validated in pieces of about ``PIECE`` bytes, each cut
between two cases (the bytes found between the first two: ``}``, a comma, the
indentation, ``{`` and the first key) and given to the same case schema as a list of its
own; the rest of the document (its other keys, with the case list replaced by a marker)
is validated on its own. Only one piece's tree lives at a time.

Nothing here decides what a document means. A cut that is not between two cases (inside
a string, or inside a case) leaves a piece that is not valid JSON, which is grown to the
next cut; a piece still refused after a few, a case list not found early in the
document, or a ``case_results`` key given twice (the marker is not the value that wins)
makes ``pieces`` answer ``None``, and the whole document is decoded as before, which
decides and words every error. So a cut is trusted only where both sides parse: a piece
that is a valid JSON list begins and ends outside every string and at the list's depth.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic_core import SchemaValidator

PIECE = 1 << 20  # bytes of cases validated at a time: their tree is a few times this
PIECES_FROM = 4 * PIECE  # a smaller document is validated whole: its tree is small anyway
_GROWN = 4  # a piece grown this many times past a cut that was not between cases: give up
_FIRST = 256  # cuts tried for the end of the first case
_HEAD = 1 << 20  # the bytes searched for the case list's key before giving up
_CUT = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*\{")
_TRAILING = re.compile(r"Invalid JSON: trailing characters at line (\d+) column (\d+)")
_BLANK = frozenset(b" \t\r\n")
_KEY = b'"case_results"'


def pieces(data: bytes, first: bytes, cases: SchemaValidator, rest: SchemaValidator
           ) -> tuple[dict[str, Any], list[Any]] | None:
    """(the top-level fields, the cases) of the document ``data`` starting with ``first``
    (``{`` or ``[``), validated in pieces; ``None`` when it must be decoded whole.

    ``cases`` validates a JSON list of cases; ``rest`` the top-level object with
    ``case_results`` of any value (the marker)."""
    if len(data) < PIECES_FROM:
        return None
    start = len(data) - len(data.lstrip()) if first == b"[" else _list_start(data)
    if start is None or data[start:start + 1] != b"[":
        return None
    found: list[Any] = []
    at = start + 1  # the first byte of the next piece
    learnt = _first_cut(data, at, cases, found)
    if learnt is None:
        return None
    at, cut = learnt
    while True:
        piece_end = _next_piece(data, at, cut, cases, found)
        if piece_end is None:
            return None
        if piece_end < 0:  # no cut left: the last piece, through the list's end
            break
        at = piece_end
    end = _last_piece(data, at, cases, found)
    if end is None:
        return None
    if first == b"[":
        return ({}, found) if data[end:].strip() == b"" else None
    import secrets  # here: a small report's reading imports no hashing

    marker = f"failgate-piece-{secrets.token_hex(16)}"
    try:
        top: dict[str, Any] = rest.validate_json(
            b"".join((memoryview(data)[:start], b'"', marker.encode(), b'"',
                      memoryview(data)[end:])))
    except ValueError:
        return None
    if top.pop("case_results", None) != marker:  # a later key of the same name wins
        return None
    return top, found


def _first_cut(data: bytes, at: int, cases: SchemaValidator, found: list[Any]
               ) -> tuple[int, bytes] | None:
    """The first case alone, validated (appended to ``found``), and the bytes that separate
    it from the second through the second's first key (``},\n  {"id"``): where the second
    begins, and the cut to look for. Cases nested in a case (retrieved documents) are
    written at another indentation or begin with another key, so the cut found between
    two cases rarely matches inside one, and a piece is rarely grown."""
    for tries, cut in enumerate(_CUT.finditer(data, at)):
        if tries >= _FIRST:
            return None
        try:
            found.extend(cases.validate_json(
                b"".join((b"[", memoryview(data)[at:cut.start() + 1], b"]"))))
        except ValueError:  # inside the first case: the next
            continue
        key = cut.end()
        while key < len(data) and data[key] in _BLANK:
            key += 1
        if data[key:key + 1] != b'"':
            return None
        key_end = string_end(data, key + 1)
        if key_end < 0:
            return None
        return cut.end() - 1, data[cut.start():key_end + 1]
    return None


def _next_piece(data: bytes, at: int, cut: bytes, cases: SchemaValidator, found: list[Any]
                ) -> int | None:
    """Validate the piece from ``at`` to the next ``cut`` about ``PIECE`` bytes on,
    appending its cases to ``found``: where the next piece begins, -1 when no cut is left
    (the rest is the last piece), ``None`` when no cut past ``at`` parses."""
    search = at + PIECE
    for _ in range(_GROWN):
        where = data.find(cut, search)
        if where < 0:
            return -1
        try:
            found.extend(cases.validate_json(
                b"".join((b"[", memoryview(data)[at:where + 1], b"]"))))
        except ValueError:  # the cut was inside a string or a case: grow the piece
            search = where + len(cut)
            continue
        return where + cut.index(b"{")
    return None


def _last_piece(data: bytes, at: int, cases: SchemaValidator, found: list[Any]
                ) -> int | None:
    """Validate the last piece, from ``at`` through the list's closing bracket, appending
    its cases to ``found``: the index of the first byte after the list that is not blank
    (``len(data)`` when none), or ``None``."""
    from pydantic_core import ValidationError

    tail = b"".join((b"[", memoryview(data)[at:]))
    try:
        found.extend(cases.validate_json(tail))
        return len(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = _TRAILING.fullmatch(str(first["msg"])) if first["type"] == "json_invalid" \
            else None
    if where is None:
        return None
    line, column = int(where.group(1)), int(where.group(2))
    offset = 0
    for _ in range(line - 1):
        offset = tail.index(b"\n", offset) + 1
    end = at - 1 + offset + column - 1  # ``tail`` has the opening bracket before ``at``
    del tail
    try:
        found.extend(cases.validate_json(b"".join((b"[", memoryview(data)[at:end]))))
    except ValueError:
        return None
    return end


def _list_start(data: bytes) -> int | None:
    """The index of the first byte of the top-level ``case_results`` value (the last such
    key within ``_HEAD`` bytes: the marker check catches one after), or ``None``.

    A scan of the top level: strings skipped with one search for their closing quote,
    nesting counted; it stops at the key, so it reads the keys before the cases only."""
    at, depth, size = 0, 0, min(len(data), _HEAD)
    want_key, is_key = False, False
    while at < size:
        char = data[at]
        if char == 0x22:  # '"'
            end = string_end(data, at + 1)
            if end < 0:
                return None
            if depth == 1 and want_key:
                is_key, want_key = data[at:end + 1] == _KEY, False
            at = end + 1
            continue
        if char in (0x7B, 0x5B):  # '{', '['
            depth += 1
            want_key = depth == 1
        elif char in (0x7D, 0x5D):  # '}', ']'
            depth -= 1
            if depth <= 0:
                return None
        elif char == 0x2C and depth == 1:  # ','
            want_key = True
        elif char == 0x3A and depth == 1 and is_key:  # ':' after the key
            value = at + 1
            while value < len(data) and data[value] in _BLANK:
                value += 1
            return value
        at += 1
    return None


def string_end(text: bytes, start: int) -> int:
    """Where the JSON string starting at ``start`` (after its quote) ends; -1 if the text
    ends first. (Here, which imports nothing of the package, so that both readers of raw
    JSON bytes, this and ``jsonfile.top_level``, take it from one place.)"""
    at = start
    while True:
        quote = text.find(b'"', at)
        if quote < 0:
            return -1
        slashes = 0
        while text[quote - 1 - slashes] == 0x5C:  # '\\'
            slashes += 1
        if slashes % 2 == 0:
            return quote
        at = quote + 1
