"""Opening user files without ever blocking on one that is not a regular file.

A report or a taxonomy path may name a FIFO, a device or a symlink to
``/dev/zero``: opening a FIFO for reading blocks until a writer appears, and
reading ``/dev/zero`` never ends. So the path is checked before it is opened,
opened without blocking, and checked again on the open descriptor (the file may
have been swapped in between). Reports and YAML sources both come through here.
"""

from __future__ import annotations

import os
import re
import stat
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, BinaryIO

from .confine import check_inside
from .errors import FailgateError

BINARY_SUFFIXES = (".eval", ".zip", ".parquet", ".orc")  # may hold runs of NUL bytes
DEFAULT_UNPACKED = 1 << 30  # bytes an archive may decompress to without --max-report-bytes
_LIMIT: ContextVar[int | None] = ContextVar("failgate_read_limit", default=None)


@contextmanager
def read_limit(limit: int | None) -> Iterator[None]:
    """The byte limit of the report being read (``--max-report-bytes``), for what reads
    inside it: an archive's members (``unpack_limit``)."""
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def unpack_limit() -> int:
    """How many bytes an archive being read may decompress to, all members together: the
    report's limit when one is set, else ``DEFAULT_UNPACKED``."""
    limit = _LIMIT.get()
    return DEFAULT_UNPACKED if limit is None else limit


_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9}


def byte_limit(text: str | None) -> int | None:
    """``max-report-bytes`` as a number of bytes: ``5000000``, ``200MB``, ``2GB``. Beside
    the reads it limits, so every front end (the gate, the CLI, MCP) parses it here."""
    if text is None:
        return None
    found = re.fullmatch(r"\s*(\d+)\s*([KMG]?B?)\s*", text.upper())
    if found is None or found.group(2) not in _UNITS:
        raise FailgateError(f"max-report-bytes: '{text}' is not a size; write bytes or a "
                            "number with KB, MB or GB (200MB)")
    return int(found.group(1)) * _UNITS[found.group(2)]

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _refuse(mode: int, path: Path) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise FailgateError(f"expected a regular file, found {kind}", path)


def _os_error(exc: OSError, path: Path) -> FailgateError:
    if isinstance(exc, FileNotFoundError):
        return FailgateError("file not found", path)
    return FailgateError(f"cannot read: {exc.strerror or exc}", path)


def _check_size(size: int, limit: int | None, path: Path) -> None:
    if limit is not None and size > limit:
        raise FailgateError(f"the file has {size:,} bytes, more than the limit of {limit:,} "
                            "(--max-report-bytes)", path)


def _hole_at(fd: int, size: int) -> int | None:
    """Where the open file's first hole starts, if it has one the system can tell
    (SEEK_HOLE); the offset is left at 0."""
    seek_hole = getattr(os, "SEEK_HOLE", None)
    if seek_hole is None or size == 0:
        return None
    try:
        hole = os.lseek(fd, 0, seek_hole)
    except OSError:  # a file system without SEEK_HOLE
        return None
    finally:
        os.lseek(fd, 0, os.SEEK_SET)
    return hole if hole < size else None


def _refuse_sparse(hole: int | None, size: int, path: Path) -> None:
    if hole is not None:
        raise FailgateError(
            f"the file is sparse: {size:,} bytes long with a hole at byte "
            f"{hole:,} (holes read as NUL bytes, which no text report holds); refused "
            "before reading it", path)


def open_report(path: Path, limit: int | None = None, text: bool = False) -> BinaryIO:
    """``open_regular`` for a report, before any reader reads it: a FIFO or a device would
    block or never end, a file over ``limit`` is refused unread, and so is a ``text`` file
    (JSON, JSON Lines, CSV) with a hole: a sparse file's holes read as NUL bytes, which no
    text report holds, and a 2 GB hole would be read (into memory, as one line) before the
    first character could fail. Checked on the open descriptor, then read from it."""
    handle = open_regular(path, limit)
    if text:
        try:
            size = os.fstat(handle.fileno()).st_size
            _refuse_sparse(_hole_at(handle.fileno(), size), size, path)
        except BaseException:
            handle.close()
            raise
    return handle


def open_regular(path: Path, limit: int | None = None) -> BinaryIO:
    """Open a regular file for binary reading; anything else is a ``FailgateError``.

    ``limit`` refuses files larger than that many bytes (for untrusted input).
    """
    check_inside(path)
    try:
        _refuse(os.stat(path).st_mode, path)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags)
    except OSError as exc:
        raise _os_error(exc, path) from None
    try:
        info = os.fstat(fd)
        _refuse(info.st_mode, path)
        _check_size(info.st_size, limit, path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """The bytes of a regular file (see ``open_regular``)."""
    with open_regular(path, limit) as handle:
        try:
            return handle.read()
        except OSError as exc:
            raise _os_error(exc, path) from None


NAME_MAX, PATH_MAX = 255, 4096  # Linux's; macOS allows 255 and 1024 (found by pathconf)


def check_path_length(path: Path) -> None:
    """Refuse a path the system cannot name (a component over ``NAME_MAX`` bytes, the whole
    over ``PATH_MAX``) with one message, instead of an ``OSError`` wherever it is first used.
    """
    text = os.fsencode(path)
    if b"\0" in text:
        shown = os.fsdecode(text[:60]).replace("\0", "\\0")
        raise FailgateError(f"the path {shown} holds a NUL byte, which no file name can")
    name_max, path_max = NAME_MAX, PATH_MAX
    try:
        name_max = os.pathconf("/", "PC_NAME_MAX")
        path_max = os.pathconf("/", "PC_PATH_MAX")
    except (AttributeError, OSError, ValueError):  # Windows, or an unknown name
        pass
    longest = max((len(part) for part in text.split(os.fsencode(os.sep))), default=0)
    if longest > name_max or len(text) > path_max:
        shown = os.fsdecode(text[:60]) + "..."
        raise FailgateError(f"the path {shown} is too long ({len(text):,} bytes; a name may "
                            f"have {name_max}, a path {path_max})")
