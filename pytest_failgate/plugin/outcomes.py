"""The gate's own outcomes, as reported, checked against the ones it computed.

A gate item's verdict is decided before it runs (the gate ran at collection); running
it only reports it. Other code can still rewrite the report on its way: a conftest.py
``pytest_runtest_makereport`` wrapper that sets ``outcome = "passed"``, a
``pytest_runtest_logreport`` hook that edits the report before the terminal sees it,
a ``pytest_report_teststatus`` that files it as passed, an ``xfail`` mark added to a
gate item. Each would turn a failed gate green. So the session checks, at its end,
that every gate item the gate failed and that reported was reported failed, both as
the reports arrived and in the terminal's tallies, and fails the run otherwise, naming
the hooks outside pytest and failgate that could have rewritten it.

Only the direction that lets the gate accept more is checked: a gate item made to fail
(a setup error, an earlier run's report) is stricter, never a rewrite.
"""

from __future__ import annotations

import inspect
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.base.classes import dataclass

# what names a gate item in its report's ``user_properties``: the item tree's keys
from ..core.base.items import GUARD_KEY, LOAD_KEY, ROW_KEYS

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pytest

    from ..core.base.result import GateResult

# The hooks through which a plugin or conftest.py can change how a report ends.
REPORT_HOOKS = ("pytest_runtest_makereport", "pytest_runtest_logreport",
                "pytest_report_teststatus", "pytest_runtest_protocol", "pytest_runtest_setup",
                "pytest_runtest_call", "pytest_collection_modifyitems")
# The hooks through which a plugin or conftest.py can set the session's exit status.
EXIT_HOOKS = ("pytest_sessionfinish", "pytest_unconfigure", "pytest_cmdline_main",
              "pytest_runtestloop")
# The modules whose hooks are trusted: pytest's, pluggy's, xdist's, failgate's own.
_TRUSTED = ("_pytest", "pytest", "pluggy", "xdist", "pytest_failgate")

Identity = tuple[str, ...]


def identity(properties: Iterable[tuple[str, object]]) -> Identity | None:
    """Which gate item a report is, from its properties: a row, a report that did not
    load, or the guard; None for any other test."""
    found = dict(properties)
    row = tuple(found.get(name) for name in ROW_KEYS)
    if all(isinstance(part, str) for part in row):
        return ("row", *(str(part) for part in row))
    if isinstance(found.get(LOAD_KEY), str):
        return ("load", str(found[LOAD_KEY]))
    if isinstance(found.get(GUARD_KEY), str):
        return ("guard", str(found[GUARD_KEY]))
    return None


def expected_failures(result: GateResult) -> set[Identity]:
    """The gate items the gate itself failed."""
    failed: set[Identity] = {("row", *row.key) for row in result.rows if row.failing}
    failed |= {("load", report.name) for report in result.reports if report.error is not None}
    if result.guard is not None and not result.guard.passed:
        failed.add(("guard", result.guard.ref))
    return failed


@dataclass
class OutcomeCheck:
    """The gate items' reports as they arrived: node id and whether any phase failed."""

    seen: dict[Identity, tuple[str, str]] = field(default_factory=dict)  # (node id, outcome)
    # an outcome other than failed, as any hook saw it (a report is looked at before the
    # other hooks edit it and after: ``session.pytest_runtest_logreport``)
    softened: dict[Identity, str] = field(default_factory=dict)
    failures: set[Identity] | None = None  # the gate's (``expected_failures``), once

    def expected(self, result: GateResult) -> set[Identity]:
        if self.failures is None:
            self.failures = expected_failures(result)
        return self.failures

    def record(self, report: pytest.TestReport) -> None:
        found = identity(report.user_properties)
        if found is None or (report.when != "call" and report.outcome == "passed"):
            return
        outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
        if self.seen.get(found, ("", ""))[1] != "failed":  # a failed phase stays failed
            self.seen[found] = (report.nodeid, outcome)
        if outcome != "failed":
            self.softened.setdefault(found, outcome)

    def restore(self, report: pytest.TestReport, result: GateResult,
                force: bool = False) -> None:
        """Give a gate item the gate failed its failure back, when a hook reported it
        otherwise (passed, skipped, xfailed), before pytest and the terminal count it:
        the item then reads as failed everywhere, with a line saying why; the rewrite
        itself was recorded first (``record``) and is named at the end (``problems``)."""
        found = identity(report.user_properties)
        if found is None or (report.outcome == "failed" and not force) or not (
                report.when == "call" or report.outcome == "skipped"):
            return
        if found not in self.expected(result):
            return
        shown = "xfailed" if hasattr(report, "wasxfail") else report.outcome
        if report.outcome == "failed":  # failed, and filed otherwise (a teststatus hook)
            return
        if hasattr(report, "wasxfail"):
            del report.wasxfail
        report.outcome = "failed"
        report.longrepr = (f"the gate failed this item; another hook reported it {shown}: "
                           "the gate's outcome stands (see the failgate summary)")

    def recount(self, result: GateResult, config: pytest.Config) -> None:
        """Count every gate item the gate failed as failed in the terminal's tallies,
        whatever a later hook filed it as (a ``pytest_report_teststatus``, an edit after
        ``restore``): the summary line is written from them after every
        ``pytest_sessionfinish``, so it then agrees with the exit status."""
        terminal: Any = config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None:
            return
        nodeids = {self.seen[item][0] for item in self.expected(result) if item in self.seen}
        for category, reports in list(terminal.stats.items()):
            if category in ("failed", ""):  # "": the phases no tally counts
                continue
            moved = [report for report in reports if getattr(report, "nodeid", None) in nodeids
                     and (getattr(report, "when", None) == "call"
                          or getattr(report, "outcome", None) != "passed")]
            for report in moved:
                reports.remove(report)
                self.restore(report, result, force=True)
                terminal.stats.setdefault("failed", []).append(report)
            if moved and not reports:
                del terminal.stats[category]
        getattr(terminal, "_set_main_color", lambda: None)()  # the colour of the tallies

    def ran_failed(self, result: GateResult) -> bool:
        """Whether a gate item the gate failed ran (whatever it was reported as): the
        gate's own verdict, which the exit status then keeps (``exitstatus``)."""
        return bool(self.expected(result) & self.seen.keys())

    def problems(self, result: GateResult, config: pytest.Config) -> list[str]:
        """One line per gate item the gate failed that was reported otherwise, then the
        hooks that could have done it; empty when every outcome is the gate's."""
        stats = _terminal_failed(config)
        rewritten = []
        for item in sorted(expected_failures(result)):
            if item not in self.seen:
                continue  # not run: deselected, or stopped (the selection check says so)
            nodeid, outcome = self.seen[item]
            if outcome != "failed" or item in self.softened:
                rewritten.append(f"{nodeid} (reported {self.softened.get(item, outcome)})")
            elif stats is not None and nodeid not in stats:
                rewritten.append(f"{nodeid} (not counted as failed in the summary)")
        if not rewritten:
            return []
        hooks = rewriters(config)
        by = (f"by {', '.join(hooks)}" if hooks
              else "by code outside failgate (no plugin or conftest.py hook of its own)")
        return [f"failgate: the gate failed {len(rewritten)} item(s), but another hook "
                f"rewrote the outcome {by}; the gate's outcome stands:",
                *(f"  {line}" for line in rewritten)]


def _terminal_failed(config: pytest.Config) -> set[str] | None:
    """The node ids the terminal counts as failed (None without a terminal)."""
    terminal: Any = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is None:
        return None
    return {str(report.nodeid) for report in terminal.stats.get("failed", [])
            if hasattr(report, "nodeid")}


def rewriters(config: pytest.Config, hooks: tuple[str, ...] = REPORT_HOOKS) -> list[str]:
    """The modules, outside pytest and failgate, with a hook that can change a report's
    outcome: ``conftest.py (pytest_runtest_makereport)``. The project's own (conftest.py
    files, ``-p`` modules) come first and alone when there are any: a pull request can
    edit those, not the installed plugins."""
    manager = config.pluginmanager
    installed = {id(plugin) for plugin, _ in manager.list_plugin_distinfo()}
    local: dict[str, list[str]] = {}
    others: dict[str, list[str]] = {}
    for name in hooks:
        caller = getattr(manager.hook, name, None)
        for impl in caller.get_hookimpls() if caller is not None else ():
            module = inspect.getmodule(impl.function)
            qualified = module.__name__ if module is not None else impl.plugin_name
            if qualified.split(".")[0] in _TRUSTED:
                continue
            where = _where(module, config) if module is not None else qualified
            found = others if id(impl.plugin) in installed else local
            found.setdefault(where, []).append(name)
    return [f"{where} ({', '.join(names)})" for where, names in (local or others).items()]


def _where(module: Any, config: pytest.Config) -> str:
    """A module as a person finds it: its file relative to the rootdir, else its name."""
    source = getattr(module, "__file__", None)
    if not source:
        return str(module.__name__)
    path = Path(source)
    try:
        return path.relative_to(config.rootpath).as_posix()
    except ValueError:
        return str(module.__name__)
