"""Every built-in taxonomy runs in SQL as in Python, or says per rule why not; the engines
refuse what Python refuses; `failgate sql` prints rows that name what they count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLES

from pytest_failgate.cli import main
from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.gate.runner import load_run_or_raise
from pytest_failgate.core.reports.builtin import builtin_readers
from pytest_failgate.core.reports.choice import DEFAULT_TAXONOMY, TaxonomyChoice
from pytest_failgate.core.reports.model import Report
from pytest_failgate.core.reports.read import ReadSpec
from pytest_failgate.core.taxonomy import builtin_taxonomies

duckdb = pytest.importorskip("duckdb")
sqlglot = pytest.importorskip("sqlglot")

DATA = Path(__file__).resolve().parents[2] / "data"
TAXONOMIES = builtin_taxonomies()
READERS = {reader.name: reader for reader in builtin_readers()}

# Each built-in taxonomy, from the registry: the first reader of its format, and failgate's
# own shape (``DEFAULT_TAXONOMY``: no reader, the example's cases as they are).
FORMATS: dict[str, str | None] = {DEFAULT_TAXONOMY: None}
for _reader in builtin_readers():
    if _reader.taxonomy is not None:
        FORMATS.setdefault(_reader.taxonomy, _reader.name)


def real_file(reader: str) -> Path:
    """The test data's file of the reader's format with the most cases (read, not named)."""
    found = READERS[reader]
    best: tuple[int, str, Path] | None = None
    for path in sorted(DATA.rglob("*")):
        if not path.is_file() or path.suffix not in found.suffixes:
            continue
        with path.open("rb") as handle:
            if not found.claims(handle.read(65536).removeprefix(b"\xef\xbb\xbf")):
                continue
        try:
            output = found.read(path)
        except FailgateError:  # a fixture broken on purpose
            continue
        count = len(list(output.cases)) if output is not None else 0
        if count and (best is None or count > best[0]):
            best = (count, str(path), path)
    assert best is not None, reader
    return best[2]


def cases_of(taxonomy: str) -> list[dict[str, Any]]:
    """The cases a built-in format's reader hands failgate, from a real file."""
    reader = FORMATS[taxonomy]
    if reader is None:
        path = EXAMPLES / "reports" / "eval_summary.json"
        found: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))[
            "case_results"]
        return found
    output = READERS[reader].read(real_file(reader))
    assert output is not None
    return [dict(case) for case in output.cases]


def write_jsonl(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(case, default=str) + "\n" for case in cases),
                    encoding="utf-8")
    return path


def counted(path: Path, taxonomy: str, engine: str) -> Report:
    [report] = load_run_or_raise((path,), TaxonomyChoice(TAXONOMIES[taxonomy]),
                                 ReadSpec(readers=()), engine)
    return report


def test_the_table_names_every_built_in_taxonomy() -> None:
    assert set(FORMATS) == set(TAXONOMIES)


@pytest.mark.slow
@pytest.mark.parametrize("taxonomy", [t for t in FORMATS if t != "karenina"])
def test_each_built_in_taxonomy_counts_in_duckdb_as_in_python(
        taxonomy: str, tmp_path: Path) -> None:
    cases = cases_of(taxonomy)
    path = write_jsonl(tmp_path / "cases.jsonl", cases)
    python, engine = counted(path, taxonomy, "python"), counted(path, taxonomy, "duckdb")
    assert engine.counts == python.counts
    assert engine.n_cases == python.n_cases == len(cases)
    assert (python.failed or 0) > 0  # each real file has failures to classify


def test_karenina_runs_in_sql_once_its_caveats_column_has_a_type_and_says_why_before(
        tmp_path: Path) -> None:
    """karenina's caveat rules read `metadata.caveats`: in an export where no case has a
    caveat, DuckDB types the empty lists as JSON, and the rule is refused by name."""
    cases = cases_of("karenina")
    assert all(case["metadata"]["caveats"] == [] for case in cases)
    path = write_jsonl(tmp_path / "cases.jsonl", cases)
    with pytest.raises(FailgateError, match=r"rule 'partial_content' \(\"partial_content\" in "
                                            r"metadata.caveats\) has no exact SQL form"):
        counted(path, "karenina", "duckdb")
    cases[0]["metadata"]["caveats"] = ["retries_used"]
    write_jsonl(path, cases)
    python, engine = counted(path, "karenina", "python"), counted(path, "karenina", "duckdb")
    assert engine.counts == python.counts
    assert engine.tally is not None
    assert python.tally is not None
    assert engine.tally.flags == python.tally.flags == {
        "partial_content": 0, "embedding_override": 0, "parse_decision_malformed": 0,
        "retries_used": 1}


@pytest.mark.slow
@pytest.mark.parametrize(("assertion", "category"), [
    ("is-json", "format"), ("not-contains-sql", "format"), ("is-valid-function-call", "format"),
    ("not-is-valid-openai-tools-call", "format"), ("is-valid-openai-function-call", "format"),
    ("is-json-schema", "other_assertion"), ("is-valid-openai-tools-call-x", "other_assertion"),
    ("contains", "text_match")])
def test_promptfoo_format_rule_without_regular_expressions_in_both_engines(
        assertion: str, category: str, tmp_path: Path) -> None:
    case = {"id": "a", "success": False, "failure_reason": 1, "error": "x", "graded": True,
            "failed_assertion": assertion}
    path = write_jsonl(tmp_path / "cases.jsonl", [case, {**case, "id": "b", "success": True}])
    for engine in ("python", "duckdb"):
        report = counted(path, "promptfoo", engine)
        assert {k for k, v in report.counts.items() if v} == {category}, engine


@pytest.mark.slow
@pytest.mark.parametrize(("metric", "category"), [
    ("Politeness [GEval]", "custom_criteria"), ("Flow [Conversational GEval]", "custom_criteria"),
    ("Tone [Arena GEval]", "custom_criteria"), ("Tree [DAG]", "custom_criteria"),
    ("Talk [ConversationalDAG]", "custom_criteria"), ("J [Conversational JevEval]",
                                                      "custom_criteria"),
    ("Politeness [GEval] v2", "other_metric"), ("[GEval]", "other_metric")])
def test_deepeval_custom_criteria_rule_without_regular_expressions_in_both_engines(
        metric: str, category: str, tmp_path: Path) -> None:
    case = {"id": "a", "success": False, "failed_metric": metric, "errored_metric": None}
    path = write_jsonl(tmp_path / "cases.jsonl", [case])
    for engine in ("python", "duckdb"):
        report = counted(path, "deepeval", engine)
        assert {k for k, v in report.counts.items() if v} == {category}, engine


# ----------------------------------------------------------- refusing what Python refuses


def test_duckdb_refuses_cases_no_rule_reads_with_the_python_message(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """promptfoo's cases under the default `rag` taxonomy: every case would be failed."""
    cases = cases_of("promptfoo")
    path = write_jsonl(tmp_path / "cases.jsonl", cases)
    parquet = tmp_path / "cases.parquet"
    duckdb.connect().execute(
        f"COPY (SELECT * FROM read_json_auto('{path}')) TO '{parquet}' (FORMAT parquet)")
    messages = []
    for target, engine in ((path, "python"), (path, "duckdb"), (parquet, "duckdb")):
        ceilings = tmp_path / f"{target.suffix[1:]}-{engine}.yaml"
        code = main(["init", str(target), "--engine", engine, "--ceilings", str(ceilings)])
        out = capsys.readouterr()
        assert code == 2, out
        assert not ceilings.exists()
        text = out.out + out.err
        assert f"none of the {len(cases)} cases has any field taxonomy rag reads" in text
        line = text[text.index("none of the"):].splitlines()[0]
        explanation, _, command = line.partition("`")
        assert str(ceilings) in command  # the hint names the command as this call gave it
        messages.append(explanation)
    assert len(set(messages)) == 1  # one explanation, whatever the engine


# ------------------------------------------------------------------------ failgate sql


@pytest.fixture
def sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example eval_summary's cases, and ceilings slicing them by query type."""
    monkeypatch.chdir(tmp_path)
    path = write_jsonl(tmp_path / "cases.jsonl", cases_of("rag"))
    (tmp_path / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: rag\nslices: [query_type]\nceilings:\n  unknown: 40\n",
        encoding="utf-8")
    return path


def printed(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["sql", *args]) == 0
    return capsys.readouterr().out


def expected_rows(path: Path) -> dict[tuple[str, str | None], int]:
    """(category, slice) -> cases, from the Python classifier."""
    taxonomy = TAXONOMIES["rag"]
    from pytest_failgate.core.gate.analyze import analysis_slicers

    [report] = load_run_or_raise((path,), TaxonomyChoice(taxonomy), ReadSpec(
        slicers=analysis_slicers(("query_type",)), readers=()))
    assert report.tally is not None
    assert report.n_cases is not None
    rows: dict[tuple[str, str | None], int] = {("(all cases)", None): report.n_cases}
    rows[("(passed)", None)] = report.n_cases - (report.failed or 0)
    rows.update({(name, None): n for name, n in report.counts.items() if n})
    for value, cases in report.tally.slices["query_type"].items():
        failed = sum(cases.counts.values())
        if cases.n_cases - failed:
            rows[("(passed)", f"query_type={value}")] = cases.n_cases - failed
        rows.update({(name, f"query_type={value}"): n for name, n in cases.counts.items() if n})
    return rows


def test_sql_rows_name_the_category_and_slice_with_the_count(
        sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    query = printed(capsys, "--sample", str(sample), "--table", f"read_json_auto('{sample}')")
    assert "count_star" not in query
    result = duckdb.connect().execute(query.rstrip().rstrip(";"))
    columns = [column[0] for column in result.description]
    assert columns[:3] == ["category", "slice", "cases"]
    assert all(column.replace("_", "").isalnum() for column in columns)
    rows = result.fetchall()
    assert {(row[0], row[1]): row[2] for row in rows} == expected_rows(sample)
    assert rows[0][:2] == ("(all cases)", None)  # then the categories in rule order
    assert [row[0] for row in rows[1:4]] == ["(passed)", "verifier_false_negative",
                                              "retrieval_miss"]
    # every numbered column is explained above the query
    problems = [c for c in columns if c.startswith("problem_")]
    assert problems
    assert all(f"-- {name}: cases where " in query for name in problems)


@pytest.mark.slow
@pytest.mark.parametrize("dialect", ["spark", "bigquery", "snowflake", "trino", "postgres"])
def test_sql_in_every_dialect_names_its_columns_and_parses_back(
        dialect: str, sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    query = printed(capsys, "--sample", str(sample), "--dialect", dialect)
    body = "\n".join(line for line in query.splitlines() if not line.startswith("--"))
    [tree] = sqlglot.parse(body.rstrip().rstrip(";"), read=dialect)
    assert tree is not None
    names = tree.named_selects
    assert names[:3] == ["category", "slice", "cases"]
    assert "absent_query_type" in names
    assert "'(all cases)'" in query
    assert "'verifier_false_negative'" in query
    assert "query_type=" in query


@pytest.mark.slow
@pytest.mark.spark
def test_sql_printed_for_spark_runs_in_spark_with_the_same_rows(
        sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyspark")
    from pytest_failgate.core.engines.spark_engine import session

    spark = session()
    try:
        spark.read.json(str(sample)).createOrReplaceTempView("cases")
        query = printed(capsys, "--sample", str(sample), "--dialect", "spark")
        rows = spark.sql(query.rstrip().rstrip(";")).collect()
    finally:
        spark.stop()
    assert {(row["category"], row["slice"]): row["cases"] for row in rows} == \
        expected_rows(sample)
