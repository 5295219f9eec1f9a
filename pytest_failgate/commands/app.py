"""``Failgate``: one configured run of failgate, as every command and front end sees it.

As coverage.py's ``Coverage`` object is to its ``cmdline.py``: built from a ``Config``
(and, under pytest, the ``conftest.py`` plugins pytest loaded), it loads the plugins once,
decides which taxonomy classifies each report, and reads and gates runs the same way for
``check``, ``show``, ``diff``, ``noise``, ... in pytest, the CLI and MCP.
"""

from __future__ import annotations

from dataclasses import field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..core.base.classes import dataclass
from ..core.base.errors import FailgateError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from pathlib import Path

    from ..core.gate.runner import Gate, Mode, ReportGate
    from ..core.reports.choice import TaxonomyChoice
    from ..core.reports.model import Report, SkippedFile
    from ..core.reports.read import ReadSpec
    from ..core.taxonomy import Taxonomy
    from ..core.taxonomy.expr import Compiled
    from .config import Config
    from .plugins import Contributions


@dataclass
class Failgate:
    """The run's configuration, its plugins, and how it reads and gates reports."""

    config: Config
    # under pytest: the conftest.py files and plugins defining a hook, asked for when the
    # plugins load (pytest loads conftest.py files as it collects)
    pytest_plugins: Callable[[], Iterable[tuple[str, object]]] = field(
        default=lambda: (), repr=False)
    # the gate this run built (``gate``): its result and reports are not built again
    built: Gate | None = field(default=None, init=False, repr=False)

    @classmethod
    def of(cls, config: Config | Failgate) -> Failgate:
        """A command's argument: the configuration, or a ``Failgate`` already built on it."""
        return config if isinstance(config, Failgate) else cls(config)

    @cached_property
    def plugins(self) -> Contributions:
        """Every plugin's taxonomies and readers (``plugins.load_plugins``), loaded once."""
        from .plugins import load_plugins

        return load_plugins(self.config, self.pytest_plugins())

    def gate(self, mode: Mode, replace_existing: bool = False,
             inline_taxonomy: Mapping[str, Any] | None = None) -> Gate:
        """The gate over the configured reports in ``mode`` (``check`` runs ``gate`` or
        ``strict``; pytest and the ``init`` and ``ratchet`` commands their own), run once:
        asked again, the gate already run."""
        from ..core.gate.runner import run_gate

        if self.built is not None and self.built.config.mode == mode:
            return self.built
        if not self.config.paths:
            raise FailgateError("no report to gate: give the reports' paths, or set the ini "
                                "key failgate")
        config = self.config.gate(mode)
        if replace_existing or inline_taxonomy is not None:  # ``init --force``; own metrics
            from dataclasses import replace

            config = replace(config, replace_existing=replace_existing,
                             inline_taxonomy=inline_taxonomy)
        self.built = run_gate(config, self.plugins.taxonomies, self.plugins.readers)
        return self.built

    @property
    def uses_ceilings(self) -> bool:
        """Whether the ceilings file chooses the taxonomies: it exists, and no taxonomy was
        given on the command line (the ini key's must be the file's: the gate checks)."""
        return "taxonomy" not in self.config.given and self.config.ceilings.exists()

    def choice(self) -> TaxonomyChoice:
        """Which taxonomy classifies each report of the runs this command reads, made once
        (``taxonomy_choice``): the one given (a name or a file), else the ceilings file's
        (``taxonomy:`` and ``taxonomies:``), else each format's own. A gate makes its own
        in ``run_gate``, where a given taxonomy must be the ceilings file's."""
        return self._choice

    @cached_property
    def _choice(self) -> TaxonomyChoice:
        from ..core.ceilings.load import load_ceilings
        from ..core.gate.runner import taxonomy_choice
        from ..core.taxonomy.files import taxonomy_by_name_or_path

        known = self.plugins.taxonomies
        if self.config.taxonomy:
            return taxonomy_choice(known, taxonomy_by_name_or_path(self.config.taxonomy, known),
                                   None)
        ceilings = load_ceilings(self.config.ceilings, known) if self.uses_ceilings else None
        return taxonomy_choice(known, None, ceilings)

    def read_spec(self, slicers: Mapping[str, Compiled] | None = None) -> ReadSpec:
        """Reading as a gate reads: the plugins' readers, then the built-in formats."""
        from ..core.base.safeopen import byte_limit
        from ..core.reports.builtin import builtin_readers
        from ..core.reports.read import ReadSpec

        return ReadSpec(slicers=dict(slicers or {}),
                        readers=(*self.plugins.readers, *builtin_readers()),
                        max_bytes=byte_limit(self.config.max_report_bytes))

    def load(self, paths: tuple[Path, ...], spec: ReadSpec | None = None
             ) -> tuple[list[ReportGate], list[SkippedFile]]:
        """One run's reports, each with its load error if it had one."""
        from ..core.gate.runner import load_run

        return load_run(paths, self.choice(), spec or self.read_spec(), self.config.engine)

    def load_all(self, paths: tuple[Path, ...], spec: ReadSpec | None = None) -> list[Report]:
        """One run whose every report must load (a baseline, a diff, a history entry)."""
        from ..core.gate.runner import load_run_or_raise

        return load_run_or_raise(paths, self.choice(), spec or self.read_spec(),
                                 self.config.engine)

    def default_taxonomy(self) -> Taxonomy:
        """The taxonomy a listing of no report falls back on (``TaxonomyChoice.run_taxonomy``)."""
        return self.choice().run_taxonomy
