"""What every SQL engine does once its gate query has run, written once: the counts
checked (a contract violated, no case at all, a taxonomy that reads nothing of these
cases), a duplicate case id refused, and the ``Report`` built. DuckDB and Spark differ
only in how they run queries and fetch a sample (``duckdb_engine``, ``spark_engine``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.confine import shown
from ..base.errors import FailgateError
from ..reports.model import OWN_FORMAT, Report
from ..reports.sink import check_fit
from .pairing import Classified

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..reports.model import ReportFile
    from ..taxonomy import Taxonomy
    from .sqlquery import EngineCounts, GateQuery


def check_counted(report: ReportFile, taxonomy: Taxonomy, query: GateQuery,
                  counted: EngineCounts, sample: Callable[[], list[dict[str, Any]]]) -> None:
    """Refuse what Python's reading refuses: a violated rule, a report of no case, and a
    taxonomy whose ``failed`` reads no column these cases have (``sample``: the first
    cases, fetched only then)."""
    if counted.violations:
        message, n = counted.violations[0]
        raise FailgateError(f"{n} case(s): {message}", report.path)
    n_cases = counted.tally.n_cases
    if n_cases == 0:
        raise FailgateError("the report has no cases; a gate over zero cases would "
                            "pass vacuously", report.path)
    # the columns the source lacks are absent from every case
    first = sample() if set(taxonomy.failed.reads) & set(query.absent) else []
    check_fit(report, taxonomy, dict.fromkeys(query.absent, n_cases), n_cases, first,
              OWN_FORMAT, None)


def engine_report(report: ReportFile, taxonomy: Taxonomy, query: GateQuery,
                  counted: EngineCounts, duplicate: tuple[Any, int] | None, engine: str,
                  source: str, run: Callable[[str], list[tuple[Any, ...]]]) -> Report:
    """The report the engine classified: a duplicate case id refused, else its counts,
    with how to select its cases again (``Classified``) for a baseline's pairing."""
    if duplicate:
        raise FailgateError(f"duplicate case id {shown(repr(str(duplicate[0])))} "
                            f"({duplicate[1]} cases)", report.path)
    tally = counted.tally
    select = f"SELECT {query.decided_sql} AS _decided, {query.id_sql} AS _id FROM {source}"
    return Report(name=report.name, path=report.path, kind="cases", counts=dict(tally.counts),
                  n_cases=tally.n_cases, tally=tally, taxonomy=taxonomy,
                  classified=Classified(engine, select, query.categories, run))
