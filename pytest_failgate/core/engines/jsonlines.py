"""JSON Lines in DuckDB with the Python reader's JSON semantics, or a refusal by name.

DuckDB's JSON reader and Python's ``json`` disagree on a few inputs; counting
them in DuckDB would gate other data than the Python engine without a word. So
before the gate query runs, scans of the raw lines refuse, naming the case:

- a line that is not an object (``null``, an array, a number): Python refuses it;
- a key twice in one object, in a field the gate reads: Python keeps the last,
  DuckDB the first;
- two keys that differ only in case (``Score`` and ``score``), anywhere: DuckDB's
  names are case-insensitive, so it would merge them (nested ones DuckDB's own
  inference refuses; ``nested_case`` words that);
- an integer outside 64 bits in a field the gate reads: Python compares it
  exactly, DuckDB as a rounded double (or null).

Internal column names (the raw object, the position) are chosen so that no key
of the data can shadow them (``fresh``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..base.errors import FailgateError
from .dialects import DUCKDB

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping
    from pathlib import Path

    from .sqltypes import SqlType

_JSON_KINDS = {"NULL": "null", "ARRAY": "array", "VARCHAR": "string", "BOOLEAN": "bool",
               "OBJECT": "object"}
_NUMBERS = ("UBIGINT", "BIGINT", "HUGEINT", "DOUBLE")
_LONG_DIGITS = "regexp_matches(j, '[0-9]{19}')"  # every integer outside 64 bits has 19 digits
_ENGINE_HINT = "the Python engine (the default) reads it exactly"


def fresh(base: str, taken: Iterable[str]) -> str:
    """``base``, or ``base_1``, ``base_2``... : a name no column in ``taken`` has, compared
    as DuckDB compares identifiers (case-insensitively)."""
    used = {name.lower() for name in taken}
    name, n = base, 0
    while name.lower() in used:
        n += 1
        name = f"{base}_{n}"
    return name


def _key(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def check_lines(con: Any, lines: str, path: Path, reads: Collection[str]) -> bool:
    """Refuse non-object lines, keys differing only in case at the top level, and a read
    key twice in one case (see the module docstring): one scan, before DuckDB infers the
    columns. Returns whether some line has 19 digits in a row (where an integer outside
    64 bits could be, for ``check_values``).

    ``lines`` is a relation of the raw lines with a ``json`` column; ``reads`` the
    top-level fields the gate reads.
    """
    read_list = ", ".join(DUCKDB.string(r) for r in sorted(reads)) or "NULL"
    numbered = _numbered(lines)
    read_keys = f"list_filter(json_keys(j), lambda k: k IN ({read_list}))"
    bad, kind, twice, key_sets, long_digits = _one(con, path,
        f"SELECT min(p) FILTER (WHERE json_type(j) <> 'OBJECT'), "
        f"arg_min(json_type(j), p) FILTER (WHERE json_type(j) <> 'OBJECT'), "
        f"min(p) FILTER (WHERE json_type(j) = 'OBJECT' AND "
        f"len({read_keys}) <> len(list_distinct({read_keys}))), "
        f"list(DISTINCT json_keys(j)) FILTER (WHERE json_type(j) = 'OBJECT'), "
        f"bool_or({_LONG_DIGITS}) FROM {numbered}")
    if bad is not None:
        word = _JSON_KINDS.get(kind, "number" if kind in _NUMBERS else str(kind).lower())
        raise FailgateError(f"case #{bad} is {word}, not an object", path)
    seen: dict[str, str] = {}
    for name in sorted({k for keys in key_sets or () for k in keys}):
        other = seen.setdefault(name.lower(), name)
        if other != name:
            raise FailgateError(
                f"the keys '{other}' and '{name}' differ only in case: DuckDB's names are "
                f"case-insensitive, so it would read them as one field; {_ENGINE_HINT}", path)
    if twice is not None:
        key = _one(con, path,
            f"SELECT k FROM (SELECT unnest({read_keys}) AS k FROM {numbered} WHERE p = {twice}) "
            "GROUP BY k HAVING count(*) > 1 ORDER BY k LIMIT 1")[0]
        raise FailgateError(_twice(twice, key), path)
    return bool(long_digits)


def nested_case(exc_text: str, path: Path) -> FailgateError | None:
    """DuckDB's refusal of nested keys that differ only in case, in failgate's words."""
    found = re.search(r'Duplicate name "([^"]*)" in struct', exc_text)
    if found is None:
        return None
    return FailgateError(
        f"an object holds the key '{found.group(1)}' and another differing only in case: "
        f"DuckDB's names are case-insensitive, so it would read them as one field; "
        f"{_ENGINE_HINT}", path)


def check_values(con: Any, lines: str, path: Path, schema: Mapping[str, SqlType],
                 reads: Collection[str], long_digits: bool) -> None:
    """Refuse a key twice in a nested object, and integers outside 64 bits, in the fields
    the gate reads. Only fields that may hold them (by DuckDB's inference) are walked, in
    one scan: objects on every line, numbers on lines with 19 digits in a row."""
    objects = [n for n in sorted(reads) if n in schema
               and _contains(schema[n], ("struct", "map", "other"))]
    numbers = [n for n in sorted(reads) if n in schema and long_digits
               and _contains(schema[n], ("int", "float", "other"))]
    roots = list(dict.fromkeys([*objects, *numbers]))
    if not roots:
        return
    values = ", ".join(f"json_extract(j, {DUCKDB.string('$.' + _key(r))})" for r in roots)
    kinds = ", ".join(DUCKDB.string(t) for t in _NUMBERS)
    big = (f"t.type IN ({kinds}) AND regexp_full_match(t.atom::VARCHAR, '-?[0-9]+') "
           "AND TRY_CAST(t.atom::VARCHAR AS BIGINT) IS NULL")
    which = r"CAST(regexp_extract(t.fullkey, '^\$\[([0-9]+)\]', 1) AS INTEGER)"
    row = _one(con, path,
        f"SELECT p, {which} AS r, t.key, count(*) > 1, bool_or({big}) "
        f"FROM {_numbered(lines)}, json_tree(json_array({values})) AS t "
        f"WHERE t.parent IS NOT NULL{'' if objects else ' AND ' + _LONG_DIGITS} "
        "GROUP BY p, r, t.parent, t.key "
        f"HAVING count(*) > 1 OR bool_or({big}) ORDER BY p, r, t.key LIMIT 1")
    if not row:
        return
    position, index, key, twice, _ = row
    if twice:
        raise FailgateError(_twice(position, str(key), roots[index]), path)
    raise FailgateError(f"case #{position}: '{roots[index]}' holds an integer outside 64 bits, "
                        f"which DuckDB cannot compare exactly; {_ENGINE_HINT}", path)


def _contains(t: SqlType, kinds: tuple[str, ...]) -> bool:
    inner = [t.item, t.key, *(f for _, f in t.fields)]
    return t.kind in kinds or any(_contains(i, kinds) for i in inner if i is not None)


def _numbered(lines: str) -> str:
    return f"(SELECT json AS j, row_number() OVER () AS p FROM {lines})"


def _twice(position: int, key: str, inside: str | None = None) -> str:
    where = f" (in '{inside}')" if inside is not None else ""
    return (f"case #{position} has the key '{key}' twice in one object{where}: Python keeps "
            f"the last value, DuckDB the first; {_ENGINE_HINT}")


def _one(con: Any, path: Path, sql: str) -> tuple[Any, ...]:
    """The first row of a query (empty when none); DuckDB's errors as one line naming the
    file."""
    try:
        row = con.execute(sql).fetchone()
    except Exception as exc:  # duckdb's errors are only importable with duckdb
        raise FailgateError(f"DuckDB cannot read it: {_first_line(exc)}", path) from None
    return tuple(row) if row is not None else ()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
