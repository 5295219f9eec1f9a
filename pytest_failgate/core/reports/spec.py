"""What to measure while reading a report, beyond the taxonomy's categories.

Its own module so that the readers, the case sink and the decoders can name it without
importing the reading they are part of.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..taxonomy import Tallier, Taxonomy

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..taxonomy.expr import Compiled
    from .model import MetricSpec
    from .readers import ReportReader


@dataclass(frozen=True)
class ReadSpec:
    """What to measure while reading, beyond the taxonomy's categories.

    ``measures`` are predicates counted over every case (rate populations),
    ``slicers`` give each case a value per slice field, ``recorded`` names further
    top-level aggregates to keep (those contracts read), ``explain`` tries every
    rule on every failed case, ``digests`` keeps each case's content digest.
    """

    measures: Mapping[str, Compiled] = field(default_factory=dict)
    slicers: Mapping[str, Compiled] = field(default_factory=dict)
    recorded: tuple[str, ...] = ()
    explain: bool = False
    readers: tuple[ReportReader, ...] = ()  # other formats, tried in order
    metrics: Mapping[str, MetricSpec] = field(default_factory=dict)
    max_bytes: int | None = None  # refuse larger report files (untrusted input)
    # keep each case's content digest (``Report.digests``): what gold labels are checked
    # against; off by default, since it takes every case through ``CaseSink.add``
    digests: bool = False

    def tallier(self, taxonomy: Taxonomy) -> Tallier:
        """A tallier measuring what this spec asks for.

        A metric floor named like one of the taxonomy's metrics measures that metric (its
        ``value``); any other floor reads the field (or expression) it is named by.
        """
        own = {metric.name: metric.value for metric in taxonomy.metrics}
        return Tallier(
            taxonomy, {text: c.holds for text, c in self.measures.items()}, self.explain,
            {name: c.function for name, c in self.slicers.items()},
            {name: (own.get(name, metric.value.function), metric.substantive)
             for name, metric in self.metrics.items()})

    def reads(self) -> list[str]:
        """The case fields the measures, slices and metrics read."""
        compiled = [*self.measures.values(), *self.slicers.values(),
                    *(metric.value for metric in self.metrics.values())]
        reads = [name for c in compiled for name in c.reads]
        reads += [name for metric in self.metrics.values() for name in metric.substantive_reads]
        return list(dict.fromkeys(reads))
