"""The report reader against ``json``: same cases, ids and counts on every valid report,
an error with a place on every invalid one, wherever in the file the problem sits.

Reports are generated with optional keys, random key order, escapes and non-ASCII
text, nesting, numbers of every size and several whitespace styles; the oracle is
``json.loads`` plus the independent reference classifier. Both decoders are tried:
pydantic-core (the default install) and msgspec (the ``fast`` extra).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import RAG
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rag_reference import reference_classify

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports import jsondecode, read, sink
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.model import Report, ReportFile, SkippedFile
from pytest_failgate.core.reports.sink import SAMPLE

DECODERS = {"default": jsondecode._Default(), "fast": jsondecode.decoder()}
# Each decoder with cases taken one at a time (small reports) and by the generated loop
# (large ones): ``read.load_report`` must read the same through all four.
READERS = [*DECODERS, "default, loop", "fast, loop"]

text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
scalar = st.one_of(st.none(), st.booleans(), st.integers(-(10**30), 10**30),
                   st.floats(allow_nan=False, allow_infinity=False), text)
junk = st.recursive(scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)), max_leaves=4)
doc_ids = st.lists(st.one_of(st.sampled_from(["d1", "d2", "d3"]), st.integers(0, 3)),
                   max_size=3)
# The fields the rag rules read, each present in some cases only, with any allowed value.
RULE_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "answerable": st.booleans(),
    "abstained": st.one_of(st.none(), st.booleans()),
    "accuracy": st.one_of(st.none(), st.sampled_from([0.0, 1.0, 0.5]), st.floats()),
    "term_match": st.one_of(st.none(), st.booleans()),
    "expected_doc_ids": st.one_of(st.none(), doc_ids),
    "evidence_doc_ids": st.one_of(st.none(), doc_ids),
    "query_type": st.one_of(st.none(), st.sampled_from(["comparison", "multi_hop", "x"]), text),
    "attempt_latency": st.one_of(st.none(), st.lists(st.floats(0, 10), max_size=3)),
    "claim_citation_alignment": st.one_of(st.none(), st.floats(0, 1)),
}


@st.composite
def a_case(draw: st.DrawFn, index: int) -> dict[str, Any]:
    # accuracy always: a report none of whose cases has a field the rules read is refused
    pairs: list[tuple[str, Any]] = [("id", f"{draw(text)}#{index}"),
                                    ("accuracy", draw(RULE_FIELDS["accuracy"]))]
    for name, values in RULE_FIELDS.items():
        if name != "accuracy" and draw(st.booleans()):
            pairs.append((name, draw(values)))
    pairs += draw(st.lists(st.tuples(st.sampled_from(["answer", "ctx", "meta", "é"]), junk),
                           max_size=3))
    return dict(draw(st.permutations(pairs)))


@st.composite
def a_report(draw: st.DrawFn, max_cases: int = 5) -> bytes:
    n = draw(st.integers(1, max_cases))
    cases = [draw(a_case(i)) for i in range(n)]
    shape = draw(st.sampled_from(["summary", "array"]))
    document: Any = cases if shape == "array" else {"mode": "rag", "case_results": cases,
                                                    "num_predictions": n}
    indent = draw(st.sampled_from([None, 0, 2, "\t"]))
    separators = draw(st.sampled_from([None, (",", ":"), (" , ", " : ")]))
    dumped = json.dumps(document, indent=indent, separators=separators,
                        ensure_ascii=draw(st.booleans()))
    return dumped.encode("utf-8")


UNDECIDED: dict[str, list[str]] = {"refused": ["a field deciding failed is absent"]}


def undecidable(cases: list[Any]) -> bool:
    """Whether a field rag needs to decide one of the first cases is absent from all.

    The rag classifier: an answerable case (absent: answerable) fails on its accuracy; an
    unanswerable one on abstained, and on evidence_doc_ids only when it abstained.
    """
    needed = set()
    for case in cases[:SAMPLE]:
        if not isinstance(case, dict):
            return False
        if case.get("answerable", True):
            needed.add("accuracy")
        else:
            needed.add("abstained")
            if case.get("abstained"):
                needed.add("evidence_doc_ids")
    return any(all(name not in case for case in cases) for name in needed)


def expected(data: bytes) -> dict[str, list[str]] | None:
    """``json.loads`` plus the reference classifier: each category's case ids in order.

    ``None`` when the document is not a report; ``ValueError`` when it is not JSON;
    ``UNDECIDED`` when rag cannot tell its failed cases (a field it needs is absent).
    """
    document = json.loads(data.decode("utf-8"))
    if isinstance(document, dict):
        document = document.get("case_results")
    if not isinstance(document, list):
        return None
    if undecidable(document):
        return UNDECIDED
    found: dict[str, list[str]] = {name: [] for name in RAG.category_names}
    for position, case in enumerate(document, start=1):
        category = reference_classify(case)
        if category is not None:
            ids = [case[k] for k in RAG.id_fields if case.get(k) is not None]
            found[category].append(str(ids[0]) if ids else f"#{position}")
    return found


def loaded(path: Path, data: bytes, decoder: str, monkeypatch: pytest.MonkeyPatch
           ) -> Report | SkippedFile:
    path.write_bytes(data)
    monkeypatch.setattr(read, "decoder", lambda: DECODERS[decoder.split(",")[0]])
    monkeypatch.setattr(sink, "SCAN_AFTER", 0 if decoder.endswith("loop") else 10**9)
    return read.load_report(ReportFile(path, "r"), TaxonomyChoice(RAG))


def categories(report: Report | SkippedFile) -> dict[str, list[str]]:
    assert isinstance(report, Report)
    return {name: report.case_ids(name) for name in RAG.category_names}


SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@pytest.mark.parametrize("decoder", READERS)
@SETTINGS
@given(data=a_report())
def test_a_valid_report_reads_as_json_reads_it(
    decoder: str, data: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert read_as(tmp_path, data, decoder, monkeypatch) == expected(data)


@pytest.mark.slow
@pytest.mark.parametrize("decoder", READERS)
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=a_report(max_cases=60))
def test_many_valid_reports_read_as_json_reads_them(
    decoder: str, data: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert read_as(tmp_path, data, decoder, monkeypatch) == expected(data)


def read_as(tmp_path: Path, data: bytes, decoder: str, monkeypatch: pytest.MonkeyPatch
            ) -> dict[str, list[str]]:
    """The categories failgate reads, or ``UNDECIDED`` when it refuses for that reason."""
    try:
        report = loaded(tmp_path / "r.json", data, decoder, monkeypatch)
    except FailgateError as error:
        if "which taxonomy rag reads to decide whether a case failed" in error.message:
            return UNDECIDED
        raise
    return categories(report)


# The reader's stated limits: valid JSON it refuses with a clear message.
LIMITS = ("lone surrogate", "200 levels", "4,300 digits")

# Edits that make (almost always) invalid JSON; json decides which ones do.
BREAKS = [b",", b"}", b"]", b"tru", b"\x01", b"\xff", b"01", b'"', b"\\", b":", b"[", b"-"]


def check_break(data: bytes, where: float, edit: bytes, tmp_path: Path, decoder: str,
                monkeypatch: pytest.MonkeyPatch) -> None:
    at = int(len(data) * where)
    broken = data[:at] + edit + data[at:]
    valid = True
    try:
        want = expected(broken)
    except ValueError:  # UnicodeDecodeError and JSONDecodeError included
        valid, want = False, None
    refused: FailgateError | None = None
    try:
        report = loaded(tmp_path / "r.json", broken, decoder, monkeypatch)
    except FailgateError as error:
        refused = error
    if refused is not None:
        assert refused.path is not None
        if valid:  # json reads it: only a check beyond JSON, or a stated limit, may refuse it
            limit = any(word in refused.message for word in LIMITS)
            assert limit or not refused.message.startswith("invalid JSON"), refused
        else:
            assert refused.line is not None, refused
        return
    assert valid, f"accepted what json refuses: {broken[max(0, at - 20):at + 20]!r}"
    if want is None:
        assert isinstance(report, SkippedFile)
    else:
        assert categories(report) == want


@pytest.mark.parametrize("decoder", READERS)
@SETTINGS
@given(data=a_report(), where=st.floats(0, 1), edit=st.sampled_from(BREAKS))
def test_a_broken_report_is_refused_wherever_the_break_is(
    decoder: str, data: bytes, where: float, edit: bytes, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check_break(data, where, edit, tmp_path, decoder, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("decoder", READERS)
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=a_report(max_cases=80), where=st.floats(0.6, 1), edit=st.sampled_from(BREAKS))
def test_a_break_late_in_a_long_report_is_refused(
    decoder: str, data: bytes, where: float, edit: bytes, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check_break(data, where, edit, tmp_path, decoder, monkeypatch)


@pytest.mark.parametrize("decoder", READERS)
def test_json_extensions_json_accepts_are_read_as_json_reads_them(
    decoder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = (b'{"case_results": [{"id": "a", "accuracy": NaN}, {"id": "b", "accuracy": '
            b'-Infinity, "answer": 1e999}, {"id": "c", "accuracy": 1.0, "accuracy": 0.0}]}')
    report = loaded(tmp_path / "r.json", data, decoder, monkeypatch)
    assert categories(report) == expected(data)
    assert categories(report)["unknown"] == ["a", "b", "c"]  # the last duplicate key wins


@pytest.mark.parametrize("decoder", READERS)
def test_escaped_and_raw_text_read_the_same(
    decoder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = {"id": "질문-1 \u00e9\U0001f600 \"q\" \\", "accuracy": 0.0, "query_type": "비교"}
    for ensure_ascii in (True, False):
        data = json.dumps({"case_results": [case]}, ensure_ascii=ensure_ascii).encode()
        report = loaded(tmp_path / "r.json", data, decoder, monkeypatch)
        assert categories(report)["unknown"] == [case["id"]]


# ------------------------------------------------------------- the UTF-8 check, in chunks


def test_the_utf8_check_of_raw_text_holds_little_memory() -> None:
    """8 MB of emoji checked a small chunk at a time: the strings it decodes stay small
    (16 MB chunks made 32-64 MB strings, mapped and unmapped from the OS each time)."""
    import tracemalloc

    data = ("😀" * (2 << 20)).encode()
    broken = data + b"\xff"
    tracemalloc.start()
    try:
        assert jsondecode._utf8(data)
        assert not jsondecode._utf8(broken)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.parametrize("shift", range(5))
@pytest.mark.parametrize("char", ["é", "한", "😀"])
def test_the_utf8_check_agrees_with_decode_across_chunk_boundaries(shift: int,
                                                                   char: str) -> None:
    """A character split by a chunk boundary at each of its bytes, one cut short at the
    end, a stray continuation byte or an invalid byte just past a boundary."""
    encoded = char.encode()
    for chunks in (1, 3):
        start = b"a" * (chunks * jsondecode._CHUNK - shift)
        samples = [start + encoded * 3, start + encoded + encoded[:-1],
                   start + b"\x80" + encoded, start + b"\xff", start + encoded + b"\xc0\xaf",
                   start + encoded * 2 + b"b" * jsondecode._CHUNK + encoded[:1]]
        for data in samples:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                valid = False
            else:
                valid = True
            assert jsondecode._utf8(data) is valid, (chunks, shift, data[-8:])


@pytest.mark.parametrize("decoder", READERS)
def test_a_bad_byte_far_into_raw_utf8_text_names_its_line(
    decoder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Raw Korean and emoji (not ``\\u`` escapes) over several chunks; one byte made
    invalid past the third chunk: the error names its line and column, and the control
    (the same report unbroken) reads every case."""
    cases = [{"id": f"c{i}", "accuracy": 1.0, "evidence_doc_ids": ["d1"],
              "expected_doc_ids": ["d1"], "answer": "한국어 답변 😀 " * 40} for i in range(120)]
    data = json.dumps({"case_results": cases}, ensure_ascii=False, indent=1).encode()
    assert len(data) > 3 * jsondecode._CHUNK
    report = loaded(tmp_path / "r.json", data, decoder, monkeypatch)
    assert isinstance(report, Report)
    assert report.n_cases == 120
    where = data.index("답".encode(), 3 * jsondecode._CHUNK + 7)
    broken = data[:where] + b"\xff" + data[where + 1:]
    line = data[:where].count(b"\n") + 1
    column = len(data[data.rindex(b"\n", 0, where) + 1:where].decode()) + 1
    with pytest.raises(FailgateError) as caught:
        loaded(tmp_path / "r.json", broken, decoder, monkeypatch)
    assert "not UTF-8" in caught.value.message
    assert (caught.value.line, caught.value.col) == (line, column)


plain_key = st.text(st.characters(blacklist_categories=["Cs", "Cc"],
                                  blacklist_characters='"\\'), max_size=8)


@SETTINGS
@given(document=st.dictionaries(plain_key, junk, max_size=6), cut=st.floats(0, 1),
       indent=st.sampled_from([None, 1]))
def test_top_level_keys_are_the_ones_json_reads_at_the_top(
        document: dict[str, Any], cut: float, indent: int | None) -> None:
    """The claims' structural scan against ``json``: the whole object gives exactly its
    top-level keys (nested keys and strings that look like keys never), each with its
    value's first byte; any prefix gives a subset and says it is incomplete."""
    from pytest_failgate.core.reports.jsonfile import top_level

    data = json.dumps(document, ensure_ascii=False, indent=indent).encode()
    found = top_level(data)
    assert found is not None
    keys, whole = found
    assert whole
    assert keys == {key.encode(): json.dumps(value, ensure_ascii=False).encode()[0]
                    for key, value in document.items()}
    prefix = data[:int(len(data) * cut)]
    partial = top_level(prefix)
    if prefix.strip():
        assert partial is not None
        assert set(partial[0]) <= set(keys)
        assert not partial[1] or prefix.rstrip() == data
