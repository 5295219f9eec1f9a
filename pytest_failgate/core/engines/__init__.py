"""Where a run's cases are classified: in Python (the default), DuckDB or Spark.

The Python engine is the reader path (``reports.read``): it streams JSON and
classifies each case with the compiled rules. The SQL engines compile the same
taxonomy to one query (``sqlexpr`` for a rule, ``sqlquery`` for the gate) and
run it where the data lives; their counts go through the same ceilings, items
and outputs. ``duckdb`` and ``pyspark`` are optional extras, imported only by
``duckdb_engine`` and ``spark_engine`` when a run asks for them.
"""

ENGINES = ("python", "duckdb", "spark")
TRANSPILED = ("bigquery", "snowflake", "trino", "postgres")  # printed through sqlglot
DIALECTS = ("duckdb", "spark", *TRANSPILED)
