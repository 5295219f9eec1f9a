"""JSON Lines decoded a block of lines at a time: the same cases, the same errors, places.

The reader decodes whole blocks of lines in native code (``jsondecode.stream``) and
goes a line at a time only through a block in which some line is refused. These
tests shrink the block to a few hundred bytes, so a report of a few thousand lines
crosses hundreds of blocks, and pin that counts and error places (line, column,
case number) are those of the line-at-a-time reading, with each decoder, blank
lines, CRLF ends, a byte-order mark and raw UTF-8 text among them.
"""

from __future__ import annotations

import io
import json
import random
from itertools import product
from pathlib import Path

import pytest
from helpers import RAG, cases_for
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports import jsondecode, read, sink
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.model import Report, ReportFile

DECODERS = {"default": jsondecode._Default(), "fast": jsondecode.decoder()}
COUNTS = {"retrieval_miss": 40, "unknown": 25, "generator_hallucination": 30,
          "verifier_false_negative": 5}


@pytest.fixture(params=list(product(DECODERS, (256, 1 << 20))),
                ids=lambda p: f"{p[0]}-block{p[1]}")
def reading(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each decoder, with blocks of 256 bytes (a line or less each) and of the default
    size; the generated loop from the 50th case on, so both paths of the sink run."""
    name, block = request.param
    monkeypatch.setattr(read, "decoder", lambda: DECODERS[name])
    monkeypatch.setattr(jsondecode, "BLOCK", block)
    monkeypatch.setattr(sink, "SCAN_AFTER", 50)
    return str(name)


def _lines(seed: int = 3) -> list[bytes]:
    """3,000 rag cases as raw UTF-8 lines (Korean and emoji, not ``\\u`` escapes)."""
    cases = cases_for(COUNTS, passed=2_900, seed=seed)
    for i, case in enumerate(cases):
        case["answer"] = f"답변 {i} ✅ 📄 " + "근거 문서 " * (i % 7)
    return [json.dumps(case, ensure_ascii=False).encode() for case in cases]


def _load(path: Path) -> Report:
    loaded = read.load_report(ReportFile(path, path.stem), TaxonomyChoice(RAG))
    assert isinstance(loaded, Report)
    return loaded


@pytest.mark.slow
def test_blocks_of_lines_give_the_counts_of_the_whole_file(reading: str,
                                                           tmp_path: Path) -> None:
    lines = _lines()
    rng = random.Random(5)
    text = bytearray(b"\xef\xbb\xbf")  # a byte-order mark, then blank and CRLF lines
    for line in lines:
        text += line + rng.choice([b"\n", b"\r\n", b"\n\n", b"\n  \t\n"])
    path = tmp_path / "cases.jsonl"
    path.write_bytes(bytes(text[:-1]))  # the last line without its end
    report = _load(path)
    assert report.n_cases == 3_000
    assert {k: v for k, v in report.counts.items() if v} == COUNTS
    assert len(report.id_keys) == 3_000


def _with_blanks(lines: list[bytes]) -> tuple[bytes, list[int]]:
    """The lines with a blank line after every tenth; the line number of each case."""
    out, numbers, number = [], [], 0
    for i, line in enumerate(lines):
        number += 1
        out.append(line + b"\n")
        numbers.append(number)
        if i % 10 == 9:
            out.append(b"   \n")
            number += 1
    return b"".join(out), numbers


@pytest.mark.slow
@pytest.mark.parametrize(("at", "raw", "message"), [
    (2_345, b'{"id": "x", tru}', "invalid JSON"),
    (1_999, b'{"id": "x", "answer": "\xc3("}', "not UTF-8"),
    (2_700, b'{"id": "x", "answer": "\\udc00"}', "lone surrogate"),
    (2_001, b'  {"id": "x"} {"id": "y"}', "trailing characters"),
])
def test_an_invalid_line_deep_in_the_file_is_named_by_its_line(
        reading: str, tmp_path: Path, at: int, raw: bytes, message: str) -> None:
    lines = _lines()
    lines[at] = raw
    text, numbers = _with_blanks(lines)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(text)
    with pytest.raises(FailgateError) as caught:
        _load(path)
    assert message in caught.value.message
    assert caught.value.line == numbers[at]


@pytest.mark.slow
def test_a_line_not_an_object_is_named_with_its_case_number_and_column(
        reading: str, tmp_path: Path) -> None:
    lines = _lines()
    lines[1_234] = b"    [1, 2]"
    text, numbers = _with_blanks(lines)
    path = tmp_path / "array.jsonl"
    path.write_bytes(text)
    with pytest.raises(FailgateError) as caught:
        _load(path)
    assert caught.value.message == "case #1235 is array, not an object"
    assert (caught.value.line, caught.value.col) == (numbers[1_234], 5)


@pytest.mark.slow
def test_a_duplicate_id_is_named_by_the_line_of_its_second_case(reading: str,
                                                                 tmp_path: Path) -> None:
    lines = _lines()
    first = json.loads(lines[100])["id"]
    lines[2_222] = b"  " + lines[100]
    text, numbers = _with_blanks(lines)
    path = tmp_path / "twice.jsonl"
    path.write_bytes(text)
    with pytest.raises(FailgateError) as caught:
        _load(path)
    assert f"case #2223: duplicate case id '{first}' (also case #101)" in caught.value.message
    assert (caught.value.line, caught.value.col) == (numbers[2_222], 3)


@pytest.mark.slow
def test_a_bad_case_before_an_invalid_line_of_its_block_is_the_error(
        reading: str, tmp_path: Path) -> None:
    """Within one block the earlier problem wins, as when reading a line at a time: a
    mistyped case on a line before invalid JSON is what the user is told."""
    lines = _lines()
    lines[1_500] = b'{"id": "m", "abstained": 1}'
    lines[1_501] = b'{"id": "n", '
    text, numbers = _with_blanks(lines)
    path = tmp_path / "two.jsonl"
    path.write_bytes(text)
    with pytest.raises(FailgateError) as caught:
        _load(path)
    assert "'abstained'" in caught.value.message
    assert caught.value.line == numbers[1_500]


@pytest.mark.slow
def test_a_line_longer_than_a_block_is_read_whole(reading: str, tmp_path: Path) -> None:
    lines = _lines()
    long = json.loads(lines[7])
    long["answer"] = "긴 답변 🙂 " * 20_000  # about 300 KB: over a thousand small blocks
    lines[7] = json.dumps(long, ensure_ascii=False).encode()
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    report = _load(path)
    assert report.n_cases == 3_000
    assert {k: v for k, v in report.counts.items() if v} == COUNTS


@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.sampled_from([b"\n", b"\r\n", b"{}", b"ab", "한".encode(), b"\xff",
                                      b"\xef\xbb\xbf", b" "]), max_size=40).map(b"".join),
       block=st.integers(3, 12))
def test_reads_split_into_the_lines_of_the_whole_stream(text: bytes, block: int) -> None:
    """Whatever the read size (from 3 bytes: a byte-order mark comes whole in the first
    read): as ``bytes`` or as views of the reads, the lines are the stream's split on
    ``\\n`` (a leading byte-order mark dropped, a last empty line not a line); every
    block but the last ends with a line end, the last only if the stream does; views of
    ASCII text are said to be ASCII (no UTF-8 check needed), no block of other text is."""
    expected = text.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    unended = expected[-1] != b""
    if not unended:
        expected.pop()
    for views in (False, True):
        blocks = _blocks_of(text, block, views)
        assert [bytes(line) for found, _, _ in blocks for line in found] == expected
        assert [ended for _, ended, _ in blocks] == [True] * (len(blocks) - 1) + (
            [not unended] if blocks else [])
        for found, _, ascii_text in blocks:
            ascii_lines = all(bytes(line).isascii() for line in found)
            assert ascii_text is (views and ascii_text and ascii_lines)
            if views and text.isascii():
                assert ascii_text


def _blocks_of(text: bytes, block: int, views: bool) -> list[tuple[list[jsondecode.Line],
                                                                   bool, bool]]:
    saved = jsondecode.BLOCK
    jsondecode.BLOCK = block
    try:
        return list(jsondecode._blocks(io.BytesIO(text), views))
    finally:
        jsondecode.BLOCK = saved


@pytest.mark.parametrize("name", list(DECODERS))
def test_a_bad_byte_in_a_line_cut_by_reads_is_named_by_its_line(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line with a byte that is not UTF-8, in a field no rule reads, in the read that
    begins it, and ending in an ASCII read: refused, at its line (``[fast]`` skips that
    field's text, so its check must cover the bytes of every read that made the line)."""
    monkeypatch.setattr(read, "decoder", lambda: DECODERS[name])
    monkeypatch.setattr(jsondecode, "BLOCK", 64)
    good = b'{"id": "a", "accuracy": 1.0}'
    bad = b'{"id": "b", "note": "\xff' + b"x" * 70 + b'", "accuracy": 1.0}'
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"\n".join([good, bad, good.replace(b'"a"', b'"c"')]) + b"\n")
    with pytest.raises(FailgateError) as caught:
        _load(path)
    assert "not UTF-8" in caught.value.message
    assert caught.value.line == 2
    path.write_bytes(b"\n".join([good, bad.replace(b"\xff", "é".encode()),
                                 good.replace(b'"a"', b'"c"')]) + b"\n")
    assert _load(path).n_cases == 3
