"""The gate's pytest nodes: the ceilings file, one collector per report, one item per check.

Node ids read as ``ceilings.yaml::real100/eval_summary::retrieval_miss``: the tree, its
names, outcomes and properties are ``core.base.items``'s, which every other output names
items by. Items hold their verdict already (the gate ran at collection); running one only
reports it, so items are cheap, deterministic and identical on every worker.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import pytest

from ..core.base.errors import FailgateError
from ..core.base.formatting import inert_lines
from ..core.base.items import Node, gate_nodes
from .keys import SESSION, ActiveGate

if TYPE_CHECKING:
    from collections.abc import Iterable

    from _pytest._code.code import ExceptionInfo, TerminalRepr, TracebackStyle

    from ..core.base.result import GuardResultModel, ReportResult

MARKER = "failgate"
NOT_RUN = "gate"  # the name of the item of a gate that could not run
# How a person runs the project's own tests without the gate (docs/index.md): a deselection
# on the command line, shown in the summary; the same in the configuration fails the run.
WITHOUT_THE_GATE = ('the gate did not run, so this run fails; to run the tests without it '
                    '(where the reports are not made), deselect it on the command line: '
                    'pytest -m "not failgate"')


class FailgateWarning(UserWarning):
    """A check that passed but is worth a look (a WARN verdict)."""


class GateFailure(Exception):
    """A gate item failed; its message is the whole report, no traceback needed."""


class _ReportsError(Exception):
    """A collector could not be built; the message names the file and place."""


def _session(node: pytest.Collector) -> ActiveGate:
    return node.config.stash[SESSION]


def _short(excinfo: ExceptionInfo[BaseException]) -> str | None:
    """The one-line message of a failure that is the user's input, else None.

    Asked before pytest's traceback is built: building it parses the source of every frame
    (most of the CPU a failing gate run spent), for a representation the message replaces.
    """
    if isinstance(excinfo.value, FailgateError | GateFailure | _ReportsError):
        from ..output.github import inert

        return inert(str(excinfo.value))  # its report's content is never a CI command
    return None


class _QuietCollector(pytest.Collector):
    """A collector whose own errors are user input problems: one message, no traceback."""

    def repr_failure(  # type: ignore[override]  # as pytest's own Collector does
        self, excinfo: ExceptionInfo[BaseException]
    ) -> str | TerminalRepr:
        short = _short(excinfo)
        return super().repr_failure(excinfo) if short is None else short


class _QuietItem(pytest.Item):
    """An item whose failure is its message, not a traceback into failgate."""

    def repr_failure(
        self, excinfo: ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        short = _short(excinfo)
        return super().repr_failure(excinfo, style=style) if short is None else short


class GateFile(pytest.File, _QuietCollector):
    """The ceilings file, collected as one child per report."""

    def collect(self) -> Iterable[ReportNode | GuardItem | NotRunItem]:
        session = _session(self)
        session.file_collected = True  # pytest kept this file: the gate need not be added
        try:
            result = session.run()
        except FailgateError as exc:  # one failing item: the project's own tests still run
            yield NotRunItem.from_parent(self, name=NOT_RUN, error=exc)
            return
        reports: dict[int, list[Node]] = {}
        for node in gate_nodes(result):
            if node.kind == "guard":
                assert node.guard is not None
                yield GuardItem.from_parent(self, name=node.name, guard=node.guard, node=node)
            else:
                reports.setdefault(id(node.report), []).append(node)
        for nodes in reports.values():
            report = nodes[0].report
            assert report is not None
            yield ReportNode.from_parent(self, name=nodes[0].parts[0], report=report,
                                         nodes=nodes)


class ReportNode(_QuietCollector):
    """One report: an item per category, the total when it has a ceiling, and consistency."""

    def __init__(self, *, report: ReportResult, nodes: list[Node], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report = report
        self.nodes = nodes

    def collect(self) -> Iterable[GateItem | SliceNode | LoadItem]:
        slices: dict[str, list[Node]] = {}
        for node in self.nodes:
            if node.kind == "load":  # an error item; the other reports are still gated
                yield LoadItem.from_parent(self, name=node.name, error=node.message, node=node)
            elif len(node.parts) == 2:
                yield GateItem.from_parent(self, name=node.name, node=node)
            else:
                slices.setdefault(node.parts[1], []).append(node)
        for name, nodes in slices.items():
            yield SliceNode.from_parent(self, name=name, nodes=nodes)


class SliceNode(_QuietCollector):
    """The cases of a report whose slice field has one value (``query_type=comparison``)."""

    def __init__(self, *, nodes: list[Node], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.nodes = nodes

    def collect(self) -> Iterable[GateItem]:
        for node in self.nodes:
            yield GateItem.from_parent(self, name=node.name, node=node)


class GateItem(_QuietItem):
    """One count against its ceiling (or a report's recorded-versus-recomputed check)."""

    def __init__(self, *, node: Node, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        assert node.row is not None
        self.node, self.row = node, node.row
        self.add_marker(MARKER)
        self.user_properties.extend(node.properties)

    def runtest(self) -> None:
        for text in self.row.warnings:
            warnings.warn(FailgateWarning(text), stacklevel=1)
        if self.row.verdict == "record":  # pytest's word for init
            pytest.skip(f"--failgate-init records {self.row.count} as the ceiling")
        if self.node.outcome == "skipped":  # its report is inconclusive: its own item says why
            pytest.skip(self.node.message)
        if self.node.outcome == "failed":
            raise GateFailure(self.node.message)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        line = None
        if self.row.source is not None:
            line = int(self.row.source.rsplit(":", 1)[1]) - 1
        return self.path, line, f"{self.row.report}::{self.row.label}"


class LoadItem(_QuietItem):
    """A report that did not load: one failing item, so the rest of the run goes on."""

    def __init__(self, *, error: str, node: Node, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.add_marker(MARKER)
        self.user_properties.extend(node.properties)

    def runtest(self) -> None:
        raise _ReportsError(inert_lines(self.error))  # it may quote the report's content

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.parent.name if self.parent else ''}: not loaded"


class GuardItem(_QuietItem):
    """No ceiling was loosened since the guard's git ref without a reason (``--failgate-guard``)."""

    def __init__(self, *, guard: GuardResultModel, node: Node, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.guard, self.node = guard, node
        self.add_marker(MARKER)
        self.user_properties.extend(node.properties)

    def runtest(self) -> None:
        if self.node.outcome == "failed":
            raise GateFailure(self.node.message)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"guard against {self.guard.ref}"


class NotRunItem(_QuietItem):
    """The gate could not run (a report path that is not there, a ceilings file that does
    not load): one failing item saying why, not a collection error, which would stop
    pytest before any of the project's own tests ran. It fails whenever it runs, so a run
    of a gate that could not run never passes (``session`` makes its exit status 2)."""

    def __init__(self, *, error: FailgateError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.add_marker(MARKER)

    def runtest(self) -> None:
        raise GateFailure(f"{inert_lines(str(self.error))}\n{WITHOUT_THE_GATE}")

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, "the gate could not run"


def is_gate_item(item: pytest.Item) -> bool:
    """Whether an item is one of the gate's (a ceiling, a report that did not load, the
    guard, the gate that could not run)."""
    return isinstance(item, GateItem | LoadItem | GuardItem | NotRunItem)
