"""A gate run's outcome as data: what was checked, planned and compared, before wording.

``runner.run_gate`` builds it; ``rows.build_result`` words it into the ``GateResult``
every front end reads (``runner.Gate.result``).
"""

from __future__ import annotations

import os
from dataclasses import field
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..base.result import GateResult
    from ..ceilings.check import Check
    from ..ceilings.load import Ceilings
    from ..ceilings.rewrite import Lowering
    from ..compare.baseline import BaselineRun
    from ..guard.loosening import GuardResult
    from ..reports.model import SkippedFile
    from ..taxonomy import Taxonomy
    from .checked import GateConfig, ReportGate
    from .dated import Dated
    from .family import Family
    from .noisy import NoiseRun


@dataclass
class GateRun:
    """One gate run: the configuration, the default taxonomy, every report's checks, the
    ratchet's lowerings, and what the guard, a baseline and the noise added."""

    config: GateConfig
    taxonomy: Taxonomy
    ceilings: Ceilings | None
    reports: list[ReportGate]
    skipped: list[SkippedFile]
    lowerings: list[Lowering]  # the ratchet's: the ceilings to lower
    warnings: list[str] = field(default_factory=list)
    guard: GuardResult | None = None
    baseline: BaselineRun | None = None
    known: Mapping[str, Taxonomy] = field(default_factory=dict)  # the taxonomies by name
    noise: NoiseRun | None = None  # where this run's noise is known from, and its budget
    family: Family | None = None  # the run's significance tests, decided together (Holm)
    guard_error: str | None = None  # why the guard could not compare, when it could not
    built: GateResult | None = field(default=None, repr=False)  # the result, once built
    times: Dated | None = None  # when this run and its paired runs were measured
    # a taxonomy a new ceilings file writes inline (the one ``init --force`` keeps, or
    # init's own metrics' categories): the one compiled, and its mapping
    inline: tuple[Taxonomy, Mapping[str, Any]] | None = None
    # init with gold labels: each count's true_max to write, (report, name) -> count
    true_counts: dict[tuple[str, str], int] = field(default_factory=dict)

    def reference(self, taxonomy: Taxonomy) -> str | Mapping[str, Any]:
        """How a new ceilings file names a taxonomy: by name if known, else by its file;
        an inline one as its own mapping, written inline again."""
        if self.inline is not None and self.inline[0] is taxonomy:
            return self.inline[1]
        if self.known.get(taxonomy.name) is taxonomy or taxonomy.source is None:
            return taxonomy.name
        return PurePath(os.path.relpath(taxonomy.source, self.config.ceilings_path.parent)
                        ).as_posix()

    @property
    def report_paths(self) -> tuple[str, ...]:
        """The reports' paths as a new ceilings file's header names them: relative to its
        folder (where its commands run), shell-quoted when they need it."""
        import shlex

        return tuple(shlex.quote(PurePath(os.path.relpath(path, self.config.ceilings_path.parent)
                                          ).as_posix()) for path in self.config.paths)

    @property
    def checks(self) -> list[Check]:
        return [check for report in self.reports for check in report.checks]
