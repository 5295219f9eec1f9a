"""A command's arguments resolved as failgate resolves them, for the CLI and the MCP server.

Paths from the working directory, the plugins pytest would load here, the taxonomy by
the ceilings file or each format's own, the gate's configuration from the option table:
one place, so ``failgate check`` and the MCP ``check`` tool cannot drift apart. ``args``
is the command's ``argparse.Namespace``; an option it lacks counts as not given.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .options import OPTIONS, build

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from .core.gate import Gate, GateConfig, Mode
    from .core.reports.model import Report
    from .core.reports.read import ReadSpec
    from .core.reports.readers import TaxonomyChoice
    from .core.result import GateResult
    from .core.taxonomy import Taxonomy
    from .output.files import Outputs
    from .plugins import Contributions


def settings(args: argparse.Namespace, mode: Mode) -> tuple[GateConfig, Outputs]:
    """The gate's configuration from the command's options (paths from the working dir)."""
    values: dict[str, Any] = {}
    for option in OPTIONS:
        value = getattr(args, option.attribute, None)
        if option.kind == "paths":
            value = [Path(p).resolve() for p in value or ()]
        elif option.kind == "path" and value:
            value = Path(value).resolve()
        values[option.name] = value
    return build(values, mode)


def config(args: argparse.Namespace, mode: Mode) -> GateConfig:
    return settings(args, mode)[0]


def gate(args: argparse.Namespace, mode: Mode) -> tuple[Gate, GateResult]:
    from .core.gate import run_gate

    found = contributions(args)
    gate = run_gate(config(args, mode), found.taxonomies, found.readers)
    return gate, gate.result()


def contributions(args: argparse.Namespace) -> Contributions:
    """The plugins pytest would load here (``failgate_plugins``, entry points), and --plugins."""
    from .plugins import contributions_of, ini_plugins, plugin_modules

    cached: Contributions | None = getattr(args, "_contributions", None)
    if cached is None:
        specs, base = ini_plugins(Path.cwd())
        given = [str(Path(spec).resolve()) if spec.endswith(".py") else spec
                 for spec in getattr(args, "plugins", None) or []]
        cached = contributions_of(plugin_modules([*specs, *given], base))
        args._contributions = cached
    return cached


def taxonomy(args: argparse.Namespace) -> tuple[TaxonomyChoice, Taxonomy]:
    """Which taxonomy classifies each report, and the one whose categories are listed.

    ``--taxonomy`` (a name or a file) classifies everything; else the ceilings file
    decides, as in a gate; without one, each format's own taxonomy (``rag`` for
    failgate's own shapes).
    """
    from .core.ceilings.load import load_ceilings
    from .core.reports.readers import TaxonomyChoice
    from .core.taxonomy.files import taxonomy_by_name_or_path

    known = contributions(args).taxonomies
    if args.taxonomy:
        chosen = taxonomy_by_name_or_path(args.taxonomy, known)
        return TaxonomyChoice(chosen, {}, known), chosen
    path = Path(args.ceilings)
    if path.exists():
        ceilings = load_ceilings(path.resolve(), known)
        return TaxonomyChoice(ceilings.taxonomy, ceilings.overrides, known), ceilings.taxonomy
    return TaxonomyChoice(None, {}, known), known["rag"]


def read_spec(args: argparse.Namespace) -> ReadSpec:
    """Reading as a gate reads: the plugins' readers, then the built-in formats."""
    from .core.reports.builtin import builtin_readers
    from .core.reports.read import ReadSpec

    return ReadSpec(readers=(*contributions(args).readers, *builtin_readers()))


def first_taxonomy(reports: Sequence[Report], default: Taxonomy) -> Taxonomy:
    """The taxonomy of the first report a choice classified (the listing's categories)."""
    for report in reports:
        if report.taxonomy is not None:
            return report.taxonomy
    return default
