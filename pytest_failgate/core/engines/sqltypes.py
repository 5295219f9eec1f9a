"""The static types the SQL compiler reasons with, read from an engine's schema.

Python rules are dynamically typed; a SQL column has one type. The compiler
turns each rule into SQL by the types of the columns it reads, so every
operation it emits is the Python one for values of those types. Types are
parsed from DuckDB's type strings (``STRUCT(a BIGINT, b VARCHAR[])``) and from
Spark's ``simpleString`` (``struct<a:bigint,b:array<string>>``).
"""

from __future__ import annotations

from typing import Any, Literal

from ..base.classes import dataclass

Kind = Literal["bool", "int", "float", "str", "null", "list", "struct", "map", "set", "other"]


@dataclass(frozen=True)
class SqlType:
    """A column's (or an expression's) type. ``item`` is a list's, set's or map's
    value type; ``fields`` a struct's fields in order; ``key`` a map's key type;
    ``name`` the engine's own word for a type the compiler does not handle."""

    kind: Kind
    item: SqlType | None = None
    fields: tuple[tuple[str, SqlType], ...] = ()
    key: SqlType | None = None
    name: str = ""

    @property
    def number(self) -> bool:
        return self.kind in ("int", "float")

    @property
    def scalar(self) -> bool:
        return self.kind in ("bool", "int", "float", "str", "null")

    def field(self, name: str) -> SqlType | None:
        for field_name, field_type in self.fields:
            if field_name == name:
                return field_type
        return None

    def describe(self) -> str:
        if self.kind in ("list", "set"):
            inner = self.item.describe() if self.item is not None else "anything"
            return f"{self.kind} of {inner}"
        if self.kind == "struct":
            return "struct(" + ", ".join(n for n, _ in self.fields) + ")"
        if self.kind == "map":
            return "map"
        if self.kind == "other":
            return self.name or "an unsupported type"
        return {"bool": "boolean", "int": "integer", "float": "floating-point number",
                "str": "string", "null": "null"}[self.kind]


BOOL = SqlType("bool")
INT = SqlType("int")
FLOAT = SqlType("float")
STR = SqlType("str")
NULL = SqlType("null")
EMPTY_LIST = SqlType("list", NULL)

_DUCK_SCALARS: dict[str, SqlType] = {
    "BOOLEAN": BOOL, "TINYINT": INT, "SMALLINT": INT, "INTEGER": INT, "BIGINT": INT,
    "UTINYINT": INT, "USMALLINT": INT, "UINTEGER": INT, "UBIGINT": INT, "HUGEINT": INT,
    "FLOAT": FLOAT, "DOUBLE": FLOAT, "VARCHAR": STR, '"NULL"': NULL, "NULL": NULL,
}
_SPARK_SCALARS: dict[str, SqlType] = {
    "boolean": BOOL, "tinyint": INT, "smallint": INT, "int": INT, "bigint": INT,
    "float": FLOAT, "double": FLOAT, "string": STR, "void": NULL,
}


def _split_top(text: str, sep: str = ",") -> list[str]:
    parts, depth, current, quoted = [], 0, "", False
    for char in text:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "(<":
            depth += 1
        elif not quoted and char in ")>":
            depth -= 1
        if char == sep and depth == 0 and not quoted:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] == name[-1] == '"':
        return name[1:-1].replace('""', '"')
    return name


def duckdb_type(text: str) -> SqlType:
    """A DuckDB type string as a ``SqlType`` (unhandled types become ``other``)."""
    text = text.strip()
    if text.endswith("[]"):
        return SqlType("list", duckdb_type(text[:-2]))
    upper = text.upper()
    if upper in _DUCK_SCALARS:
        return _DUCK_SCALARS[upper]
    if upper.startswith("STRUCT(") and text.endswith(")"):
        fields = []
        for part in _split_top(text[7:-1]):
            if part.startswith('"'):
                end = part.index('"', 1)
                while end + 1 < len(part) and part[end + 1] == '"':
                    end = part.index('"', end + 2)
                name, rest = _unquote(part[:end + 1]), part[end + 1:]
            else:
                name, _, rest = part.partition(" ")
            fields.append((name, duckdb_type(rest)))
        return SqlType("struct", fields=tuple(fields))
    if upper.startswith("MAP(") and text.endswith(")"):
        key, value = _split_top(text[4:-1])
        return SqlType("map", duckdb_type(value), key=duckdb_type(key))
    if upper.startswith("DECIMAL"):
        return FLOAT if "," in upper and not upper.endswith(",0)") else INT
    return SqlType("other", name=text)


def spark_type(data_type: Any) -> SqlType:
    """A Spark ``DataType`` as a ``SqlType``."""
    name = type(data_type).__name__
    if name == "ArrayType":
        return SqlType("list", spark_type(data_type.elementType))
    if name == "StructType":
        return SqlType("struct", fields=tuple(
            (field.name, spark_type(field.dataType)) for field in data_type.fields))
    if name == "MapType":
        return SqlType("map", spark_type(data_type.valueType),
                       key=spark_type(data_type.keyType))
    simple = data_type.simpleString()
    if simple in _SPARK_SCALARS:
        return _SPARK_SCALARS[simple]
    if simple.startswith("decimal"):
        return INT if simple.endswith(",0)") else FLOAT
    return SqlType("other", name=simple)


def type_of_value(value: Any) -> SqlType:
    """The type of a Python constant (a default or a literal)."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return FLOAT
    if isinstance(value, str):
        return STR
    if isinstance(value, list | tuple):
        return SqlType("list", unify([type_of_value(v) for v in value]) if value else NULL)
    return SqlType("other", name=type(value).__name__)


def unify(types: list[SqlType]) -> SqlType:
    """One type for values of these types, or ``other`` when they do not share one."""
    known = [t for t in types if t.kind != "null"]
    if not known:
        return NULL
    first = known[0]
    if all(t == first for t in known):
        return first
    if all(t.number for t in known):
        return FLOAT if any(t.kind == "float" for t in known) else INT
    if all(t.kind == "list" for t in known):
        return SqlType("list", unify([t.item or NULL for t in known]))
    return SqlType("other", name="mixed types")


def follow_path(value: Any, key: str | int) -> Any:
    """Python's path step on a constant (a default): a missing step gives null."""
    if isinstance(key, str):
        return value.get(key) if isinstance(value, dict) else None
    if isinstance(value, list | tuple) and -len(value) <= key < len(value):
        return value[key]
    return None


def python_equal(a: Any, b: Any) -> bool:
    """Python ``==`` on two constants (NaN unequal; a string never equals a number)."""
    if isinstance(a, float) and a != a:
        return False
    return bool(a == b) and (isinstance(a, str) == isinstance(b, str))
