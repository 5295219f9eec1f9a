"""The gate's pytest nodes: the ceilings file, one collector per report, one item per check.

Node ids read as ``ceilings.yaml::real100/eval_summary::retrieval_miss``. Items
hold their verdict already (the gate ran at collection); running one only
reports it, so items are cheap, deterministic and identical on every worker.
"""

from __future__ import annotations

import warnings
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import pytest

from ..core.base.errors import FailgateError
from ..core.base.formatting import inert_lines, one_line
from .keys import SESSION, ActiveGate
from .outcomes import GUARD_KEY, LOAD_KEY, ROW_KEYS

if TYPE_CHECKING:
    from collections.abc import Iterable

    from _pytest._code.code import ExceptionInfo, TerminalRepr, TracebackStyle

    from ..core.base.result import GuardResultModel, ReportResult, Row

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
        if result.guard is not None:
            yield GuardItem.from_parent(self, name="guard", guard=result.guard)
        for report in result.reports:
            # a node id on one line: a report's name comes from its file's, which its author
            # chose (pytest prints node ids at the start of lines)
            yield ReportNode.from_parent(self, name=one_line(report.name), report=report)


class ReportNode(_QuietCollector):
    """One report: an item per category, the total when it has a ceiling, and consistency."""

    def __init__(self, *, report: ReportResult, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report = report

    def collect(self) -> Iterable[GateItem | SliceNode | LoadItem]:
        if self.report.error is not None:  # an error item; the other reports are still gated
            yield LoadItem.from_parent(self, name="load", error=self.report.error)
            return
        slices: dict[str, list[Row]] = {}
        for row in self.report.rows:
            if row.slice is None:
                yield GateItem.from_parent(self, name=row.name, row=row)
            else:
                slices.setdefault(row.slice, []).append(row)
        for name, rows in slices.items():
            yield SliceNode.from_parent(self, name=one_line(name), rows=rows)


class SliceNode(_QuietCollector):
    """The cases of a report whose slice field has one value (``query_type=comparison``)."""

    def __init__(self, *, rows: list[Row], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows = rows

    def collect(self) -> Iterable[GateItem]:
        for row in self.rows:
            yield GateItem.from_parent(self, name=row.name, row=row)


class GateItem(_QuietItem):
    """One count against its ceiling (or a report's recorded-versus-recomputed check)."""

    def __init__(self, *, row: Row, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.row = row
        self.add_marker(MARKER)
        self.user_properties.extend(_properties(row, self.parent))

    def runtest(self) -> None:
        row = self.row
        for text in row.warnings:
            warnings.warn(FailgateWarning(text), stacklevel=1)
        if row.verdict == "record":
            pytest.skip(f"--failgate-init records {row.count} as the ceiling")
        if row.verdict == "skip":  # its report is inconclusive: its own item says why
            pytest.skip(row.message)
        if row.undecided:  # the labels cannot decide it: its report's inconclusive item fails
            pytest.skip(row.message.splitlines()[0])
        if row.failing:
            raise GateFailure(row.message)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        line = None
        if self.row.source is not None:
            line = int(self.row.source.rsplit(":", 1)[1]) - 1
        return self.path, line, f"{self.row.report}::{self.row.label}"


class LoadItem(_QuietItem):
    """A report that did not load: one failing item, so the rest of the run goes on."""

    def __init__(self, *, error: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.add_marker(MARKER)
        parent = self.parent
        self.user_properties.append(
            (LOAD_KEY, parent.report.name if isinstance(parent, ReportNode) else ""))

    def runtest(self) -> None:
        raise _ReportsError(inert_lines(self.error))  # it may quote the report's content

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.parent.name if self.parent else ''}: not loaded"


class GuardItem(_QuietItem):
    """No ceiling was loosened since the guard's git ref without a reason (``--failgate-guard``)."""

    def __init__(self, *, guard: GuardResultModel, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.guard = guard
        self.add_marker(MARKER)
        self.user_properties.append((GUARD_KEY, guard.ref))

    def runtest(self) -> None:
        if not self.guard.passed:
            raise GateFailure("\n".join(self.guard.lines))

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


def _properties(row: Row, parent: Any) -> list[tuple[str, object]]:
    """JUnit ``user_properties``: what the item measured, readable by CI tools."""
    props: list[tuple[str, object]] = list(zip(ROW_KEYS, row.key, strict=True))
    if row.count is not None:
        props.append(("count", row.count))
    props.append(("ceiling", row.limit if row.limit is not None else row.ceiling))
    while isinstance(parent, SliceNode):
        parent = parent.parent
    n_cases = parent.report.n_cases if isinstance(parent, ReportNode) and not row.slice else None
    if n_cases is not None:
        props.append(("cases", n_cases))
        if row.count is not None:
            props.append(("rate", _decimal(Fraction(row.count, n_cases))))
    props.append(("verdict", row.verdict))
    if row.baseline is not None:
        props += [("baseline_new", row.baseline.n_new), ("baseline_fixed", row.baseline.n_fixed),
                  ("baseline_p", f"{row.baseline.p_value:.6g}"),
                  ("baseline_verdict", row.baseline.verdict)]
    if row.value is not None:
        props += [("value", f"{row.value:.6g}"), ("effective_n", row.effective_n)]
    return props


def _decimal(value: Fraction, places: int = 6) -> str:
    scaled = round(value * 10**places)
    return f"{scaled // 10**places}.{scaled % 10**places:0{places}d}"
