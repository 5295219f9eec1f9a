"""Taxonomies: the rules that give every failed case exactly one category."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, MutableMapping

from .model import BUILTIN_DIR, Case, Field, Kind, Rule, Taxonomy, kind_of
from .tally import Decision, MissingField, Tallier, Tally, classify

# the taxonomy of a report nothing names one for (failgate's own shapes, a ceilings file
# without ``taxonomy:``): written here, used by ``reports.choice`` and ``ceilings``
DEFAULT_TAXONOMY = "rag"


class BuiltinTaxonomies(Mapping[str, Taxonomy]):
    """The taxonomies shipped with failgate, by name: each file in ``builtin/`` (named
    after its taxonomy) is read and compiled the first time its taxonomy is asked for,
    so a run pays only for the taxonomies it uses. Names and membership need no file.

    Each is built as a plugin builds a taxonomy file, with the builder
    ``pytest_failgate.api`` exports (``files.taxonomy_from_yaml``): a built-in taxonomy
    can be nothing a plugin's cannot."""

    def __init__(self) -> None:
        self._paths = {path.stem: path for path in sorted(BUILTIN_DIR.glob("*.yaml"))}
        self._loaded: dict[str, Taxonomy] = {}

    def __getitem__(self, name: str) -> Taxonomy:
        found = self._loaded.get(name)
        if found is None:
            from ..base.yamlsource import read_text
            from .files import taxonomy_from_yaml  # (the rule compiler: only when asked)

            found = taxonomy_from_yaml(read_text(self._paths[name]), self._paths[name])
            if found.name != name:  # pragma: no cover - a packaging mistake, pinned by a test
                raise ValueError(f"{self._paths[name].name} holds taxonomy {found.name}")
            self._loaded[name] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, name: object) -> bool:
        return name in self._paths


class Taxonomies(MutableMapping[str, Taxonomy]):
    """Taxonomies by name: those added (plugins') over the built-in ones, which stay
    uncompiled until asked for; iterated as a dict of both would be."""

    def __init__(self, base: Mapping[str, Taxonomy]) -> None:
        self._base = base
        self._added: dict[str, Taxonomy] = {}
        # name -> (the plugin that added it, its module's file): what the guard names
        self.origins: dict[str, tuple[str, str | None]] = {}

    def __getitem__(self, name: str) -> Taxonomy:
        return self._added[name] if name in self._added else self._base[name]

    def __setitem__(self, name: str, taxonomy: Taxonomy) -> None:
        self._added[name] = taxonomy

    def __delitem__(self, name: str) -> None:
        del self._added[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self._base), **dict.fromkeys(self._added)})

    def __len__(self) -> int:
        return len({*self._base, *self._added})

    def __contains__(self, name: object) -> bool:
        return name in self._added or name in self._base


@functools.lru_cache(maxsize=1)
def builtin_taxonomies() -> BuiltinTaxonomies:
    """The taxonomies shipped with failgate, by name (each a file in ``builtin/``)."""
    return BuiltinTaxonomies()


__all__ = [
    "BUILTIN_DIR",
    "DEFAULT_TAXONOMY",
    "BuiltinTaxonomies",
    "Case",
    "Decision",
    "Field",
    "Kind",
    "MissingField",
    "Rule",
    "Tallier",
    "Tally",
    "Taxonomies",
    "Taxonomy",
    "builtin_taxonomies",
    "classify",
    "kind_of",
]
