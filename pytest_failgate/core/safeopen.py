"""Opening user files without ever blocking on one that is not a regular file.

A report or a taxonomy path may name a FIFO, a device or a symlink to
``/dev/zero``: opening a FIFO for reading blocks until a writer appears, and
reading ``/dev/zero`` never ends. So the path is checked before it is opened,
opened without blocking, and checked again on the open descriptor (the file may
have been swapped in between). Reports and YAML sources both come through here.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, BinaryIO

from .errors import FailgateError

if TYPE_CHECKING:
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


def ensure_regular(path: Path) -> None:
    """Refuse a path that is not a regular file, before any reader opens it."""
    try:
        _refuse(os.stat(path).st_mode, path)
    except OSError as exc:
        raise _os_error(exc, path) from None


def open_regular(path: Path, limit: int | None = None) -> BinaryIO:
    """Open a regular file for binary reading; anything else is a ``FailgateError``.

    ``limit`` refuses files larger than that many bytes (for untrusted input).
    """
    try:
        _refuse(os.stat(path).st_mode, path)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags)
    except OSError as exc:
        raise _os_error(exc, path) from None
    try:
        info = os.fstat(fd)
        _refuse(info.st_mode, path)
        if limit is not None and info.st_size > limit:
            raise FailgateError(
                f"the file has {info.st_size} bytes, more than the limit of {limit}", path)
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
