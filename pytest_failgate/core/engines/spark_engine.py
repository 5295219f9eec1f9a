"""The Spark engine: the same gate query on the active SparkSession, or ``local[*]``.

A report path is anything Spark reads as a table: a Parquet file, a folder or a
glob of Parquet files, or ORC. JSON is refused here: Spark's JSON reader turns a
field holding both numbers and strings into strings, which would change what
rules compare without a word (DuckDB's engine reads JSON Lines exactly).
``pyspark`` is imported only here, when a run asks for Spark.

Spark would read ``${env:HOME}`` in a query as the environment's value (its
variable substitution), and a path with ``[`` or ``*`` as a glob: every query here
runs with substitution off (``_sql``), and a real file's path is escaped so that it
names that file only (``literal``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.errors import FailgateError
from ..reports.sink import SAMPLE
from . import FIRST_IDS, is_glob, optional
from .counted import check_counted, engine_report
from .dialects import SPARK
from .sqlquery import RuleNotExpressible, compile_gate, decode, duplicate_id
from .sqltypes import spark_type

if TYPE_CHECKING:
    from pathlib import Path

    from ..reports.model import Report, ReportFile
    from ..reports.read import ReadSpec
    from ..taxonomy import Taxonomy

def session() -> Any:
    """The active SparkSession, or a local one on every core."""
    SparkSession = optional("pyspark.sql", "the Spark engine", "spark").SparkSession
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    return (SparkSession.builder.master("local[*]").appName("failgate")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4").getOrCreate())


_SUBSTITUTE = "spark.sql.variable.substitute"


def _sql(spark: Any, text: str) -> Any:
    """``spark.sql(text)`` with variable substitution off while it is parsed: a rule, a
    slice or a path is text, never a reference to the environment or the configuration.
    The session's own setting is restored after (it may be the caller's session)."""
    before = spark.conf.get(_SUBSTITUTE, "true")
    spark.conf.set(_SUBSTITUTE, "false")
    try:
        return spark.sql(text)
    finally:
        spark.conf.set(_SUBSTITUTE, before)


def literal(path: Path) -> str:
    """A real file's or folder's path as Spark reads exactly it: Hadoop expands ``*?[]{}``
    in a path, so each (and the escape ``\\`` itself) is escaped."""
    return "".join(f"\\{ch}" if ch in "\\{}[]*?" else ch for ch in str(path.absolute()))


def run_sql(sql: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in _sql(session(), sql).collect()]


def _source(spark: Any, report: ReportFile) -> tuple[str, Any]:
    """The table as Spark SQL names it (``parquet.`path```), and its schema."""
    suffix = report.path.suffix
    if suffix in (".json", ".jsonl", ".ndjson"):
        raise FailgateError("the Spark engine reads tables (Parquet, ORC); for JSON Lines use "
                            "the duckdb engine, which keeps absent keys and mixed types apart",
                            report.path)
    kind = "orc" if suffix == ".orc" else "parquet"
    where = str(report.path) if is_glob(report.path) else literal(report.path)
    source = f"{kind}.{SPARK.ident(where)}"
    try:
        return source, _sql(spark, f"SELECT * FROM {source}").schema
    except Exception as exc:  # pyspark's errors are only importable with pyspark
        raise FailgateError(f"Spark cannot read it: {_first_line(exc)}", report.path) from None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _bounded_min_by(spark: Any) -> bool:
    """Spark 4.2 and later keep each category's first ids in the gate's own scan
    (``min_by(x, ord, k)``); older ones rank them in a second query."""
    major, minor = (int(part) for part in spark.version.split(".")[:2])
    return (major, minor) >= (4, 2)


def load_spark(report: ReportFile, taxonomy: Taxonomy, spec: ReadSpec,
               first_ids: int = FIRST_IDS) -> Report:
    """Classify one report in Spark."""
    spark = session()
    table, found = _source(spark, report)
    schema = {f.name: spark_type(f.dataType) for f in found.fields}
    bounded = _bounded_min_by(spark)
    try:
        query = compile_gate(taxonomy, schema, table, spec, SPARK,
                             first_ids=first_ids if bounded else 0)
    except RuleNotExpressible as exc:
        raise FailgateError(exc.message, report.path) from None
    try:
        counted = decode(query, taxonomy, [tuple(r) for r in _sql(spark, query.sql).collect()])
        check_counted(report, taxonomy, query, counted, lambda: [
            row.asDict(recursive=True)
            for row in _sql(spark, f"SELECT * FROM {table} LIMIT {SAMPLE}").collect()])
        if not bounded:  # before Spark 4.2: a second scan, ranked in a window
            ids = _sql(
                spark,
                f"SELECT _decided, _id FROM (SELECT _decided, _id, row_number() OVER "
                f"(PARTITION BY _decided ORDER BY _id) AS _n FROM (SELECT {query.decided_sql}"
                f" AS _decided, {query.id_sql} AS _id FROM {table}) WHERE _decided > 0 AND "
                f"_id IS NOT NULL) WHERE _n <= {first_ids} ORDER BY _decided, _id").collect()
            for decided, case_id in ids:
                counted.tally.ids[query.categories[decided - 1]].append(case_id)
        duplicate = duplicate_id(lambda sql: _sql(spark, sql).collect(),
                                 f"SELECT {query.id_sql} AS _id FROM {table}", "xxhash64")
    except FailgateError:
        raise
    except Exception as exc:
        raise FailgateError(f"Spark stopped: {_first_line(exc)}", report.path) from None
    return engine_report(report, taxonomy, query, counted, duplicate, "spark", table, run_sql)
