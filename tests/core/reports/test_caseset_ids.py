"""``failgate plan`` and the gate agree on every case id: a case set is read by the gate's
readers and its ids taken by the gate's own rule (``core.reports.caseset``), so every report
the gate reads in tests/data, in every built-in format, plans exactly the ids the gate reads
(composite ids, dotted paths, positions included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports.builtin import builtin_readers
from pytest_failgate.core.reports.caseset import read_case_set
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.discover import discover
from pytest_failgate.core.reports.model import Report
from pytest_failgate.core.reports.read import ReadSpec, load_report

DATA = Path(__file__).resolve().parents[2] / "data"
SPEC = ReadSpec(readers=builtin_readers())


def _gated() -> list[tuple[Path, Report]]:
    """Every report file under tests/data the gate reads as cases, with what it read."""
    found, _ = discover([DATA], sorted({suffix for reader in builtin_readers()
                                        for suffix in reader.suffixes}))
    gated = []
    for file in found:
        try:
            report = load_report(file, TaxonomyChoice(), SPEC)
        except FailgateError:
            continue  # a file the gate refuses (a crashed log, a broken fixture): no ids
        if isinstance(report, Report) and report.kind == "cases":
            gated.append((file.path, report))
    return gated


GATED = _gated()


def test_every_format_with_a_report_in_the_test_data_is_covered() -> None:
    formats = {report.format for _, report in GATED}
    readers = {reader.name for reader in builtin_readers()}
    # derived from the registry: every built-in reader has a real report here
    assert readers <= formats, "a reader with no report in tests/data"
    assert len(GATED) >= 20


@pytest.mark.parametrize(("path", "report"), GATED,
                         ids=[str(path.relative_to(DATA)) for path, _ in GATED])
def test_the_plans_ids_are_the_gates(path: Path, report: Report) -> None:
    cases = read_case_set(path, TaxonomyChoice(), SPEC)
    assert list(cases.ids) == report.all_case_ids()
