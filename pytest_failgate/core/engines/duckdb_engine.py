"""The DuckDB engine: a report (Parquet file, glob, folder, or JSON Lines) classified in DuckDB.

The taxonomy is compiled to one query (``sqlquery``) and run where the data is;
only the counts come back, plus the first ``FIRST_IDS`` failing case ids per
category. The result is an ordinary ``Report`` with a ``Tally``, so ceilings,
items, the ratchet and the outputs treat it as any other report.

Parquet is read as a table (a null is a null; a column the file lacks is absent
in every case, so its default applies). JSON Lines keep Python's distinction
between an absent key and a null: the lines are read as JSON objects, typed by
DuckDB's inference over the whole file, and a field with a default reads it
only where the key is absent. ``duckdb`` is imported only here, when used.
"""

from __future__ import annotations

import json
import tempfile
from typing import TYPE_CHECKING, Any

from ..base.errors import FailgateError
from ..reports.sink import SAMPLE
from . import FIRST_IDS, is_glob, optional
from .counted import check_counted, engine_report
from .dialects import DUCKDB
from .jsonlines import check_lines, check_values, fresh, nested_case
from .sqlquery import RuleNotExpressible, compile_gate, decode, duplicate_id
from .sqltypes import SqlType, duckdb_type
from .sqlvalue import SqlUnsupported

if TYPE_CHECKING:
    from collections.abc import Collection
    from pathlib import Path

    from ..reports.model import Report, ReportFile
    from ..reports.read import ReadSpec
    from ..taxonomy import Taxonomy

def _connect(spill: str | None = None) -> Any:
    """A fresh in-memory connection; ``spill``: the folder where it may spill to disk
    (else DuckDB would spill into ``.tmp`` under the working folder)."""
    duckdb = optional("duckdb", "the DuckDB engine", "duckdb")
    return duckdb.connect(config={"temp_directory": spill} if spill is not None else {})


def literal(path: Path) -> str:
    """A real file's path as DuckDB reads exactly that file: DuckDB expands ``*``, ``?`` and
    ``[`` in every path it is given, so ``p[1].parquet`` would read ``p1.parquet``; each is
    written as a one-character class (``[[]``), which matches only itself. The path is
    absolute, so no ``~`` or URL scheme applies either."""
    text = str(path.absolute())
    return "".join(f"[{ch}]" if ch in "*?[" else ch for ch in text)


def _files(path: Path) -> list[str]:
    """The files of a report: one file, a glob, or every Parquet file under a folder.
    Only a path that names no file is a glob pattern (``is_glob``)."""
    if is_glob(path):
        return [str(path)]
    if path.is_dir():
        found = sorted(literal(p) for p in path.rglob("*.parquet"))
        if not found:
            raise FailgateError("no .parquet file in this folder", path)
        return found
    return [literal(path)]


def run_sql(sql: str) -> list[tuple[Any, ...]]:
    """Run one query on a fresh connection (the pairing of two runs' reports)."""
    con = _connect()
    try:
        return [tuple(row) for row in con.execute(sql).fetchall()]
    finally:
        con.close()


def _sql_list(files: list[str]) -> str:
    return "[" + ", ".join(DUCKDB.string(f) for f in files) + "]"


def _describe(con: Any, relation: str, path: Path) -> dict[str, SqlType]:
    try:
        rows = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
    except Exception as exc:  # duckdb's errors share no public base we may import eagerly
        raise nested_case(str(exc), path) or FailgateError(
            f"DuckDB cannot read it: {_first_line(exc)}", path) from None
    return {name: duckdb_type(kind) for name, kind, *_ in rows}


def _sample(con: Any, source: str, raw: str | None, position: str) -> list[dict[str, Any]]:
    """The first cases as Python reads them (JSON Lines) or as rows (Parquet)."""
    if raw is not None:
        rows = con.execute(f"SELECT {raw} FROM {source} ORDER BY {position} "
                           f"LIMIT {SAMPLE}").fetchall()
        return [case for (text,) in rows
                if isinstance(case := json.loads(text), dict)]
    cursor = con.execute(f"SELECT * FROM {source} LIMIT {SAMPLE}")
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _structure(t: SqlType) -> Any:
    """A type as the structure ``json_transform`` wants."""
    if t.kind == "list":
        return [_structure(t.item) if t.item is not None else "JSON"]
    if t.kind == "struct":
        return {name: _structure(inner) for name, inner in t.fields}
    return {"bool": "BOOLEAN", "int": "BIGINT", "float": "DOUBLE", "str": "VARCHAR",
            "null": "JSON"}.get(t.kind, "JSON")


ROW_POSITION = "(file_row_number + 1)"
"""A single Parquet file's case position: DuckDB skips to the rows a filter on
``file_row_number`` names, so a few cases are looked up by position without a scan."""


def source_of(con: Any, path: Path, reads: Collection[str] | None = None
              ) -> tuple[str, dict[str, SqlType], str, str | None]:
    """(the FROM clause, the schema, the position expression, the raw JSON column or
    None) for a report path. ``reads``: the top-level fields the gate reads, whose JSON
    is checked against Python's reading (``jsonlines``); ``None`` reads the schema only.

    The internal columns (raw object, position, file name) get names no column of the
    data has, so a key such as ``_json`` cannot stand in for them."""
    files = _files(path)
    if path.suffix == ".jsonl" or path.suffix == ".ndjson":
        raw = f"read_ndjson_objects({_sql_list(files)})"
        long_digits = check_lines(con, raw, path, reads) if reads is not None else False
        typed = f"read_json({_sql_list(files)}, format='newline_delimited', sample_size=-1)"
        schema = _describe(con, typed, path)
        if reads is not None:
            check_values(con, raw, path, schema, reads, long_digits)
        structure = DUCKDB.string(json.dumps({n: _structure(t) for n, t in schema.items()}))
        whole, pos = fresh("_json", schema), fresh("_pos", schema)
        columns = [f"struct_extract(_r, {DUCKDB.string(n)}) AS {DUCKDB.ident(n)}" for n in schema]
        source = (f"(SELECT {', '.join([*columns, whole, pos])} FROM (SELECT "
                  f"json_transform(json, {structure}) AS _r, json AS {whole}, "
                  f"row_number() OVER () AS {pos} FROM {raw}))")
        return source, schema, pos, whole
    schema = _describe(con, f"read_parquet({_sql_list(files)}, union_by_name=true)", path)
    if any(name.lower() == "file_row_number" for name in schema):
        raise FailgateError("the column 'file_row_number' has the name DuckDB gives the row "
                            "position, which failgate reads: rename it to gate this file in "
                            "DuckDB", path)
    filename, pos = fresh("_file", schema), fresh("_pos", schema)
    relation = (f"read_parquet({_sql_list(files)}, filename={DUCKDB.string(filename)}, "
                "file_row_number=true, union_by_name=true)")
    if len(files) == 1 and not is_glob(path):
        return relation, schema, ROW_POSITION, None
    ordered = (f"(SELECT *, row_number() OVER (ORDER BY {filename}, file_row_number) AS {pos} "
               f"FROM {relation})")
    return ordered, schema, pos, None


def _ids_at(con: Any, relation: str, id_sql: str, first: dict[str, list[Any]],
            path: Path) -> None:
    """Each category's first failing positions (``first``, in place) as their case ids,
    read from the rows at those positions alone (``ROW_POSITION``): the gate query kept
    positions, so it read no id column. A row gone since that query is one error: the
    file was rewritten while the gate read it."""
    wanted = sorted({int(p) for positions in first.values() for p in positions})
    if not wanted:
        return
    rows = con.execute(f"SELECT file_row_number + 1, {id_sql} FROM {relation} WHERE "
                       f"file_row_number IN ({', '.join(str(p - 1) for p in wanted)})")
    at = dict(rows.fetchall())
    gone = [p for p in wanted if p not in at]
    if gone:
        raise FailgateError(f"the file changed while the gate read it (case #{gone[0]} is no "
                            "longer there); run the gate again on the finished file", path)
    for name, positions in first.items():
        first[name] = [at[int(p)] for p in positions]


DUPLICATES_MEMORY = "256MB"
"""DuckDB's memory for the duplicate-id check; beyond it the check spills to a temporary
folder, so a table of any size is checked without holding its ids in memory."""


def _duplicate(con: Any, ids: str) -> tuple[str, int] | None:
    """``duplicate_id`` in DuckDB: the id hashes sorted (DuckDB sorts 64-bit integers for
    less CPU and memory than it groups them), spilling past ``DUPLICATES_MEMORY``. No id
    is null: every one is coalesced with the case's position (``#7``)."""
    con.execute(f"SET memory_limit = {DUCKDB.string(DUPLICATES_MEMORY)}")
    try:
        return duplicate_id(lambda sql: con.execute(sql).fetchall(), ids, "hash",
                            ordered=True, nulls=False)
    finally:  # the connection is the gate's own: back to DuckDB's default
        con.execute("RESET memory_limit")


def read_roots(taxonomy: Taxonomy, spec: ReadSpec) -> set[str]:
    """The top-level fields the gate query reads: the taxonomy's, the ids', the run's."""
    paths = [*(f.name for f in taxonomy.fields), *taxonomy.id_fields, *spec.reads(),
             *taxonomy.required]
    return {p.split(".", 1)[0] for p in paths}


def load_duckdb(report: ReportFile, taxonomy: Taxonomy, spec: ReadSpec,
                first_ids: int = FIRST_IDS) -> Report:
    """Classify one report inside DuckDB."""
    with tempfile.TemporaryDirectory(prefix="failgate-duckdb-") as spill:
        return _load(report, taxonomy, spec, first_ids, _connect(spill))


def _load(report: ReportFile, taxonomy: Taxonomy, spec: ReadSpec, first_ids: int,
          con: Any) -> Report:
    try:
        source, schema, position, raw = source_of(con, report.path, read_roots(taxonomy, spec))
        try:
            query = compile_gate(taxonomy, schema, source, spec, DUCKDB, position, raw,
                                 first_ids, first_positions=position == ROW_POSITION)
        except RuleNotExpressible as exc:
            raise FailgateError(exc.message, report.path) from None
        except SqlUnsupported as exc:  # pragma: no cover - compile_gate wraps these
            raise FailgateError(str(exc), report.path) from None
        try:
            rows = con.execute(query.sql).fetchall()
            counted = decode(query, taxonomy, rows)
            if position == ROW_POSITION and first_ids:
                _ids_at(con, source, query.id_sql, counted.tally.ids, report.path)
            check_counted(report, taxonomy, query, counted,
                          lambda: _sample(con, source, raw, position))
            duplicate = _duplicate(con, f"SELECT {query.id_sql} AS _id FROM {source}")
        except FailgateError:
            raise
        except Exception as exc:
            raise FailgateError(f"DuckDB stopped: {_first_line(exc)}", report.path) from None
    finally:
        con.close()
    return engine_report(report, taxonomy, query, counted, duplicate, "duckdb", source, run_sql)
