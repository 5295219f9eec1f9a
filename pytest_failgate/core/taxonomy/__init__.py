"""Taxonomies: the rules that give every failed case exactly one category."""

from __future__ import annotations

import functools
from pathlib import Path

from .files import load_taxonomy_file
from .model import Case, Field, Kind, Rule, Taxonomy, kind_of
from .tally import Decision, MissingField, Tallier, Tally, classify

BUILTIN_DIR = Path(__file__).parent / "builtin"


@functools.lru_cache(maxsize=1)
def builtin_taxonomies() -> dict[str, Taxonomy]:
    """The taxonomies shipped with failgate, by name (each a file in ``builtin/``)."""
    loaded = (load_taxonomy_file(path) for path in sorted(BUILTIN_DIR.glob("*.yaml")))
    return {taxonomy.name: taxonomy for taxonomy in loaded}


__all__ = [
    "Case",
    "Decision",
    "Field",
    "Kind",
    "MissingField",
    "Rule",
    "Tallier",
    "Tally",
    "Taxonomy",
    "builtin_taxonomies",
    "classify",
    "kind_of",
]
