"""Reports built to exhaust memory are refused before they do, with one line naming them.

An Inspect ``.eval`` whose member decompresses to a gigabyte (a real Inspect header beside
a zstd member of JSON whitespace), an archive whose 1,500 entries all point at one
member's bytes, a sparse file whose holes would be read as one 2 GB line: each is refused
with ``--max-report-bytes`` and without it (a default cap), in every command that reads
reports, and the process stays small (measured in a child process).
"""

from __future__ import annotations

import io
import json
import os
import resource
import struct
import subprocess
import sys
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest
from helpers import run_cli, write_ceilings

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports.builtin import builtin_readers
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.model import ReportFile
from pytest_failgate.core.reports.read import ReadSpec, load_report
from pytest_failgate.core.reports.zipzstd import ZSTD
from pytest_failgate.core.taxonomy import builtin_taxonomies

zstandard = pytest.importorskip("zstandard")

DATA = Path(__file__).resolve().parents[2] / "data" / "inspect_ai" / "generated" / "eval"
INSPECT = builtin_taxonomies()["inspect_ai"]
GIB = 1 << 30


def _real_log() -> Path:
    return next(DATA.glob("*_capitals_*"))


def _member(name: str, method: int, raw: bytes, crc: int, size: int) -> tuple[bytes, bytes]:
    """A zip entry: its local header with data, and its central directory record (offset
    patched in by ``_archive``)."""
    encoded = name.encode()
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 63, 0, method, 0, 0, crc, len(raw),
                        size, len(encoded), 0) + encoded + raw
    central = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 63, 63, 0, method, 0, 0, crc,
                          len(raw), size, len(encoded), 0, 0, 0, 0, 0, 0) + encoded
    return local, central


def _archive(entries: list[tuple[bytes, bytes]], pointers: list[int] | None = None) -> bytes:
    """A zip of the entries; ``pointers`` lists, per central record, which entry's local
    header it points at (default: its own)."""
    body, offsets = b"", []
    for local, _ in entries:
        offsets.append(len(body))
        body += local
    records = b""
    for index, target in enumerate(pointers if pointers is not None else range(len(entries))):
        central = entries[index % len(entries)][1]
        records += central[:42] + struct.pack("<L", offsets[target]) + central[46:]
    count = len(pointers) if pointers is not None else len(entries)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(records), len(body), 0)
    return body + records + end


def _header_entry() -> tuple[bytes, bytes]:
    """The real log's header.json, its compressed bytes as Inspect wrote them."""
    with zipfile.ZipFile(_real_log()) as archive:
        info = archive.getinfo("header.json")
    data = _real_log().read_bytes()
    name_len, extra_len = struct.unpack("<2H", data[info.header_offset + 26:
                                                     info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    raw = data[start:start + info.compress_size]
    return _member("header.json", ZSTD, raw, info.CRC, info.file_size)


def _bomb(path: Path, size: int = GIB + (1 << 20)) -> Path:
    """A log whose summaries.json is ``[`` + whitespace + ``]`` (valid JSON) of ``size`` bytes:
    a few tens of KB on disk."""
    compressor = zstandard.ZstdCompressor(level=3).compressobj()
    chunk = b" " * (1 << 20)
    raw = compressor.compress(b"[")
    crc = zlib.crc32(b"[")
    for _ in range((size - 2) // len(chunk)):
        raw += compressor.compress(chunk)
        crc = zlib.crc32(chunk, crc)
    tail = b" " * ((size - 2) % len(chunk)) + b"]"
    raw += compressor.compress(tail) + compressor.flush()
    crc = zlib.crc32(tail, crc)
    path.write_bytes(_archive([_header_entry(),
                               _member("summaries.json", ZSTD, raw, crc, size)]))
    return path


def _spec(limit: int | None = None) -> ReadSpec:
    return ReadSpec(readers=builtin_readers(), max_bytes=limit)


def _load(path: Path, limit: int | None = None) -> None:
    load_report(ReportFile(path, "r"), TaxonomyChoice(INSPECT), _spec(limit))


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _bomb(tmp_path_factory.mktemp("bomb") / "2026-01-01T00-00-00_capitals_x.eval")


def test_a_gigabyte_member_is_refused_before_it_is_decompressed(bomb: Path) -> None:
    assert bomb.stat().st_size < 200_000
    with pytest.raises(FailgateError, match=r"member summaries\.json would decompress to "
                                            r"1,074,790,400 bytes, past the limit of "
                                            r"1,048,576 ") as raised:
        _load(bomb, limit=1 << 20)
    assert raised.value.path == bomb


def test_without_a_limit_the_default_cap_refuses_it(bomb: Path) -> None:
    with pytest.raises(FailgateError, match="past the limit of 1,073,741,824 "):
        _load(bomb)


def test_the_bomb_leaves_the_process_small_in_every_command(bomb: Path, tmp_path: Path) -> None:
    """Peak memory of the whole ``failgate`` process, for each command that reads reports:
    well under the gigabyte the member holds (it was 3.9 GB)."""
    folder = tmp_path / "run"
    folder.mkdir()
    os.symlink(bomb, folder / bomb.name)
    (tmp_path / "ceilings.yaml").write_text("version: 1\ntaxonomy: inspect_ai\n")
    code = ("import resource, sys\nfrom pytest_failgate.cli import main\n"
            "code = main(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\nsys.exit(code)")
    for command in (["check", str(folder), "--max-report-bytes", "1MB"], ["show", str(folder)],
                    ["analyze", str(folder), "--max-report-bytes", "1MB"],
                    ["history", str(tmp_path)], ["diff", str(folder), str(folder)]):
        done = subprocess.run([sys.executable, "-c", code, *command], capture_output=True,
                              text=True, cwd=tmp_path, timeout=300, check=False)
        assert done.returncode in (1, 2), (command, done.stderr)
        assert "decompress to" in done.stdout + done.stderr, (command, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        peak_kb = int(done.stdout.strip().splitlines()[-1])
        assert peak_kb < 400_000, (command, peak_kb)


def test_a_member_that_lies_about_its_size_is_stopped_past_what_it_said(tmp_path: Path) -> None:
    real = json.dumps([{"id": 1, "epoch": 1}]).encode()
    padded = real + b" " * 5_000_000
    raw = zstandard.ZstdCompressor().compress(padded)
    path = tmp_path / "lie.eval"
    path.write_bytes(_archive([_header_entry(), _member(
        "summaries.json", ZSTD, raw, zlib.crc32(real), len(real))]))
    with pytest.raises(FailgateError, match=r"inflates past the 23 bytes its entry says"):
        _load(path)


def _spaces_deflated(size_mib: int) -> bytes:
    """A raw deflate stream of ``[``, ``size_mib`` MiB of spaces and ``]`` (valid JSON),
    built without compressing a gigabyte: after a full flush the compressor starts afresh,
    so every MiB of spaces compresses to the same bytes (about 1 KB), repeated."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    start = compressor.compress(b"[") + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(b" " * (1 << 20)) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert compressor.compress(b" " * (1 << 20)) + compressor.flush(zlib.Z_FULL_FLUSH) == block
    return start + block * size_mib + compressor.compress(b"]") + compressor.flush()


@pytest.fixture(scope="module")
def deflated_gigabyte() -> bytes:
    raw = _spaces_deflated(1024)
    assert len(raw) < 1_200_000
    assert len(zlib.decompressobj(-zlib.MAX_WBITS).decompress(raw[:20_000])) > 19 << 20
    return raw


@pytest.mark.parametrize("limit", [None, 5_000_000])
@pytest.mark.parametrize("says", [2, 4_000_000])
def test_a_deflate_member_inflating_to_a_gigabyte_stops_where_its_entry_said(
        deflated_gigabyte: bytes, tmp_path: Path, limit: int | None, says: int) -> None:
    """A 1 MB deflate member that says it holds a few bytes (or 4 MB, under the 5 MB limit)
    and inflates to a gigabyte: stopped one byte past what it said, in little memory
    (``ZipFile.read`` inflated it whole first: 2.1 GB and half a minute)."""
    path = tmp_path / "deflated.eval"
    path.write_bytes(_archive([_header_entry(), _member(
        "summaries.json", zipfile.ZIP_DEFLATED, deflated_gigabyte, 0, says)]))
    tracemalloc.start()
    try:
        with pytest.raises(FailgateError, match=rf"member summaries\.json: cannot be read: it "
                                                rf"inflates past the {says:,} bytes its entry "
                                                "says; stopped there") as raised:
            _load(path, limit)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert raised.value.path == path
    assert peak < 200_000_000


def test_a_deflate_member_saying_it_is_larger_than_the_limit_is_not_inflated(
        deflated_gigabyte: bytes, tmp_path: Path) -> None:
    path = tmp_path / "deflated.eval"
    path.write_bytes(_archive([_header_entry(), _member(
        "summaries.json", zipfile.ZIP_DEFLATED, deflated_gigabyte, 0, GIB + 2)]))
    for limit, shown in ((5_000_000, "5,000,000"), (None, "1,073,741,824")):
        with pytest.raises(FailgateError, match=rf"would decompress to 1,073,741,826 bytes, past "
                                                rf"the limit of {shown} "):
            _load(path, limit)


def test_what_is_left_of_the_archive_budget_bounds_the_next_member(tmp_path: Path) -> None:
    """Each member under the limit, together over it: the second is refused unread."""
    header = _header_entry()
    raw = _spaces_deflated(3)
    data = b"[" + b" " * (3 << 20) + b"]"
    path = tmp_path / "two.eval"
    path.write_bytes(_archive([header, _member("summaries.json", zipfile.ZIP_DEFLATED, raw,
                                               zlib.crc32(data), len(data))]))
    _load(path, len(data) + 5000)  # both fit: read (a log of no samples)
    with pytest.raises(FailgateError, match=r"would decompress to 3,145,730 bytes, past the "
                                            r"limit of 3,145,830 .*; 3,14\d,\d{3} are left "
                                            r"after the members read before"):
        _load(path, len(data) + 100)


def _repacked(method: int) -> bytes:
    """The real Inspect log with every member recompressed by ``method`` (zipfile's own)."""
    target = io.BytesIO()
    with zipfile.ZipFile(_real_log()) as source, zipfile.ZipFile(target, "w", method) as out:
        for name in source.namelist():
            size = source.getinfo(name).file_size
            out.writestr(name, zstandard.ZstdDecompressor().decompress(
                _raw_of(source, name), max_output_size=size))
    return target.getvalue()


def _raw_of(archive: zipfile.ZipFile, name: str) -> bytes:
    """A member's compressed bytes as they lie in the archive."""
    info = archive.getinfo(name)
    handle = archive.fp
    assert handle is not None
    handle.seek(info.header_offset + 26)
    name_len, extra_len = struct.unpack("<2H", handle.read(4))
    handle.seek(name_len + extra_len, 1)
    return handle.read(info.compress_size)


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED,
                                    zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_a_log_repacked_with_each_zip_method_reads_alike(tmp_path: Path, method: int) -> None:
    """The control: stored, deflate, bzip2 and LZMA members read through the bounded path
    give the cases the zstd original gives."""
    path = tmp_path / _real_log().name
    path.write_bytes(_repacked(method))
    original = load_report(ReportFile(_real_log(), "r"), TaxonomyChoice(INSPECT), _spec(1 << 20))
    report = load_report(ReportFile(path, "r"), TaxonomyChoice(INSPECT), _spec(1 << 20))
    assert report.n_cases == original.n_cases == 12  # type: ignore[union-attr]
    assert report.counts == original.counts  # type: ignore[union-attr]


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_a_member_of_any_method_that_lies_about_its_size_is_stopped(tmp_path: Path,
                                                                    method: int) -> None:
    real = json.dumps([{"id": 1, "epoch": 1}]).encode()
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", method) as out:
        out.writestr("summaries.json", real + b" " * 5_000_000)
    with zipfile.ZipFile(packed) as archive:
        raw = _raw_of(archive, "summaries.json")
    path = tmp_path / "lie.eval"
    path.write_bytes(_archive([_header_entry(), _member(
        "summaries.json", method, raw, zlib.crc32(real), len(real))]))
    with pytest.raises(FailgateError, match=r"inflates past the 23 bytes its entry says"):
        _load(path)
    # truncated data: short of what it says, refused too
    path.write_bytes(_archive([_header_entry(), _member(
        "summaries.json", method, raw[: len(raw) // 2], zlib.crc32(real), 5_000_020)]))
    with pytest.raises(FailgateError, match=r"member summaries\.json: cannot be read: "):
        _load(path)


def test_entries_pointing_at_one_members_bytes_are_refused(tmp_path: Path) -> None:
    """1,500 directory records naming one member's data (1.6 GB decompressed before)."""
    header = _header_entry()
    entries = [header, *(_member(f"samples/{i}_epoch_1.json", ZSTD, b"", 0, 0)
                         for i in range(1, 3))]
    path = tmp_path / "overlap.eval"
    path.write_bytes(_archive(entries, pointers=[0] * 1500))
    with pytest.raises(FailgateError, match=r"two entries of this zip archive have one name"):
        _load(path)
    # distinct names, one member's bytes: every record points at the second entry's header
    records = [_member(f"samples/{i}_epoch_1.json", ZSTD, b"", 0, 0) for i in range(1500)]
    path.write_bytes(_archive([header, *records], pointers=[0, *([1] * 1500)]))
    with pytest.raises(FailgateError, match=r"overlap \(a zip bomb shape"):
        _load(path)


def test_a_well_formed_eval_log_still_reads() -> None:
    """The control: Inspect's own archive passes the layout check and the cap."""
    report = load_report(ReportFile(_real_log(), "r"), TaxonomyChoice(INSPECT), _spec(1 << 20))
    assert report.n_cases == 12  # type: ignore[union-attr]


# --------------------------------------------------------------------------- sparse files


def test_a_sparse_jsonl_is_refused_before_a_byte_is_read(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    with path.open("wb") as handle:
        handle.write(b'{"id": "a"}\n')
        handle.truncate(2 * GIB)  # a 2 GB hole after the first line
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(FailgateError, match=r"the file is sparse: 2,147,483,648 bytes long with "
                                            r"a hole at byte") as raised:
        load_report(ReportFile(path, "cases"), TaxonomyChoice(builtin_taxonomies()["rag"]),
                    ReadSpec())
    assert raised.value.path == path
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000


def test_an_oversized_report_is_refused_unread_by_show_and_the_other_commands(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``show`` without a ceilings file ignored --max-report-bytes; analyze, diff, noise
    and history had no such option."""
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    (run / "cases.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "accuracy": 0, "evidence_doc_ids": []}) + "\n"
        for i in range(300)))
    for argv in (["show", "run"], ["analyze", "run"], ["diff", "run", "run"],
                 ["noise", "run", "run", "--out", "band.json"], ["history", "."],
                 ["check", "run"]):
        if argv[0] == "check":
            write_ceilings(tmp_path / "ceilings.yaml", {"unknown": 999})
        code, out, err = run_cli(capsys, *argv, "--max-report-bytes", "1KB")
        assert code == 2 or "more than the limit" in out, (argv, out, err)
        assert "more than the limit of 1,000" in out + err, (argv, out, err)
