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

from ..base.confine import shown
from ..base.errors import FailgateError
from ..reports.model import OWN_FORMAT, Report
from ..reports.sink import SAMPLE, check_fit
from . import FIRST_IDS, is_glob, optional
from .dialects import SPARK
from .pairing import Classified
from .sqlquery import RuleNotExpressible, compile_gate, decode, duplicate_id
from .sqltypes import spark_type

if TYPE_CHECKING:
    from pathlib import Path

    from ..reports.model import ReportFile
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
        if counted.violations:
            message, n = counted.violations[0]
            raise FailgateError(f"{n} case(s): {message}", report.path)
        if counted.tally.n_cases == 0:
            raise FailgateError("the report has no cases; a gate over zero cases would "
                                "pass vacuously", report.path)
        n_cases = counted.tally.n_cases  # the columns the source lacks are absent
        sample = ([row.asDict(recursive=True)
                   for row in _sql(spark, f"SELECT * FROM {table} LIMIT {SAMPLE}").collect()]
                  if set(taxonomy.failed.reads) & set(query.absent) else [])
        check_fit(report, taxonomy, dict.fromkeys(query.absent, n_cases), n_cases, sample,
                  OWN_FORMAT, None)
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
    if duplicate:
        raise FailgateError(f"duplicate case id {shown(repr(str(duplicate[0])))} "
                            f"({duplicate[1]} cases)", report.path)
    tally = counted.tally
    select = f"SELECT {query.decided_sql} AS _decided, {query.id_sql} AS _id FROM {table}"
    return Report(name=report.name, path=report.path, kind="cases", counts=dict(tally.counts),
                  n_cases=tally.n_cases, tally=tally, taxonomy=taxonomy,
                  classified=Classified("spark", select, query.categories, run_sql))
