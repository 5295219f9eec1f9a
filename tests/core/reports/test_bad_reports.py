"""A corpus of broken reports: each is one clear message with its file and place.

Every entry is checked three ways: the loader raises ``FailgateError`` at the
expected line, ``failgate check`` exits 2 with ``file:line`` in its output, and
one pytest run over the whole corpus gives an error item per file and no
traceback. A watchdog stops any entry that computes for more than five CPU seconds or
blocks for five seconds (a hang), so the suite cannot block on one.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import product
from pathlib import Path
from typing import NamedTuple

import pytest
from helpers import PASSED_CASE, RAG, write_ceilings

from pytest_failgate.cli import main
from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports import jsondecode, read, sink
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.model import Report, ReportFile


class Bad(NamedTuple):
    name: str
    content: bytes
    message: str  # a fragment of the expected message
    line: int | None  # the line it must name
    # valid JSON that ``json`` refuses only for its own limit, in a field no rule reads:
    # the fast decoder (msgspec) skips it without converting it, and reads the report
    fast_reads: bool = False


def _case(i: int) -> bytes:
    return json.dumps({**PASSED_CASE, "id": f"c{i}", "answer": f"답변 {i}"}).encode()


def _summary(n: int, at: int = -1, raw: bytes = b"") -> bytes:
    """``n`` cases, one per line from line 2, case ``at`` (0-based) replaced by ``raw``."""
    cases = [raw if i == at else _case(i) for i in range(n)]
    return b'{"case_results": [\n' + b",\n".join(cases) + b"\n]}\n"


def _field(i: int, text: bytes) -> bytes:
    """A case whose ``answer`` (a field no rule reads) is the raw JSON ``text``."""
    return _case(i)[:-1] + b', "extra": ' + text + b"}"


def _lines(n: int, at: int, raw: bytes) -> bytes:
    return b"".join((raw if i == at else _case(i)) + b"\n" for i in range(n))


DEEP = b"[" * 100_000 + b"]" * 100_000
CORPUS = [
    Bad("trailing-comma", _summary(3, 2, _case(2) + b","), "trailing comma", 5),
    Bad("trailing-comma-late", _summary(400, 399, _case(399) + b","), "trailing comma", 402),
    Bad("double-comma", _summary(3, 1, _case(1) + b","), "expected value", 3),
    Bad("missing-colon", _summary(3, 1, b'{"id" "c1"}'), "':'", 3),
    Bad("bare-word", _summary(3, 2, _field(2, b"tru")), "invalid JSON", 4),
    Bad("bare-word-late", _summary(500, 480, _field(480, b"tru")), "invalid JSON", 482),
    Bad("leading-zero", _summary(3, 0, _field(0, b"01")), "invalid JSON", 2),
    Bad("control-char", _summary(3, 1, _field(1, b'"a\x01b"')), "control character", 3),
    Bad("control-char-late", _summary(200, 150, _field(150, b'"a\x01b"')), "control character",
        152),
    Bad("tab-in-string", _summary(2, 1, _field(1, b'"a\tb"')), "control character", 3),
    Bad("invalid-utf8", _summary(3, 2, _field(2, b'"\xff"')), "not UTF-8", 4),
    Bad("invalid-utf8-late", _summary(300, 299, _field(299, b'"caf\xc3"')), "not UTF-8", 301),
    Bad("utf8-surrogate", _summary(2, 1, _field(1, b'"\xed\xa0\x80"')), "not UTF-8", 3),
    Bad("lone-surrogate-id", _summary(2, 1, b'{"id": "\\ud800", "accuracy": 1.0}'),
        "lone surrogate", 3),
    Bad("huge-integer", _summary(2, 1, _field(1, b"9" * 5000)), "4,300 digits", 3, True),
    Bad("huge-integer-rule-field", _summary(2, 0, b'{"id": "a", "accuracy": ' + b"1" * 4400
                                             + b"}"), "4,300 digits", 2),
    Bad("deep-nesting", _summary(2, 1, _field(1, b"[" * 1000 + b"]" * 1000)), "200 levels", 3),
    Bad("very-deep-nesting", _summary(2, 1, _field(1, DEEP)), "200 levels", 3),
    Bad("unterminated-string", b'{"case_results": [{"id": "a', "EOF", 1),
    Bad("truncated", _summary(50)[:-200], "EOF", None),
    Bad("extra-data", _summary(2) + b"{}", "trailing characters", 5),
    Bad("empty", b"", "the file is empty", None),
    Bad("only-whitespace", b" \n\t\n", "the file is empty", None),
    Bad("case-results-number", b'{\n"case_results": 5}', "'case_results' must be a list", 2),
    Bad("case-not-object", _summary(3, 1, b'"just text"'), "case #2 is string, not an object",
        3),
    Bad("case-not-object-late", _summary(100, 99, b"[1, 2]"), "case #100 is array", 101),
    Bad("mistyped-field", _summary(3, 2, b'{"id": "x", "answerable": "yes"}'),
        "'answerable' is \"yes\"", 4),
    Bad("mistyped-field-late", _summary(300, 250, b'{"id": "x", "accuracy": "high"}'),
        "'accuracy'", 252),
    Bad("mistyped-list-item", _summary(2, 1, b'{"id": "x", "evidence_doc_ids": [{}]}'),
        "item 0", 3),
    Bad("duplicate-id", _summary(3, 2, _case(0)), "duplicate case id 'c0'", 4),
    Bad("id-is-list", _summary(2, 1, b'{"id": [1], "accuracy": 1.0}'), "the case id 'id' is array",
        3),
    Bad("id-is-float", _summary(2, 1, b'{"id": 1.5, "accuracy": 1.0}'), "is number", 3),
    Bad("nan-as-bool", _summary(2, 1, b'{"id": "x", "answerable": NaN}'), "'answerable'", 3),
    Bad("single-quotes", b"{'case_results': []}", "invalid JSON", 1),
    Bad("comment", b'// a report\n{"case_results": []}', "invalid JSON", 1),
    Bad("bad-escape", _summary(2, 1, _field(1, b'"\\x41"')), "escape", 3),
    Bad("short-unicode-escape", _summary(2, 1, _field(1, b'"\\u12"')), "invalid JSON", 3),
    Bad("plus-number", _summary(2, 1, _field(1, b"+1")), "invalid JSON", 3),
    Bad("dot-number", _summary(2, 1, _field(1, b"1.")), "invalid JSON", 3),
    Bad("no-cases", b'{"case_results": []}', "no cases", None),
    Bad("bom-then-garbage", b"\xef\xbb\xbf{oops}", "invalid JSON", 1),
    Bad("utf16", '{"case_results": []}'.encode("utf-16"), "invalid JSON", 1),
    Bad("negative-count", b'{"failure_category_counts": {"unknown": -1},\n "num_predictions": 3}',
        "expected a whole number", 1),
    Bad("count-of-no-category", b'{"num_predictions": 3,\n"failure_category_counts": {"x": 1}}',
        "not a category", 2),
    Bad("predictions-text", b'{"num_predictions": "ten",\n"failure_category_counts": {}}',
        "num_predictions is string", 1),
]
JSONL = [
    Bad("jsonl-bad-line", _lines(5, 3, b'{"id": "x", tru}'), "invalid JSON", 4),
    Bad("jsonl-array-line", _lines(5, 2, b"[1, 2]"), "case #3 is array, not an object", 3),
    Bad("jsonl-duplicate-id", _lines(5, 4, _case(1)), "duplicate case id 'c1'", 5),
    Bad("jsonl-invalid-utf8", _lines(3, 1, _field(1, b'"\xc3("')), "not UTF-8", 2),
    Bad("jsonl-truncated", _lines(3, 2, _case(2)[:-5]), "invalid JSON", 3),
    Bad("jsonl-two-objects", _lines(3, 1, _case(1) + b" " + _case(9)), "trailing characters", 2),
    Bad("jsonl-lone-surrogate", _lines(3, 2, b'{"id": "\\udc00"}'), "lone surrogate", 3),
    Bad("jsonl-deep", _lines(3, 0, _field(0, DEEP)), "200 levels", 1),
    Bad("jsonl-mistyped", _lines(3, 2, b'{"id": "x", "abstained": 1}'), "'abstained'", 3),
    Bad("jsonl-empty", b"\n\n", "no cases", None),
]
ALL = [(bad, ".json") for bad in CORPUS] + [(bad, ".jsonl") for bad in JSONL]


PROGRESS = 0.001  # CPU seconds a tick must see used for the block to count as working
TICK = 0.25  # seconds between the watchdog's looks


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging) if the block computes for more than ``seconds`` of CPU
    time (a loop), or uses no CPU for ``seconds`` (blocked: a FIFO, a device, a lock).

    Both are this process's own measures: a loaded machine, which only stretches the wall
    clock (a 60-second wall-clock limit was reached under load), trips neither; a block
    that still works gets some CPU in every tick."""
    start = used = time.process_time()
    idle_since = time.monotonic()

    def look(signum: int, frame: object) -> None:
        nonlocal used, idle_since
        now = time.process_time()
        if now - start > seconds:
            raise AssertionError(f"computed for more than {seconds} CPU seconds: a hang")
        if now - used > PROGRESS:
            used, idle_since = now, time.monotonic()
        elif time.monotonic() - idle_since > seconds:
            raise AssertionError(f"blocked for more than {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, look)
    signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_the_watchdog_stops_a_loop_and_a_block(tmp_path: Path) -> None:
    """The control: both kinds of hang are caught, so a passing test is not a vacuous one."""
    def spin() -> None:
        while True:
            pass

    with pytest.raises(AssertionError, match="computed for more than 1 CPU seconds"), \
            deadline(1):
        spin()
    if not hasattr(os, "mkfifo"):
        return
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(AssertionError, match="blocked for more than 1 s"), deadline(1):
        (tmp_path / "pipe").open("rb")  # no writer: blocks


def _write(directory: Path, bad: Bad, suffix: str) -> Path:
    path = directory / f"{bad.name}{suffix}"
    path.write_bytes(bad.content)
    return path


def test_the_corpus_has_at_least_forty_bad_inputs() -> None:
    assert len(ALL) >= 40
    assert len({bad.name for bad, _ in ALL}) == len(ALL)


DECODERS = {"default": jsondecode._Default(), "fast": jsondecode.decoder()}


@pytest.mark.parametrize(("bad", "suffix"), ALL, ids=[bad.name for bad, _ in ALL])
def test_a_bad_report_is_one_message_with_its_file_and_place(
    bad: Bad, suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = _write(tmp_path, bad, suffix)
    # each decoder, with cases taken one at a time and by the generated loop
    for (name, decoder), scan_after in product(DECODERS.items(), (10**9, 0)):
        monkeypatch.setattr(read, "decoder", lambda decoder=decoder: decoder)
        monkeypatch.setattr(sink, "SCAN_AFTER", scan_after)
        if bad.fast_reads and name == "fast":
            loaded = read.load_report(ReportFile(path, bad.name), TaxonomyChoice(RAG))
            assert isinstance(loaded, Report)
            assert loaded.n_cases
            continue
        with deadline(5), pytest.raises(FailgateError) as caught:
            read.load_report(ReportFile(path, bad.name), TaxonomyChoice(RAG))
        error = caught.value
        assert bad.message in error.message, name
        assert error.path == path
        if bad.line is not None:
            assert (error.line, name) == (bad.line, name)
            assert error.col is not None
    monkeypatch.undo()
    if bad.fast_reads and isinstance(jsondecode.decoder(), jsondecode._Fast):
        return
    monkeypatch.chdir(tmp_path)
    write_ceilings(tmp_path / "ceilings.yaml", {"unknown": 0})
    with deadline(5):
        code = main(["check", path.name])
    out, err = capsys.readouterr()
    assert code == 2
    where = path.name + (f":{bad.line}:" if bad.line is not None else ":")
    assert f"{where}" in out + err
    assert "Traceback" not in out + err


@pytest.mark.parametrize("every", [
    pytest.param(1, marks=pytest.mark.slow, id="all"),  # about 5 s per 10 reports in pytest
    pytest.param(6, id="a sixth"),
])
def test_every_bad_report_is_an_error_item_in_pytest(pytester: pytest.Pytester, every: int
                                                     ) -> None:
    reports = pytester.path / "reports"
    reports.mkdir()
    fast = isinstance(jsondecode.decoder(), jsondecode._Fast)
    corpus = [(bad, suffix) for bad, suffix in ALL[::every] if not (fast and bad.fast_reads)]
    for bad, suffix in corpus:
        _write(reports, bad, suffix)
    write_ceilings(pytester.path / "ceilings.yaml", {"unknown": 0})
    with deadline(60):
        result = pytester.runpytest_inprocess("--failgate=reports", "-p", "no:cacheprovider")
    text = result.stdout.str()
    assert "Traceback" not in text
    for bad, suffix in corpus:  # a report that does not load is one failing item
        assert f"FAILED ceilings.yaml::{bad.name}::load" in text
        assert f"reports/{bad.name}{suffix}" + (f":{bad.line}:" if bad.line else ":") in text
    assert result.parseoutcomes()["failed"] == len(corpus)
    assert result.ret != 0


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv", ".eval"])
def test_a_fifo_report_is_refused_by_every_reader_without_opening_it(fifo: Path, suffix: str
                                                                      ) -> None:
    named = fifo.rename(fifo.with_suffix(suffix))
    with deadline(5), pytest.raises(FailgateError, match="FIFO"):
        read.load_report(ReportFile(named, "pipe"), TaxonomyChoice(RAG))


def test_a_report_linked_to_a_device_is_refused(tmp_path: Path) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    with deadline(5), pytest.raises(FailgateError, match="character device"):
        read.load_report(ReportFile(link, "zero"), TaxonomyChoice(RAG))


def test_a_fifo_given_on_the_command_line_is_refused_by_the_cli(
    fifo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fifo.parent)
    write_ceilings(fifo.parent / "ceilings.yaml", {"unknown": 0})
    with deadline(5):
        assert main(["check", fifo.name]) == 2
    out, err = capsys.readouterr()
    assert "pipe.json: expected a regular file, found a FIFO" in out + err


def test_a_fifo_as_the_ceilings_file_is_refused(
    fifo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fifo.parent)
    report = fifo.parent / "r.json"
    report.write_bytes(_summary(2))
    with deadline(5):
        assert main(["check", "r.json", "--ceilings", fifo.name]) == 2
    out, err = capsys.readouterr()
    assert "expected a regular file, found a FIFO" in out + err


def test_a_taxonomy_file_linked_to_dev_zero_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tax.yaml").symlink_to("/dev/zero")
    (tmp_path / "r.json").write_bytes(_summary(2))
    (tmp_path / "ceilings.yaml").write_text("version: 1\ntaxonomy: tax.yaml\nceilings: {}\n")
    with deadline(5):
        assert main(["check", "r.json"]) == 2
    out, err = capsys.readouterr()
    assert "expected a regular file, found a character device" in out + err


def test_a_report_over_the_size_limit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.json").write_bytes(_summary(200))
    write_ceilings(tmp_path / "ceilings.yaml", {"unknown": 0})
    assert main(["check", "r.json", "--max-report-bytes", "1KB"]) == 2
    out, err = capsys.readouterr()
    assert "more than the limit of 1,000" in out + err
    assert main(["check", "r.json", "--max-report-bytes", "10MB"]) == 0
    assert main(["check", "r.json", "--max-report-bytes", "lots"]) == 2
    assert "'lots' is not a size" in "".join(capsys.readouterr())


DATA = Path(__file__).resolve().parents[2] / "data"
# Valid JSON past the decoder's limits, in a key no rule reads, then the line it sits on.
LIMITS = {
    "deep": (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 200 levels"),
    "huge-integer": (b"1" + b"0" * 5_000, "integers are limited to 4,300 digits"),
    "lone-surrogate": (b'"\\ud800"', "lone surrogate escape"),
}


def _tool_report(fmt: str, raw: bytes) -> tuple[str, bytes, int]:
    """A real file of another tool's format with ``raw`` added in its third record (or at
    the end of a whole-file format): (file name, content, line of ``raw``)."""
    if fmt == "promptfoo":
        source = DATA / "promptfoo" / "shared" / "tds_project1.promptfoo_results.json"
        text = source.read_bytes().rstrip()
        assert text.endswith(b"}")
        content = text[:-1] + b',\n"extra": ' + raw + b"}\n"
        return source.name, content, content.count(b"\n", 0, content.index(raw)) + 1
    source = {"lm-eval": next((DATA / "lm_eval").glob("samples_*.jsonl")),
              "openai-evals": DATA / "openai_evals" / "promptfoo__openai-evals-items.jsonl"}[fmt]
    lines = source.read_bytes().splitlines()
    at = min(2, len(lines) - 1)
    lines[at] = lines[at].rstrip()[:-1] + b', "extra": ' + raw + b"}"
    return source.name, b"\n".join(lines) + b"\n", at + 1


@pytest.mark.parametrize("limit", list(LIMITS))
@pytest.mark.parametrize("fmt", ["promptfoo", "lm-eval", "openai-evals"])
def test_other_tools_reports_past_the_decoders_limits_are_one_message_with_their_line(
    fmt: str, limit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw, message = LIMITS[limit]
    name, content, line = _tool_report(fmt, raw)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / name).write_bytes(content)
    monkeypatch.chdir(tmp_path)
    with deadline(5):
        code = main(["init", "reports"])
    out, err = capsys.readouterr()
    assert code == 2
    assert f"{name}:{line}:" in out + err
    assert message in out + err
    assert "Traceback" not in out + err
