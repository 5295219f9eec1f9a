"""Parquet and JSON Lines gated in DuckDB, through the same ceilings, items and ratchet."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import case, cases_for, category_case, write_ceilings, write_jsonl

from pytest_failgate.cli import main
from pytest_failgate.core.base.result import GateResult

duckdb = pytest.importorskip("duckdb")

COUNTS = {"retrieval_miss": 3, "planner_under_decomposition": 2, "unknown": 1}


def _parquet(jsonl: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    duckdb.connect().execute(
        f"COPY (SELECT * FROM read_json('{jsonl}', format='newline_delimited', "
        f"sample_size=-1)) TO '{target}' (FORMAT parquet)")
    return target


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    """The same cases as JSON Lines and as Parquet (split in two files under parts/)."""
    cases = cases_for(COUNTS, passed=5)
    write_jsonl(tmp_path / "cases.jsonl", cases)
    _parquet(tmp_path / "cases.jsonl", tmp_path / "cases.parquet")
    write_jsonl(tmp_path / "a.jsonl", cases[:6])
    write_jsonl(tmp_path / "b.jsonl", cases[6:])
    _parquet(tmp_path / "a.jsonl", tmp_path / "parts" / "part-0.parquet")
    _parquet(tmp_path / "b.jsonl", tmp_path / "parts" / "part-1.parquet")
    return tmp_path


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, GateResult]:
    code = main(["check", *args])
    capsys.readouterr()
    out = Path(args[args.index("--json") + 1])
    return code, GateResult.model_validate_json(out.read_text())


def _counts(result: GateResult) -> dict[str, int | None]:
    return {row.name: row.count for report in result.reports for row in report.rows}


@pytest.mark.slow
def test_parquet_a_glob_and_jsonl_in_duckdb_count_as_python_does(
        reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ceilings = write_ceilings(reports / "ceilings.yaml", {**COUNTS, "total": 6})
    json_out = str(reports / "out.json")
    base = ["--ceilings", str(ceilings), "--json", json_out]
    code, python = _check(capsys, str(reports / "cases.jsonl"), *base)
    assert code == 0
    expected = _counts(python)
    assert expected["retrieval_miss"] == 3
    for target, extra in ((reports / "cases.parquet", []),
                          (reports / "cases.jsonl", ["--engine", "duckdb"]),
                          (reports / "parts" / "*.parquet", []),
                          (reports / "parts", [])):
        code, result = _check(capsys, str(target), *base, *extra)
        assert code == 0, result.reports[0].error
        assert _counts(result) == expected
        assert result.reports[0].n_cases == 11


def test_a_parquet_count_over_its_ceiling_fails_with_the_first_case_ids(
        reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ceilings = write_ceilings(reports / "ceilings.yaml", {**COUNTS, "retrieval_miss": 1})
    code = main(["check", str(reports / "cases.parquet"), "--ceilings", str(ceilings)])
    out = capsys.readouterr().out
    assert code == 1
    assert "retrieval_miss: 3 cases, 2 over the ceiling of 1" in out
    assert "retrieval_miss-0" in out


@pytest.mark.slow
def test_the_ratchet_lowers_a_ceiling_from_parquet_counts(
        reports: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(reports)  # the project whose ceilings file the ratchet writes
    ceilings = write_ceilings(reports / "ceilings.yaml", {**COUNTS, "retrieval_miss": 9})
    assert main(["ratchet", str(reports / "cases.parquet"), "--ceilings", str(ceilings)]) == 0
    capsys.readouterr()
    assert "retrieval_miss: 3" in ceilings.read_text()


def test_pytest_gates_a_parquet_file_with_one_item_per_category(
        pytester: pytest.Pytester, reports: Path) -> None:
    pytester.makeini("[pytest]\n")
    write_ceilings(pytester.path / "ceilings.yaml", {**COUNTS, "unknown": 0})
    result = pytester.runpytest(f"--failgate={reports / 'cases.parquet'}",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(["*FAILED ceilings.yaml::cases::unknown*"])


def test_pytest_engine_option_classifies_jsonl_in_duckdb(
        pytester: pytest.Pytester, reports: Path) -> None:
    pytester.makeini("[pytest]\n")
    write_ceilings(pytester.path / "ceilings.yaml", COUNTS)
    out = pytester.path / "result.json"
    result = pytester.runpytest(f"--failgate={reports / 'cases.jsonl'}",
                                "--failgate-engine=duckdb", f"--failgate-json={out}",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=7)
    assert _counts(GateResult.model_validate_json(out.read_text()))["retrieval_miss"] == 3


def test_a_rule_without_sql_form_fails_the_report_naming_the_rule(
        reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    taxonomy = reports / "tax.yaml"
    taxonomy.write_text(
        "name: t\nfailed: 'true'\ncategories:\n"
        "  - {name: listy, when: \"expected_doc_ids == evidence_doc_ids\"}\n  - {name: other}\n",
        encoding="utf-8")
    ceilings = reports / "ceilings.yaml"
    ceilings.write_text("version: 1\ntaxonomy: tax.yaml\nceilings: {listy: 0, other: 11}\n",
                        encoding="utf-8")
    code = main(["check", str(reports / "cases.parquet"), "--ceilings", str(ceilings)])
    captured = capsys.readouterr()
    assert code in (1, 2)
    assert "rule 'listy'" in captured.out + captured.err
    assert "no exact SQL form" in captured.out + captured.err


@pytest.mark.slow
def test_sql_prints_one_query_per_dialect(reports: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    sample = str(reports / "cases.parquet")
    for dialect, marker in (("duckdb", "GROUPING SETS"), ("spark", "`_decided`"),
                            ("bigquery", "GROUPING SETS"), ("postgres", "GROUPING SETS"),
                            ("trino", "GROUPING SETS"), ("snowflake", "GROUPING SETS")):
        assert main(["sql", "--dialect", dialect, "--sample", sample, "--taxonomy", "rag",
                     "--table", "eval.cases"]) == 0
        text = capsys.readouterr().out
        assert marker in text
        assert "eval.cases" in text


def test_sql_runs_in_duckdb_and_counts_as_the_engine_does(
        reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The printed query classifies as the engine does: executed by hand, its rows name the
    categories with the engine's counts."""
    sample = reports / "cases.parquet"
    assert main(["sql", "--sample", str(sample), "--taxonomy", "rag",
                 "--table", f"read_parquet('{sample}')"]) == 0
    query = capsys.readouterr().out
    rows = duckdb.connect().execute(query.rstrip().rstrip(";")).fetchall()
    counts = {row[0]: row[2] for row in rows if row[1] is None}  # (category, slice, cases)
    assert counts["retrieval_miss"] == 3
    assert counts["planner_under_decomposition"] == 2
    assert counts["(passed)"] == 5


def test_sql_without_a_sample_needs_declared_types(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", "--taxonomy", "rag"]) == 2
    assert "--sample" in capsys.readouterr().err


@pytest.mark.slow
def test_an_unknown_engine_in_the_ini_is_one_clear_error(
        pytester: pytest.Pytester, reports: Path) -> None:
    pytester.makeini("[pytest]\nfailgate_engine = duckbd\n")
    write_ceilings(pytester.path / "ceilings.yaml", COUNTS)
    result = pytester.runpytest(f"--failgate={reports / 'cases.jsonl'}", "-p", "no:cacheprovider")
    assert "unknown engine 'duckbd'" in result.stdout.str() + result.stderr.str()
    assert result.ret != 0


@pytest.mark.slow
def test_a_baseline_is_paired_in_duckdb_with_python_s_discordant_counts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """McNemar's new/fixed per category come from a join on case id in the engine."""
    base_cases = cases_for({"retrieval_miss": 4, "unknown": 3}, passed=30, seed=1)
    moved = {"ok-0": "retrieval_miss", "ok-1": "retrieval_miss", "ok-2": "unknown",
             "retrieval_miss-0": None}
    candidate_cases = []
    for record in base_cases:
        if record["id"] in moved:
            category = moved[record["id"]]
            record = (case(record["id"]) if category is None
                      else {**category_case(category, record["id"])})
        candidate_cases.append(record)
    candidate_cases.append(category_case("unknown", "new-only"))
    for name, cases in (("base", base_cases), ("cand", candidate_cases)):
        write_jsonl(tmp_path / name / "run.jsonl", cases)
        _parquet(tmp_path / name / "run.jsonl",
                 tmp_path / f"{name}-pq" / "run" / "part-0.parquet")  # a dataset folder
    ceilings = write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 9, "unknown": 9})
    results: dict[str, set[tuple[str, int, int, int]]] = {}
    warnings: dict[str, list[str]] = {}
    for suffix in ("", "-pq"):
        out = tmp_path / f"out{suffix}.json"
        main(["check", str(tmp_path / f"cand{suffix}"), "--baseline",
              str(tmp_path / f"base{suffix}"), "--ceilings", str(ceilings), "--json", str(out)])
        capsys.readouterr()
        result = GateResult.model_validate_json(out.read_text())
        results[suffix] = {(row.name, row.baseline.n_new, row.baseline.n_fixed,
                            row.baseline.paired) for report in result.reports
                           for row in report.rows if row.baseline is not None}
        warnings[suffix] = result.warnings
    assert results[""] == results["-pq"]
    assert ("retrieval_miss", 2, 1, 37) in results["-pq"]
    assert ("unknown", 1, 0, 37) in results["-pq"]
    assert any("1 case only in this run (new-only)" in w for w in warnings["-pq"])
