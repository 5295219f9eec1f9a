"""The one error type users see, and the helpers that give it a place.

Every problem with user input (a report, a ceilings file, an option) becomes a
``FailgateError`` carrying the file and the place in it, so the pytest plugin and
the CLI can print one line a user can click on, instead of a traceback.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path


class FailgateError(Exception):
    """A problem with the user's input, reported as ``file:line:col: message``.

    It crosses processes whole (an xdist worker's, the MCP server's call): ``__reduce__``
    rebuilds it from its message and place, and whatever else an instance carries, so a
    subclass with its own ``__init__`` and the copy on the other side read the same; its
    ``str`` never raises (a place whose path cannot be made relative is shown as given).
    """

    def __init__(
        self,
        message: str,
        path: Path | None = None,
        line: int | None = None,
        col: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.col = col

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (type(self), self.message, self.path, self.line, self.col),
                dict(vars(self)))

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        try:
            where = display_path(self.path)
        except OSError:  # the working directory is gone (a worker's, a test's)
            where = str(self.path)
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        return f"{where}: {self.message}"


def _rebuilt(kind: type[FailgateError], message: str, path: Path | None, line: int | None,
             col: int | None) -> FailgateError:
    """An unpickled ``FailgateError`` of ``kind``: made without its class's ``__init__``
    (a subclass may take other arguments), then given what every one has."""
    error = kind.__new__(kind)
    FailgateError.__init__(error, message, path, line, col)
    return error


def display_path(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


def closest(name: str, options: Iterable[str]) -> str | None:
    """The valid name a typo most likely meant, if any is close enough."""
    import difflib  # only when a name is wrong

    matches = difflib.get_close_matches(name, list(options), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(name: str, options: Iterable[str]) -> str:
    """A "; did you mean 'x'?" suffix, or a list of the valid names when none is close."""
    options = sorted(options)
    guess = closest(name, options)
    if guess is not None:
        return f"; did you mean '{guess}'?"
    return "; valid: " + ", ".join(options) if options else ""



def line_col(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of a character offset (computed only when reporting)."""
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, col


def os_error_line(exc: OSError) -> str:
    """An ``OSError`` in one line: the file (its start, when long) and the system's words."""
    name = exc.filename if isinstance(exc.filename, str) else None
    if name is not None and len(name) > 100:
        name = name[:60] + "..."
    return f"{name}: {exc.strerror or exc}" if name else str(exc.strerror or exc)
