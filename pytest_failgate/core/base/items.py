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
from typing import TYPE_CHECKING

from .classes import dataclass
from .result import GUARD, LOAD, ItemKind, Outcome

if TYPE_CHECKING:
    from .result import GateResult, GuardResultModel, ReportResult, Row

__all__ = ["GUARD", "GUARD_KEY", "LOAD", "LOAD_KEY", "ROW_KEYS", "Kind", "Node", "gate_nodes",
           "row_id", "row_properties"]

# the ``user_properties`` keys that say which item a test report is (``plugin/outcomes.py``
# reads them back)
ROW_KEYS = ("failgate_report", "failgate_slice", "failgate_item")
LOAD_KEY = "failgate_load"
GUARD_KEY = "failgate_guard"
Kind = ItemKind


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
    """Every item of the run in pytest's collection order (``GateResult.tree``, which
    ``--json``'s ``items`` also names), with what each measured."""
    nodes: list[Node] = []
    for place in result.tree:
        kind, parts, report, row = place
        outcome, message = result.outcome(place)
        if row is not None and report is not None:
            props = tuple(row_properties(row, report))
        elif report is not None:
            props = ((LOAD_KEY, report.name),)
        else:
            props = ((GUARD_KEY, result.guard.ref if result.guard is not None else ""),)
        nodes.append(Node(parts, kind, outcome, message, props, row=row, report=report,
                          guard=result.guard if kind == "guard" else None))
    return nodes


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
