"""Reading zip archives whose members are zstd-compressed (zip method 93), or stored,
deflated, bzip2 or LZMA, with a bound on what they inflate to.

Inspect AI's default ``.eval`` logs are zstd archives (older ones deflate); Python's
``zipfile`` lists their members but cannot decompress zstd. The zstd decoder is an
optional extra: ``compression.zstd`` (Python 3.14+) or the ``zstandard`` package (the
``inspect`` extra). Without one, reading a zstd member is a ``FailgateError`` that
says what to install; the other methods need nothing.

Every method is decompressed here, not by ``zipfile``: ``ZipFile.read`` inflates a
deflate member whole before it cuts it to the size the entry states (a 1 MB member
inflating to a gigabyte took 2 GB and half a minute), and bzip2 and LZMA members are
decompressed without any bound on the output of a read. Here each is read in pieces
with a running count, as zstd is, and stopped one byte past what it may hold.
"""

from __future__ import annotations

import importlib
import struct
import zipfile
import zlib
from typing import TYPE_CHECKING, Protocol

from ..base.errors import FailgateError
from ..base.safeopen import unpack_limit
from .source import open_source

if TYPE_CHECKING:
    from pathlib import Path

ZSTD = 93  # the zip compression method number of Zstandard
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"


class _Decode(Protocol):
    def __call__(self, data: bytes, size: int) -> bytes: ...


def _decoder() -> _Decode | None:
    """A zstd decoder that stops after ``size + 1`` bytes (a lying size is caught)."""
    try:
        stdlib = importlib.import_module("compression.zstd")
    except ImportError:
        pass
    else:
        def decode_stdlib(data: bytes, size: int) -> bytes:
            result: bytes = stdlib.ZstdDecompressor().decompress(data, max_length=size + 1)
            return result

        return decode_stdlib
    try:
        zstandard = importlib.import_module("zstandard")
    except ImportError:
        return None

    def decode(data: bytes, size: int) -> bytes:
        reader = zstandard.ZstdDecompressor().stream_reader(data)
        chunks: list[bytes] = []
        got = 0
        while got <= size:
            chunk: bytes = reader.read(size + 1 - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    return decode


class ZipArchive:
    """The members of a zip file, zstd-compressed or not, as bytes.

    Bounded whatever the archive says: every member's data must lie in its own bytes of
    the file (entries that overlap, or many entries naming one member's data, are
    refused when the archive is opened), and all the members read decompress to at most
    ``unpack_limit()`` bytes together (``--max-report-bytes``, else a default): a member
    that says it is larger is refused before it is decompressed, and one that lies about
    its size is stopped one byte past what it said.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._budget = unpack_limit()
        # one handle for the directory and every member: the report is opened once
        self._handle = open_source(path)
        try:
            self._zip = zipfile.ZipFile(self._handle)
        except (zipfile.BadZipFile, OSError) as exc:
            self._handle.close()
            raise FailgateError(f"not a readable zip archive: {exc}", path) from None
        infos = self._zip.infolist()
        self._members = {info.filename: info for info in infos}
        try:
            if len(self._members) != len(infos):
                raise FailgateError("two entries of this zip archive have one name; refusing "
                                    "an ambiguous archive", path)
            self._check_layout(infos)
        except BaseException:
            self.close()
            raise

    def _check_layout(self, infos: list[zipfile.ZipInfo]) -> None:
        """Each entry's local header and data end before the next entry begins."""
        end, previous = 0, None
        handle = self._handle
        for info in sorted(infos, key=lambda i: i.header_offset):
            if info.header_offset < end:
                raise FailgateError(
                    f"the zip entries {previous} and {info.filename} overlap (a zip bomb "
                    "shape: one member's data read again and again); refusing it",
                    self.path)
            handle.seek(info.header_offset)
            header = handle.read(_LOCAL_HEADER.size)
            if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
                raise FailgateError(f"member {info.filename}: no local header where the "
                                    "archive's directory says", self.path)
            fields = _LOCAL_HEADER.unpack(header)
            end = (info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]
                   + info.compress_size)
            previous = info.filename

    def __enter__(self) -> ZipArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._zip.close()
        self._handle.close()

    def names(self) -> list[str]:
        return list(self._members)

    def read(self, name: str) -> bytes:
        """A member's bytes; ``FailgateError`` naming the member when it cannot be read.

        Whatever the method, the member is decompressed in pieces with a running count
        and stopped one byte past the smaller of what its entry says and what is left of
        the archive's budget: a member that inflates past either is refused after that
        many bytes, never decompressed whole first (a 1 MB deflate member can say it
        holds a few bytes and inflate to a gigabyte).
        """
        info = self._members[name]
        if info.file_size > self._budget:
            left = self._budget < unpack_limit()
            raise FailgateError(
                f"member {name} would decompress to {info.file_size:,} bytes, past the "
                f"limit of {unpack_limit():,} for the whole archive (--max-report-bytes)"
                + (f"; {self._budget:,} are left after the members read before" if left
                   else "") + "; not decompressed", self.path)
        try:
            data = self._inflate(info, self._raw(info))
            if len(data) > info.file_size:
                raise ValueError(f"it inflates past the {info.file_size:,} bytes its entry "
                                 "says; stopped there, not decompressed further")
            if len(data) != info.file_size:
                raise ValueError(f"decompressed to {len(data):,} bytes, the archive says "
                                 f"{info.file_size:,}")
            if zlib.crc32(data) != info.CRC:
                raise ValueError("CRC check failed")
        except (NotImplementedError, OSError, ValueError, EOFError) as exc:
            raise FailgateError(f"member {name}: cannot be read: {exc}", self.path) from None
        self._budget -= len(data)
        return data

    def _raw(self, info: zipfile.ZipInfo) -> bytes:
        """The member's compressed bytes, found through its local header."""
        if info.flag_bits & 0x1:
            raise NotImplementedError("it is encrypted")
        handle = self._handle
        handle.seek(info.header_offset)
        header = handle.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size:
            raise ValueError("truncated local header")
        fields = _LOCAL_HEADER.unpack(header)
        if fields[0] != _LOCAL_SIGNATURE:
            raise ValueError("bad local header signature")
        handle.seek(fields[-2] + fields[-1], 1)  # the name and the extra field
        raw = handle.read(info.compress_size)
        if len(raw) != info.compress_size:
            raise ValueError("truncated member")
        return raw

    def _inflate(self, info: zipfile.ZipInfo, raw: bytes) -> bytes:
        """The member decompressed, at most one byte past its size (which ``read`` has
        checked against the budget)."""
        cap = info.file_size + 1
        method = info.compress_type
        if method == zipfile.ZIP_STORED:
            return raw[:cap]
        if method == ZSTD:
            return self._read_zstd(info, raw, cap)
        if method == zipfile.ZIP_DEFLATED:
            engine: _Stream = zlib.decompressobj(-zlib.MAX_WBITS)
        elif method == zipfile.ZIP_BZIP2:
            import bz2  # as zipfile does: an interpreter may be built without it

            engine = bz2.BZ2Decompressor()
        elif method == zipfile.ZIP_LZMA:
            engine, raw = _lzma(raw)
        else:
            raise NotImplementedError(f"compression method {method} is not supported")
        return _bounded(engine, raw, cap)

    def _read_zstd(self, info: zipfile.ZipInfo, raw: bytes, cap: int) -> bytes:
        decode = _decoder()
        if decode is None:
            from ..base.install import needs_extra

            raise FailgateError(
                f"member {info.filename} is zstd-compressed (zip method 93); "
                + needs_extra("reading it", "inspect", "zstandard, a zstd decoder"), self.path)
        try:
            return decode(raw, cap - 1)
        except Exception as exc:  # each decoder raises its own error type
            raise ValueError(f"invalid zstd data ({exc})") from None


_PIECE = 1 << 16  # bytes decompressed per call: memory never runs ahead of the count


class _Stream(Protocol):
    """What ``zlib``, ``bz2`` and ``lzma`` decompressors share: output bounded per call."""

    @property
    def eof(self) -> bool: ...

    def decompress(self, data: bytes, max_length: int = ..., /) -> bytes: ...


def _bounded(engine: _Stream, raw: bytes, cap: int) -> bytes:
    """Decompress ``raw`` in pieces of at most ``_PIECE`` bytes, stopping at ``cap`` bytes
    (the caller refuses a result that long) or where the data ends (a short result is
    refused by the caller too: its size is not the entry's)."""
    pieces: list[bytes] = []
    got = 0
    data = raw
    while got < cap and not engine.eof:
        try:
            piece = engine.decompress(data, min(_PIECE, cap - got))
        except Exception as exc:  # zlib.error, OSError, lzma.LZMAError: one message
            raise ValueError(f"invalid compressed data ({exc})") from None
        data = _leftover(engine)
        if not piece and not data and _needs_input(engine):
            break  # the data ended (an LZMA stream need not mark its end): the size decides
        got += len(piece)
        pieces.append(piece)
    return b"".join(pieces)


def _leftover(engine: _Stream) -> bytes:
    """Input the engine has not taken yet: zlib hands it back; bz2 and lzma keep it."""
    tail = getattr(engine, "unconsumed_tail", b"")
    return tail if isinstance(tail, bytes) else b""


def _needs_input(engine: _Stream) -> bool:
    """Whether the engine can give nothing more without more input (bz2 and lzma say;
    zlib has nothing held back when it gave nothing)."""
    return bool(getattr(engine, "needs_input", True))


def _lzma(raw: bytes) -> tuple[_Stream, bytes]:
    """A raw LZMA1 decoder for a zip LZMA member: its data starts with a version (2
    bytes), the size of the properties (2 bytes) and the properties (5 bytes)."""
    import lzma  # as zipfile does: an interpreter may be built without it

    if len(raw) < 4:
        raise ValueError("truncated LZMA header")
    (size,) = struct.unpack("<H", raw[2:4])
    props = raw[4:4 + size]
    if size != 5 or len(props) != 5 or props[0] >= 9 * 5 * 5:
        raise ValueError("bad LZMA properties")
    lc_lp_pb, dict_size = props[0], struct.unpack("<L", props[1:5])[0]
    pb, rest = divmod(lc_lp_pb, 45)
    lp, lc = divmod(rest, 9)
    filters = [{"id": lzma.FILTER_LZMA1, "dict_size": dict_size, "lc": lc, "lp": lp,
                "pb": pb}]
    try:
        engine = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters)
    except lzma.LZMAError as exc:
        raise ValueError(f"bad LZMA properties ({exc})") from None
    return engine, raw[4 + size:]
