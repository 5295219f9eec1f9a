"""What a loaded report is, independent of the file format it came from."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from ..base.classes import dataclass

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ..taxonomy import Tally, Taxonomy
    from ..taxonomy.expr import Compiled
    from ..taxonomy.model import Predicate

ReportKind = Literal["cases", "aggregate"]
OWN_FORMAT = "failgate"  # failgate's own JSON shapes (eval_summary, aggregates, arrays, JSONL)


@dataclass(frozen=True)
class MetricSpec:
    """A metric to average over the cases: its value, and which cases answered."""

    value: Compiled
    substantive: Predicate | None = None
    substantive_reads: tuple[str, ...] = ()
    substantive_text: str | None = None  # the rule as written (what SQL engines compile)


@dataclass(frozen=True)
class ReportFile:
    """A file found under a ``--failgate`` path, and the name its ceilings are keyed by."""

    path: Path
    name: str


@dataclass(frozen=True)
class SkippedFile:
    """A file under a ``--failgate`` directory that no reader recognised, or that a
    reader recognised as no report of its own (``format``: lm-eval's run aggregates)."""

    path: Path
    reason: str
    format: str | None = None  # the reader that skipped it, whose tool can say what to run


@dataclass
class Report:
    """One evaluation run: counts per category, recomputed from cases or as recorded.

    ``recorded`` keeps the report's own aggregates (``failure_category_counts``,
    ``num_predictions``, ...) so they can be cross-checked against the cases.
    """

    name: str
    path: Path
    kind: ReportKind
    counts: dict[str, int]
    n_cases: int | None
    taxonomy: Taxonomy  # what classified it (an aggregate: what its counts were checked by)
    tally: Tally | None = None
    recorded: dict[str, Any] = field(default_factory=dict)
    # every case's id in report order, as it was compared by (cases reports)
    id_keys: list[str] = field(default_factory=list, repr=False)
    # cases whose fields contradict what the file records of them (a reader's finding)
    contradictions: list[str] | None = None
    format: str = OWN_FORMAT  # the reader that recognised it
    # the run's configuration as the report records it (what a comparison diffs)
    config: dict[str, Any] | None = None
    # per taxonomy metric, each case's value where the metric applies (docs/design.md)
    case_metrics: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)
    # why an aggregate counts no category (an Inspect log written without samples)
    uncounted: str | None = None
    # a SQL engine's report: how to select each case's (deciding position, id) again, so a
    # baseline comparison pairs cases by a join in the engine (``engines.pairing``)
    classified: Any = None
    # where its run stands among same-named files of its folder (``ReaderOutput.run_order``)
    run_order: tuple[float, ...] | None = None
    # the unit a case repeats (a sample, for each of its epochs), when the run repeats cases:
    # a noise source of its own (``compare.noisemodel``); None when cases are not repeated
    repeat_unit: Callable[[str], str] | None = field(default=None, repr=False)
    # why the run did not finish (crashed, cancelled), when its reader knows: inconclusive
    interrupted: str | None = None
    # what measured its cases, when its reader knows (``ReaderOutput.instrument``)
    instrument: dict[str, str] | None = None
    # each case's content as its taxonomy reads it (``sink.content_digest``), when the
    # reading asked for it (``ReadSpec.digests``: gold labels belong to that content)
    digests: dict[str, str] | None = field(default=None, repr=False)

    @property
    def failed(self) -> int | None:
        """The failed cases; ``None`` when the report counts none (``uncounted``)."""
        return None if self.uncounted is not None else sum(self.counts.values())

    def case_ids(self, category: str) -> list[str]:
        """Ids of the cases in a category, in report order (none for aggregates)."""
        return self.tally.ids[category] if self.tally is not None else []

    def all_case_ids(self) -> list[str]:
        """Every case's id in report order, passed cases included."""
        return list(self.id_keys)

    @property
    def recorded_counts(self) -> dict[str, int] | None:
        counts = self.recorded.get("failure_category_counts")
        return counts if isinstance(counts, dict) else None
