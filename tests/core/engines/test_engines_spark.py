"""Spark (local mode) gives the Python classifier's counts on the same Parquet rows.

Spark starts a JVM (tens of seconds on a busy 2-core machine), so these tests are
few, share one session, and are marked slow: CI runs them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_engines_duckdb import (
    CASE,
    RAG_CASE,
    SCOPED,
    _cases,
    _expression,
    _parquet_python_counts,
    _spec,
    _summary,
    _taxonomy,
    _to_parquet,
    _write_jsonl,
)

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports.model import ReportFile
from pytest_failgate.core.taxonomy import builtin_taxonomies

pytest.importorskip("pyspark")
pytest.importorskip("duckdb")

from pytest_failgate.core.engines.spark_engine import load_spark, session

pytestmark = [pytest.mark.slow, pytest.mark.spark]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    active = session()
    yield active
    active.stop()


def _spark_counts(taxonomy: Any, path: Path, spec: Any) -> tuple[str, Any]:
    try:
        return "ok", _summary(load_spark(ReportFile(path, "r"), taxonomy, spec))
    except FailgateError as exc:
        return "error", str(exc)


def _assert_counted_alike(taxonomy: Any, parquet: Path, spec: Any, rules: list[str]) -> None:
    """Spark counts what Python counts on the same rows, fails where Python fails, or says
    the rules have no exact SQL form."""
    python: tuple[str, Any]
    try:
        python = ("ok", _parquet_python_counts(taxonomy, parquet, spec))
    except Exception as exc:  # a rule error surfaces from the tallier directly
        python = ("error", str(exc))
    engine = _spark_counts(taxonomy, parquet, spec)
    if engine[0] == "error" and "no exact SQL form" in engine[1]:
        return
    if python[0] == "error":
        assert engine[0] == "error"
        return
    assert engine == python, rules


@settings(max_examples=10, deadline=None, suppress_health_check=[SCOPED])
@given(st.lists(RAG_CASE, min_size=1, max_size=30))
def test_rag_counts_match_python_in_spark(spark: Any, tmp_path: Path,
                                          raw: list[dict[str, Any]]) -> None:
    import json

    rag = builtin_taxonomies()["rag"]
    anchor = {"id": "anchor", "answerable": True, "abstained": False, "accuracy": 0.5,
              "term_match": True, "expected_doc_ids": ["d1"], "evidence_doc_ids": ["d2"],
              "query_type": "simple", "attempt_latency": [1.5], "claim_citation_alignment": 0.2}
    path = tmp_path / "cases.jsonl"
    cases = [anchor, *({"id": f"q{i}", **c} for i, c in enumerate(raw))]
    path.write_text("\n".join(json.dumps(c) for c in cases) + "\n", encoding="utf-8")
    parquet = _to_parquet(path)
    spec = _spec(slices=("query_type",), measures=("not answerable",))
    assert _spark_counts(rag, parquet, spec) == ("ok", _parquet_python_counts(rag, parquet, spec))


@settings(max_examples=15, deadline=None, suppress_health_check=[SCOPED])
@given(st.lists(CASE, min_size=1, max_size=20), _expression(),
       st.lists(_expression(), min_size=1, max_size=3))
def test_generated_rules_count_alike_in_python_and_spark(
        spark: Any, tmp_path: Path, raw: list[dict[str, Any]], failed: str,
        rules: list[str]) -> None:
    taxonomy = _taxonomy(tmp_path, failed, rules)
    path = tmp_path / "cases.jsonl"
    _write_jsonl(path, _cases(raw))
    parquet = _to_parquet(path)
    spec = _spec(slices=("s", "o.x"))
    _assert_counted_alike(taxonomy, parquet, spec, rules)


def test_json_lines_are_refused_in_spark_with_a_pointer_to_duckdb(
        spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a"}\n', encoding="utf-8")
    outcome = _spark_counts(builtin_taxonomies()["rag"], path, _spec())
    assert outcome[0] == "error"
    assert "duckdb engine" in outcome[1]


def test_a_baseline_is_paired_in_spark_as_in_python(spark: Any, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from helpers import case, cases_for, category_case, write_ceilings, write_jsonl

    from pytest_failgate.cli import main
    from pytest_failgate.core.base.result import GateResult

    base = cases_for({"retrieval_miss": 3, "unknown": 2}, passed=12, seed=3)
    moved = {"ok-0": "retrieval_miss", "ok-1": "unknown", "retrieval_miss-0": "passed"}
    candidate = [(case(r["id"]) if moved[r["id"]] == "passed"
                  else category_case(moved[r["id"]], r["id"]))
                 if r["id"] in moved else r for r in base]
    for name, cases in (("base", base), ("cand", candidate)):
        write_jsonl(tmp_path / name / "run.jsonl", cases)
        (tmp_path / f"{name}-pq" / "run").mkdir(parents=True)  # a dataset folder named run
        _to_parquet(tmp_path / name / "run.jsonl").rename(
            tmp_path / f"{name}-pq" / "run" / "part-0.parquet")
    ceilings = write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 9, "unknown": 9})
    seen = []
    for suffix, engine in (("", "python"), ("-pq", "spark")):
        out = tmp_path / f"out{suffix}.json"
        main(["check", str(tmp_path / f"cand{suffix}"), "--baseline",
              str(tmp_path / f"base{suffix}"), "--ceilings", str(ceilings), "--json", str(out),
              "--engine", engine])
        capsys.readouterr()
        result = GateResult.model_validate_json(out.read_text())
        seen.append({(row.name, row.baseline.n_new, row.baseline.n_fixed, row.baseline.paired)
                     for report in result.reports for row in report.rows
                     if row.baseline is not None})
    assert seen[0] == seen[1]
    assert ("retrieval_miss", 1, 1, 17) in seen[1]


# --------------------------------------------------------------------------- parity (issue 19)


def _rag_rows(rows: str, target: Path) -> Path:
    import duckdb

    duckdb.connect().execute(f"COPY ({rows}) TO '{target}' (FORMAT parquet)")
    return target


@pytest.mark.parametrize("name", ["p[1].parquet", "q{a,b}.parquet", "q*.parquet",
                                  "p${spark.app.name}.parquet"])
def test_a_file_named_like_a_glob_or_a_variable_is_read_alone_in_spark(
        spark: Any, tmp_path: Path, name: str) -> None:
    """Spark read ``p[1].parquet`` as a pattern (another file's cases were gated) and
    replaced ``${spark.app.name}`` in a path by the setting's value."""
    for decoy in ("p1.parquet", "qa.parquet", "qq.parquet", "pfailgate.parquet"):
        _rag_rows("SELECT 'ok' AS id, TRUE AS answerable, 1.0::DOUBLE AS accuracy",
                  tmp_path / decoy)
    target = _rag_rows("SELECT 'q' || i AS id, TRUE AS answerable, 0.0::DOUBLE AS accuracy "
                       "FROM range(5) t(i)", tmp_path / name)
    outcome = _spark_counts(builtin_taxonomies()["rag"], target, _spec())
    assert outcome[0] == "ok", outcome
    assert (outcome[1]["n"], outcome[1]["counts"]["unknown"]) == (5, 5)


def test_a_rule_holding_a_variable_reference_is_read_as_text_in_spark(
        spark: Any, tmp_path: Path) -> None:
    """``${env:HOME}`` in a rule was replaced by the environment's value before parsing."""
    import os

    taxonomy = _taxonomy(tmp_path, 's == "${env:HOME}"', ["o.y == '${spark.app.name}'"])
    path = tmp_path / "cases.jsonl"
    _write_jsonl(path, [{"id": "lit", "s": "${env:HOME}", "o": {"x": 1, "y": "${spark.app.name}"}},
                        {"id": "lit2", "s": "${env:HOME}", "o": {"x": 1, "y": "failgate"}},
                        {"id": "home", "s": os.environ.get("HOME", "/"),
                         "o": {"x": 1, "y": "failgate"}}])
    parquet = _to_parquet(path)
    python = _parquet_python_counts(taxonomy, parquet, _spec())
    assert python["counts"] == {"r0": 1, "other": 1}
    assert _spark_counts(taxonomy, parquet, _spec()) == ("ok", python)
    assert spark.conf.get("spark.sql.variable.substitute") == "true"  # the session's own


def test_a_field_absent_from_every_row_reads_as_null_in_spark(spark: Any, tmp_path: Path) -> None:
    """Without an ``expected_doc_ids`` column, Spark stopped on ``filter(NULL, ...)``
    (DATATYPE_MISMATCH, VOID); Python reads the field as null."""
    rag = builtin_taxonomies()["rag"]
    target = _rag_rows(
        "SELECT 'c' || i AS id, i % 2 = 0 AS answerable, 0.0::DOUBLE AS accuracy, "
        "FALSE AS abstained, ['d1'] AS evidence_doc_ids, "
        "CASE WHEN i % 3 = 0 THEN 'comparison' ELSE 'simple' END AS query_type "
        "FROM range(9) t(i)", tmp_path / "r.parquet")
    spec = _spec(slices=("query_type",))
    python = _parquet_python_counts(rag, target, spec)
    assert python["counts"]["verifier_false_negative"] == 4
    assert _spark_counts(rag, target, spec) == ("ok", python)


@settings(max_examples=10, deadline=None, suppress_health_check=[SCOPED])
@given(st.lists(CASE, min_size=1, max_size=15), _expression(),
       st.lists(_expression(), min_size=1, max_size=3))
def test_generated_rules_over_columns_absent_from_every_row_count_alike_in_spark(
        spark: Any, tmp_path: Path, raw: list[dict[str, Any]], failed: str,
        rules: list[str]) -> None:
    import json

    taxonomy = _taxonomy(tmp_path, failed, rules)
    path = tmp_path / "cases.jsonl"
    kept = [{k: v for k, v in c.items() if k not in ("k", "o")} for c in _cases(raw)]
    anchor = {"id": "anchor", "n": 1, "f": 0.5, "s": "a", "t": True, "l": ["a"]}
    path.write_text("\n".join(json.dumps(c) for c in [anchor, *kept]) + "\n", encoding="utf-8")
    parquet = _to_parquet(path)
    _assert_counted_alike(taxonomy, parquet, _spec(), rules)


def test_spark_brings_back_the_smallest_failing_ids_from_the_gates_scan(
        spark: Any, tmp_path: Path) -> None:
    from test_engines_onepass import python_ids, rag_cases, write

    from pytest_failgate.core.engines import FIRST_IDS
    from pytest_failgate.core.reports.read import ReadSpec

    lines, parquet = write(tmp_path, rag_cases(600))
    expected = {name: sorted(ids)[:FIRST_IDS] for name, ids in python_ids(lines).items()}
    report = load_spark(ReportFile(parquet, "r"), builtin_taxonomies()["rag"], ReadSpec())
    assert report.tally is not None
    assert {name: [str(i) for i in ids] for name, ids in report.tally.ids.items()} == expected


def test_a_repeated_case_id_is_refused_by_spark(spark: Any, tmp_path: Path) -> None:
    from test_engines_onepass import rag_cases, write

    from pytest_failgate.core.reports.read import ReadSpec

    cases = rag_cases(800)
    cases[650] = {**cases[650], "id": cases[20]["id"]}
    _, parquet = write(tmp_path, cases)
    with pytest.raises(FailgateError) as refused:
        load_spark(ReportFile(parquet, "r"), builtin_taxonomies()["rag"], ReadSpec())
    assert f"duplicate case id '{cases[20]['id']}' (2 cases)" in str(refused.value)
