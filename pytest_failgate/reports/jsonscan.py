"""Read chosen fields of JSON objects without decoding the rest.

Evaluation reports are mostly long strings (answers, contexts) that no rule
reads. Decoding them is what makes ``json.load`` slow on a 100k-case report, so
each case object is matched by one compiled regular expression that captures the
raw text of the wanted fields and only steps over everything else; the wanted
values are then decoded by the C ``json`` scanner. When the expression does not
match (a key or string with escaped quotes, nesting deeper than it covers,
invalid JSON) the object is decoded exactly with ``json`` instead, so results
never differ from ``json.loads``; only the speed does.

What the fast path does not do is validate the *content* of values it skips:
a skipped string's escapes or a skipped number's digits are checked for
structure, not meaning.
"""

from __future__ import annotations

import functools
import json
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Final

from ..errors import line_col

_W = r"[ \t\n\r]*"
# A string: first a fast form with no escaped quote, then the exact form.
_STR = r'(?:"[^"]*+(?<!\\)"|"[^"\\]*+(?:\\.[^"\\]*+)*+")'
_PLAIN_KEY = r'"[^"\\]*+"'
_SCALAR = r"[^,:{}\[\]\" \t\n\r]++"


def _containers(depth: int) -> str:
    inner = r'[^\[\]{}"]++|' + _STR
    pattern = ""
    for _ in range(depth):
        alts = inner if not pattern else inner + "|" + pattern
        pattern = r"\[(?:" + alts + r")*+\]|\{(?:" + alts + r")*+\}"
    return pattern


_VALUE = "(?:" + _STR + "|" + _SCALAR + "|" + _containers(4) + ")"
_SKIP_VALUE: Final = re.compile(_VALUE)
_KEY: Final = re.compile(r'"((?:[^"\\]|\\.)*)"' + _W + ":" + _W)
_SEPARATOR: Final = re.compile(_W + "(?:(,)" + _W + ")?")
_WHITESPACE: Final = re.compile(_W)

_decoder = json.JSONDecoder()
_scan_once = _decoder.scan_once
_MEMO_LIMIT = 4096  # distinct short values cached per field


class JsonSyntaxError(ValueError):
    """Invalid JSON at a character offset of the text being read."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.message = message
        self.index = index

    def place(self, text: str) -> tuple[int, int]:
        return line_col(text, self.index)


def decode_at(text: str, index: int) -> tuple[Any, int]:
    """Decode the one JSON value starting at ``index``; returns it and where it ends."""
    try:
        return _scan_once(text, index)
    except StopIteration:
        raise JsonSyntaxError("expected a JSON value", index) from None
    except json.JSONDecodeError as exc:
        raise JsonSyntaxError(exc.msg, exc.pos) from None


def skip_ws(text: str, index: int) -> int:
    match = _WHITESPACE.match(text, index)
    assert match is not None  # matches the empty string
    return match.end()


def skip_value(text: str, index: int) -> int:
    """The end of the JSON value at ``index``, decoding it only when it is unusual."""
    match = _SKIP_VALUE.match(text, index)
    if match is not None and text[index] in '"[{':
        return match.end()
    return decode_at(text, index)[1]


def next_element(text: str, index: int, closer: str) -> int | None:
    """After a value in an array or object: the start of the next one, or ``None`` at the end.

    ``index`` is just past the previous value; the closer itself is consumed by the caller
    via the returned ``None`` and ``closing_index``.
    """
    match = _SEPARATOR.match(text, index)
    assert match is not None
    end = match.end()
    if match.group(1):
        if end < len(text) and text[end] == closer:
            raise JsonSyntaxError(f"trailing comma before '{closer}'", index)
        return end
    if end < len(text) and text[end] == closer:
        return None
    found = "the end of the file" if end >= len(text) else repr(text[end])
    raise JsonSyntaxError(f"expected ',' or '{closer}', found {found}", end)


def read_key(text: str, index: int) -> tuple[str, int]:
    """An object key and the start of its value."""
    match = _KEY.match(text, index)
    if match is None:
        if index < len(text) and text[index] == "}":
            raise JsonSyntaxError("expected a key", index)
        raise JsonSyntaxError("expected a quoted key followed by ':'", index)
    raw = match.group(1)
    key = raw if "\\" not in raw else decode_at(text, index)[0]
    return key, match.end()


@functools.lru_cache(maxsize=16)
def _object_pattern(fields: tuple[str, ...]) -> re.Pattern[str]:
    """One object whose wanted fields are captured (groups 1..n), then its separator.

    Group n+1 is the comma after the object, if any, so an array of objects is
    walked with one match per object.
    """
    wanted = [
        # A name JSON must escape is never written plainly; objects holding it
        # carry a backslash in a key, miss the fast path and are decoded exactly.
        ('"' + re.escape(name) + '"' if json.dumps(name, ensure_ascii=False)[1:-1] == name
         else "(?!)")
        + _W + ":" + _W + "(" + _VALUE + ")"
        for name in fields
    ]
    pair = "(?:" + "|".join([*wanted, _PLAIN_KEY + _W + ":" + _W + _VALUE]) + ")"
    return re.compile(
        r"\{" + _W + "(?:" + pair + _W + r'(?:,' + _W + r'(?=")|(?=\})))*+' + r"\}"
        + _W + "(,?)" + _W
    )


@dataclass(frozen=True)
class Wanted:
    """A field to pick: its value when absent, a check of decoded values, whether to cache.

    Top-level arrays are returned as tuples, so a value cached from one case can be
    shared with the next without anyone mutating it.
    """

    name: str
    absent: Any = None
    check: Callable[[Any], str | None] | None = None
    memo: bool = True


class FieldValueError(ValueError):
    """A wanted field's value is invalid JSON or fails its check."""

    def __init__(self, field: str, problem: str, index: int) -> None:
        super().__init__(problem)
        self.field = field
        self.problem = problem
        self.index = index


class _Invalid(Exception):
    pass


def _standalone(raw: str) -> Any:
    """Decode the complete JSON text of one value (a top-level array becomes a tuple)."""
    if raw[0] == '"' and "\\" not in raw:
        return raw[1:-1]
    try:
        value, end = _scan_once(raw, 0)
    except (StopIteration, json.JSONDecodeError):
        raise _Invalid("invalid JSON value") from None
    if end != len(raw):
        raise _Invalid("invalid JSON value")
    return tuple(value) if type(value) is list else value


class _Memo(dict[str | None, Any]):
    """Raw value text -> checked value; a miss decodes and checks (and may cache)."""

    def __init__(self, wanted: Wanted) -> None:
        super().__init__({None: wanted.absent})
        self.check = wanted.check
        self.store = wanted.memo

    def __missing__(self, raw: str) -> Any:
        value = _standalone(raw)
        if self.check is not None:
            problem = self.check(value)
            if problem is not None:
                raise _Invalid(problem)
        if self.store and len(self) < _MEMO_LIMIT and len(raw) <= 256:
            self[raw] = value
        return value


class _Masks(dict[tuple[bool, ...], int]):
    """Which wanted fields were absent (a tuple of flags) -> bitmask, computed once per shape."""

    def __missing__(self, flags: tuple[bool, ...]) -> int:
        mask = sum(1 << i for i, flag in enumerate(flags) if flag)
        self[flags] = mask
        return mask


class FieldPicker:
    """Extracts the wanted top-level fields of JSON objects.

    ``pick`` returns the checked values in field order (each absent field at its
    ``absent`` value), a bitmask of the absent fields (bit i for field i), the end
    of the object including the whitespace after it, and whether a comma followed.
    """

    def __init__(self, wanted: Sequence[Wanted]) -> None:
        self.wanted = tuple(wanted)
        self.fields = tuple(w.name for w in self.wanted)
        self._index = {name: i for i, name in enumerate(self.fields)}
        self._object = _object_pattern(self.fields)
        self._memos = [_Memo(w) for w in self.wanted]
        self._masks = _Masks()

    def pick(self, text: str, index: int) -> tuple[list[Any], int, int, bool]:
        """Read the object starting at ``text[index] == "{"``."""
        match = self._object.match(text, index)
        if match is None:
            return self._pick_exact(text, index)
        raws = match.groups()
        try:
            values = list(map(dict.__getitem__, self._memos, raws))
        except _Invalid:
            raise self._invalid(raws, match) from None
        absent = self._masks[tuple(map(operator.is_, raws[:-1], repeat(None)))]
        return values, absent, match.end(), bool(raws[-1])

    def _invalid(self, raws: tuple[str | None, ...], match: re.Match[str]) -> FieldValueError:
        for position, (raw, memo) in enumerate(zip(raws, self._memos, strict=False)):
            try:
                memo[raw]
            except _Invalid as exc:
                return FieldValueError(self.fields[position], str(exc), match.start(position + 1))
        raise AssertionError("no invalid field found")  # pragma: no cover

    def _pick_exact(self, text: str, index: int) -> tuple[list[Any], int, int, bool]:
        """Decode the whole object with ``json`` and take the fields from it."""
        obj, end = decode_at(text, index)
        values: list[Any] = []
        absent = 0
        for position, wanted in enumerate(self.wanted):
            if wanted.name not in obj:
                values.append(wanted.absent)
                absent |= 1 << position
                continue
            value = obj[wanted.name]
            value = tuple(value) if type(value) is list else value
            problem = wanted.check(value) if wanted.check is not None else None
            if problem is not None:
                raise FieldValueError(wanted.name, problem, index)
            values.append(value)
        after = _SEPARATOR.match(text, end)
        assert after is not None
        return values, absent, after.end(), bool(after.group(1))
