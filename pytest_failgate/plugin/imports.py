"""Importing failgate's own modules as Python imports them, past pytest's assert rewriter.

Why: see the entry module (``plugin/__init__.py``), which imports the hooks with
``PlainImports``; an active gate keeps it on ``sys.meta_path`` for its run
(``import_plainly``).
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec, PathFinder
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

    import pytest


class PlainImports:
    """A meta path finder for failgate's own submodules: the standard path finder's spec."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if not fullname.startswith("pytest_failgate."):
            return None  # anything else: the finders after this one, pytest's first
        return PathFinder.find_spec(fullname, path, target)


def import_plainly(config: pytest.Config) -> None:
    """Put ``PlainImports`` just before this run's assert rewriting hook (none with
    ``--assert=plain``: nothing to do), until the run's configuration is cleaned up: the
    gate's modules then load from the installer's bytecode."""
    hook = getattr(config.pluginmanager, "rewrite_hook", None)
    if hook is None or hook not in sys.meta_path:
        return
    finder = PlainImports()
    sys.meta_path.insert(sys.meta_path.index(hook), finder)

    def remove() -> None:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)

    config.add_cleanup(remove)
