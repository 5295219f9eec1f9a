"""Where a run's cases are classified: in Python (the default), DuckDB or Spark.

The Python engine is the reader path (``reports.read``): it streams JSON and
classifies each case with the compiled rules. The SQL engines compile the same
taxonomy to one query (``sqlexpr`` for a rule, ``sqlquery`` for the gate) and
run it where the data lives; their counts go through the same ceilings, items
and outputs. ``duckdb`` and ``pyspark`` are optional extras, imported only by
``duckdb_engine`` and ``spark_engine`` when a run asks for them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..base.errors import FailgateError

if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType

ENGINES = ("python", "duckdb", "spark")
TRANSPILED = ("bigquery", "snowflake", "trino", "postgres")  # printed through sqlglot
DIALECTS = ("duckdb", "spark", *TRANSPILED)

FIRST_IDS = 20
"""Failing case ids an engine brings back per category."""


def optional(module: str, needed_for: str, extra: str) -> ModuleType:
    """Import an optional extra's module, or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        from ..base.install import needs_extra  # (importlib.metadata: only when it is needed)

        raise FailgateError(needs_extra(needed_for, extra, module.partition(".")[0])) from None


def is_glob(path: Path) -> bool:
    """A pattern the user wrote (``runs/*.parquet``), not a real file's name: a path naming
    an existing file is that file, whatever characters it holds (``p[1].parquet``)."""
    return any(ch in str(path) for ch in "*?[") and not path.exists()
