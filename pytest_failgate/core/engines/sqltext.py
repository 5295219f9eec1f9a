"""``failgate sql``: the gate query as text, for DuckDB, Spark or (through sqlglot) others.

The query needs the types of the columns its rules read: from a sample file
(DuckDB reads its schema) or from the taxonomy's ``types:``. DuckDB and Spark
SQL are written by failgate itself; BigQuery, Snowflake, Trino and PostgreSQL
are transpiled from the Spark form by sqlglot, a maintained transpiler (an
optional extra). The transpiled text is for reading and adapting: only the
DuckDB and Spark forms are run and tested against the Python classifier.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import FailgateError, did_you_mean
from . import DIALECTS, optional
from .dialects import DUCKDB, SPARK
from .sqlquery import RuleNotExpressible, compile_gate
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


def gate_sql(taxonomy: Taxonomy, spec: ReadSpec, dialect: str, table: str,
             schema: Mapping[str, SqlType]) -> str:
    """The gate query over ``table`` in ``dialect``."""
    if dialect not in DIALECTS:
        raise FailgateError(f"unknown dialect '{dialect}'" + did_you_mean(dialect, DIALECTS)
                            + f"; the dialects are {', '.join(DIALECTS)}")
    native = DUCKDB if dialect == "duckdb" else SPARK
    try:
        query = compile_gate(taxonomy, schema, table, spec, native)
    except RuleNotExpressible as exc:
        raise FailgateError(exc.message) from None
    if dialect in ("duckdb", "spark"):
        return query.sql + ";\n"
    sqlglot = optional("sqlglot", "transpiling to other dialects", "duckdb")
    try:
        return ";\n".join(sqlglot.transpile(query.sql, read="spark", write=dialect,
                                            pretty=True)) + ";\n"
    except sqlglot.errors.SqlglotError as exc:
        raise FailgateError(f"sqlglot cannot write the query for {dialect}: {exc}") from None


def sample_schema(path: Path) -> dict[str, SqlType]:
    """The column types of a sample Parquet or JSON Lines file, as DuckDB reads them."""
    from .duckdb_engine import _connect, source_of

    con = _connect()
    try:
        return source_of(con, path)[1]
    finally:
        con.close()
