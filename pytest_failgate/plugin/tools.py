"""Reports that a tool run in this very pytest session would write only after it.

DeepEval's test cases are pytest tests (``assert_test``), and DeepEval writes their run to
``.deepeval/`` only when ``deepeval test run`` returns, after its pytest session: plain
``pytest`` never writes it. So in a session that runs DeepEval's test cases, a DeepEval
report read by the gate is an earlier run's, however recent it looks; its items fail with
the step to take instead of gating it (the reader itself refuses ``./.deepeval`` inside
``deepeval test run``). The check runs when a gate item runs: pytest has collected every
test by then, whichever order collection met the ceilings file in, on every xdist worker.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Sequence

    from _pytest.nodes import Node

    from ..core.base.result import ReportResult

_USERS: pytest.StashKey[list[str]] = pytest.StashKey()  # node ids of DeepEval's tests


def uses_deepeval(module: ModuleType) -> bool:
    """Whether a test module holds something of DeepEval's (``assert_test``, ``evaluate``,
    a metric class, the module itself)."""
    for value in vars(module).values():
        if isinstance(value, ModuleType):
            name = value.__name__
        elif isinstance(value, type) or callable(value):
            name = getattr(value, "__module__", None) or ""
        else:
            continue
        if name == "deepeval" or name.startswith("deepeval."):
            return True
    return False


def deepeval_tests(session: pytest.Session) -> list[str]:
    """The node ids of the session's tests whose module uses DeepEval (computed once)."""
    found = session.stash.get(_USERS, None)
    if found is None:
        modules: dict[int, bool] = {}
        found = []
        for item in session.items:
            module = getattr(item, "module", None)
            if not isinstance(module, ModuleType):
                continue
            if id(module) not in modules:
                modules[id(module)] = uses_deepeval(module)
            if modules[id(module)]:
                found.append(item.nodeid)
        session.stash[_USERS] = found
    return found


def report_of(item: pytest.Item) -> ReportResult | None:
    """The report a gate item checks (``None`` for the guard and for other tests)."""
    from ..core.base.result import ReportResult

    node: Node | None = item
    while node is not None:
        report = getattr(node, "report", None)
        if isinstance(report, ReportResult):
            return report
        node = node.parent
    return None


def earlier_run(report: ReportResult, tests: Sequence[str], started: float, ceilings: str
                ) -> str | None:
    """Why a DeepEval report cannot be this session's run (``None`` for other formats, or a
    session without DeepEval's tests)."""
    if report.format != "deepeval" or not tests:
        return None
    try:
        written = Path(report.path).stat().st_mtime
    except OSError:
        written = None
    when = ("" if written is None else
            f" (written {_ago(started - written)} before this session started)"
            if written < started else " (written while this session ran, by another process)")
    shown = tests[0] + (f" and {len(tests) - 1} more" if len(tests) > 1 else "")
    return (f"{report.path}: this session runs DeepEval's test cases ({shown}), and pytest "
            f"alone never writes DeepEval's results: this file is an earlier run's{when}. "
            "Run them with `deepeval test run`, then gate in a step of its own: "
            "`failgate check .deepeval/`, or pytest with the gate alone "
            f"(`pytest --failgate=.deepeval/ {ceilings}`)")


def _ago(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return f"{max(int(seconds), 1)} s"
    if minutes < 120:
        return f"{minutes} min"
    hours = minutes // 60
    return f"{hours} h" if hours < 48 else f"{hours // 24} days"
