"""The gate's item tree, once: ``ceilings.yaml::report::slice::name`` for every output.

pytest collects these items (``plugin/items.py``: a collector per report and per slice, an
item per node), the CLI and the CI step name failing items by them, and ``failgate check
--junit`` writes them as pytest's ``--junitxml`` would (``output/junit.py``): the same node
ids, outcomes and properties, from one walk of the result. A node's parts are one line
each (a report's name and a slice's value are their authors': pytest prints node ids at
the start of lines).

No pytest here: the core's result in, plain records out.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Literal

from .classes import dataclass
from .formatting import one_line

if TYPE_CHECKING:
    from .result import GateResult, GuardResultModel, ReportResult, Row

# the ``user_properties`` keys that say which item a test report is (``plugin/outcomes.py``
# reads them back)
ROW_KEYS = ("failgate_report", "failgate_slice", "failgate_item")
LOAD_KEY = "failgate_load"
GUARD_KEY = "failgate_guard"
GUARD = "guard"  # the guard item's name
LOAD = "load"  # the name of a report's item when it did not load

Outcome = Literal["passed", "failed", "skipped"]
Kind = Literal["guard", "load", "row"]


@dataclass(frozen=True)
class Node:
    """One gate item: where it sits (``parts``, after the ceilings file), what it is, how
    it ends and what it measured (pytest's ``user_properties``)."""

    parts: tuple[str, ...]  # ("guard",), (report, "load"), (report, name), (report, slice, name)
    kind: Kind
    outcome: Outcome
    message: str  # the failure, or why it is skipped ("" when it passed)
    properties: tuple[tuple[str, object], ...]
    row: Row | None = None
    report: ReportResult | None = None
    guard: GuardResultModel | None = None

    @property
    def name(self) -> str:
        return self.parts[-1]

    def node_id(self, ceilings_path: str) -> str:
        """The item's pytest node id, the ceilings file's path first."""
        return "::".join((ceilings_path, *self.parts))


def gate_nodes(result: GateResult) -> list[Node]:
    """Every item of the run in pytest's collection order: the guard, then each report's
    items (its unsliced rows, then each slice's in the order they first appear)."""
    nodes: list[Node] = []
    if result.guard is not None:
        nodes.append(guard_node(result.guard))
    for report in result.reports:
        nodes += report_nodes(report)
    return nodes


def guard_node(guard: GuardResultModel) -> Node:
    failed = not guard.passed
    return Node((GUARD,), "guard", "failed" if failed else "passed",
                "\n".join(guard.lines) if failed else "", ((GUARD_KEY, guard.ref),),
                guard=guard)


def report_nodes(report: ReportResult) -> list[Node]:
    """One report's items: one ``load`` item when it did not load, else a node per row."""
    name = one_line(report.name)
    if report.error is not None:
        return [Node((name, LOAD), "load", "failed", report.error, ((LOAD_KEY, report.name),),
                     report=report)]
    plain = [row for row in report.rows if row.slice is None]
    slices: dict[str, list[Row]] = {}
    for row in report.rows:
        if row.slice is not None:
            slices.setdefault(row.slice, []).append(row)
    rows = [*plain, *(row for rows in slices.values() for row in rows)]
    return [row_node(report, row) for row in rows]


def row_node(report: ReportResult, row: Row) -> Node:
    parts = row.parts
    outcome: Outcome = "passed"
    message = ""
    if row.verdict == "record":
        outcome, message = "skipped", f"init records {row.count} as the ceiling"
    elif row.verdict == "skip":  # its report is inconclusive: its own item says why
        outcome, message = "skipped", row.message
    elif row.undecided:  # the labels cannot decide it: its report's inconclusive item fails
        outcome, message = "skipped", row.message.splitlines()[0]
    elif row.failing:
        outcome, message = "failed", row.message
    return Node(parts, "row", outcome, message, tuple(row_properties(row, report)), row=row,
                report=report)


def row_properties(row: Row, report: ReportResult) -> list[tuple[str, object]]:
    """JUnit ``user_properties``: what the item measured, readable by CI tools."""
    props: list[tuple[str, object]] = list(zip(ROW_KEYS, row.key, strict=True))
    if row.count is not None:
        props.append(("count", row.count))
    props.append(("ceiling", row.limit if row.limit is not None else row.ceiling))
    n_cases = report.n_cases if not row.slice else None
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


def row_id(ceilings_path: str, row: Row) -> str:
    """A row's node id (``ceilings.yaml::report::slice=x::category``)."""
    return "::".join((ceilings_path, *row.parts))


def _decimal(value: Fraction, places: int = 6) -> str:
    scaled = round(value * 10**places)
    return f"{scaled // 10**places}.{scaled % 10**places:0{places}d}"
