"""Which engine reads a report, and the entry point the gate calls for the SQL engines.

Parquet needs a SQL engine (DuckDB unless Spark is asked for); JSON Lines and
globs go to the engine the run names; failgate's JSON shapes and the other
tools' formats stay with the Python readers whatever the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.errors import FailgateError, did_you_mean
from . import ENGINES, is_glob

if TYPE_CHECKING:
    from pathlib import Path

    from ..reports.choice import TaxonomyChoice
    from ..reports.model import Report, ReportFile
    from ..reports.read import ReadSpec

TABLE_SUFFIXES = (".parquet",)
_ENGINE_SUFFIXES = (".parquet", ".jsonl", ".ndjson")


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise FailgateError(f"unknown engine '{engine}'" + did_you_mean(engine, ENGINES)
                            + f"; the engines are {', '.join(ENGINES)}")
    return engine


def is_dataset(path: Path) -> bool:
    """A folder of Parquet part files, as Spark and Hive write it: one table. Its files are
    Parquet (``_SUCCESS`` and hidden files aside) and its subfolders are partitions
    (``date=2026-11-30``) holding the same."""
    if not path.is_dir():
        return False
    found = False
    for entry in path.iterdir():
        if entry.name.startswith(("_", ".")):
            continue
        if entry.is_dir():
            if "=" not in entry.name or not is_dataset(entry):
                return False
            found = True
        elif entry.suffix in TABLE_SUFFIXES:
            found = True
        else:
            return False
    return found


def datasets(files: list[ReportFile]) -> list[ReportFile]:
    """Found files, with the part files of a dataset folder as one report (the folder)."""
    from ..reports.model import ReportFile

    out: list[ReportFile] = []
    seen: set[Path] = set()
    for file in files:
        folder = file.path.parent
        while "=" in folder.name and is_dataset(folder.parent):  # up to the partitioned table
            folder = folder.parent
        if file.path.suffix in TABLE_SUFFIXES and "/" in file.name and is_dataset(folder):
            if folder not in seen:
                seen.add(folder)
                depth = len(file.path.relative_to(folder).parts)
                out.append(ReportFile(folder, file.name.rsplit("/", depth)[0]))
            continue
        out.append(file)
    return out


def glob_name(path: Path) -> str:
    """The report name of a dataset folder (its name) or a glob (its folder's name when the
    pattern is in the file name: ``events/*.parquet`` is ``events``)."""
    if is_glob(path) and not any(ch in str(path.parent) for ch in "*?["):
        return path.parent.name or path.name
    name = path.name
    for suffix in _ENGINE_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def runs_in_engine(path: Path, engine: str) -> bool:
    if is_glob(path) or path.suffix in TABLE_SUFFIXES or is_dataset(path):
        return True
    return engine != "python" and path.suffix in _ENGINE_SUFFIXES


def load_table(file: ReportFile, choice: TaxonomyChoice, spec: ReadSpec,
               engine: str) -> Report:
    """Classify one report in DuckDB or Spark, with the taxonomy chosen for its name (a
    table is failgate's own shape: its taxonomy is decided as ``read.detect`` decides it)."""
    check_engine(engine)
    from ..reports.model import OWN_FORMAT

    taxonomy = choice.pick(file.name, OWN_FORMAT, None)
    if engine == "spark":
        from .spark_engine import load_spark

        return load_spark(file, taxonomy, spec)
    if engine == "python" and is_glob(file.path) and file.path.suffix != ".parquet":
        raise FailgateError("a glob is read by a SQL engine: set the engine to duckdb", file.path)
    from .duckdb_engine import load_duckdb

    return load_duckdb(file, taxonomy, spec)
