"""Comparable or not: the measuring instrument of two runs, compared before their counts.

A baseline comparison measures the change under review only when both runs were measured
the same way. Each reader records what measured its cases (``Report.instrument``), as
its format writes it: the run folder's ``judge_model``; Inspect's eval spec (its scorers,
the ``grader`` model role, the dataset and the task version); promptfoo's grader provider
(``defaultTest.options.provider``); DeepEval's metrics with their thresholds and
evaluation models. A setting of the system (``top_k``, the answering model) is what is
tested: it is shown as "what changed", never taken for the instrument.

The ceilings file records the instrument of the runs it was set from (``instrument:``,
written by ``init``, per report), so a run checked against the ceilings alone is compared
with it too, baseline or not.

When an entry both runs record differs (``judge_model: gpt-4o -> gpt-4.1``), the delta
measures the judge, not the system: the report is inconclusive (``core.gate.inconclusive``),
unless the ceilings file accepts that very change with a reason::

    instruments:
      judge_model: {from: gpt-4o-2024-08-06, to: gpt-4.1-2025-04-14, reason: "..."}

Both runs are classified by the one taxonomy of the gate run (a taxonomy change is the
guard's to catch), and cases are paired by id (those in one run only are listed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.classes import dataclass

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..ceilings.model import AcceptedChange as Accepted


@dataclass(frozen=True)
class InstrumentChange:
    """One entry of the instrument that differs between the baseline and this run."""

    key: str
    before: str
    after: str
    reason: str | None = None  # the ceilings file's reason, when it accepts the change

    @property
    def text(self) -> str:
        return f"{self.key} {self.before} -> {self.after}"


def instrument_changes(base: Mapping[str, str] | None, candidate: Mapping[str, str] | None,
                       accepted: Mapping[str, Accepted]) -> list[InstrumentChange]:
    """The entries both runs record with different values, each with its acceptance."""
    if not base or not candidate:
        return []
    changes = []
    for key in sorted(base.keys() & candidate.keys()):
        before, after = base[key], candidate[key]
        if before == after:
            continue
        entry = accepted.get(key)
        reason = (entry.reason if entry is not None and entry.from_ == before
                  and entry.to == after else None)
        changes.append(InstrumentChange(key, before, after, reason))
    return changes


def unaccepted_text(changes: list[InstrumentChange], since: str = "the baseline") -> str:
    """Why a comparison across a changed instrument is inconclusive."""
    first = changes[0]
    what = "; ".join(change.text for change in changes)
    return (f"the measuring instrument changed since {since}: {what}; the delta measures "
            f"the {first.key}, not the system")


SINCE_INIT = "the ceilings were set (the file's instrument:)"


NEXT = ("compare with a baseline measured the same way, or accept the change in the ceilings "
        "file with its reason: instruments: {KEY: {from: ..., to: ..., reason: \"why\"}}")
