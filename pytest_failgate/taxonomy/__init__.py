"""Taxonomies: the rules that give every failed case exactly one category."""

from __future__ import annotations

from .model import Case, Field, Kind, Rule, Taxonomy, kind_of
from .rag import RAG
from .tally import MissingField, Tallier, Tally, classify

BUILTIN: dict[str, Taxonomy] = {RAG.name: RAG}

__all__ = [
    "BUILTIN",
    "RAG",
    "Case",
    "Field",
    "Kind",
    "MissingField",
    "Rule",
    "Tallier",
    "Tally",
    "Taxonomy",
    "classify",
    "kind_of",
]
