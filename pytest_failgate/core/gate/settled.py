"""A sequential run's outcome as the one result every output renders (``GateResult``).

``watch``, ``--failgate-sequential`` and ``api.sequential_gate`` decide a run on the
prefix of its planned order (``core.gate.sequential``); this turns that decision into the
rows, report and ``Sequential`` record of a ``GateResult``, so the terminal, Markdown,
HTML, JSON and MCP say the same verdict, "settled after n of N planned cases" and what
the verdict is worth, from ``decide`` alone.

Each gated item is a row: **over** its ceiling fails it, **cleared** passes it, and one
still **open** when the run stopped is not judged (``skip``): the full run could have
gone either way for it. An item of failures outside the system under test that is over
makes the report inconclusive (its other rows not judged), as the full run's rule would;
a run that stopped before the verdict was settled is inconclusive.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..base.errors import display_path
from ..base.formatting import format_number
from ..base.result import GateResult, ReportResult, Row, RowKind, Sequential
from ..base.yamlsource import digest
from ..taxonomy.model import GROUP_PREFIX, TOTAL
from .sequential import OUTSIDE_SHARE, PAIRED_SUFFIX

if TYPE_CHECKING:
    from pathlib import Path

    from ..base.verdict import RowVerdict
    from ..ceilings.load import Ceilings
    from .sequential import ItemLook, SequentialGate


def sequential_result(gate: SequentialGate, ceilings: Ceilings, report: str, path: Path,
                      taxonomy: str, advice: str = "a ratchet", paid: int | None = None
                      ) -> GateResult:
    """The outcome of ``gate`` as it stands: settled, or stopped before it was (then
    inconclusive). ``report`` names the run in the ceilings file; ``paid``: the cases the
    run started, when the front end knows (at least the ``n`` gated)."""
    settled = gate.settled
    looks = gate.looks() if settled is None else settled.items
    verdict = None if settled is None else settled.verdict
    why = None
    if settled is None:
        why = (f"the run stopped after {gate.n} of {gate.planned} planned cases, before the "
               "verdict was settled")
    elif verdict == "inconclusive":
        why = ("the full run's count of failures outside the system under test ("
               + ", ".join(settled.deciding) + ") is above what it allows")
    rows = [_row(look, gate, ceilings, report, why is not None) for look in looks]
    if settled is None:
        rows.insert(0, Row(report=report, name="inconclusive", kind="inconclusive", count=None,
                           limit=None, ceiling="a settled verdict", source=None, line=None,
                           verdict="inconclusive", rule="stopped before it was settled",
                           message=f"{report}: {why}"))
    record = (settled.record() if settled is not None else Sequential(
        n=gate.n, planned=gate.planned, delta=float(gate.delta),
        confidence=f"{format_number((1 - gate.delta) * 100)}%", settled=False))
    if paid is not None:
        record = replace(record, paid=max(paid, gate.n))
    entries = ceilings.model.ceilings.items()
    return GateResult(
        ceilings_path=display_path(ceilings.path), ceilings_sha256=digest(ceilings.doc.text),
        taxonomy=taxonomy, mode="gate",
        reports=[ReportResult(name=report, path=display_path(path), kind="cases",
                              n_cases=gate.n, failed=gate.failed, rows=rows, inconclusive=why,
                              taxonomy=taxonomy)],
        skipped=[], warnings=[], lowerings=[], sequential=record, ratchet_advice=advice,
        default_ceilings={name: c.max for name, c in entries if c.max is not None})


def _row(look: ItemLook, gate: SequentialGate, ceilings: Ceilings, report: str,
         unjudged: bool) -> Row:
    """One item: over fails, cleared passes, open (or any, in a report not judged) skips;
    the outside share that made the run inconclusive is its ``inconclusive`` row."""
    kind: RowKind = ("inconclusive" if look.name == OUTSIDE_SHARE else "total"
                     if look.name == TOTAL else "group" if look.name.startswith(GROUP_PREFIX)
                     else "category")
    entry = None if kind == "inconclusive" else ceilings.entry(report, look.name)
    source = None if entry is None else f"{display_path(ceilings.path)}:{entry.line}"
    span = f"{look.low}" if look.low == look.high else f"[{look.low}, {look.high}]"
    seen = (f"{look.name}: {look.count} in the first {gate.n} of {gate.planned} planned "
            f"cases; the full run's count is {span}")
    verdict: RowVerdict
    if look.outside and look.state == "over" and unjudged:
        verdict, message = "inconclusive", f"{seen}, above the {look.limit} it allows"
    elif unjudged or look.state == "open":
        verdict = "skip"
        message = (f"{seen}: not judged ({report} is inconclusive)" if unjudged
                   else f"{seen}: not settled when the run stopped (ceiling {look.limit})")
    elif look.state == "over":
        verdict = "fail"
        message = f"{seen}, above its ceiling of {look.limit}" + (
            f" ({source})" if source else "")
    else:
        verdict, message = "pass", ""
    ceiling = (f"{look.limit} of {gate.planned}" if entry is not None or kind ==
               "inconclusive" else f"a rise of {look.limit}" if look.name.endswith(
                   PAIRED_SUFFIX) else "none (0)")
    return Row(report=report, name=look.name, kind=kind, count=look.count,
               limit=look.limit, ceiling=ceiling, source=source,
               line=None if entry is None else entry.line, verdict=verdict,
               rule=f"the full run's count, settled from its first cases ({span})",
               message=message)
