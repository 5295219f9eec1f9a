"""Which taxonomy classifies each report: decided once per run, applied once per file.

The run makes one ``TaxonomyChoice`` (``core.gate.runner.taxonomy_choice``, in ``run_gate``
and ``Failgate.choice``) from what it was given and hands it down; reading a file asks it
once, when the file's format is known (``read.detect``), and hands the taxonomy it picks to
everything after. The fallback for a report nothing names a taxonomy for,
``DEFAULT_TAXONOMY``, is written here and nowhere else.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..taxonomy import DEFAULT_TAXONOMY, Taxonomy, builtin_taxonomies

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["DEFAULT_TAXONOMY", "TaxonomyChoice"]


@dataclass(frozen=True)
class TaxonomyChoice:
    """Which taxonomy classifies a report, decided once its format is known.

    In order: ``overrides`` keyed by the report's name, then by its format (a
    ceilings file's ``taxonomies:``); then ``default`` (its ``taxonomy:``, or
    ``failgate init --taxonomy``); then the format's own default taxonomy, looked up
    in ``known``; failgate's own shapes fall back to ``DEFAULT_TAXONOMY``.
    """

    default: Taxonomy | None = None
    overrides: Mapping[str, Taxonomy] = field(default_factory=dict)
    known: Mapping[str, Taxonomy] = field(default_factory=builtin_taxonomies)

    @classmethod
    def only(cls, taxonomy: Taxonomy) -> TaxonomyChoice:
        """One taxonomy for every report, whatever its format or name: not a run's choice,
        but a view in one taxonomy's categories (a history charts them over its runs)."""
        return cls(taxonomy)

    @property
    def run_taxonomy(self) -> Taxonomy:
        """The run's taxonomy where no report says otherwise (a listing of no report, the
        taxonomy ``init`` writes): the one given, else ``DEFAULT_TAXONOMY``."""
        return self.default if self.default is not None else self.known[DEFAULT_TAXONOMY]

    def describing(self, report: str) -> Taxonomy | None:
        """The taxonomy written for this report that describes its own format
        (``records:``): it reads the file, before any reader."""
        chosen = self.overrides.get(report, self.default)
        return chosen if chosen is not None and chosen.records else None

    def pick(self, report: str, format_name: str, format_default: str | None) -> Taxonomy:
        """The taxonomy of report ``report`` in format ``format_name``, whose reader names
        ``format_default`` (None: failgate's own shapes, or a reader naming none)."""
        for key in (report, format_name):
            if key in self.overrides:
                return self.overrides[key]
        if self.default is not None:
            return self.default
        name = format_default or DEFAULT_TAXONOMY
        if name not in self.known:
            raise FailgateError(f"the {format_name} reader names taxonomy '{name}', which no "
                                "plugin contributes")
        return self.known[name]
