"""Safe YAML reading that remembers where every value came from.

Ceilings (and later taxonomy) files are reviewed by people, so every error must
point at a line, and rewrites must touch only the characters of one number. We
therefore compose the YAML node tree with the safe loader (nothing is ever
constructed from arbitrary tags) and convert it ourselves, keeping each node's
span. Mapping keys stay the text the user wrote (``2024:`` is the name "2024",
not an integer), floats become exact ``Fraction`` values (``0.05`` is 1/20, not
the nearest binary float), and duplicate keys are an error instead of YAML's
silent last-one-wins.

A number must be what a reader sees: YAML 1.1 reads ``010`` as 8, ``1:00`` as 60
and ``7_0`` as 70, so only plain decimals are numbers and the rest are errors.
Aliases are expanded under a budget (a "billion laughs" file of 1 KB would
otherwise expand to gigabytes), and a caller can refuse them outright: a ceilings
file is rewritten number by number, and an alias would make one number mean two.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import yaml

from .classes import dataclass
from .errors import FailgateError, line_col
from .safeopen import read_regular

if TYPE_CHECKING:
    from pathlib import Path

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class Span:
    """Where a node sits in the file: 1-based line/column and character offsets."""

    line: int
    col: int
    start: int
    end: int
    style: str | None = None  # a scalar's quoting: None (plain), "'", '"', "|" or ">"


def _span(node: yaml.Node) -> Span:
    # a plain scalar's style is None from PyYAML's composer, "" from libyaml's
    style = (node.style or None) if isinstance(node, yaml.ScalarNode) else None
    return Span(
        node.start_mark.line + 1, node.start_mark.column + 1, node.start_mark.index,
        node.end_mark.index, style,
    )


@dataclass
class YamlDoc:
    """A parsed YAML file: plain data plus the span of every key and value."""

    path: Path
    text: str
    data: Any
    keys: dict[Loc, Span]
    values: dict[Loc, Span]

    def where(self, loc: Loc) -> Span | None:
        """The span of the value at ``loc``, else of its nearest enclosing value."""
        for end in range(len(loc), -1, -1):
            span = self.values.get(loc[:end]) or self.keys.get(loc[:end])
            if span is not None:
                return span
        return None

    def data_at(self, loc: Loc) -> Any:
        value = self.data
        for part in loc:
            value = value[part]
        return value

    def key_span(self, loc: Loc) -> Span | None:
        return self.keys.get(loc) or self.where(loc)

    def error(self, message: str, loc: Loc, *, at_key: bool = False) -> FailgateError:
        span = self.key_span(loc) if at_key else self.where(loc)
        if span is None:
            return FailgateError(message, self.path)
        return FailgateError(message, self.path, span.line, span.col)


_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_constructor = yaml.SafeLoader(stream="")  # only its scalar constructors are used
# The numbers a reader reads as they are written: plain decimal integers and decimals.
_PLAIN_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)")
_PLAIN_DECIMAL = re.compile(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+][0-9]+)?")
# Values built from one document, aliases expanded: far above any real file, far
# below what an expansion attack needs to hurt.
MAX_VALUES = 100_000
# The most digits a number may have (and the largest exponent): Python's default limit
# for converting text to an integer, which JSON reports meet too.
MAX_DIGITS = 4300
# Digits before the decimal point (the exponent counted): every number is compared, shown
# or turned into a float somewhere, and a float stops near 10^308.
MAX_MAGNITUDE = 300
# How deep a value may nest: the files failgate reads nest a few levels; past this the
# composer would recurse until Python's own limit, which has no place to name.
MAX_DEPTH = 200


def _scalar(node: yaml.ScalarNode, path: Path) -> Any:
    tag = node.tag
    if tag == _NULL_TAG:
        return None
    if tag == _BOOL_TAG:
        return _constructor.construct_yaml_bool(node)
    if tag == _INT_TAG:
        _check_length(node, path)
        if not _PLAIN_INT.fullmatch(node.value):
            raise _unplain(node, path, _constructor.construct_yaml_int(node))
        return int(node.value)
    if tag == _FLOAT_TAG:
        _check_length(node, path)
        if not _PLAIN_DECIMAL.fullmatch(node.value):
            raise _unplain(node, path, _constructor.construct_yaml_float(node))
        return Fraction(node.value)
    return node.value  # str, and anything exotic (dates...) as the text written


def _check_length(node: yaml.ScalarNode, path: Path) -> None:
    """A number of more than ``MAX_DIGITS`` digits, an exponent past ``MAX_DIGITS``, or a
    value of ``10^MAX_MAGNITUDE`` or more is one clear error at its place: Python refuses to
    read a longer integer (a traceback), ``1.0e+99999999`` would build a hundred-million-digit
    integer, and a 400-digit ``max_rate`` overflows the float it is shown as. Checked
    before anything reads it, YAML 1.1's own readers (of ``0x...``) included."""
    text = node.value
    if _PLAIN_INT.fullmatch(text) or _PLAIN_DECIMAL.fullmatch(text):
        mantissa, _, exponent = text.lower().partition("e")
    else:  # 0x1F, 7_0, 1:00: every letter and digit counts
        mantissa, exponent = text, ""
    digits = sum(char.isalnum() for char in mantissa)
    power = int(exponent) if exponent and len(exponent) <= 6 else 0
    if exponent and len(exponent) > 6:
        power = MAX_DIGITS + 1 if exponent[0] != "-" else -MAX_DIGITS - 1
    whole = len(mantissa.lstrip("+-").split(".")[0].lstrip("0"))  # digits before the point
    if digits > MAX_DIGITS or abs(power) > MAX_DIGITS:
        what = (f"a number of {digits:,} digits" if digits > MAX_DIGITS
                else f"a number whose exponent is past {MAX_DIGITS:,}")
        why = f"numbers are limited to {MAX_DIGITS:,} digits (the longest integer Python reads)"
    elif whole + power > MAX_MAGNITUDE:
        what = f"a number of {whole + power:,} digits before the point"
        why = (f"numbers are below 10^{MAX_MAGNITUDE} (a float's range; no count, rate or "
               "level comes near it)")
    else:
        return
    span = _span(node)
    shown = text if len(text) <= 24 else f"{text[:12]}...{text[-8:]}"
    raise FailgateError(f"'{shown}' is {what}; {why}", path, span.line, span.col)


def _unplain(node: yaml.ScalarNode, path: Path, read_as: object) -> FailgateError:
    """``010``, ``1:00``, ``7_0``, ``0x1F``, ``.inf``: YAML 1.1 reads them unlike a person."""
    span = _span(node)
    shown = read_as if isinstance(read_as, int) else f"{read_as!r}"
    return FailgateError(
        f"'{node.value}' is not a plain decimal number (YAML 1.1 reads it as {shown}); "
        "write numbers as plain decimals such as 10 or 0.05, and quote text",
        path, span.line, span.col,
    )


class _AliasCheckingLoader(yaml.SafeLoader):
    """The safe loader, refusing aliases where the caller asks (at the alias's own place)."""

    path: Path
    refuse_aliases: str | None = None  # the reason, when aliases are refused
    depth = 0  # nodes being composed, outermost first

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.refuse_aliases is not None and self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise FailgateError(f"YAML aliases (*name) are not allowed here: "
                                f"{self.refuse_aliases}", self.path, mark.line + 1,
                                mark.column + 1)
        if self.depth >= MAX_DEPTH:
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise FailgateError(f"the YAML is nested deeper than {MAX_DEPTH} levels (the "
                                "reader's limit)", self.path, mark.line + 1, mark.column + 1)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def load_yaml(path: Path, text: str | None = None, *, aliases: str | None = None) -> YamlDoc:
    """Read ``path`` (or the given text) into a ``YamlDoc``; syntax errors name the place.

    ``aliases``, when given, refuses every alias (``*name``) with that reason.
    """
    if text is None:
        text = read_text(path)
    nodes = _c_nodes(text, aliases)
    if nodes is None:
        nodes = _python_nodes(path, text, aliases)
    if not nodes:
        raise FailgateError("the file is empty", path)
    if len(nodes) > 1:
        span = _span(nodes[1])
        raise FailgateError("expected one YAML document, found several", path, span.line)
    doc = YamlDoc(path, text, None, {}, {})
    try:
        doc.data = _Converter(doc).convert(nodes[0], ())
    except RecursionError:
        raise FailgateError("the YAML is nested too deeply to read", path) from None
    return doc


_CLoader: Any = getattr(yaml, "CSafeLoader", None)  # PyYAML built with libyaml


def _c_nodes(text: str, aliases: str | None) -> list[yaml.Node] | None:
    """The documents' node trees composed by libyaml (a tenth of the pure-Python composer's
    time: a ceilings file and its taxonomy are read on every run), the same nodes with the
    same marks; None where libyaml is not installed, where it refuses the text, or where
    PyYAML's composer would refuse the trees (nested ``MAX_DEPTH`` deep, an alias that
    ``aliases`` refuses): the pure-Python composer then reads it, and words the error, as
    it always did."""
    if _CLoader is None or "\ufeff" in text:  # libyaml counts a BOM's column apart
        return None
    loader = _CLoader(text)
    try:
        nodes = _documents(loader)
    except (yaml.YAMLError, RecursionError):
        return None
    finally:
        loader.dispose()
    return nodes if _composed_alike(nodes, aliases is not None) else None


def _documents(loader: Any) -> list[yaml.Node]:
    """Every document's node tree, as the loader (either composer) composes them."""
    nodes: list[yaml.Node] = []
    while loader.check_node():
        node = loader.get_node()
        if node is not None:
            nodes.append(node)
    return nodes


def _composed_alike(nodes: list[yaml.Node], refuse_aliases: bool) -> bool:
    """Whether PyYAML's composer would compose these trees without an error: no node
    ``MAX_DEPTH`` levels deep, and no alias (a node met twice) where aliases are refused.
    Each node is entered once, so an alias bomb costs its size on disk, not its expansion."""
    seen: set[int] = set()
    todo: list[tuple[Any, int]] = [(node, 0) for node in nodes]
    while todo:
        node, depth = todo.pop()
        if depth >= MAX_DEPTH:
            return False
        if id(node) in seen:
            if refuse_aliases:
                return False
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            todo.extend((part, depth + 1) for pair in node.value for part in pair)
        elif isinstance(node, yaml.SequenceNode):
            todo.extend((item, depth + 1) for item in node.value)
    return True


def _python_nodes(path: Path, text: str, aliases: str | None) -> list[yaml.Node]:
    """The documents' node trees from PyYAML's composer; its errors name the place."""
    try:
        loader = _AliasCheckingLoader(text)
    except yaml.reader.ReaderError as exc:  # a character YAML forbids (NUL, other controls)
        line, col = line_col(text, exc.position)
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise FailgateError(f"invalid YAML: the character U+{code:04X} is not allowed in a "
                            "YAML file", path, line, col) from None
    loader.path, loader.refuse_aliases = path, aliases
    try:
        nodes = _documents(loader)
    except RecursionError:
        raise FailgateError("the YAML is nested too deeply to read", path) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if mark is None:
            raise FailgateError(f"invalid YAML: {problem}", path) from None
        raise FailgateError(
            f"invalid YAML: {problem}", path, mark.line + 1, mark.column + 1
        ) from None
    except yaml.YAMLError as exc:
        raise FailgateError(f"invalid YAML: {exc}", path) from None
    finally:
        loader.dispose()
    return nodes


class _Converter:
    """Nodes to plain data, counting every value built so aliases cannot explode."""

    def __init__(self, doc: YamlDoc) -> None:
        self.doc = doc
        self.built = 0

    def convert(self, node: yaml.Node, loc: Loc) -> Any:
        self.built += 1
        if self.built > MAX_VALUES:
            raise FailgateError(
                f"more than {MAX_VALUES:,} values once aliases are expanded; refusing to "
                "read further (an alias bomb?)", self.doc.path)
        doc = self.doc
        if len(loc) >= MAX_DEPTH:  # only an alias inside its own anchor gets here
            span = _span(node)
            raise FailgateError(
                f"the YAML is nested deeper than {MAX_DEPTH} levels once aliases are expanded "
                "(an alias inside its own anchor?)", doc.path, span.line, span.col)
        doc.values[loc] = _span(node)
        if isinstance(node, yaml.ScalarNode):
            return _scalar(node, doc.path)
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(child, (*loc, i)) for i, child in enumerate(node.value)]
        assert isinstance(node, yaml.MappingNode)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                span = _span(key_node)
                raise FailgateError("a key must be a plain name", doc.path, span.line, span.col)
            key = key_node.value
            if key == "<<" and key_node.tag == "tag:yaml.org,2002:merge":
                span = _span(key_node)
                raise FailgateError(
                    "YAML merge keys (<<) are not supported here; write the entries out",
                    doc.path, span.line, span.col,
                )
            key_loc = (*loc, key)  # not unpacked inside [], which needs Python 3.11
            if key in result:
                first = doc.keys[key_loc]
                span = _span(key_node)
                raise FailgateError(
                    f"duplicate key '{key}' (first at line {first.line})",
                    doc.path, span.line, span.col,
                )
            doc.keys[key_loc] = _span(key_node)
            result[key] = self.convert(value_node, key_loc)
        return result


def read_text(path: Path) -> str:
    """Read a text file exactly (newlines kept as written), or fail with a clear message.

    Only regular files are opened: a FIFO or a device would block or never end.
    """
    data = read_regular(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FailgateError(f"not UTF-8 text (byte {exc.start})", path) from None


def digest(text: str) -> str:
    """The SHA-256 of a file's text: how a run knows the file it rewrites is the one it read.

    Computed by CPython's own SHA-256 where it has one: every run hashes its ceilings file,
    and importing ``hashlib`` first loads OpenSSL (a few milliseconds of each run)."""
    sha256: Any
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:  # Python < 3.12
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:  # pragma: no cover - an interpreter without them
            from hashlib import sha256
    found: str = sha256(text.encode("utf-8")).hexdigest()
    return found
