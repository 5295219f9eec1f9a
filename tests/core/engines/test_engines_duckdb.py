"""DuckDB gives the Python classifier's counts, per category and slice, on the same cases.

Differential: generated cases (optional and null fields, nested structs and lists,
mixed case, odd numbers) are classified by the Python reader from JSON Lines and
by DuckDB from the same JSON Lines and from Parquet; for Parquet the Python side
classifies the rows DuckDB hands back (a null top-level value is an absent field).
Rules are the built-in taxonomy and generated expressions over every construct.
A rule SQL cannot express exactly must be refused by name, never counted differently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports.model import OWN_FORMAT, ReportFile
from pytest_failgate.core.reports.read import ReadSpec, load_report
from pytest_failgate.core.reports.sink import SAMPLE, check_fit
from pytest_failgate.core.taxonomy import Taxonomy, builtin_taxonomies
from pytest_failgate.core.taxonomy.expr import compile_expr
from pytest_failgate.core.taxonomy.files import load_taxonomy_file

duckdb = pytest.importorskip("duckdb")

from pytest_failgate.core.engines.duckdb_engine import load_duckdb  # noqa: E402
from pytest_failgate.core.engines.sqlquery import RuleNotExpressible, compile_gate  # noqa: E402
from pytest_failgate.core.engines.sqltypes import BOOL, FLOAT, INT, STR, SqlType  # noqa: E402
from pytest_failgate.core.reports.choice import TaxonomyChoice  # noqa: E402

SCOPED = HealthCheck.function_scoped_fixture  # each example writes its own files
WORDS = ["Alpha", "alpha", "BETA", "beta", "gamma", "x", "", "Comparison", "comparison",
         "multi_hop", "a b"]
ASCII_TEXT = st.text(alphabet="abcXYZ _-.", max_size=6) | st.sampled_from(WORDS)
NUMBERS = st.sampled_from([0, 1, -1, 2, 7, 10**6]) | st.floats(
    min_value=-1e6, max_value=1e6, allow_nan=False) | st.sampled_from([0.0, -0.0, 0.5, 1.0])


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field that is absent (None here, dropped), null, or a value."""
    return st.one_of(st.just("__absent__"), st.none(), strategy)


CASE = st.fixed_dictionaries({
    "n": _maybe(st.integers(-3, 3)),
    "f": _maybe(NUMBERS.map(float)),
    "s": _maybe(ASCII_TEXT),
    "t": _maybe(st.booleans()),
    "l": _maybe(st.lists(st.sampled_from(WORDS[:6]), max_size=3)),
    "k": _maybe(st.lists(st.integers(0, 4), max_size=3)),
    "o": _maybe(st.fixed_dictionaries({
        "x": st.one_of(st.none(), st.integers(-2, 2)),
        "y": st.one_of(st.none(), ASCII_TEXT),
        "z": st.one_of(st.none(), st.lists(st.integers(0, 3), max_size=2)),
    })),
})


def _cases(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for i, case in enumerate(raw):
        kept = {k: v for k, v in case.items() if v != "__absent__"}
        out.append({"id": f"c{i}", **kept})
    return out


def _write_jsonl(path: Path, cases: list[dict[str, Any]]) -> None:
    # every field once with a value, so DuckDB infers one type per column
    anchor = {"id": "anchor", "n": 1, "f": 0.5, "s": "a", "t": True, "l": ["a"], "k": [1],
              "o": {"x": 1, "y": "a", "z": [1]}}
    lines = [json.dumps(anchor), *(json.dumps(c) for c in cases)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


TAXONOMY_FIELDS = "types: {n: number | null, f: number | null, s: string | null, " \
    "t: bool | null, l: list | null, k: list | null, o: object | null}\n"


def _taxonomy(tmp: Path, failed: str, rules: list[str], defaults: str = "") -> Taxonomy:
    categories = "".join(f"  - {{name: r{i}, when: {json.dumps(r)}}}\n"
                         for i, r in enumerate(rules))
    text = (f"name: generated\nid_field: id\n{defaults}{TAXONOMY_FIELDS}"
            f"failed: {json.dumps(failed)}\ncategories:\n{categories}  - {{name: other}}\n")
    path = tmp / "taxonomy.yaml"
    path.write_text(text, encoding="utf-8")
    return load_taxonomy_file(path)


def _python_counts(taxonomy: Taxonomy, path: Path, spec: ReadSpec) -> dict[str, Any]:
    report = load_report(ReportFile(path, "r"), TaxonomyChoice(taxonomy), spec)
    assert not isinstance(report, type(None))
    return _summary(report)


def _summary(report: Any) -> dict[str, Any]:
    tally = report.tally
    return {"counts": report.counts, "n": report.n_cases,
            "slices": {f: {v: (t.n_cases, t.counts) for v, t in values.items()}
                       for f, values in tally.slices.items()},
            "flags": tally.flags}


def _parquet_python_counts(taxonomy: Taxonomy, parquet: Path, spec: ReadSpec
                           ) -> dict[str, Any]:
    """The Python classifier on the rows DuckDB reads from the Parquet file.

    A field the file has no column for is absent from every case, so the classifier's
    fit check (a ``failed`` that reads only such fields decides nothing) applies here as
    it does in the engines."""
    con = duckdb.connect()
    relation = con.sql(f"SELECT * FROM read_parquet('{parquet}')")
    names = relation.columns
    tallier = spec.tallier(taxonomy)
    cases = [{k: v for k, v in zip(names, row, strict=True) if v is not None}
             for row in relation.fetchall()]
    for case in cases:
        tallier.add(str(case.get("id")), case)
    tally = tallier.result()
    missing = {name: len(cases) for name in taxonomy.rule_fields if name not in names}
    check_fit(ReportFile(parquet, "r"), taxonomy, missing, len(cases), cases[:SAMPLE],
              OWN_FORMAT, None)
    return {"counts": tally.counts, "n": tally.n_cases,
            "slices": {f: {v: (t.n_cases, t.counts) for v, t in values.items()}
                       for f, values in tally.slices.items()},
            "flags": tally.flags}


def _to_parquet(jsonl: Path) -> Path:
    parquet = jsonl.with_suffix(".parquet")
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM read_json('{jsonl}', format='newline_delimited', "
                f"sample_size=-1)) TO '{parquet}' (FORMAT parquet)")
    return parquet


def _engine_counts(taxonomy: Taxonomy, path: Path, spec: ReadSpec) -> dict[str, Any]:
    return _summary(load_duckdb(ReportFile(path, "r"), taxonomy, spec))


def _outcome(run: Any) -> tuple[str, Any]:
    try:
        return "ok", run()
    except FailgateError as exc:
        return "error", str(exc)


def _spec(slices: tuple[str, ...] = (), measures: tuple[str, ...] = ()) -> ReadSpec:
    return ReadSpec({m: compile_expr(m) for m in measures}, {s: compile_expr(s) for s in slices})


# --------------------------------------------------------------------------- built-in rag


RAG_CASE = st.fixed_dictionaries({}, optional={
    "answerable": st.booleans(),
    "abstained": st.one_of(st.none(), st.booleans()),
    "accuracy": st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, 1, 0])),
    "term_match": st.one_of(st.none(), st.booleans()),
    "expected_doc_ids": st.one_of(st.none(), st.lists(st.sampled_from(["d1", "d2", "D1"]),
                                                        max_size=3)),
    "evidence_doc_ids": st.one_of(st.none(), st.lists(st.sampled_from(["d1", "d2", "d3"]),
                                                        max_size=3)),
    "query_type": st.one_of(st.none(), st.sampled_from(["comparison", "multi_hop", "Comparison",
                                                         "simple"])),
    "attempt_latency": st.one_of(st.none(), st.lists(st.floats(0, 5), max_size=3)),
    "claim_citation_alignment": st.one_of(st.none(), st.sampled_from([0.0, 0.49, 0.5, 1.0])),
})


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[SCOPED])
@given(st.lists(RAG_CASE, min_size=1, max_size=40))
def test_rag_counts_per_category_and_slice_match_python_on_jsonl(
        tmp_path: Path, raw: list[dict[str, Any]]) -> None:
    rag = builtin_taxonomies()["rag"]
    cases = [{"id": f"q{i}", **c} for i, c in enumerate(raw)]
    anchor = {"id": "anchor", "answerable": True, "abstained": False, "accuracy": 0.5,
              "term_match": True, "expected_doc_ids": ["d1"], "evidence_doc_ids": ["d2"],
              "query_type": "simple", "attempt_latency": [1.5], "claim_citation_alignment": 0.2}
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in [anchor, *cases]) + "\n", encoding="utf-8")
    spec = _spec(slices=("query_type",), measures=("not answerable",))
    assert _engine_counts(rag, path, spec) == _python_counts(rag, path, spec)
    parquet = _to_parquet(path)
    assert _engine_counts(rag, parquet, spec) == _parquet_python_counts(rag, parquet, spec)


# --------------------------------------------------------------------------- generated rules

FIELDS_NUM = ["n", "f", "o.x", "len(l)", "len(k)", "len(s)", "k[0]", "k[-1]", "abs(n)"]
FIELDS_STR = ["s", "o.y", "l[0]", "l[-1]", "lower(s)", "upper(o.y)"]


def _atom() -> st.SearchStrategy[str]:
    number = st.sampled_from(["0", "1", "-1", "0.5", "2", "1e300", "3"])
    string = st.sampled_from(['"alpha"', '"Alpha"', '""', '"x"', '"a b"', '"beta"'])
    num_expr = st.sampled_from(FIELDS_NUM) | st.builds(
        lambda a, op, b: f"({a} {op} {b})", st.sampled_from(FIELDS_NUM),
        st.sampled_from(["+", "-", "*", "/"]), st.sampled_from(FIELDS_NUM) | number)
    str_expr = st.sampled_from(FIELDS_STR)
    return st.one_of(
        st.builds(lambda a, op, b: f"{a} {op} {b}", num_expr,
                  st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), number | num_expr),
        st.builds(lambda a, op, b: f"{a} {op} {b}", str_expr,
                  st.sampled_from(["==", "!=", "<", ">="]), string | str_expr),
        st.builds(lambda a, b: f"{a} in {b}", str_expr | number,
                  st.sampled_from(["l", "s", '{"alpha", "x", ""}', '["beta", "a b"]', "k",
                                   "{1, 2, 0}", "o.z"])),
        st.builds(lambda a: f"{a} not in l", str_expr),
        st.sampled_from(["n", "f", "s", "t", "l", "k", "o", "o.x", "o.y", "o.z", "k[1]",
                         "not l", "empty(s)", "empty(l)", "empty(o)", "has(s)", "has(o.y)",
                         "has(k[1])", "has(missing)", "s is None", "o.x is not None",
                         "set(l) & set(['alpha', 'x'])", "set(k) - set(o.z)",
                         "len(set(l) | set(['x']))", "len(set(k)) >= 2",
                         "startswith(s, 'a')", "endswith(o.y, 'a')", "startswith(l[0], '')",
                         "matches(s, '^a.c')", "matches(o.y, '(x|Y)+')", "t == 1",
                         "t == True", "n == t", "min(n, o.x) < 1", "max(k) > 2", "max(s, o.y)",
                         "min(f, 0.5) < 0.25", "len(l or []) <= 1", "(n or 0) + 1 > 1",
                         "s if t else o.y", "n if t else f", "f / 0 is None", "-n < 0",
                         "any(x == 'alpha' for x in l)", "all(v > 1 for v in k if v < 4)",
                         "any(k)", "kind(f) == 'number'", "any(v in k for v in o.z)",
                         "missing == None", "missing.deep is None", "len(o) == 3",
                         "'x' in o", "'q' in o", "1 < n < 3", "n == f == 0"]),
    )


def _expression() -> st.SearchStrategy[str]:
    return st.recursive(
        _atom(),
        lambda inner: st.one_of(
            st.builds(lambda a, b: f"({a}) and ({b})", inner, inner),
            st.builds(lambda a, b: f"({a}) or ({b})", inner, inner),
            st.builds(lambda a: f"not ({a})", inner),
            st.builds(lambda a, b, c: f"({a}) if ({b}) else ({c})", inner, inner, inner),
        ),
        max_leaves=4,
    )


def _differential(tmp: Path, raw: list[dict[str, Any]], failed: str, rules: list[str],
                  slices: tuple[str, ...] = ()) -> str:
    """Python and DuckDB agree on JSON Lines and on Parquet, or DuckDB refuses/errs where
    Python errs. Returns how the run went, for coverage counts."""
    taxonomy = _taxonomy(tmp, failed, rules)
    cases = _cases(raw)
    path = tmp / "cases.jsonl"
    _write_jsonl(path, cases)
    spec = _spec(slices=slices)
    python = _outcome(lambda: _python_counts(taxonomy, path, spec))
    engine = _outcome(lambda: _engine_counts(taxonomy, path, spec))
    if engine[0] == "error" and "no exact SQL form" in engine[1]:
        assert "rule" in engine[1] or "slice" in engine[1]
        return "refused"
    if python[0] == "error":
        assert engine[0] == "error", f"Python failed ({python[1]}), DuckDB counted {engine[1]}"
        return "both failed"
    assert engine == python, f"rules {rules}"
    parquet = _to_parquet(path)
    on_rows = _outcome(lambda: _parquet_python_counts(taxonomy, parquet, spec))
    on_parquet = _outcome(lambda: _engine_counts(taxonomy, parquet, spec))
    if on_rows[0] == "ok":
        assert on_parquet == on_rows, f"rules {rules} on Parquet"
    return "agreed"


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[SCOPED])
@given(st.lists(CASE, min_size=1, max_size=25), _expression(), st.lists(_expression(),
                                                                         min_size=1, max_size=3))
def test_generated_rules_count_alike_in_python_and_duckdb(
        tmp_path: Path, raw: list[dict[str, Any]], failed: str, rules: list[str]) -> None:
    _differential(tmp_path, raw, failed, rules, slices=("s", "o.x"))


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[SCOPED])
@given(st.lists(CASE, min_size=1, max_size=40), _expression(), st.lists(_expression(),
                                                                         min_size=1, max_size=4))
def test_generated_rules_count_alike_in_python_and_duckdb_long_run(
        tmp_path: Path, raw: list[dict[str, Any]], failed: str, rules: list[str]) -> None:
    _differential(tmp_path, raw, failed, rules, slices=("s", "t", "n"))


@pytest.mark.slow
def test_the_language_sample_compiles_to_sql_and_counts_alike(tmp_path: Path) -> None:
    """The differential tests are not vacuous: nearly every construct has a SQL form, and
    each one, counted as a caveat over the same cases, matches Python."""
    refused = []
    for rule in _ATOM_SAMPLES:
        try:
            compile_gate(_taxonomy(tmp_path, "true", [rule]), SCHEMA, "t")
        except RuleNotExpressible as exc:
            refused.append(str(exc))
    assert len(refused) <= 2, refused
    caveats = "".join(f"  - {{name: c{i}, when: {json.dumps(r)}}}\n"
                      for i, r in enumerate(_ATOM_SAMPLES))
    path = tmp_path / "caveats.yaml"
    path.write_text(f"name: sample\nid_field: id\n{TAXONOMY_FIELDS}failed: 'true'\n"
                    f"categories:\n  - {{name: other}}\ncaveats:\n{caveats}", encoding="utf-8")
    taxonomy = load_taxonomy_file(path)
    raw: list[dict[str, Any]] = [
        {"n": 1, "f": 0.5, "s": "alpha", "t": True, "l": ["x", "alpha"], "k": [1, 2],
         "o": {"x": 1, "y": "Y", "z": [2]}},
        {"n": 2, "f": -0.0, "s": "", "t": False, "l": [], "k": [3], "o": {"x": None}},
        {"n": None, "s": "abc", "l": ["beta"], "k": [], "o": None}, {}]
    jsonl = tmp_path / "cases.jsonl"
    _write_jsonl(jsonl, _cases(raw))
    python = _python_counts(taxonomy, jsonl, ReadSpec())
    engine = _engine_counts(taxonomy, jsonl, ReadSpec())
    differ = {_ATOM_SAMPLES[int(k[1:])]: (v, engine["flags"][k])
              for k, v in python["flags"].items() if engine["flags"][k] != v}
    assert not differ, differ
    assert engine == python
    assert len({n for n in python["flags"].values()}) > 3  # the caveats tell cases apart
    parquet = _to_parquet(jsonl)
    assert _engine_counts(taxonomy, parquet, ReadSpec()) == \
        _parquet_python_counts(taxonomy, parquet, ReadSpec())


SCHEMA = {"id": STR, "n": INT, "f": FLOAT, "s": STR, "t": BOOL,
          "l": SqlType("list", STR), "k": SqlType("list", INT),
          "o": SqlType("struct", fields=(("x", INT), ("y", STR), ("z", SqlType("list", INT))))}


_ATOM_SAMPLES = [
    "n", "f", "s", "t", "l", "k", "o", "o.x", "o.y", "o.z", "k[1]", "not l", "empty(s)",
    "empty(l)", "empty(o)", "has(s)", "has(o.y)", "has(k[1])", "has(missing)", "s is None",
    "set(l) & set(['alpha', 'x'])", "set(k) - set(o.z)", "len(set(l) | set(['x']))",
    "startswith(s, 'a')", "endswith(o.y, 'a')", "matches(s, '^a.c')", "t == 1", "n == t",
    "min(n, o.x) < 1", "max(k) > 2", "max(s, o.y) == 'alpha'", "len(l or []) <= 1",
    "(n or 0) + 1 > 1", "s if t else o.y", "f / 0 is None", "-n < 0", "missing == None",
    "len(o) == 3", "'x' in o", "1 < n < 3", "n == f == 0", "s in l", "'alpha' in s",
    "lower(s) == 'alpha'", "upper(o.y) in {'Y', 'X'}", "k[0] + n > 1", "f * 2 >= 1",
    "s not in ['alpha']", "n in {1, 2}", "t in {1}", "o.x in k", "l == ['x', 'alpha']",
    "k == [1, 2.0]", "l == []", "o == l", "set(l) & set(['alpha', 'x'])",
    "any(x == 'alpha' for x in l)", "all(v > 1 for v in k)", "any(k)", "all(l)",
    "all(v > 1 for v in k if v > 0)", "any(v > 1 for v in o.z)", "kind(n) == 'number'",
    "kind(o) == 'object'", "kind(l) == 'array'", "any(any(w == v for w in k) for v in o.z)",
    "all(len(x) > 1 for x in l)",
]


# --------------------------------------------------------------------------- pinned edge cases


def _one(tmp: Path, rule: str, rows_sql: str) -> tuple[str, Any]:
    """Classify a Parquet file made by ``rows_sql`` with Python (on its rows) and DuckDB."""
    taxonomy = _taxonomy(tmp, "true", [rule])
    parquet = tmp / "edge.parquet"
    duckdb.connect().execute(f"COPY ({rows_sql}) TO '{parquet}' (FORMAT parquet)")
    spec = ReadSpec()
    python = _outcome(lambda: _parquet_python_counts(taxonomy, parquet, spec)["counts"])
    engine = _outcome(lambda: _engine_counts(taxonomy, parquet, spec)["counts"])
    assert engine == python or (python[0] == "error" and engine[0] == "error"), (python, engine)
    return engine


@pytest.mark.slow
@pytest.mark.parametrize(("rule", "rows", "expected"), [
    ("f == f", "SELECT 'a' AS id, 'nan'::DOUBLE AS f", 0),  # NaN is not equal to itself
    ("f != 0", "SELECT 'a' AS id, 'nan'::DOUBLE AS f", 1),  # but it is truthy
    ("f", "SELECT 'a' AS id, '-0.0'::DOUBLE AS f", 0),  # -0.0 is falsy
    ("f == 0", "SELECT 'a' AS id, '-0.0'::DOUBLE AS f", 1),
    ("len(l) == 0", "SELECT 'a' AS id, []::VARCHAR[] AS l", 1),  # empty list
    ("len(l) == 0", "SELECT 'a' AS id, NULL::VARCHAR[] AS l", 1),  # len(null) is 0
    ("not l", "SELECT 'a' AS id, []::VARCHAR[] AS l", 1),
    ("'x' in l", "SELECT 'a' AS id, NULL::VARCHAR[] AS l", 0),  # x in null is false
    ("None in l", "SELECT 'a' AS id, ['x', NULL]::VARCHAR[] AS l", 1),
    ("l[-1] == 'y'", "SELECT 'a' AS id, ['x', 'y']::VARCHAR[] AS l", 1),
    ("l[5] is None", "SELECT 'a' AS id, ['x']::VARCHAR[] AS l", 1),
    ("l == ['x', None]", "SELECT 'a' AS id, ['x', NULL]::VARCHAR[] AS l", 1),
    ("n / 0 is None", "SELECT 'a' AS id, 3 AS n", 1),  # / 0 is null
    ("n / 2 == 1.5", "SELECT 'a' AS id, 3 AS n", 1),  # true division
    ("s == 1", "SELECT 'a' AS id, '1' AS s", 0),  # a string is never a number
    ("n == True", "SELECT 'a' AS id, 1 AS n", 1),  # True == 1, as in Python
    ("s", "SELECT 'a' AS id, '' AS s", 0),  # the empty string is falsy
    ("s < 'b'", "SELECT 'a' AS id, NULL::VARCHAR AS s", 0),  # ordering with null is false
    ("has(s)", "SELECT 'a' AS id, NULL::VARCHAR AS s", 0),  # a null column is an absent field
    ("has(o.x)", "SELECT 'a' AS id, {'x': 1, 'y': NULL} AS o", 1),
    ("has(o.y)", "SELECT 'a' AS id, {'x': 1, 'y': NULL::VARCHAR} AS o", 1),  # a struct key
    ("has(o.y)", "SELECT 'a' AS id, NULL::STRUCT(y VARCHAR) AS o", 0),
    ("len(s) == 2", "SELECT 'a' AS id, 'é👍' AS s", 1),  # code points, as Python
    ("m.k == 1", "SELECT 'a' AS id, MAP {'k': 1} AS m", 1),  # maps by key
    ("'k' in m", "SELECT 'a' AS id, MAP {'k': 1} AS m", 1),
    ("m.q is None", "SELECT 'a' AS id, MAP {'k': 1} AS m", 1),
    ("any(v == 1 for v in values(m))", "SELECT 'a' AS id, MAP {'k': 1, 'j': 2} AS m", 1),
    ("all(key < 'k' for key in m)", "SELECT 'a' AS id, MAP {'k': 1, 'j': 2} AS m", 0),
    ("any(key == 'y' for key in o)", "SELECT 'a' AS id, {'x': 1, 'y': NULL} AS o", 1),
    ("all(key == 'x' for key in o)", "SELECT 'a' AS id, NULL::STRUCT(x INT) AS o", 1),
    ("any(x > 1 for x in values(o))", "SELECT 'a' AS id, {'x': 1, 'y': 3} AS o", 1),
    ("any(l)", "SELECT 'a' AS id, []::INT[] AS l", 0),  # any over nothing is false
    ("all(x > 5 for x in l)", "SELECT 'a' AS id, NULL::INT[] AS l", 1),  # all of nothing
    ("any(has(x.a) for x in l)", "SELECT 'a' AS id, [{'a': 1}, NULL] AS l", 1),
    ("all(has(x.a) for x in l)", "SELECT 'a' AS id, [{'a': 1}, NULL] AS l", 0),
    ("kind(s) == 'null'", "SELECT 'a' AS id, NULL::VARCHAR AS s", 1),
])
def test_edge_case_counts_match_python(tmp_path: Path, rule: str, rows: str,
                                       expected: int) -> None:
    outcome = _one(tmp_path, rule, rows)
    assert outcome == ("ok", {"r0": expected, "other": 1 - expected})


def test_lower_of_non_ascii_text_stops_the_query_naming_the_rule(tmp_path: Path) -> None:
    """Python lowers 'ß' by Unicode's full rules, DuckDB by its own: an error, not a count."""
    taxonomy = _taxonomy(tmp_path, "true", ["lower(s) == 'straße'"])
    parquet = tmp_path / "edge.parquet"
    duckdb.connect().execute(f"COPY (SELECT 'a' AS id, 'STRAẞE' AS s) TO '{parquet}'")
    with pytest.raises(FailgateError) as caught:
        load_duckdb(ReportFile(parquet, "edge"), taxonomy, ReadSpec())
    assert "lower() on non-ASCII text" in str(caught.value)


@pytest.mark.slow
@pytest.mark.parametrize(("rule", "reason"), [
    ("l == l", "'==' between"),
    ("matches(s, '\\\\d+')", "regular expression"),
    ("matches(s, 'a$')", "regular expression"),
    ("len(n) > 0", "len() of a integer"),
    ("s < 1", "cannot order"),
])
def test_rules_without_an_exact_sql_form_are_refused_by_name(
        tmp_path: Path, rule: str, reason: str) -> None:
    taxonomy = _taxonomy(tmp_path, "true", [rule])
    parquet = tmp_path / "edge.parquet"
    duckdb.connect().execute(f"COPY (SELECT 'a' AS id, 1 AS n, 's' AS s, ['x'] AS l) "
                             f"TO '{parquet}' (FORMAT parquet)")
    with pytest.raises(FailgateError) as caught:
        load_duckdb(ReportFile(parquet, "edge"), taxonomy, ReadSpec())
    assert "rule 'r0'" in str(caught.value)
    assert reason in str(caught.value)
    assert "no exact SQL form" in str(caught.value)


def test_quantifiers_over_json_objects_keys_are_refused_by_name(tmp_path: Path) -> None:
    """A JSON object's keys differ per case, which a struct column cannot say."""
    taxonomy = _taxonomy(tmp_path, "true", ["any(key == 'x' for key in o)"])
    path = tmp_path / "cases.jsonl"
    _write_jsonl(path, _cases([{"o": {"x": 1}}]))
    with pytest.raises(FailgateError) as caught:
        load_duckdb(ReportFile(path, "r"), taxonomy, ReadSpec())
    assert "rule 'r0'" in str(caught.value)
    assert "any() over a struct" in str(caught.value)


def test_a_required_field_missing_from_a_case_is_an_error_as_in_python(tmp_path: Path) -> None:
    path = tmp_path / "taxonomy.yaml"
    path.write_text("name: req\nid_field: id\nrequired: [o.y]\nfailed: 'true'\n"
                    "categories:\n  - {name: other}\n", encoding="utf-8")
    taxonomy = load_taxonomy_file(path)
    jsonl = tmp_path / "cases.jsonl"
    _write_jsonl(jsonl, _cases([{"o": {"y": None}}, {"o": {"x": 1}}]))
    python = _outcome(lambda: _python_counts(taxonomy, jsonl, ReadSpec()))
    engine = _outcome(lambda: _engine_counts(taxonomy, jsonl, ReadSpec()))
    assert python[0] == engine[0] == "error"
    assert "no 'o.y', which taxonomy req requires" in engine[1]
