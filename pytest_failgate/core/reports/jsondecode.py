"""Decoding a report's JSON: only the fields rules read, with ``json``'s values.

Most of a report is text no rule reads (answers, contexts). The decoders here
validate the whole document but build Python values only for the fields asked
for, through a compiled schema: pydantic-core (jiter, installed with pydantic)
by default, msgspec when the ``fast`` extra is installed. Both parse in native
code in one pass, so the time is linear in the file whatever its shape (no
layout is learnt, nothing is cached by raw bytes).

Semantics are ``json``'s (``NaN``/``Infinity`` accepted, the last duplicate key
wins), with three limits that are errors instead of crashes: nesting deeper than
200 levels, integers of more than 4,300 digits, and ``\\ud800``-style lone
surrogate escapes. msgspec is the fast path only: whenever it refuses a document
(or would decode it differently, as with ``NaN``), pydantic-core decides, so
results and messages do not depend on which is installed. One difference remains,
in fields no rule reads: msgspec steps over an integer of more than 4,300 digits, or
nesting deeper than 200 levels (up to its own, higher, limit), without building it,
so with the ``fast`` extra such a report is read (it is valid JSON) where the default
install refuses it.
"""

from __future__ import annotations

import codecs
import io
import re
from dataclasses import field
from functools import lru_cache
from itertools import chain
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from ..base.classes import dataclass
from ..taxonomy import kind_of
from .scan import MISSING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from pydantic_core import SchemaValidator, ValidationError, core_schema

_WHITESPACE = b" \t\n\r"
_JIT_ERROR = re.compile(r"^Invalid JSON: (.*) at line (\d+) column (\d+)$", re.DOTALL)
_CHUNK = 1 << 14  # bytes checked for UTF-8 at a time: small strings, made and freed in cache
BLOCK = 1 << 16  # bytes of JSON Lines read and decoded at a time: whole lines, in cache
_LINE = 4 * _CHUNK  # a longer line of JSON Lines is checked for UTF-8 in chunks


class JsonSyntaxError(ValueError):
    """Invalid JSON at a 1-based line and column (in characters) of the text."""

    def __init__(self, message: str, line: int | None = None, col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col


class ShapeError(ValueError):
    """Valid JSON of the wrong shape: ``case_results`` not a list, a case not an object.

    ``loc`` is where, as keys and indexes from the top (``("case_results", 4)``).
    """

    def __init__(self, loc: tuple[str | int, ...], value: Any, message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.value = value
        self.message = message


@dataclass(frozen=True)
class Form:
    """How a decoder hands over cases: dicts, or instances of ``struct`` (attributes
    ``f0``, ``f1``, ... for the asked-for fields, ``missing`` where absent) that
    ``to_mapping`` turns into dicts. A decoder may fall back to dicts for some cases."""

    struct: type | None = None
    missing: Any = MISSING
    to_mapping: Callable[[Any], Any] | None = None


@dataclass
class Document:
    """A decoded report: its top-level kind, the chosen top-level keys and the cases.

    ``cases`` is ``None`` for an object without ``case_results``; each case holds
    only the asked-for fields it has, in ``form``.
    """

    kind: str  # "object", "array" or the kind of a scalar ("a string", ...)
    top: dict[str, Any] = field(default_factory=dict)
    cases: list[Any] | None = None
    form: Form = field(default_factory=Form)


def start_of(data: bytes) -> int:
    """The index of the first byte that is not JSON whitespace."""
    return len(data) - len(data.lstrip(_WHITESPACE))


@lru_cache(maxsize=32)
def _validators(case_fields: tuple[str, ...], top_fields: tuple[str, ...]
                ) -> tuple[SchemaValidator, SchemaValidator, SchemaValidator, SchemaValidator]:
    """(object document, array document, one case, the object without its cases: any
    ``case_results``) validators for these fields (pydantic-core imported here: with the
    ``fast`` extra a valid report never needs it)."""
    from pydantic_core import SchemaValidator, core_schema

    def _optional(schema: core_schema.CoreSchema) -> core_schema.TypedDictField:
        return core_schema.typed_dict_field(schema, required=False)

    case = core_schema.typed_dict_schema(
        {name: _optional(core_schema.any_schema()) for name in case_fields},
        extra_behavior="ignore")
    fields = {name: _optional(core_schema.any_schema()) for name in top_fields}
    fields["case_results"] = _optional(core_schema.list_schema(case))
    top = core_schema.typed_dict_schema(fields, extra_behavior="ignore")
    rest = core_schema.typed_dict_schema(
        {**fields, "case_results": _optional(core_schema.any_schema())}, extra_behavior="ignore")
    return (SchemaValidator(top), SchemaValidator(core_schema.list_schema(case)),
            SchemaValidator(case), SchemaValidator(rest))


def _syntax_error(data: bytes, exc: ValidationError) -> JsonSyntaxError | ShapeError:
    first = exc.errors(include_url=False)[0]
    if first["type"] != "json_invalid":
        loc = tuple(first["loc"])
        value = first.get("input")
        wanted = "a list of cases" if first["type"] == "list_type" else "an object"
        return ShapeError(loc, value, f"is {kind_of(value)}, not {wanted}")
    found = _JIT_ERROR.match(str(first["msg"]))
    if found is None:  # pragma: no cover - jiter always names the place
        return JsonSyntaxError(str(first["msg"]))
    message, line, byte_col = found.group(1), int(found.group(2)), int(found.group(3))
    start = 0
    for _ in range(line - 1):
        start = data.index(b"\n", start) + 1
    column = len(data[start:start + byte_col - 1].decode("utf-8", "replace")) + 1
    return JsonSyntaxError(_plain(message), line, column)


def _plain(message: str) -> str:
    """jiter's wording, as a user reads it."""
    if message == "recursion limit exceeded":
        return "nested deeper than 200 levels (the reader's limit)"
    if message == "number out of range":
        return "a number too large to read (integers are limited to 4,300 digits)"
    if message == "invalid unicode code point":
        return "not UTF-8 text"
    if message == "unexpected end of hex escape" or "surrogate" in message:
        return "a lone surrogate escape (\\ud800-\\udfff without its pair) is not text"
    return message.replace("`", "'")


class _Default:
    """pydantic-core: exact, the reference for every document."""

    def document(self, data: bytes, case_fields: tuple[str, ...],
                 top_fields: tuple[str, ...]) -> Document:
        from pydantic_core import ValidationError, from_json

        from .jsonpieces import pieces

        first = data[start_of(data):start_of(data) + 1]
        top, array, _, rest = _validators(case_fields, top_fields)
        if first in (b"{", b"["):  # a large one a piece at a time, when it parses so
            split = pieces(data, first, array, rest)
            if split is not None:
                return Document("object" if first == b"{" else "array", *split)
        try:
            if first == b"{":
                found = top.validate_json(data)
                cases = found.pop("case_results", None)
                return Document("object", found, cases)
            if first == b"[":
                return Document("array", {}, array.validate_json(data))
            return Document(kind_of(from_json(data)))
        except ValidationError as exc:
            raise _syntax_error(data, exc) from None
        except ValueError as exc:  # from_json's own syntax errors
            raise from_json_error(data, exc) from None

    def case(self, data: bytes, case_fields: tuple[str, ...]) -> dict[str, Any]:
        found: dict[str, Any] = self.case_decoder(case_fields)(data)
        return found

    def case_decoder(self, case_fields: tuple[str, ...]) -> Callable[[bytes], Any]:
        """A function decoding one case (a JSON Lines line) to a dict of these fields."""
        from pydantic_core import ValidationError

        validate = _validators(case_fields, ())[2].validate_json

        def decode(data: bytes) -> Any:
            try:
                return validate(data)
            except ValidationError as exc:
                raise _syntax_error(data, exc) from None

        return decode

    def form(self, case_fields: tuple[str, ...]) -> Form:
        """How ``case`` hands over cases: dicts."""
        return Form()

    def mapping_decoder(self, case_fields: tuple[str, ...]) -> Callable[[bytes], Any]:
        """A function decoding one case to a dict of these fields (``failgate watch``'s,
        a line at a time): ``case_decoder``'s."""
        return self.case_decoder(case_fields)

    def lines(self, handle: BinaryIO, case_fields: tuple[str, ...]) -> Iterator[Any]:
        """The cases of a JSON Lines stream (see ``stream``): a block's lines validated
        in one ``map``, one at a time only in a block where one line is refused."""
        from pydantic_core import ValidationError

        validate = _validators(case_fields, ())[2].validate_json

        def batch(lines: list[Line], ascii_text: bool) -> list[Any] | None:
            try:  # ``bytes`` (not views): pydantic-core reads no other buffer
                return list(map(validate, cast("list[bytes]", lines)))
            except ValidationError:
                return None

        return stream(handle, batch, self.case_decoder(case_fields), views=False)


def from_json_error(data: bytes, exc: ValueError) -> JsonSyntaxError:
    """pydantic-core's error on ``data`` with its place as a line and a column in characters."""
    found = re.search(r"(.*) at line (\d+) column (\d+)$", str(exc))
    if found is None:  # pragma: no cover
        return JsonSyntaxError(str(exc))
    line, byte_col = int(found.group(2)), int(found.group(3))
    start = 0
    for _ in range(line - 1):
        start = data.index(b"\n", start) + 1
    column = len(data[start:start + byte_col - 1].decode("utf-8", "replace")) + 1
    return JsonSyntaxError(_plain(found.group(1)), line, column)


class _Fast:
    """msgspec (the ``fast`` extra): structs of the wanted fields only, handed over as
    they are (``Form``): the sink's generated loop reads their attributes.

    It skips what no rule reads without checking that text is UTF-8, so the bytes
    are checked first (ASCII, the usual ``json.dump`` output, is one quick test).
    """

    def __init__(self, msgspec: Any) -> None:
        self.msgspec = msgspec
        self.exact = _Default()

    @lru_cache(maxsize=32)  # noqa: B019 - one decoder object per process
    def _decoders(self, case_fields: tuple[str, ...], top_fields: tuple[str, ...]
                  ) -> tuple[Any, Any, Any, Form]:
        """(object document, array document, one case) decoders for these fields, and
        the form of their cases."""
        ms, unset = self.msgspec, self.msgspec.UNSET
        # Attribute names are made up (keys need not be identifiers); ``rename`` maps them.
        # No reference cycle can form among decoded values: the garbage collector may
        # ignore the cases (gc=False), which spares it a pass over every one.
        case = ms.defstruct("Case", [(f"f{i}", Any, unset) for i in range(len(case_fields))],
                            rename={f"f{i}": name for i, name in enumerate(case_fields)},
                            gc=False)
        tops = [(f"t{i}", Any, unset) for i in range(len(top_fields))]
        top = ms.defstruct("Top", [*tops, ("cases", list[case], unset)],  # type: ignore[valid-type]
                           rename={**{f"t{i}": n for i, n in enumerate(top_fields)},
                                   "cases": "case_results"})
        to_builtins = ms.to_builtins

        def to_mapping(found: Any) -> Any:
            return to_builtins(found) if type(found) is case else found

        return (ms.json.Decoder(top), ms.json.Decoder(list[case]),  # type: ignore[valid-type]
                ms.json.Decoder(case), Form(case, unset, to_mapping))

    def document(self, data: bytes, case_fields: tuple[str, ...],
                 top_fields: tuple[str, ...]) -> Document:
        first = data[start_of(data):start_of(data) + 1]
        if first in (b"{", b"[") and _utf8(data):
            top, array, _, form = self._decoders(case_fields, top_fields)
            try:
                if first == b"[":
                    return Document("array", {}, array.decode(data), form)
                found = top.decode(data)
            except (self.msgspec.DecodeError, RecursionError):
                pass  # let the exact decoder decide and word the error
            else:
                unset = self.msgspec.UNSET
                values = {name: getattr(found, f"t{i}") for i, name in enumerate(top_fields)}
                cases = found.cases
                return Document("object", {k: v for k, v in values.items() if v is not unset},
                                None if cases is unset else cases, form)
        return self.exact.document(data, case_fields, top_fields)

    def case(self, data: bytes, case_fields: tuple[str, ...]) -> Any:
        """One case: a struct of ``form``, or a dict where msgspec refused the line."""
        return self.case_decoder(case_fields)(data)

    def case_decoder(self, case_fields: tuple[str, ...]) -> Callable[[bytes], Any]:
        """A function decoding one case (a JSON Lines line): a struct of ``form``, or a
        dict where msgspec refused it (the exact decoder decides, and words the error)."""
        decode_struct = self._decoders(case_fields, ())[2].decode
        exact = self.exact.case_decoder(case_fields)
        refused = (self.msgspec.DecodeError, RecursionError)

        def decode(data: bytes) -> Any:
            if data.isascii() or _utf8(data):
                try:
                    return decode_struct(data)
                except refused:
                    pass
            return exact(data)

        return decode

    def form(self, case_fields: tuple[str, ...]) -> Form:
        return self._decoders(case_fields, ())[3]

    def mapping_decoder(self, case_fields: tuple[str, ...]) -> Callable[[bytes], Any]:
        """A function decoding one case to a dict of these fields present (``failgate
        watch``'s, a line at a time): ``case_decoder``'s struct as ``to_builtins`` makes it
        a dict, without copying its values, in one function (a line is a few microseconds
        to decode: the layers around it were a third more)."""
        decode_struct = self._decoders(case_fields, ())[2].decode
        exact = self.exact.case_decoder(case_fields)
        refused = (self.msgspec.DecodeError, RecursionError)
        astuple, unset = self.msgspec.structs.astuple, self.msgspec.UNSET

        def decode(data: bytes) -> Any:
            if data.isascii() or _utf8(data):
                try:
                    found = decode_struct(data)
                except refused:
                    return exact(data)
                return {name: value for name, value in zip(case_fields, astuple(found),
                                                           strict=True) if value is not unset}
            return exact(data)

        return decode

    def lines(self, handle: BinaryIO, case_fields: tuple[str, ...]) -> Iterator[Any]:
        """The cases of a JSON Lines stream (see ``stream``): a block's lines, views of
        the bytes read (msgspec decodes any buffer), checked for UTF-8 (nothing to do
        when the read was ASCII) and decoded in one ``map`` by one decoder; a block
        msgspec refuses anywhere is decoded a line at a time, the exact decoder deciding."""
        decode_struct = self._decoders(case_fields, ())[2].decode
        refused = (self.msgspec.DecodeError, RecursionError)

        def batch(lines: list[Line], ascii_text: bool) -> list[Any] | None:
            if not ascii_text and not _utf8_lines(lines):
                return None
            try:
                return list(map(decode_struct, lines))
            except refused:
                return None

        return stream(handle, batch, self.case_decoder(case_fields), views=True)


def _utf8(data: bytes) -> bool:
    """Whether the bytes are UTF-8 text (checked a chunk at a time, in native code)."""
    if data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(data), _CHUNK):
            decoder.decode(view[start:start + _CHUNK], start + _CHUNK >= len(data))
    except UnicodeDecodeError:
        return False
    return True


def _utf8_lines(lines: list[Line]) -> bool:
    """Whether every line is UTF-8 text: each decoded whole (a small string, made and
    freed in cache; ASCII decodes at a copy's speed), a longer one a chunk at a time
    (``_utf8``)."""
    try:
        for line in lines:
            if len(line) > _LINE:
                if not _utf8(bytes(line)):
                    return False
            else:
                str(line, "utf-8")
    except UnicodeDecodeError:
        return False
    return True


class LineError(ValueError):
    """A JSON Lines line that is not a case: ``error`` (invalid JSON, or not an object)
    at 1-based line ``number``, the ``case``-th case of the file, whose first byte that
    is not blank is at column ``col``."""

    def __init__(self, error: JsonSyntaxError | ShapeError, number: int, case: int,
                 col: int) -> None:
        super().__init__(error.message)
        self.error = error
        self.number = number
        self.case = case
        self.col = col


Line = bytes | memoryview  # a JSON Lines line without its end


def _views(chunk: bytes) -> list[Line]:
    """``chunk.split(b"\\n")`` as views of the chunk: no line's bytes copied."""
    view, find = memoryview(chunk), chunk.find
    lines: list[Line] = []
    start = 0
    while (end := find(b"\n", start)) >= 0:
        lines.append(view[start:end])
        start = end + 1
    lines.append(view[start:])
    return lines


def _blocks(handle: BinaryIO, views: bool = False
            ) -> Iterator[tuple[list[Line], bool, bool]]:
    """The stream's lines, without their ``\\n``, a read of ``BLOCK`` bytes at a time (a
    longer line whole), without a leading UTF-8 byte-order mark; with each list, whether
    its last line ended with a ``\\n`` (only the stream's last line may not) and, for
    ``views``, whether its bytes are ASCII (``False`` when not checked).

    Each read is split once, into ``bytes`` (a copy of each line) or, for ``views``,
    into views of the read; a line cut by the end of a read is joined once, when its
    end is read."""
    parts: list[Line] = []  # a line begun in earlier reads
    parts_ascii = True  # whether those reads were ASCII
    first = True
    while chunk := handle.read(BLOCK):
        if first:
            chunk, first = chunk.removeprefix(codecs.BOM_UTF8), False
        ascii_text = views and chunk.isascii()
        lines: list[Line] = _views(chunk) if views else list(chunk.split(b"\n"))
        if len(lines) == 1:
            parts.append(chunk)
            parts_ascii = parts_ascii and ascii_text
            continue
        if parts:
            parts.append(lines[0])
            lines[0] = b"".join(parts)
        rest = lines.pop()
        yield lines, True, ascii_text and parts_ascii
        parts, parts_ascii = ([rest] if rest else []), ascii_text
    tail = b"".join(parts)
    if tail:
        yield [tail], False, views and parts_ascii


def stream(handle: BinaryIO, batch: Callable[[list[Line], bool], list[Any] | None],
           one: Callable[[bytes], Any], *, views: bool) -> Iterator[Any]:
    """The cases of a JSON Lines stream, one per line that is not blank.

    Python's work is per block of lines, not per line: ``batch`` decodes a block's lines
    (split on ``\\n``, as views of the bytes read for ``views``; with whether they are
    all ASCII, see ``_blocks``) in native code, or returns ``None`` when any line is refused
    (invalid, blank, not UTF-8); that block is then decoded a line at a time by ``one``
    (the exact decoder: same values, and the error of the first refused line, as a
    ``LineError`` naming its line, after the cases before it).

    The lines are split here, not by msgspec's ``decode_lines``: that reads values
    separated by any whitespace, so two objects on one line, or one object spread over
    two, would be read where a line-at-a-time reader refuses them. Nor is a block
    decoded as one JSON array of its lines joined by commas: a line holding
    ``{...}, {...}`` and an object spread over two lines would make as many elements
    as lines, and be read.
    """
    return chain.from_iterable(_batches(handle, batch, one, views))


def _batches(handle: BinaryIO, batch: Callable[[list[Line], bool], list[Any] | None],
             one: Callable[[bytes], Any], views: bool) -> Iterator[Iterable[Any]]:
    number = cases = 0  # lines and cases before the block
    for lines, ended, ascii_text in _blocks(handle, views):
        found = batch(lines, ascii_text)
        if found is not None:
            yield found
            cases += len(found)
        else:  # lazily: a case before the refused line is classified (and refused) first
            block = b"\n".join(lines) + (b"\n" if ended else b"")
            yield _one_by_one(block, number, cases, one)
            cases += sum(1 for line in io.BytesIO(block) if start_of(line) < len(line))
        number += len(lines)


def _one_by_one(block: bytes, number: int, cases: int, one: Callable[[bytes], Any]
                ) -> Iterator[Any]:
    """A block's cases decoded a line at a time (the lines as a file hands them over,
    with their ends), blank lines skipped; a refused line is a ``LineError``."""
    for at, line in enumerate(io.BytesIO(block), start=number + 1):
        if start_of(line) == len(line):
            continue
        cases += 1
        try:
            yield one(line)
        except (JsonSyntaxError, ShapeError) as exc:
            raise LineError(exc, at, cases, start_of(line) + 1) from None


def case_line(handle: BinaryIO, position: int) -> tuple[int, int]:
    """(line, column of its first byte that is not blank) of the ``position``-th case of
    a JSON Lines stream: for an error about a case, found again only then."""
    number = seen = 0
    for lines, _, _ in _blocks(handle):
        for line in cast("list[bytes]", lines):
            number += 1
            if start_of(line) < len(line):
                seen += 1
                if seen == position:
                    return number, start_of(line) + 1
    raise ValueError(f"no case #{position}")  # pragma: no cover - the sink counted it


Decoder = _Default | _Fast


@lru_cache(maxsize=1)
def decoder() -> Decoder:
    """The fastest exact decoder installed: msgspec with the ``fast`` extra, else jiter."""
    try:
        import msgspec
    except ImportError:
        return _Default()
    return _Fast(msgspec)
