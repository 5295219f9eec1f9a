"""The report file being read, opened once and handed on to whatever reads it.

Reading one report asks for its bytes several times: its first 64 KiB to learn its
format (``Reader.claims``), then the whole file or its lines to decode the cases, then,
on an error, the bytes again to say where. Each of those used to open the file anew.
Here the file is opened once (``open_report``: checked as a regular file, within the
size limit, not sparse), and every later read of the same path, whether by failgate's own
shapes or by a reader through the helpers it is given (``read_bytes``, ``json_lines``,
``load_json``, ``parse_json_file`` of ``pytest_failgate.api``), is served from that handle.
"""

from __future__ import annotations

import io
import os
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, BinaryIO

from ..base.errors import FailgateError
from ..base.safeopen import BINARY_SUFFIXES, open_regular, open_report

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

HEAD_BYTES = 1 << 16  # what a reader's ``claims`` sees


class ReportSource:
    """One report file, opened once; its head, its bytes and its lines come from that
    handle. The whole file's bytes are kept once read, until ``release``."""

    def __init__(self, path: Path, limit: int | None = None) -> None:
        self.path = path
        self._handle = open_report(path, limit, text=path.suffix not in BINARY_SUFFIXES)
        self._data: bytes | None = None
        self._head: bytes | None = None

    def close(self) -> None:
        self._handle.close()

    def head(self) -> bytes:
        """The file's first ``HEAD_BYTES`` bytes (as written: a byte-order mark kept)."""
        if self._head is None:
            self._head = (self._data[:HEAD_BYTES] if self._data is not None
                          else self._read_at(0, HEAD_BYTES))
        return self._head

    def data(self) -> bytes:
        """The whole file's bytes."""
        if self._data is None:
            self._data = self._read_at(0, -1)
        return self._data

    def release(self) -> None:
        """Forget the bytes (a large report's need not outlive decoding): asked again, they
        are read again from the open handle."""
        self._data = None

    def handle(self) -> BinaryIO:
        """The open file from its first byte (the bytes, when already read), for a reader
        of one line at a time. Closing it leaves the file open for the next read."""
        if self._data is not None:
            return io.BytesIO(self._data)
        self._handle.seek(0)  # the descriptor's offset, shared with its duplicate
        return os.fdopen(os.dup(self._handle.fileno()), "rb")

    def _read_at(self, offset: int, size: int) -> bytes:
        try:
            self._handle.seek(offset)
            return self._handle.read(size)
        except OSError as exc:
            raise FailgateError(f"cannot read: {exc.strerror or exc}", self.path) from None


_CURRENT: ContextVar[ReportSource | None] = ContextVar("failgate_report_source", default=None)


@contextmanager
def reading(path: Path, limit: int | None = None) -> Iterator[ReportSource]:
    """The report at ``path`` opened once, and served to every read of it until the end
    of the block (``open_source``, ``source_bytes``)."""
    source = ReportSource(path, limit)
    token = _CURRENT.set(source)
    try:
        yield source
    finally:
        _CURRENT.reset(token)
        source.close()


def _current(path: Path) -> ReportSource | None:
    source = _CURRENT.get()
    return source if source is not None and source.path == path else None


def source_bytes(path: Path) -> bytes:
    """The bytes of ``path``: the report being read's, from its open handle; any other
    file's (a reader's sibling file) read as ``read_regular`` reads them."""
    source = _current(path)
    if source is not None:
        return source.data()
    with open_regular(path) as handle:
        try:
            return handle.read()
        except OSError as exc:
            raise FailgateError(f"cannot read: {exc.strerror or exc}", path) from None


def open_source(path: Path) -> BinaryIO:
    """``path`` open for reading from its first byte: the report being read's own handle
    (closing it leaves it open), any other file opened as ``open_regular`` opens it."""
    source = _current(path)
    return source.handle() if source is not None else open_regular(path)
