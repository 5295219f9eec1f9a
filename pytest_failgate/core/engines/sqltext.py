"""``failgate sql``: the gate query as text, for DuckDB, Spark or (through sqlglot) others.

The query needs the types of the columns its rules read: from a sample file
(DuckDB reads its schema) or from the taxonomy's ``types:``. DuckDB and Spark
SQL are written by failgate itself; BigQuery, Snowflake, Trino and PostgreSQL
are transpiled from the Spark form by sqlglot, a maintained transpiler (an
optional extra). The transpiled text is for reading and adapting: only the
DuckDB and Spark forms are run and tested against the Python classifier.

The printed query classifies every case as the engines do (the same ``_cases``
select), and its rows are for people: one per category (``(passed)`` and ``(all
cases)`` too) and per category and slice value, each naming them, with the count in
``cases`` and every other count in a column named for what it counts (a caveat, a
``per:`` population, a metric, a field absent from some cases; the type problems are
numbered, and the comment above the query says what each is).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..base.errors import FailgateError, did_you_mean
from . import DIALECTS, optional
from .dialects import DUCKDB, SPARK, Dialect
from .sqlquery import GateQuery, RuleNotExpressible, compile_gate
from .sqltypes import BOOL, FLOAT, NULL, STR, SqlType, unify

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from ..reports.read import ReadSpec
    from ..taxonomy import Taxonomy
    from ..taxonomy.model import Kind

_KIND_TYPES: dict[str, SqlType] = {"bool": BOOL, "number": FLOAT, "string": STR,
                                   "null": NULL}


def declared_schema(taxonomy: Taxonomy, spec: ReadSpec) -> dict[str, SqlType]:
    """Column types from the taxonomy's ``types:``; an undeclared field is an error."""
    schema: dict[str, SqlType] = {}
    wanted = [*(f.name for f in taxonomy.fields), *spec.reads()]
    for name in dict.fromkeys(wanted):
        field = taxonomy.field_index.get(name)
        if field is None or field.kinds is None:
            raise FailgateError(f"the taxonomy does not declare the type of '{name}': pass "
                                "--sample FILE (a Parquet or JSON Lines file) to read the "
                                "column types from data")
        schema[name] = _declared(name, field.kinds, field.item_kinds)
    return schema


def _declared(name: str, kinds: frozenset[Kind], items: frozenset[Kind] | None) -> SqlType:
    known = [k for k in kinds if k != "null"]
    if len(known) != 1 or known[0] == "object":
        raise FailgateError(f"'{name}' is declared as {' | '.join(sorted(kinds))}; a SQL column "
                            "has one type: pass --sample FILE to read it from data")
    if known[0] == "array":
        item = unify([_KIND_TYPES.get(k, SqlType("other", name=k)) for k in items or ()])
        if items is not None and item.kind == "other":
            raise FailgateError(f"'{name}' is declared as a list of "
                                f"{' | '.join(sorted(items))}; a SQL list has one item type: "
                                "pass --sample FILE to read it from data")
        return SqlType("list", item if items is not None else SqlType("other", name="any"))
    return _KIND_TYPES[known[0]]


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERAL = r"'(?:[^'\\\x00-\x1f]|'')*'|-?[0-9]+(?:\.[0-9]+)?|true|false"
_ARGUMENT = rf"(?:[A-Za-z_][A-Za-z0-9_]*\s*=\s*)?(?:{_LITERAL})"
_CALL = re.compile(rf"[A-Za-z_][A-Za-z0-9_]*\s*\(\s*(?:{_ARGUMENT}(?:\s*,\s*{_ARGUMENT})*)?\s*\)",
                   re.IGNORECASE)


def table_name(table: str, dialect: Dialect) -> str:
    """``--table`` as what the query reads: a (``catalog.schema.``)table name, each dotted
    part kept when it is a plain identifier, else quoted; or a table function called with
    literal arguments only (``read_parquet('runs/*.parquet', union_by_name=true)``), kept
    as written. Either way the text can only name a table, never close the query and
    start another."""
    if _CALL.fullmatch(table.strip()):
        return table.strip()
    parts = table.split(".")
    if not table.strip() or any(not part for part in parts) or len(parts) > 3:
        raise FailgateError(f"the table name {table!r} is not a table, schema.table or "
                            "catalog.schema.table name")
    if any(ord(ch) < 32 or ch == "\x7f" for ch in table):
        raise FailgateError(f"the table name {table!r} holds a control character")
    return ".".join(part if _PLAIN.fullmatch(part) else dialect.ident(part) for part in parts)


def gate_sql(taxonomy: Taxonomy, spec: ReadSpec, dialect: str, table: str,
             schema: Mapping[str, SqlType]) -> str:
    """The gate query over ``table`` in ``dialect``."""
    if dialect not in DIALECTS:
        raise FailgateError(f"unknown dialect '{dialect}'" + did_you_mean(dialect, DIALECTS)
                            + f"; the dialects are {', '.join(DIALECTS)}")
    native = DUCKDB if dialect == "duckdb" else SPARK
    try:
        query = compile_gate(taxonomy, schema, table_name(table, native), spec, native)
    except RuleNotExpressible as exc:
        raise FailgateError(exc.message) from None
    text, notes = readable_sql(query, taxonomy, native)
    header = "".join(f"-- {note}\n" for note in notes)
    if dialect in ("duckdb", "spark"):
        return header + text + ";\n"
    sqlglot = optional("sqlglot", "transpiling to other dialects", "duckdb")
    try:
        return header + ";\n".join(sqlglot.transpile(text, read="spark", write=dialect,
                                                     pretty=True)) + ";\n"
    except sqlglot.errors.SqlglotError as exc:
        raise FailgateError(f"sqlglot cannot write the query for {dialect}: {exc}") from None


ALL_CASES, PASSED = "(all cases)", "(passed)"  # no category is named so: names are words


def readable_sql(query: GateQuery, taxonomy: Taxonomy, dialect: Dialect
                 ) -> tuple[str, list[str]]:
    """The gate query with rows that name what they count, and the notes (one line each)
    that say what its numbered columns are."""
    q, text = dialect.ident, dialect.string
    decided = q("_decided")
    names = [f"WHEN {decided} = {i} THEN {text(name)}"
             for i, name in enumerate(query.categories, start=1)]
    category = (f"CASE WHEN grouping({decided}) = 1 THEN {text(ALL_CASES)} "
                f"WHEN {decided} = 0 THEN {text(PASSED)} {' '.join(names)} END")
    labels = [f"CASE WHEN grouping({q(f's{i}')}) = 0 THEN "
              f"concat({text(f'{name}=')}, {_slice_text(q(f's{i}'), dialect)}) END"
              for i, name in enumerate(query.slices)]
    slice_label = (labels[0] if len(labels) == 1 else f"coalesce({', '.join(labels)})"
                   if labels else dialect.to_text("NULL"))
    columns = [f"{category} AS {q('category')}", f"{slice_label} AS {q('slice')}",
               f"count(*) AS {q('cases')}"]
    used = {"category", "slice", "cases"}
    caveats = {c.name for c in taxonomy.caveats}
    for i, name in enumerate(query.flags):
        alias = _alias(("caveat_" if name in caveats else "per_") + name, used)
        columns.append(f"count(*) FILTER (WHERE {q(f'_f{i}')}) AS {q(alias)}")
    for i, name in enumerate(query.metrics):
        alias = _alias(f"metric_{name}", used)
        vacuous = _alias(f"{alias}_vacuous", used)
        columns += [f"avg({q(f'_m{i}')}) AS {q(alias)}",
                    f"count(*) FILTER (WHERE {q(f'_v{i}')}) AS {q(vacuous)}"]
    notes = []
    for i, message in enumerate(query.violations, start=1):
        alias = _alias(f"problem_{i}", used)
        columns.append(f"count(*) FILTER (WHERE {q(f'_x{i - 1}')}) AS {q(alias)}")
        notes.append(f"{alias}: cases where {message}")
    for i, name in enumerate(query.sometimes):
        alias = _alias(f"absent_{name}", used)
        columns.append(f"count(*) FILTER (WHERE {q(f'_a{i}')}) AS {q(alias)}")
    sets = ["()", f"({decided})", *(f"({decided}, {q(f's{i}')})"
                                   for i in range(len(query.slices)))]
    select = ",\n  ".join(columns)
    sql = (f"{query.cte}SELECT\n  {select}\nFROM {q('_cases')}\n"
           f"GROUP BY GROUPING SETS ({', '.join(sets)})\n"
           f"ORDER BY {q('slice')} NULLS FIRST, {decided} NULLS FIRST")
    head = [f"one row per category ({PASSED} and {ALL_CASES} too)"
            + (" and per category and slice value" if query.slices else "")
            + "; the case count in 'cases'"]
    return sql, head + notes


def _slice_text(value: str, dialect: Dialect) -> str:
    """A slice value as the items and ceilings write it (``null`` for a missing one)."""
    return f"coalesce({dialect.to_text(value)}, 'null')"


def _alias(wanted: str, used: set[str]) -> str:
    """A column name every dialect takes unquoted-alike: letters, digits and ``_``, unique."""
    base = re.sub(r"[^0-9A-Za-z_]+", "_", wanted).strip("_").lower() or "column"
    alias, n = base, 2
    while alias in used:
        alias, n = f"{base}_{n}", n + 1
    used.add(alias)
    return alias


def sample_schema(path: Path) -> dict[str, SqlType]:
    """The column types of a sample Parquet or JSON Lines file, as DuckDB reads them."""
    from .duckdb_engine import _connect, source_of

    con = _connect()
    try:
        return source_of(con, path)[1]
    finally:
        con.close()
