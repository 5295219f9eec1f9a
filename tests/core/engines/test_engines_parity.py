"""DuckDB counts what the Python reader counts, or refuses by name: one test per divergence
found by trying adversarial reports (a file named like a glob, keys shadowing the engine's
own columns, duplicate keys, keys differing in case, non-object lines, integers outside 64
bits, ``empty()`` on a column of mixed kinds).

Each test runs the Python reader and DuckDB on the same file: either both give the same
counts, or DuckDB stops with one message naming the file, the case and the reason (never
other counts with exit 0). The Spark side of these is in ``test_engines_spark.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli, write_ceilings
from test_engines_duckdb import _engine_counts, _outcome, _python_counts, _spec, _taxonomy

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports.model import ReportFile
from pytest_failgate.core.reports.read import ReadSpec
from pytest_failgate.core.taxonomy import builtin_taxonomies

duckdb = pytest.importorskip("duckdb")

from pytest_failgate.core.engines.duckdb_engine import load_duckdb  # noqa: E402

RAG = builtin_taxonomies()["rag"]


def _lines(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _both(path: Path, taxonomy: Any = RAG, spec: ReadSpec | None = None
          ) -> tuple[tuple[str, Any], tuple[str, Any]]:
    spec = spec or _spec()
    return (_outcome(lambda: _python_counts(taxonomy, path, spec)),
            _outcome(lambda: _engine_counts(taxonomy, path, spec)))


def _parquet_of(rows: str, target: Path) -> Path:
    duckdb.connect().execute(f"COPY ({rows}) TO '{str(target).replace(chr(39), chr(39) * 2)}' "
                             "(FORMAT parquet)")
    return target


# --------------------------------------------------------------------------- exact files


@pytest.mark.slow
@pytest.mark.parametrize("name", ["p[1].parquet", "q*.parquet", "q?.parquet", "r[!x].parquet"])
def test_a_file_named_like_a_glob_is_read_alone_in_duckdb(tmp_path: Path, name: str) -> None:
    """``p[1].parquet`` was read as the pattern ``p[1]`` (so ``p1.parquet``'s cases were
    gated: 0 failed instead of 5)."""
    for decoy in ("p1.parquet", "qq.parquet", "rx.parquet", "ry.parquet"):
        _parquet_of("SELECT 'ok' AS id, TRUE AS answerable, 1.0 AS accuracy", tmp_path / decoy)
    target = _parquet_of("SELECT 'q' || i AS id, TRUE AS answerable, 0.0 AS accuracy "
                         "FROM range(5) t(i)", tmp_path / name)
    report = load_duckdb(ReportFile(target, "r"), RAG, ReadSpec())
    assert (report.n_cases, report.counts["unknown"]) == (5, 5)


def test_a_report_named_like_a_glob_is_gated_on_its_own_cases(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    _parquet_of("SELECT 'ok' AS id, TRUE AS answerable, 1.0 AS accuracy", reports / "p1.parquet")
    _parquet_of("SELECT 'q' || i AS id, TRUE AS answerable, 0.0 AS accuracy FROM range(5) t(i)",
                reports / "p[1].parquet")
    ceilings = write_ceilings(tmp_path / "ceilings.yaml", {"unknown": 0})
    code, out, _ = run_cli(capsys, "check", str(reports / "p[1].parquet"),
                           "--ceilings", str(ceilings))
    assert code == 1
    assert "5 > 0" in out or "unknown" in out


def test_a_dataset_folder_named_like_a_glob_reads_its_part_files(tmp_path: Path) -> None:
    folder = tmp_path / "run[1]"
    folder.mkdir()
    for part in range(2):
        _parquet_of(f"SELECT 'c{part}' || i AS id, TRUE AS answerable, 0.0 AS accuracy "
                    "FROM range(3) t(i)", folder / f"part-{part}.parquet")
    report = load_duckdb(ReportFile(folder, "run"), RAG, ReadSpec())
    assert report.n_cases == 6


# --------------------------------------------------------------------------- reserved names


def test_a_key_named_like_the_engines_raw_column_cannot_shadow_it(tmp_path: Path) -> None:
    """A top-level ``_json`` key was read as the raw object: it decided which fields count
    as present (here ``answerable``, whose default is true when absent)."""
    path = _lines(tmp_path / "cases.jsonl",
                  json.dumps({"id": "a", "accuracy": 0, "_json": {"answerable": False}}),
                  json.dumps({"id": "b", "accuracy": 0, "answerable": False, "abstained": True,
                              "evidence_doc_ids": ["d1"], "_pos": 7, "_r": 1, "_json_1": 2}),
                  json.dumps({"id": "c", "accuracy": 0, "_json": "x"}))
    python, engine = _both(path)
    assert python[0] == "ok"
    assert engine == python


def test_a_parquet_column_named_like_the_engines_own_is_read_as_data(tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    parts.mkdir()
    for i in range(2):
        _parquet_of(f"SELECT 'c{i}' AS id, TRUE AS answerable, 0.0 AS accuracy, "
                    f"'x' AS filename, 9 AS _pos, 'y' AS _file", parts / f"p{i}.parquet")
    report = load_duckdb(ReportFile(parts, "parts"), RAG, ReadSpec())
    assert (report.n_cases, report.counts["unknown"]) == (2, 2)


def test_a_parquet_column_named_file_row_number_is_refused_by_name(tmp_path: Path) -> None:
    path = _parquet_of("SELECT 'a' AS id, 3 AS file_row_number", tmp_path / "r.parquet")
    with pytest.raises(FailgateError, match="'file_row_number'"):
        load_duckdb(ReportFile(path, "r"), RAG, ReadSpec())


# --------------------------------------------------------------------------- JSON semantics


def test_a_read_key_twice_in_a_case_is_refused_naming_the_case(tmp_path: Path) -> None:
    """Python's json keeps the last value, DuckDB the first: 0 failed against 1."""
    path = _lines(tmp_path / "cases.jsonl", '{"id": "a", "accuracy": 1}',
                  '{"id": "b", "accuracy": 0, "accuracy": 1}')
    python, engine = _both(path)
    assert python[0] == "ok"
    assert python[1]["counts"]["unknown"] == 0
    assert engine[0] == "error"
    assert "cases.jsonl: case #2 has the key 'accuracy' twice" in engine[1]


def test_a_read_key_twice_in_a_nested_object_is_refused(tmp_path: Path) -> None:
    taxonomy = _taxonomy(tmp_path, "o.x == 1", [])
    path = _lines(tmp_path / "cases.jsonl", '{"id": "a", "o": {"x": 2, "x": 1}}')
    python, engine = _both(path, taxonomy)
    assert python == ("ok", python[1])
    assert python[1]["counts"]["other"] == 1
    assert engine[0] == "error"
    assert "case #1 has the key 'x' twice in one object (in 'o')" in engine[1]


def test_a_key_twice_that_no_rule_reads_counts_as_in_python(tmp_path: Path) -> None:
    path = _lines(tmp_path / "cases.jsonl", '{"id": "a", "accuracy": 0, "note": 1, "note": 2}')
    python, engine = _both(path)
    assert python[0] == "ok"
    assert engine == python


@pytest.mark.parametrize("lines", [
    ['{"id": "a", "Accuracy": 1, "accuracy": 0}'],
    ['{"id": "a", "accuracy": 0}', '{"id": "b", "Accuracy": 1}'],
    ['{"id": "a", "Note": 0}', '{"id": "b", "note": 1, "accuracy": 1}'],
])
def test_keys_differing_only_in_case_are_refused_naming_both(tmp_path: Path,
                                                             lines: list[str]) -> None:
    """DuckDB merged ``Score`` and ``score`` into one column (or renamed one)."""
    path = _lines(tmp_path / "cases.jsonl", *lines)
    python, engine = _both(path)
    assert python[0] == "ok"
    assert engine[0] == "error"
    assert "differ only in case" in engine[1]
    assert "cases.jsonl" in engine[1]


def test_nested_keys_differing_only_in_case_are_refused(tmp_path: Path) -> None:
    taxonomy = _taxonomy(tmp_path, "o.x == 1", [])
    path = _lines(tmp_path / "cases.jsonl", '{"id": "a", "o": {"X": 1}}',
                  '{"id": "b", "o": {"x": 1}}')
    python, engine = _both(path, taxonomy)
    assert python[0] == "ok"
    assert engine[0] == "error"
    assert "differing only in case" in engine[1]


@pytest.mark.parametrize(("line", "word"), [("null", "null"), ("[1, 2]", "array"),
                                            ("3", "number"), ('"x"', "string")])
def test_a_line_that_is_not_an_object_is_refused_as_python_refuses_it(
        tmp_path: Path, line: str, word: str) -> None:
    path = _lines(tmp_path / "cases.jsonl", '{"id": "a", "accuracy": 0}', line)
    python, engine = _both(path)
    assert python[0] == engine[0] == "error"
    assert f"case #2 is {word}, not an object" in python[1]
    assert f"case #2 is {word}, not an object" in engine[1]


@pytest.mark.slow
@pytest.mark.parametrize("number", [2**63, 2**64 + 1, -(2**63) - 1, 10**30])
def test_an_integer_outside_64_bits_in_a_read_field_is_refused(tmp_path: Path,
                                                               number: int) -> None:
    """DuckDB read 2**63 as null and 2**64 + 1 as a rounded double."""
    taxonomy = _taxonomy(tmp_path, f"n == {number}", [f"n > {number - 1}"])
    path = _lines(tmp_path / "cases.jsonl", json.dumps({"id": "a", "n": number}),
                  json.dumps({"id": "b", "n": 1}))
    python, engine = _both(path, taxonomy)
    assert python[0] == "ok"
    assert python[1]["counts"]["r0"] == 1
    assert engine[0] == "error"
    assert "case #1: 'n' holds an integer outside 64 bits" in engine[1]


def test_integers_at_the_64_bit_bounds_count_exactly(tmp_path: Path) -> None:
    top, bottom = 2**63 - 1, -(2**63)
    taxonomy = _taxonomy(tmp_path, f"n == {top} or n == {bottom}", [f"n > {top - 1}"])
    path = _lines(tmp_path / "cases.jsonl", *(json.dumps({"id": str(i), "n": n}) for i, n in
                                              enumerate([top, bottom, top - 1, 0])))
    python, engine = _both(path, taxonomy)
    assert python[0] == "ok"
    assert python[1]["counts"] == {"r0": 1, "other": 1}
    assert engine == python


def test_an_integer_outside_64_bits_that_no_rule_reads_counts_as_in_python(
        tmp_path: Path) -> None:
    path = _lines(tmp_path / "cases.jsonl",
                  json.dumps({"id": "a", "accuracy": 0, "tokens": 2**70, "text": "9" * 30}))
    python, engine = _both(path)
    assert python[0] == "ok"
    assert engine == python


def test_empty_of_a_column_of_mixed_kinds_is_refused_not_miscounted(tmp_path: Path) -> None:
    """``empty()`` tested only null on a mixed column, so "" and [] were not empty."""
    taxonomy = _taxonomy(tmp_path, "empty(m)", [])
    values: list[Any] = [1, "", [], None, "x", 0]
    path = _lines(tmp_path / "cases.jsonl", *(json.dumps({"id": str(i), "m": m})
                                              for i, m in enumerate(values)))
    python, engine = _both(path, taxonomy)
    assert python[0] == "ok"
    assert python[1]["counts"]["other"] == 3
    assert engine[0] == "error"
    assert "empty()" in engine[1]
    assert "no exact SQL form" in engine[1]
