"""An Inspect AI early-stopping manager that stops a task once failgate's verdict is settled.

```python
from pytest_failgate.drivers.inspect_ai import FailgateEarlyStopping

@task
def capitals():
    return Task(dataset=dataset.shuffle(seed=7),           # the random order, fixed first
                solver=generate(), scorer=match(),
                early_stopping=FailgateEarlyStopping(ceilings="ceilings.yaml"))
```

Inspect calls ``start_task`` with the samples in the order it will run them, then
``schedule_sample`` before each sample (an ``EarlyStop`` skips it) and ``complete_sample``
with its scores (Inspect's ``EarlyStopping`` protocol). The plan is that order, epoch by
epoch: **shuffle the dataset with a seed before the run** (the guarantee assumes a random
order fixed before the run). Samples finish out of order under concurrency; the gate is
fed only the plan's completed prefix. Once the verdict is settled, every sample not yet
scheduled is skipped, and ``complete_task`` records the verdict in the log's
``early_stopping`` metadata, with the samples started (``paid``: scheduled and run) beside
the ones the verdict settled on (``cases``).

What a settled run still pays for (the window): Inspect asks ``schedule_sample`` once a
sample holds a slot of its concurrency (``max_samples``), so no sample starts after the
verdict is settled; the protocol has no way to cancel a sample already running, so those in
flight at the settling moment run to their end (at most ``max_samples - 1`` beside the
settling one), and so do samples that finished ahead of the plan's prefix. Keep the window
small with a small ``max_samples`` (the cost of a lower concurrency is wall-clock time, not
samples).

A sample is classified from its scores as failgate reads an Inspect log (the
``inspect_ai`` taxonomy, or the one the ceilings file gives the report or the format):
Inspect passes no error or limit to ``complete_sample``, so a sample that errors never
completes and holds the verdict open until the run ends.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..commands.app import Failgate
from ..commands.config import load
from ..commands.sequential import CaseGate, Plan
from ..core.reports.inspect_ai import sample_case
from ..options import DEFAULT_DELTA

if TYPE_CHECKING:
    from pathlib import Path

# Inspect's types (EvalSpec, Sample, SampleScore) are Any here: failgate type-checks where
# inspect-ai is not installed

MANAGER = "failgate"
FORMAT = "inspect_ai"


class FailgateEarlyStopping:
    """Inspect's ``EarlyStopping``: skip the rest of a task once failgate has settled it."""

    def __init__(self, ceilings: str | Path | None = None,
                 delta: Fraction | float | str = DEFAULT_DELTA,
                 report: str | None = None) -> None:
        self.app = Failgate(load({} if ceilings is None else {"ceilings": str(ceilings)}))
        self.delta = Fraction(str(delta)) if isinstance(delta, float) else Fraction(delta)
        self.report = report
        self.gate: CaseGate | None = None
        self.lines: list[str] = []
        self.stopped = 0
        self.started = 0  # samples scheduled and run: what the run paid for

    async def start_task(self, task: Any, samples: list[Any], epochs: int) -> str:
        ids = tuple(f"{sample.id}#{epoch}" for epoch in range(1, epochs + 1)
                    for sample in samples)
        name = self.report or _report_name(task)
        self.gate = CaseGate(self.app, len(ids), self.delta, name, Plan(ids, 0, task.task),
                             format_name=FORMAT)
        return MANAGER

    async def schedule_sample(self, id: str | int, epoch: int) -> Any:
        """None to run the sample; an ``EarlyStop`` to skip it, once settled."""
        settled = self.gate.settled if self.gate is not None else None
        if settled is None:
            self.started += 1
            return None
        self.stopped += 1
        early_stop = importlib.import_module("inspect_ai.util").EarlyStop
        return early_stop(id=id, epoch=epoch, reason=self._line(),
                         metadata={"verdict": settled.verdict})

    def _line(self) -> str:
        """The settled verdict's line, with the samples started so far (paid)."""
        settled = self.gate.settled if self.gate is not None else None
        assert settled is not None
        record = replace(settled.record(), paid=max(self.started, settled.n))
        return f"verdict {settled.verdict}: {record.text}"

    async def complete_sample(self, id: str | int, epoch: int,
                              scores: dict[str, Any]) -> None:
        if self.gate is None or self.gate.settled is not None:
            return
        sample = {"id": id, "epoch": epoch,
                  "scores": {name: {"value": score.score.value}
                             for name, score in scores.items()}}
        self.lines.extend(self.gate.changes(sample_case(sample, ("samples", "0"))))

    async def complete_task(self) -> dict[str, Any]:
        settled = self.gate.settled if self.gate is not None else None
        if settled is None:
            return {"verdict": None, "settled": False, "stopped": self.stopped,
                    "paid": self.started}
        return {"verdict": settled.verdict, "settled": True, "cases": settled.n,
                "paid": max(self.started, settled.n), "planned": settled.planned,
                "delta": str(settled.delta), "line": self._line(), "stopped": self.stopped}


def _report_name(task: Any) -> str:
    """``task@model``, as failgate names an Inspect log's report."""
    name = str(task.task).rsplit("/", 1)[-1]
    return f"{name}@{task.model}" if task.model else name
