"""A large ``.json`` report validated a piece of its case list at a time
(``jsonpieces``): the same cases, top-level fields and errors as the whole document's
decoding, a piece's tree the only one alive.

The pieces are shrunk to a few hundred bytes, so a report of a few hundred cases is cut
dozens of times, with the cuts' bytes (``}, {``) inside strings, nested lists of objects
in the cases (retrieved documents), compact and indented text, a second ``case_results``
key (the last one wins, as ``json`` says) and errors late in the document.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from helpers import RAG, cases_for

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports import jsondecode, jsonpieces, read
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.model import Report, ReportFile

FIELDS = ("id", "accuracy", "answer", "docs")
TOP = ("num_predictions", "config")


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Pieces of 512 bytes from documents of 1 KB, the default install's decoder; records
    whether each decode was cut."""
    monkeypatch.setattr(read, "decoder", jsondecode._Default)
    monkeypatch.setattr(jsonpieces, "PIECE", 512)
    monkeypatch.setattr(jsonpieces, "PIECES_FROM", 1024)
    used: list[bool] = []
    cut = jsonpieces.pieces

    def recording(*args: Any) -> Any:
        found = cut(*args)
        used.append(found is not None)
        return found

    monkeypatch.setattr(jsonpieces, "pieces", recording)
    return used


def _cases(n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [{"id": f"c{i}", "accuracy": rng.choice([0.0, 1.0, 0.5]),
             "answer": rng.choice(["}, {", '"}, {"', "\\", "답변 ✅", "x"]) * rng.randrange(20),
             "docs": [{"doc_id": f"d{j}", "text": "}, {" * j} for j in range(rng.randrange(4))],
             "extra": {"nested": [1, {"a": "},{"}]}} for i in range(n)]


def _whole(data: bytes) -> jsondecode.Document:
    """The document decoded whole (no pieces), the reference."""
    saved = jsonpieces.PIECES_FROM
    jsonpieces.PIECES_FROM = 1 << 62
    try:
        return jsondecode._Default().document(data, FIELDS, TOP)
    finally:
        jsonpieces.PIECES_FROM = saved


@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("shape", ["object", "array", "summary after", "cases first"])
def test_pieces_decode_what_the_whole_document_decodes(small_pieces: list[bool], shape: str,
                                                       indent: int | None) -> None:
    for seed in range(6):
        cases = _cases(150, seed)
        document: Any = {
            "object": {"config": {"case_results": 1}, "case_results": cases},
            "array": cases,
            "summary after": {"case_results": cases, "num_predictions": 150,
                              "config": {"model": "}, {"}},
            "cases first": {"case_results": cases},
        }[shape]
        data = json.dumps(document, indent=indent, ensure_ascii=seed % 2 == 0).encode()
        got = jsondecode._Default().document(data, FIELDS, TOP)
        want = _whole(data)
        assert (got.kind, got.top, got.cases) == (want.kind, want.top, want.cases)
        assert len(got.cases or ()) == 150
    assert all(small_pieces[::2]), "each of these documents was validated in pieces"


def test_a_second_case_results_key_wins_as_json_says(small_pieces: list[bool]) -> None:
    """The last of two ``case_results`` keys is the document's (``json``'s rule): cutting
    the first list would hand over the wrong cases, so that document is decoded whole."""
    first, second = _cases(100, 1), _cases(3, 2)
    for key in ("case_results", "case\\u005fresults"):
        data = (json.dumps({"case_results": first})[:-1]
                + f', "{key}": {json.dumps(second)}}}').encode()
        got = jsondecode._Default().document(data, FIELDS, TOP)
        assert got.cases == [{k: c[k] for k in FIELDS if k in c} for c in second]
    assert small_pieces == [False, False]
    earlier = (json.dumps({"case_results": second})[:-1]
               + f', "case_results": {json.dumps(first)}}}').encode()
    got = jsondecode._Default().document(earlier, FIELDS, TOP)
    assert len(got.cases or ()) == 100


def _write(path: Path, document: Any, indent: int | None = 2) -> Path:
    path.write_text(json.dumps(document, indent=indent), encoding="utf-8")
    return path


def _load(path: Path) -> Report | FailgateError:
    try:
        loaded = read.load_report(ReportFile(path, path.stem), TaxonomyChoice(RAG))
    except FailgateError as exc:
        return exc
    assert isinstance(loaded, Report)
    return loaded


@pytest.mark.parametrize("damage", ["syntax late", "case not an object", "bad kind",
                                    "truncated", "trailing garbage"])
def test_errors_are_the_whole_documents_place_and_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_pieces: list[bool],
        damage: str) -> None:
    cases = cases_for({"retrieval_miss": 30, "unknown": 20}, passed=250, seed=4)
    text = json.dumps({"case_results": cases, "num_predictions": 300}, indent=2)
    at = text.rindex('"id"')  # in the last case but one piece
    text = {
        "syntax late": text[:at] + "," + text[at:],
        "case not an object": "\n    7,\n    {".join(text.rsplit("\n    {", 1)),
        "bad kind": '"accuracy": "high", "x": '.join(text.rsplit('"accuracy": ', 1)),
        "truncated": text[:-40],
        "trailing garbage": text + " }",
    }[damage]
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    got = _load(path)
    monkeypatch.setattr(jsonpieces, "PIECES_FROM", 1 << 62)
    want = _load(path)
    assert isinstance(want, FailgateError)
    assert isinstance(got, FailgateError)
    assert (str(got), got.line, got.col) == (str(want), want.line, want.col)


def test_a_report_read_in_pieces_gates_as_read_whole(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     small_pieces: list[bool]) -> None:
    cases = cases_for({"retrieval_miss": 30, "unknown": 20, "generator_hallucination": 9},
                      passed=400, seed=8)
    path = _write(tmp_path / "run.json", {"case_results": cases, "num_predictions": 459})
    got = _load(path)
    assert small_pieces == [True]
    monkeypatch.setattr(jsonpieces, "PIECES_FROM", 1 << 62)
    want = _load(path)
    assert isinstance(got, Report)
    assert isinstance(want, Report)
    assert (got.counts, got.n_cases, got.id_keys, got.recorded) == (
        want.counts, want.n_cases, want.id_keys, want.recorded)
    assert got.counts["retrieval_miss"] == 30
