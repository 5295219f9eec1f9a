"""The generated classifying loop against ``CaseSink.add``, the reference it stands in for.

``add`` takes one case at a time through general code; ``add_all`` runs the loop
``reports.scan`` writes for a taxonomy, which must give the same counts, ids, missing
fields, flags, slices, metrics and examples, and the same error (message and case) on
every input: cases with wrong kinds, mixed lists, absent and null fields, ids of every
kind (duplicates included), nested objects. Cases arrive as dicts (every reader) or as
msgspec structs (the ``fast`` extra). The loop hands ``add`` whatever it does not take
plainly; these tests show that this never changes an outcome.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers import BUILTIN, RAG
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_failgate.core.base.yamlsource import load_yaml
from pytest_failgate.core.reports import jsondecode, scan, sink
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.model import MetricSpec, Report, ReportFile
from pytest_failgate.core.reports.read import ReadSpec, load_report
from pytest_failgate.core.reports.sink import CaseProblem, CaseSink
from pytest_failgate.core.taxonomy import Taxonomy
from pytest_failgate.core.taxonomy.expr import compile_expr
from pytest_failgate.core.taxonomy.files import load_taxonomy_file, taxonomy_from

DATA = Path(__file__).resolve().parents[2] / "data"
FAST = jsondecode._Fast(msgspec)
SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
MANY = settings(SETTINGS, max_examples=300)
PLAIN = ReadSpec()  # one spec per test, as in a run: the loop is built once for it

FEATURES = taxonomy_from(load_yaml(Path("features.yaml"), text="""
name: features
id_fields: [id, meta.qid]
required: [score]
defaults: {answerable: true, tags: [x], limits: {low: 0.1}}
types:
  answerable: bool
  score: number | null
  tags: list[string] | null
  meta: object | null
  steps: list | null
failed: "score is None or score < 0.5 or not answerable"
categories:
  - {name: no_score, when: "score is None"}
  - {name: nested, when: "meta.kind == 'x' and has(meta.sub)"}
  - {name: tagged, when: "'b' in tags and has(extra)"}
  - {name: quantified, when: "any(s.ok == false for s in steps if has(s.ok))"}
  - {name: chained, when: "0.2 <= score < 0.3"}
  - {name: pattern, when: 'matches(label, "^err-[0-9]+$")'}
  - {name: sets, when: "set(tags) - {'a'} and kind(meta) == 'object'"}
  - {name: low, when: "score < limits.low"}
  - {name: switched_off, when: "true", enabled: false}
  - {name: other}
caveats:
  - {name: long, when: "len(steps) > 2"}
  - {name: flagged, when: "meta.flag"}
metrics:
  - {name: score, value: "score if answerable else null"}
substantive: answerable
"""), ())

text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=6)
scalar = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20),
                   st.floats(allow_nan=False, allow_infinity=False), text)
anything = st.recursive(scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)), max_leaves=6)
an_id = st.one_of(st.sampled_from(["a", "b", "é", "#2"]), st.integers(-2, 3), text,
                  st.none(), st.booleans(), st.lists(st.integers(), max_size=1))


def usual_or_not(usual: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly a value of the declared kind; now and then anything at all."""
    return st.one_of(usual, usual, usual, anything)


RAG_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "answerable": usual_or_not(st.booleans()),
    "abstained": usual_or_not(st.one_of(st.none(), st.booleans())),
    "accuracy": usual_or_not(st.one_of(st.none(), st.sampled_from([0.0, 1.0, 1, 0.5]))),
    "term_match": usual_or_not(st.one_of(st.none(), st.booleans())),
    "expected_doc_ids": usual_or_not(st.lists(st.one_of(st.sampled_from(["d1", "d2"]),
                                                        st.integers(0, 2)), max_size=3)),
    "evidence_doc_ids": usual_or_not(st.lists(st.one_of(st.sampled_from(["d1", "d2"]),
                                                        st.integers(0, 2)), max_size=3)),
    "query_type": usual_or_not(st.sampled_from(["comparison", "multi_hop", "single"])),
    "attempt_latency": usual_or_not(st.lists(st.floats(0, 9), max_size=3)),
    "claim_citation_alignment": usual_or_not(st.one_of(st.none(), st.floats(0, 1))),
}
FEATURE_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "answerable": usual_or_not(st.booleans()),
    "score": usual_or_not(st.one_of(st.none(), st.floats(0, 1), st.integers(0, 1))),
    "tags": usual_or_not(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3)),
    "meta": usual_or_not(st.fixed_dictionaries({}, optional={
        "kind": st.sampled_from(["x", "y"]), "sub": anything, "qid": an_id,
        "flag": st.booleans()})),
    "steps": usual_or_not(st.lists(st.fixed_dictionaries(
        {}, optional={"ok": st.one_of(st.booleans(), st.none())}), max_size=4)),
    "extra": anything,
    "label": st.one_of(st.sampled_from(["err-12", "err-x", "ok"]), anything),
}


@st.composite
def cases_of(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]],
             always: tuple[str, ...]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 12))):
        pairs = [(name, draw(values)) for name, values in fields.items()
                 if name in always or draw(st.integers(0, 3)) > 0]
        for key in ("id", "case_id", "question_id", "sample_id"):
            if draw(st.integers(0, 3)) == 0:
                pairs.append((key, draw(an_id)))
        if draw(st.integers(0, 3)) == 0:
            pairs.append(("id", f"u{len(found)}"))  # most cases have an id of their own
        pairs += draw(st.lists(st.tuples(st.sampled_from(["answer", "ctx"]), anything),
                               max_size=2))
        found.append(dict(draw(st.permutations(pairs))))
    return found


def outcome(taxonomy: Taxonomy, spec: ReadSpec, cases: list[dict[str, Any]], how: str,
            monkeypatch: pytest.MonkeyPatch) -> Any:
    """What reading ``cases`` gives: the error (message, case, field) or every number kept."""
    target = CaseSink(ReportFile(Path("r.json"), "r"), taxonomy, spec)
    monkeypatch.setattr(sink, "SCAN_AFTER", 0)
    try:
        if how == "add":
            for case in cases:
                target.add(case)
        elif how == "dicts":
            target.add_all(cases)
        else:  # structs decoded by msgspec from the cases' JSON, as the fast reader does
            _, array, _, form = FAST._decoders(target.fields, ())
            structs = array.decode(json.dumps(cases).encode())
            target.add_all(structs, form.struct, form.missing, form.to_mapping)
    except CaseProblem as exc:
        return ("error", str(exc), exc.position, exc.field)
    tally = target.tallier.result()
    shown = sorted(set(target.fields) & {f.name for f in taxonomy.fields})
    return {
        "n": tally.n_cases, "counts": tally.counts, "ids": tally.ids,
        "examined": tally.examined, "missing": tally.missing, "absent": tally.absent,
        "flags": tally.flags, "flagged": tally.flagged,
        "slices": {name: {value: (s.n_cases, s.ids) for value, s in values.items()}
                   for name, values in tally.slices.items()},
        "metrics": {name: (m.n_values, m.total, m.vacuous) for name, m in tally.metrics.items()},
        "examples": {category: [(case_id, {f: view.get(f) for f in shown})
                                for case_id, view in examples]
                     for category, examples in tally.examples.items()},
        "id_keys": list(target._seen), "case_metrics": target.case_metrics,
        "sample": [{f: view.get(f) for f in shown} for view in target._sample],
    }


def same_everywhere(taxonomy: Taxonomy, spec: ReadSpec, cases: list[dict[str, Any]],
                    monkeypatch: pytest.MonkeyPatch) -> None:
    reference = outcome(taxonomy, spec, cases, "add", monkeypatch)
    assert outcome(taxonomy, spec, cases, "dicts", monkeypatch) == reference
    assert outcome(taxonomy, spec, cases, "structs", monkeypatch) == reference


def a_spec(taxonomy: Taxonomy) -> ReadSpec:
    """Populations, slices and a metric, as a ceilings file would ask for them."""
    failed = taxonomy.failed.text
    assert failed is not None
    substantive = taxonomy.substantive
    return ReadSpec(
        measures={"answerable": compile_expr("answerable"), failed: compile_expr(failed)},
        slicers={"query_type": compile_expr("query_type"), "meta.kind": compile_expr(
            "meta.kind")},
        metrics={"accuracy": MetricSpec(compile_expr("accuracy"),
                                        substantive.predicate if substantive else None)})


MEASURED = a_spec(RAG)


@pytest.mark.slow
@SETTINGS
@given(cases=cases_of(RAG_FIELDS, ()))
def test_the_loop_reads_rag_cases_as_add_does(cases: list[dict[str, Any]],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    same_everywhere(RAG, PLAIN, cases, monkeypatch)


@pytest.mark.slow
@SETTINGS
@given(cases=cases_of(RAG_FIELDS, ("accuracy",)))
def test_the_loop_measures_populations_slices_and_metrics_as_add_does(
        cases: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    same_everywhere(RAG, MEASURED, cases, monkeypatch)


@pytest.mark.slow
@SETTINGS
@given(cases=cases_of(FEATURE_FIELDS, ()))
def test_the_loop_takes_every_part_of_the_rule_language_as_add_does(
        cases: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Nested paths and has(), quantifiers, chains, matches(), sets, a default that is an
    object, required fields, caveats, a dotted id, taxonomy metrics."""
    same_everywhere(FEATURES, PLAIN, cases, monkeypatch)


@pytest.mark.slow
@MANY
@given(rag=cases_of(RAG_FIELDS, ("accuracy",)), features=cases_of(FEATURE_FIELDS, ()))
def test_many_more_cases_read_by_the_loop_as_by_add(
        rag: list[dict[str, Any]], features: list[dict[str, Any]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    same_everywhere(RAG, MEASURED, rag, monkeypatch)
    same_everywhere(FEATURES, PLAIN, features, monkeypatch)


def test_each_rag_category_and_error_is_the_loops_as_it_is_adds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import CATEGORY_CASES, case

    cases = [case(f"c{i}", **fields) for i, fields in enumerate(CATEGORY_CASES.values())]
    cases += [{**case(), "id": 7}, case(), case(), {"accuracy": 0.0, "id": 8}]
    same_everywhere(RAG, ReadSpec(), cases, monkeypatch)
    loop = outcome(RAG, ReadSpec(), cases, "dicts", monkeypatch)
    assert loop["counts"] == {**dict.fromkeys(RAG.category_names, 1), "context_dilution": 0,
                              "unknown": 2}
    assert loop["id_keys"][-4:] == ["7", "#8", "#9", "8"]  # an integer id is its digits
    wrong: list[tuple[list[Any], str]] = [
            ([case("a"), case("a")], "case #2: duplicate case id 'a' (also case #1)"),
            ([case("a"), {**case(), "id": True}], "case #2: the case id 'id' is bool"),
            ([case("a", answerable="yes")], "case #1: 'answerable' is \"yes\""),
            ([case("a", expected_doc_ids=["d", None])], "case #1: 'expected_doc_ids' item 1"),
            ([case("a"), [1]], "case #2: is array, not an object")]
    for bad, message in wrong:
        for how in ("add", "dicts"):
            found = outcome(RAG, ReadSpec(), bad, how, monkeypatch)
            assert found[0] == "error"
            assert found[1].startswith(message), found


@pytest.mark.slow
def test_a_report_of_every_built_in_format_reads_the_same_through_the_loop(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The real files in tests/data, each read with its format's own taxonomy."""
    files = [p for p in sorted(DATA.rglob("*")) if p.suffix in (".json", ".jsonl", ".eval",
                                                                  ".csv", ".jsonld")]
    from pytest_failgate.core.reports.builtin import builtin_readers

    spec = ReadSpec(readers=builtin_readers())
    read_cases = 0
    for path in files:
        results: list[Any] = []
        for after in (10**9, 0):
            monkeypatch.setattr(sink, "SCAN_AFTER", after)
            try:
                found = load_report(ReportFile(path, path.stem), TaxonomyChoice(None, {},
                                                                               BUILTIN), spec)
            except Exception as exc:  # the same error either way
                results.append(repr(exc))
                continue
            if isinstance(found, Report) and found.tally is not None:
                read_cases += found.n_cases or 0
                tally = found.tally
                results.append((found.counts, tally.ids, tally.missing, tally.flags,
                                found.id_keys, found.case_metrics))
            else:
                results.append(repr(found))
        assert results[0] == results[1], path
    assert read_cases > 1000  # the files hold cases, and they were read


def test_the_loop_takes_over_after_the_first_cases(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A large JSON Lines report: the first cases one at a time, the rest in the loop (a
    duplicate id across the two is still found, with its line)."""
    monkeypatch.setattr(sink, "SCAN_AFTER", 3)
    built: list[Any] = []
    original = scan.build_scan

    def counting(*args: Any) -> Any:
        found = original(*args)
        built.append(found)
        return found

    monkeypatch.setattr(sink, "build_scan", counting)
    sink._SCANS.clear()
    lines = [{"id": f"c{i}", "accuracy": 0.0 if i % 2 else 1.0} for i in range(10)]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in lines), encoding="utf-8")
    report = load_report(ReportFile(path, "r"), TaxonomyChoice(RAG))
    assert isinstance(report, Report)
    assert report.counts["unknown"] == 5
    assert len(built) == 1
    assert built[0] is not None
    path.write_text("".join(json.dumps(c) + "\n" for c in [*lines, lines[1]]), encoding="utf-8")
    with pytest.raises(Exception, match="duplicate case id 'c1'") as refused:
        load_report(ReportFile(path, "r"), TaxonomyChoice(RAG))
    assert getattr(refused.value, "line", None) == 11


def test_user_text_never_becomes_code_in_the_loop(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Field names, defaults and category names that look like Python stay values: the
    loop's compiled code names none of them, and it counts as ``add`` does."""
    taxonomy_file = tmp_path / "t.yaml"
    taxonomy_file.write_text("""
name: hostile
id_field: "__import__('os')"
defaults: {f0: "__builtins__"}
types: {f0: string, _l_m: number, "a b": bool}
failed: 'f0 != "ok"'
categories:
  - {name: __class__, when: 'f0 == "__builtins__"'}
  - {name: other}
""", encoding="utf-8")
    taxonomy = load_taxonomy_file(taxonomy_file)
    cases: list[dict[str, Any]] = [
        {"f0": "ok"}, {}, {"f0": "x", "__import__('os')": "id-1", "_l_m": 5},
        {"a b": True}]
    same_everywhere(taxonomy, ReadSpec(), [*cases, {"_l_m": "x"}], monkeypatch)
    same_everywhere(taxonomy, ReadSpec(), cases, monkeypatch)
    target = CaseSink(ReportFile(Path("r.json"), "r"), taxonomy, ReadSpec())
    built = scan.build_scan(taxonomy, ReadSpec(), target.fields, target.tallier.flag_names,
                            None, scan.MISSING)
    assert built is not None
    code = built.function.__code__
    names = {*code.co_names, *code.co_varnames}
    assert not any("__import__" in name or " " in name for name in names)
    assert outcome(taxonomy, ReadSpec(), cases, "dicts", monkeypatch)["id_keys"] == [
        "#1", "#2", "id-1", "#4"]
    assert built.function.__globals__["__builtins__"] == {}


def test_a_rule_in_python_is_read_by_add_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_failgate.core.taxonomy import Rule

    taxonomy = Taxonomy("python", "", (), Rule("failed", lambda c: True, (), "always"),
                        (), "other")
    target = CaseSink(ReportFile(Path("r.json"), "r"), taxonomy, ReadSpec())
    assert scan.build_scan(taxonomy, ReadSpec(), target.fields, target.tallier.flag_names,
                           None, scan.MISSING) is None
    assert scan.build_scan(RAG, ReadSpec(explain=True), target.fields, [], None,
                           scan.MISSING) is None


def test_the_loops_check_refuses_what_the_module_does_not_emit() -> None:
    namespace = {"_g_ok": 1}
    scan._check(ast.parse("def scan(_l_a):\n    _l_b = _g_ok\n"), namespace)
    for bad in ("def scan(_l_a):\n    _l_a.__globals__\n", "def scan(_l_a):\n    open\n",
                "def scan(_l_a):\n    import os\n", "def scan(_l_a):\n    __builtins__\n"):
        with pytest.raises(AssertionError):
            scan._check(ast.parse(bad), {**namespace, "__builtins__": {}})


def classified(taxonomy: Taxonomy, cases: list[dict[str, Any]], how: str) -> Any:
    """Each case's id and category as ``add`` returns them (``add``) or as
    ``CaseSink.classify`` recovers them from the generated loop (``dicts``, ``structs``),
    and the error that stopped them (message, case, field), if one did."""
    target = CaseSink(ReportFile(Path("r.json"), "r"), taxonomy, ReadSpec())
    done: list[tuple[str, str | None]] = []
    try:
        if how == "add":
            for case in cases:
                done.append(target.add(case))
        elif how == "dicts":
            half = len(cases) // 2  # two calls: the second reads on from the first's end
            target.classify(cases[:half], done)
            target.classify(cases[half:], done)
        else:
            _, array, _, form = FAST._decoders(target.fields, ())
            structs = array.decode(json.dumps(cases).encode())
            target.classify(structs, done, form.struct, form.missing, form.to_mapping)
    except CaseProblem as exc:
        return done, (str(exc), exc.position, exc.field)
    return done, None


@pytest.mark.slow
@SETTINGS
@given(rag=cases_of(RAG_FIELDS, ()), features=cases_of(FEATURE_FIELDS, ()))
def test_classify_gives_each_case_what_add_returns(rag: list[dict[str, Any]],
                                                   features: list[dict[str, Any]]) -> None:
    for taxonomy, cases in ((RAG, rag), (FEATURES, features)):
        reference = classified(taxonomy, cases, "add")
        assert classified(taxonomy, cases, "dicts") == reference
        assert classified(taxonomy, cases, "structs") == reference


def test_classify_stops_at_the_case_refused_with_the_cases_before_it() -> None:
    from helpers import CATEGORY_CASES, case

    cases = [case(f"c{i}", **fields) for i, fields in enumerate(CATEGORY_CASES.values())]
    cases.append(case(f"c{len(cases)}"))  # one that passed
    done, error = classified(RAG, [*cases, case("c1"), case("z")], "dicts")
    refused = len(cases) + 1
    assert error == (f"case #{refused}: duplicate case id 'c1' (also case #2)", refused, None)
    assert [case_id for case_id, _ in done] == [f"c{i}" for i in range(len(cases))]
    assert [category for _, category in done] == [*CATEGORY_CASES, None]
    assert classified(RAG, cases, "dicts") == classified(RAG, cases, "add")
