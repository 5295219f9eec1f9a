"""failgate's own modules imported as Python imports them, not through pytest's assert rewriter.

pytest rewrites the asserts of every module of an installed plugin's distribution (all of
``pytest_failgate``, not only the entry module) and of a ``-p`` module's package: each
module is parsed, rewritten and compiled into a cache of its own (``*-pytest-*.pyc``),
which the installer never writes. So the first run after an install, every run in CI's
fresh checkout, and every run where that cache cannot be written
(``PYTHONDONTWRITEBYTECODE=1``, a read-only site-packages) compiled the ~80 modules a gate
imports from source: 0.7 s of CPU at a 1,000-case gate, more than the gate itself. The
gate's checks fail items with their own messages (``items.GateFailure``), never through a
rewritten ``assert``, so nothing is lost by importing them plainly.

``PlainImports`` sits just before pytest's hook on ``sys.meta_path`` while an active gate
runs (``plugin.pytest_configure``) and finds failgate's modules with the standard path
finder, whose spec loads the installer's ``.pyc``. The entry module (and the package's
``__init__``) were imported before any hook of ours ran, and this module before it is
in place: those few stay pytest's.
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec, PathFinder
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

    import pytest

_PACKAGE = __name__.split(".", 1)[0] + "."


class PlainImports:
    """A meta path finder for failgate's own submodules: the standard path finder's spec."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if not fullname.startswith(_PACKAGE):
            return None  # anything else: the finders after this one, pytest's first
        return PathFinder.find_spec(fullname, path, target)


def import_plainly(config: pytest.Config) -> None:
    """Put ``PlainImports`` just before this run's assert rewriting hook (none with
    ``--assert=plain``: nothing to do), until the run's configuration is cleaned up."""
    hook = getattr(config.pluginmanager, "rewrite_hook", None)
    if hook is None or hook not in sys.meta_path:
        return
    finder = PlainImports()
    sys.meta_path.insert(sys.meta_path.index(hook), finder)

    def remove() -> None:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)

    config.add_cleanup(remove)
