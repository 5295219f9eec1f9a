"""The ``pytest11`` entry point, kept small: pytest compiles it itself.

pytest rewrites the asserts of every module of an installed plugin's distribution (all of
``pytest_failgate``, not only this module) and of a ``-p`` module's package: each module is
parsed, rewritten and compiled into a cache of its own (``*-pytest-*.pyc``), which no
installer writes. So the first run after an install (every run in CI's fresh environment)
and every run where that cache cannot be written (``PYTHONDONTWRITEBYTECODE=1``, a read-only
site-packages) compiled from source each failgate module pytest imported: the plugin's
hooks on every run (3 ms or more, most of what the idle plugin cost), and the ~80 modules a
gate imports (0.7 s of CPU at a 1,000-case gate, more than the gate itself). failgate's
checks fail items with their own messages (``items.GateFailure``), never through a
rewritten ``assert``, so nothing is lost by importing them as Python imports them.

So this module, which pytest imports (and compiles) before any of failgate's code can run,
only imports the hooks (``hooks``) past the rewriter, with ``imports.PlainImports``, which
an active gate keeps just before pytest's hook for the run (``imports.import_plainly``). The
standard path finder's spec then loads the installer's ``.pyc``.
"""

from __future__ import annotations

import sys

from .imports import PlainImports

_finder = PlainImports()
sys.meta_path.insert(0, _finder)
try:
    from .hooks import (
        PYTEST_OPTIONS,
        Hookspecs,
        pytest_addhooks,
        pytest_addoption,
        pytest_cmdline_main,
        pytest_configure,
        resolved_config,
    )
finally:
    sys.meta_path.remove(_finder)
    del _finder

__all__ = ["PYTEST_OPTIONS", "Hookspecs", "pytest_addhooks", "pytest_addoption",
           "pytest_cmdline_main", "pytest_configure", "resolved_config"]
