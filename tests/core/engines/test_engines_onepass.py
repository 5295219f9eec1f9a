"""The SQL engines bring back the first failing ids from the gate's own scan and find a
repeated case id without holding the ids: the same ids and the same refusals as the
Python reader, on Parquet and JSON Lines. (The Spark side is in ``test_engines_spark``.)
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports.model import Report, ReportFile
from pytest_failgate.core.reports.read import ReadSpec, load_report
from pytest_failgate.core.taxonomy import builtin_taxonomies

duckdb = pytest.importorskip("duckdb")

from pytest_failgate.core.engines import FIRST_IDS, sqlquery  # noqa: E402
from pytest_failgate.core.engines.duckdb_engine import load_duckdb  # noqa: E402
from pytest_failgate.core.reports.choice import TaxonomyChoice  # noqa: E402

RAG = builtin_taxonomies()["rag"]


def rag_cases(n: int, seed: int = 3) -> list[dict[str, Any]]:
    """Cases in every rag category, ids in no order, optional keys in some cases only."""
    rng = random.Random(seed)
    cases = []
    for i in rng.sample(range(10 * n), n):
        case: dict[str, Any] = {"id": f"q-{i:05d}", "accuracy": rng.choice([1.0, 0.0, 0.25]),
                                "abstained": rng.random() < 0.3,
                                "term_match": rng.random() < 0.5,
                                "expected_doc_ids": rng.choice([[], ["d1"], ["d2", "d3"]]),
                                "evidence_doc_ids": rng.choice([[], ["d1"], ["d3"]]),
                                "query_type": rng.choice(["comparison", "factoid"])}
        if rng.random() < 0.7:
            case["answerable"] = rng.random() < 0.8
        if rng.random() < 0.5:
            case["attempt_latency"] = [1.0] * rng.randrange(3)
        if rng.random() < 0.6:
            case["claim_citation_alignment"] = rng.choice([0.1, 0.9])
        cases.append(case)
    return cases


def write(folder: Path, cases: list[dict[str, Any]]) -> tuple[Path, Path]:
    """The cases as JSON Lines and as Parquet (absent keys are nulls there)."""
    lines = folder / "cases.jsonl"
    lines.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    parquet = folder / "cases.parquet"
    duckdb.connect().execute(f"COPY (SELECT * FROM read_json('{lines}', format="
                             f"'newline_delimited', sample_size=-1)) TO '{parquet}' "
                             "(FORMAT parquet)")
    return lines, parquet


def python_ids(path: Path) -> dict[str, list[str]]:
    report = load_report(ReportFile(path, "r"), TaxonomyChoice(RAG), ReadSpec())
    assert isinstance(report, Report)
    assert report.tally is not None
    return {name: [str(i) for i in ids] for name, ids in report.tally.ids.items()}


def test_duckdb_brings_back_the_python_readers_first_failing_ids(tmp_path: Path) -> None:
    lines, parquet = write(tmp_path, rag_cases(1500))
    expected = python_ids(lines)
    assert sum(len(ids) > FIRST_IDS for ids in expected.values()) >= 4  # cut in most
    for path in (lines, parquet):
        report = load_duckdb(ReportFile(path, "r"), RAG, ReadSpec())
        assert report.tally is not None
        got = {name: [str(i) for i in ids] for name, ids in report.tally.ids.items()}
        assert got == {name: ids[:FIRST_IDS] for name, ids in expected.items()}, path.name


def test_duckdb_looks_up_the_first_failing_ids_of_a_parquet_file_by_position(
        tmp_path: Path) -> None:
    """On one Parquet file the gate query keeps positions and the ids are read from those
    rows alone: still the Python reader's ids, across row groups, and a case without an id
    still named by its position (``#8``)."""
    cases = rag_cases(1500, seed=5)
    for case in cases[::7]:
        del case["id"]
    lines, _ = write(tmp_path, cases)
    parquet = tmp_path / "groups.parquet"
    duckdb.connect().execute(f"COPY (SELECT * FROM read_json('{lines}', format="
                             f"'newline_delimited', sample_size=-1)) TO '{parquet}' "
                             "(FORMAT parquet, ROW_GROUP_SIZE 100)")
    expected = {name: ids[:FIRST_IDS] for name, ids in python_ids(lines).items()}
    assert any(i.startswith("#") for ids in expected.values() for i in ids)
    assert max(int(i[1:]) for ids in expected.values() for i in ids if i.startswith("#")) > 100
    report = load_duckdb(ReportFile(parquet, "r"), RAG, ReadSpec())
    assert report.tally is not None
    assert {name: [str(i) for i in ids] for name, ids in report.tally.ids.items()} == expected


def test_a_parquet_file_cut_short_between_the_gate_query_and_the_id_lookup_is_one_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first failing ids are read at the positions the gate query kept: a file rewritten
    between the two (a run still writing it) is an error naming the file, not a KeyError."""
    from pytest_failgate.core.engines import duckdb_engine

    lines, _ = write(tmp_path, rag_cases(300, seed=3))
    parquet = tmp_path / "cut.parquet"
    duckdb.connect().execute(f"COPY (SELECT * FROM read_json('{lines}', format="
                             f"'newline_delimited', sample_size=-1)) TO '{parquet}' "
                             "(FORMAT parquet)")
    def decode_then_cut(*args: Any) -> Any:
        counted = sqlquery.decode(*args)
        cut = duckdb.connect()
        cut.execute(f"COPY (SELECT * FROM '{parquet}' LIMIT 1) TO '{tmp_path / 'one.parquet'}'"
                    " (FORMAT parquet)")
        cut.close()
        (tmp_path / "one.parquet").replace(parquet)
        return counted

    monkeypatch.setattr(duckdb_engine, "decode", decode_then_cut)
    with pytest.raises(FailgateError, match="the file changed while the gate read it") as error:
        load_duckdb(ReportFile(parquet, "r"), RAG, ReadSpec())
    assert error.value.path == parquet


@pytest.mark.slow
@pytest.mark.parametrize("candidates", [sqlquery.CANDIDATES, 0])
def test_a_repeated_case_id_is_refused_by_duckdb_as_by_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, candidates: int) -> None:
    """With ``candidates`` 0 the repeated hashes are a subquery (past too many for a list)."""
    monkeypatch.setattr(sqlquery, "CANDIDATES", candidates)
    cases = rag_cases(3000)
    cases[2500] = {**cases[2500], "id": cases[700]["id"]}
    lines, parquet = write(tmp_path, cases)
    with pytest.raises(FailgateError, match=f"duplicate case id '{cases[700]['id']}'"):
        python_ids(lines)  # (the Python reader reads no Parquet)
    for path in (lines, parquet):
        with pytest.raises(FailgateError) as refused:
            load_duckdb(ReportFile(path, "r"), RAG, ReadSpec())
        assert f"duplicate case id '{cases[700]['id']}' (2 cases)" in str(refused.value)
        assert refused.value.path == path


@pytest.mark.parametrize("nulls", [True, False], ids=["nulls", "no-nulls"])
@pytest.mark.parametrize("ordered", [True, False], ids=["sorted", "grouped"])
@pytest.mark.parametrize("candidates", [sqlquery.CANDIDATES, 0])
def test_the_duplicate_check_compares_as_text_the_ids_behind_a_repeated_hash(
        monkeypatch: pytest.MonkeyPatch, ordered: bool, candidates: int, nulls: bool) -> None:
    """A hash that repeats is not a duplicate: with ``length`` as the hash, every id of
    the same length shares one, and only the text comparison behind it tells the one
    real duplicate (the smallest, with its count) from hundreds of distinct ids. Hashed
    without the null test (``nulls=False``), two null ids share a hash but are no
    duplicate either."""
    monkeypatch.setattr(sqlquery, "CANDIDATES", candidates)
    con = duckdb.connect()

    def run(sql: str) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in con.execute(sql).fetchall()]

    distinct = "SELECT 'id-' || lpad(i::VARCHAR, 4, '0') AS _id FROM range(500) t(i)"
    assert sqlquery.duplicate_id(run, distinct, "length", ordered, nulls) is None
    unnamed = f"{distinct} UNION ALL SELECT NULL UNION ALL SELECT NULL"
    assert sqlquery.duplicate_id(run, unnamed, "length", ordered, nulls) is None
    twice = (f"{distinct} UNION ALL SELECT 'id-0321' UNION ALL SELECT 'id-0123' "
             "UNION ALL SELECT 'id-0123' UNION ALL SELECT NULL UNION ALL SELECT NULL")
    assert sqlquery.duplicate_id(run, twice, "length", ordered, nulls) == ("id-0123", 3)
    assert sqlquery.duplicate_id(run, twice, "hash", ordered, nulls) == ("id-0123", 3)


def test_duckdb_keeps_no_spill_folder_in_the_working_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The duplicate check may spill to disk: into a temporary folder, removed after."""
    monkeypatch.chdir(tmp_path)
    _, parquet = write(tmp_path, rag_cases(200))
    before = set(tmp_path.iterdir())
    load_duckdb(ReportFile(parquet, "r"), RAG, ReadSpec())
    assert set(tmp_path.iterdir()) == before
