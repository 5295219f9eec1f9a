"""Read chosen fields of JSON objects without decoding the rest.

Evaluation reports are mostly long strings (answers, contexts) that no rule
reads. Decoding them is what makes ``json.load`` slow on a 100k-case report, so
the reader works on the file's bytes: each case object is matched by one
compiled regular expression that captures the raw bytes of the wanted fields and
only steps over everything else, and just those bytes are decoded. When the
expression does not match (a key or string with an escaped quote, nesting deeper
than it covers, invalid JSON) the object is decoded exactly with ``json``
instead, so results never differ from ``json.loads``; only the speed does.

What the fast path does not do is validate the *content* of values it skips:
a skipped string's escapes and encoding, or a skipped number's digits, are
checked for structure, not meaning.
"""

from __future__ import annotations

import codecs
import functools
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from json.scanner import make_scanner
from typing import Any, Final

_W = rb"[ \t\n\r]*"
# A string: first a fast form with no escaped quote, then the exact form.
_STR = rb'(?:"[^"]*+(?<!\\)"|"[^"\\]*+(?:\\.[^"\\]*+)*+")'
_PLAIN_KEY = rb'"[^"\\]*+"'
_SCALAR = rb"[^,:{}\[\]\" \t\n\r]++"


def _containers(depth: int) -> bytes:
    inner = rb'[^\[\]{}"]++|' + _STR
    pattern = b""
    for _ in range(depth):
        alts = inner if not pattern else inner + b"|" + pattern
        pattern = rb"\[(?:" + alts + rb")*+\]|\{(?:" + alts + rb")*+\}"
    return pattern


_VALUE = b"(?:" + _STR + b"|" + _SCALAR + b"|" + _containers(4) + b")"
_SKIP_VALUE: Final = re.compile(_VALUE)
_KEY: Final = re.compile(rb'"((?:[^"\\]|\\.)*)"' + _W + b":" + _W)
_SEPARATOR: Final = re.compile(_W + b"(?:(,)" + _W + b")?")
_WHITESPACE: Final = re.compile(_W)

# The C scanner: decodes the one value at an index (typeshed types its argument oddly).
_scan_once = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
_utf8_decode = codecs.utf_8_decode
_MEMO_LIMIT = 4096  # distinct short values cached per field


class JsonSyntaxError(ValueError):
    """Invalid JSON at a byte offset of the data being read."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.message = message
        self.index = index


def place(data: bytes, index: int) -> tuple[int, int]:
    """1-based line and column (in characters) of a byte offset; only for messages."""
    line_start = data.rfind(b"\n", 0, index) + 1
    column = len(data[line_start:index].decode("utf-8", "replace")) + 1
    return data.count(b"\n", 0, index) + 1, column


def decode_at(data: bytes, index: int) -> tuple[Any, int]:
    """Decode the one JSON value starting at byte ``index``; returns it and its end.

    Only a window of the data is decoded to text, grown until the value fits, so
    reading one value never costs the whole file.
    """
    size = 1 << 12
    while True:
        stop = index + size
        final = stop >= len(data)
        bad_at = None
        try:
            text, _ = _utf8_decode(data[index:stop], "strict", final)
        except UnicodeDecodeError as exc:
            text, _ = _utf8_decode(data[index:index + exc.start], "strict", True)
            bad_at, final = index + exc.start, True
        try:
            value, end = _scan_once(text, 0)
        except StopIteration:
            if final:
                raise _error_at(data, index, bad_at, "expected a JSON value", 0, text) from None
        except json.JSONDecodeError as exc:
            if final:
                raise _error_at(data, index, bad_at, exc.msg, exc.pos, text) from None
        else:
            if end < len(text) or final:
                return value, index + len(text[:end].encode("utf-8"))
        size *= 8


def _error_at(data: bytes, index: int, bad_at: int | None, message: str, pos: int,
              text: str) -> JsonSyntaxError:
    if bad_at is not None:  # the value ran into bytes that are not UTF-8
        return JsonSyntaxError("not UTF-8 text", bad_at)
    return JsonSyntaxError(message, index + len(text[:pos].encode("utf-8")))


def skip_ws(data: bytes, index: int) -> int:
    match = _WHITESPACE.match(data, index)
    assert match is not None  # matches the empty string
    return match.end()


def skip_value(data: bytes, index: int) -> int:
    """The end of the JSON value at ``index``, decoding it only when it is unusual."""
    if data[index:index + 1] in (b'"', b"[", b"{"):
        match = _SKIP_VALUE.match(data, index)
        if match is not None:
            return match.end()
    return decode_at(data, index)[1]


def next_element(data: bytes, index: int, closer: bytes) -> int | None:
    """Just past a value in an array or object: where the next one starts, or ``None``.

    ``None`` means the closer follows; the caller finds it with ``skip_ws``.
    """
    match = _SEPARATOR.match(data, index)
    assert match is not None
    end = match.end()
    following = data[end:end + 1]
    if match.group(1):
        if following == closer:
            raise JsonSyntaxError(f"trailing comma before '{closer.decode()}'", index)
        return end
    if following == closer:
        return None
    found = "the end of the file" if not following else repr(following.decode("latin-1"))
    raise JsonSyntaxError(f"expected ',' or '{closer.decode()}', found {found}", end)


def read_key(data: bytes, index: int) -> tuple[str, int]:
    """An object key and the start of its value."""
    match = _KEY.match(data, index)
    if match is None:
        raise JsonSyntaxError("expected a quoted key followed by ':'", index)
    raw = match.group(1)
    if b"\\" in raw:
        return str(decode_at(data, index)[0]), match.end()
    try:
        return raw.decode("utf-8"), match.end()
    except UnicodeDecodeError as exc:
        raise JsonSyntaxError("not UTF-8 text", index + 1 + exc.start) from None


@dataclass(frozen=True)
class _Layout:
    """A compiled object pattern and the group holding each wanted field's raw bytes.

    ``match.group(*layout.groups)`` gives the raw value of every wanted field in
    field order (``None`` when absent), then the comma after the object, if any.
    """

    pattern: re.Pattern[bytes]
    groups: tuple[int, ...]  # group number per wanted field, then the comma's


_NEVER = b"(?:(?!)())?"  # a group that never takes part: an absent field reads as None
_OBJECT_END = rb"\}" + _W + b"(,?)" + _W


def _value_name(name: str) -> bytes | None:
    """How a key is written when JSON needs no escape for it (else ``None``)."""
    return name.encode("utf-8") if json.dumps(name, ensure_ascii=False)[1:-1] == name else None


@functools.lru_cache(maxsize=16)
def _general_layout(fields: tuple[str, ...]) -> _Layout:
    """Any object: each pair is a wanted field (captured) or any other plain key.

    A name JSON must escape is never written plainly; objects holding it carry a
    backslash in a key, miss this pattern and are decoded exactly.
    """
    wanted = []
    for name in fields:
        written = _value_name(name)
        key = b'"' + re.escape(written) + b'"' if written is not None else b"(?!)"
        wanted.append(key + _W + b":" + _W + b"(" + _VALUE + b")")
    pair = b"(?:" + b"|".join([*wanted, _PLAIN_KEY + _W + b":" + _W + _VALUE]) + b")"
    pattern = re.compile(
        rb"\{" + _W + b"(?:" + pair + _W + rb'(?:,' + _W + rb'(?=")|(?=\})))*+' + _OBJECT_END
    )
    return _Layout(pattern, tuple(range(1, len(fields) + 2)))


_KIND_PATTERNS = {"string": _STR, "container": b"(?:" + _containers(2) + b")", "scalar": _SCALAR}


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "string"
    return "container" if isinstance(value, list | dict) else "scalar"


# The whitespace an object's writer put after "{", around ":", around "," and before "}".
Spacing = tuple[bytes, bytes, bytes, bytes, bytes]
_ANY_SPACING: Spacing = (_W, _W, _W, _W + b"," + _W, _W)
_WS_COLON_WS: Final = re.compile(rb"([ \t\n\r]*):([ \t\n\r]*)")
_WS_COMMA_WS: Final = re.compile(rb"([ \t\n\r]*)(?:(,)([ \t\n\r]*))?")


def _spacing(data: bytes, index: int, n_keys: int) -> Spacing | None:
    """The whitespace of the object at ``index``, if its writer was consistent.

    A layout that matches this exact whitespace runs a third faster than one that
    allows any: machine-written reports indent every case alike.
    """
    if n_keys == 0:
        return None
    start = skip_ws(data, index + 1)
    opening = data[index + 1:start]
    seen: set[tuple[bytes, ...]] = set()
    between: set[bytes] = set()
    position, closing = start, b""
    for _ in range(n_keys):
        key_end = skip_value(data, position)
        colon = _WS_COLON_WS.match(data, key_end)
        if colon is None:
            return None
        seen.add(colon.groups())
        separator = _WS_COMMA_WS.match(data, skip_value(data, colon.end()))
        assert separator is not None  # matches the empty string
        if separator.group(2):
            between.add(separator.group(0))
            position = separator.end()
        else:
            closing = separator.group(1)
    if len(seen) != 1 or len(between) > 1:
        return None
    before, after = seen.pop()
    literal = re.escape
    comma = literal(between.pop()) if between else b","
    return literal(opening), literal(before), literal(after), comma, literal(closing)


@functools.lru_cache(maxsize=64)
def _layout(fields: tuple[str, ...], shape: tuple[tuple[str, str], ...],
            spacing: Spacing = _ANY_SPACING) -> _Layout | None:
    """Objects with exactly these keys in this order, each value of the kind seen."""
    opening, before, after, comma_text, closing = spacing
    index = {name: i for i, name in enumerate(fields)}
    parts = []
    group_of: dict[int, int] = {}
    for key, kind in shape:
        written = _value_name(key)
        if written is None:
            return None
        value = _KIND_PATTERNS[kind]
        if key in index:
            group_of[index[key]] = len(group_of)
            value = b"(" + value + b")"
        parts.append(b'"' + re.escape(written) + b'"' + before + b":" + after + value)
    comma = len(group_of) + 1
    never = comma + 1
    pattern = re.compile(rb"\{" + opening + comma_text.join(parts) + closing + _OBJECT_END
                         + _NEVER)
    fields_groups = tuple(group_of[i] + 1 if i in group_of else never for i in range(len(fields)))
    groups = (*fields_groups, comma)
    return _Layout(pattern, groups)


_LAYOUT_LIMIT = 8
_EXACT_FIRST = 64


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


def _standalone(raw: bytes) -> Any:
    """Decode the complete JSON text of one value (a top-level array becomes a tuple)."""
    try:
        if raw[0] == 0x22 and b"\\" not in raw:  # a plain string
            return raw[1:-1].decode("utf-8")
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Invalid("is not UTF-8 text") from None
    try:
        value, end = _scan_once(text, 0)
    except (StopIteration, json.JSONDecodeError):
        raise _Invalid("is not valid JSON") from None
    if end != len(text):
        raise _Invalid("is not valid JSON")
    return tuple(value) if type(value) is list else value


class _Memo(dict[bytes | None, Any]):
    """Raw value text -> checked value; a miss decodes and checks (and may cache)."""

    def __init__(self, wanted: Wanted) -> None:
        super().__init__({None: wanted.absent})
        self.check = wanted.check
        self.store = wanted.memo

    def __missing__(self, raw: bytes) -> Any:
        if raw[0] == 0x22 and b"\\" not in raw:  # a plain string, the common case
            try:
                value = raw[1:-1].decode("utf-8")
            except UnicodeDecodeError:
                raise _Invalid("is not UTF-8 text") from None
        else:
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


class NotAnObject(ValueError):
    """An array element that should be an object is some other JSON value."""

    def __init__(self, position: int, value: Any, index: int) -> None:
        super().__init__(f"element {position} is not an object")
        self.position = position
        self.value = value
        self.index = index


Derive = Callable[[list[Any], int], Any]
Raws = tuple[bytes | None, ...]


class FieldPicker:
    """Extracts the wanted top-level fields of JSON objects.

    The ``keyed`` fields feed ``derive(values, absent)``, a pure function of their
    checked values (each absent field at its ``absent`` value) and of the bitmask
    of absent ones (bit i for field i). Its result is cached by the raw bytes of
    those fields, so identical cases cost one lookup: in a report, the fields rules
    read repeat far more than they vary. The ``raw`` fields (case ids, unique per
    case) come back undecoded, as the JSON bytes of their value or ``None``.
    """

    def __init__(self, keyed: Sequence[Wanted], raw: Sequence[str], derive: Derive) -> None:
        self.wanted = (*keyed, *(Wanted(name) for name in raw))
        self.fields = tuple(w.name for w in self.wanted)
        self._keyed = len(keyed)
        self._derive = derive
        self._layouts: list[_Layout] = []
        self._learning = True
        self._objects_seen = 0
        self._memos = [_Memo(w) for w in self.wanted]
        self._masks = _Masks()
        self._derived: dict[tuple[bytes | None, ...], Any] = {}
        self.end = 0  # where the last array read by ``iter_array`` ended

    def iter_array(self, data: bytes, index: int) -> Iterator[tuple[Any, Raws]]:
        """``(derived, raw values)`` for each object of the array at ``data[index] == "["``.

        This is the hot loop of a large report. Afterwards ``end`` is the index just
        past the closing bracket.
        """
        keyed, last = self._keyed, len(self.fields)
        derived_of = self._derived.get
        layout = None
        index = skip_ws(data, index + 1)
        if data.startswith(b"]", index):
            self.end = index + 1
            return
        position = 0
        while True:
            position += 1
            match = layout.pattern.match(data, index) if layout is not None else None
            if match is None:
                layout, match = self._match(data, index)
            if match is not None:
                assert layout is not None
                raws = match.group(*layout.groups)
                derived = derived_of(raws[:keyed])
                if derived is None:
                    derived = self._derive_from(raws, layout, match)
                yield derived, raws[keyed:last]
                end, comma = match.end(), raws[last]
            elif data.startswith(b"{", index):
                derived, others, end, more = self._pick_exact(data, index)
                yield derived, others
                comma = b"," if more else b""
            else:
                raise NotAnObject(position, decode_at(data, index)[0], index)
            if comma:
                if data.startswith(b"]", end):
                    raise JsonSyntaxError("trailing comma before ']'", end)
                index = end
            elif data.startswith(b"]", end):
                self.end = end + 1
                return
            else:
                found = "the end of the file" if end >= len(data) else repr(data[end:end + 1])
                raise JsonSyntaxError(f"expected ',' or ']' after an object, found {found}", end)

    def pick(self, data: bytes, index: int) -> tuple[Any, Raws, int, bool]:
        """One object at ``data[index] == "{"``: derived, raw values, its end, comma after."""
        layout, match = self._match(data, index)
        if match is None:
            return self._pick_exact(data, index)
        assert layout is not None
        raws = match.group(*layout.groups)
        derived = self._derived.get(raws[: self._keyed])
        if derived is None:
            derived = self._derive_from(raws, layout, match)
        return derived, raws[self._keyed:-1], match.end(), bool(raws[-1])

    def _match(self, data: bytes, index: int) -> tuple[_Layout | None, re.Match[bytes] | None]:
        """Match an object with a known layout, a newly learnt one, or the general pattern.

        The first objects are decoded exactly (no match): compiling patterns only
        pays for itself on large reports.
        """
        if self._objects_seen < _EXACT_FIRST:
            self._objects_seen += 1
            return None, None
        for layout in self._layouts:
            match = layout.pattern.match(data, index)
            if match is not None:
                return layout, match
        if self._learning and data.startswith(b"{", index):
            learnt = self._learn(data, index)
            match = learnt.pattern.match(data, index) if learnt is not None else None
            if match is not None:
                return learnt, match
        general = _general_layout(self.fields)
        return general, general.pattern.match(data, index)

    def _learn(self, data: bytes, index: int) -> _Layout | None:
        """A pattern for objects with this one's keys in this order (machine-written reports
        repeat one layout), which matches far faster than the general pattern."""
        if len(self._layouts) >= _LAYOUT_LIMIT:
            self._learning = False
            return None
        try:
            obj = decode_at(data, index)[0]
        except JsonSyntaxError:
            return None  # the exact path reports it
        shape = tuple((key, _kind(value)) for key, value in obj.items())
        layout = _layout(self.fields, shape)
        if layout is None:
            return None
        spacing = _spacing(data, index, len(obj))
        exact = _layout(self.fields, shape, spacing) if spacing is not None else None
        if exact is None or exact.pattern.match(data, index) is None:
            self._layouts.append(layout)
            return layout
        # Tried first; the layout allowing any whitespace catches the odd case.
        self._layouts += [exact, layout]
        return exact

    def _derive_from(self, raws: tuple[bytes | None, ...], layout: _Layout,
                     match: re.Match[bytes]) -> Any:
        keyed = self._keyed
        try:
            values = list(map(dict.__getitem__, self._memos[:keyed], raws[:keyed]))
        except _Invalid:
            raise self._invalid(raws, layout, match) from None
        absent = self._masks[tuple(raw is None for raw in raws[:keyed])]
        derived = self._derive(values, absent)
        if len(self._derived) < _DERIVED_LIMIT and all(
            raw is None or len(raw) <= 256 for raw in raws[:keyed]
        ):
            self._derived[raws[:keyed]] = derived
        return derived

    def _invalid(self, raws: tuple[bytes | None, ...], layout: _Layout,
                 match: re.Match[bytes]) -> FieldValueError:
        for position, (raw, memo) in enumerate(zip(raws, self._memos, strict=False)):
            try:
                memo[raw]
            except _Invalid as exc:
                start = match.start(layout.groups[position])
                return FieldValueError(self.fields[position], str(exc), start)
        raise AssertionError("no invalid field found")  # pragma: no cover

    def _value_at(self, data: bytes, index: int, position: int) -> int:
        """Where a field's value starts in the object at ``index`` (for an error message)."""
        general = _general_layout(self.fields)
        match = general.pattern.match(data, index)
        if match is None or match.start(general.groups[position]) < 0:
            return index
        return match.start(general.groups[position])

    def _pick_exact(self, data: bytes, index: int) -> tuple[Any, Raws, int, bool]:
        """Decode the whole object with ``json`` and take the fields from it.

        Raw fields are encoded back to JSON (canonically, which is what their
        callers compare).
        """
        obj, end = decode_at(data, index)
        values: list[Any] = []
        absent = 0
        keyed = self._keyed
        for position, wanted in enumerate(self.wanted[:keyed]):
            if wanted.name not in obj:
                values.append(wanted.absent)
                absent |= 1 << position
                continue
            value = obj[wanted.name]
            value = tuple(value) if type(value) is list else value
            problem = wanted.check(value) if wanted.check is not None else None
            if problem is not None:
                raise FieldValueError(wanted.name, problem, self._value_at(data, index, position))
            values.append(value)
        raws = tuple(
            json.dumps(obj[name], ensure_ascii=False).encode("utf-8") if name in obj else None
            for name in self.fields[keyed:]
        )
        after = _SEPARATOR.match(data, end)
        assert after is not None
        return self._derive(values, absent), raws, after.end(), bool(after.group(1))


_DERIVED_LIMIT = 1 << 16
