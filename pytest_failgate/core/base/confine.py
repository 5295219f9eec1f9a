"""Where a run may read and write, when it serves someone else (the MCP server).

A client of ``failgate mcp`` names paths; the server must not become a way to read the
machine. Within ``confined(roots)`` every file failgate opens (reports, ceilings,
taxonomies: through ``safeopen``), every report a folder holds, and every path a call
names must lie, symbolic links followed, inside one of ``roots`` (the server's working
folder and the client's MCP roots). Within ``values_hidden()`` messages name a report
value only by its kind, so a secret in a report never comes back in an error.
Outside both (the CLI, pytest) nothing changes.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import FailgateError, display_path

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

_ROOTS: ContextVar[tuple[Path, ...] | None] = ContextVar("failgate_roots", default=None)
_HIDDEN: ContextVar[bool] = ContextVar("failgate_values_hidden", default=False)
HIDDEN = "(a value, not shown)"


@contextmanager
def confined(roots: Iterable[Path]) -> Iterator[None]:
    """Refuse every path outside ``roots`` (real paths) while inside the block."""
    token = _ROOTS.set(tuple(Path(os.path.realpath(root)) for root in roots))
    try:
        yield
    finally:
        _ROOTS.reset(token)


def inside(path: Path) -> bool:
    """Whether ``path`` (its real place) is inside the roots, or nothing is confined."""
    roots = _ROOTS.get()
    if roots is None:
        return True
    real = Path(os.path.realpath(path))
    return any(real == root or real.is_relative_to(root) for root in roots)


def check_inside(path: Path) -> None:
    """``FailgateError`` for a path outside the roots, named as the caller holds it."""
    if not inside(path):
        raise FailgateError("is outside the folders this server may read (its working folder "
                            "and the client's roots); symbolic links are followed", path)


@contextmanager
def values_hidden() -> Iterator[None]:
    token = _HIDDEN.set(True)
    try:
        yield
    finally:
        _HIDDEN.reset(token)


def shown(text: str) -> str:
    """A report value as a message shows it: ``text``, or a placeholder when hidden."""
    return HIDDEN if _HIDDEN.get() else text


__all__ = ["HIDDEN", "check_inside", "confined", "display_path", "inside", "shown",
           "values_hidden"]
