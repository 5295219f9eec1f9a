"""Reading zip archives whose members are zstd-compressed (zip method 93).

Inspect AI's default ``.eval`` logs are such archives; Python's ``zipfile`` lists
their members but cannot decompress them. The zstd decoder is an optional extra:
``compression.zstd`` (Python 3.14+) or the ``zstandard`` package (the
``inspect`` extra). Without one, reading a zstd member is a ``FailgateError`` that
says what to install; stored and deflated members need nothing.
"""

from __future__ import annotations

import importlib
import struct
import zipfile
import zlib
from typing import TYPE_CHECKING, Protocol

from ..base.errors import FailgateError
from ..base.safeopen import unpack_limit

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
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise FailgateError(f"not a readable zip archive: {exc}", path) from None
        infos = self._zip.infolist()
        self._members = {info.filename: info for info in infos}
        try:
            if len(self._members) != len(infos):
                raise FailgateError("two entries of this zip archive have one name; refusing "
                                    "an ambiguous archive", path)
            self._check_layout(infos)
        except BaseException:
            self._zip.close()
            raise

    def _check_layout(self, infos: list[zipfile.ZipInfo]) -> None:
        """Each entry's local header and data end before the next entry begins."""
        end, previous = 0, None
        with self.path.open("rb") as handle:
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
        self._zip.close()

    def names(self) -> list[str]:
        return list(self._members)

    def read(self, name: str) -> bytes:
        """A member's bytes; ``FailgateError`` naming the member when it cannot be read."""
        info = self._members[name]
        if info.file_size > self._budget:
            raise FailgateError(
                f"member {name} would decompress to {info.file_size:,} bytes, past the "
                f"limit of {unpack_limit():,} for the whole archive (--max-report-bytes); "
                "not decompressed", self.path)
        try:
            data = (self._zip.read(info) if info.compress_type != ZSTD
                    else self._read_zstd(info))
        except (zipfile.BadZipFile, NotImplementedError, OSError, ValueError) as exc:
            raise FailgateError(f"member {name}: cannot be read: {exc}", self.path) from None
        self._budget -= len(data)
        return data

    def _read_zstd(self, info: zipfile.ZipInfo) -> bytes:
        decode = _decoder()
        if decode is None:
            from ..base.install import needs_extra

            raise FailgateError(
                f"member {info.filename} is zstd-compressed (zip method 93); "
                + needs_extra("reading it", "inspect", "zstandard, a zstd decoder"), self.path)
        with self.path.open("rb") as handle:
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
        try:
            data = decode(raw, info.file_size)
        except Exception as exc:  # each decoder raises its own error type
            raise ValueError(f"invalid zstd data ({exc})") from None
        if len(data) != info.file_size:
            raise ValueError(f"decompressed to {len(data)} bytes, the archive says "
                             f"{info.file_size}")
        if zlib.crc32(data) != info.CRC:
            raise ValueError("CRC check failed")
        return data
