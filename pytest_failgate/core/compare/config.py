"""What changed between two runs' configurations, and which change a category points at.

A report may record its run's configuration (the ``config`` of an
``eval_summary.json``, a run folder's ``run.jsonl`` header, Inspect's ``eval``
block, promptfoo's ``config``). Two runs' configurations are flattened to dotted
keys and diffed; a regression is shown next to the settings that changed, and a
taxonomy's hint catalogue (a category's ``settings``: the keys that usually move
it) names the changed setting to look at first. Rules, never a model's guess.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

ABSENT = "(absent)"


@dataclass(frozen=True)
class ConfigChange:
    """One setting that differs: its dotted key and both values (``ABSENT`` when missing)."""

    key: str
    before: Any
    after: Any

    @property
    def text(self) -> str:
        return f"{self.key}: {show(self.before)} -> {show(self.after)}"

    def moves(self, settings: Sequence[str]) -> bool:
        """Whether this change is one of ``settings`` (``top_k`` also names ``retriever.top_k``)."""
        return any(self.key == s or self.key.endswith("." + s) for s in settings)


def show(value: Any) -> str:
    """A value as a person reads it in a config: ``5``, ``true``, ``null``, ``bge-m3``."""
    if value is ABSENT or isinstance(value, str):
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested objects become dotted keys; lists and scalars are values."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def diff_config(base: Mapping[str, Any] | None, candidate: Mapping[str, Any] | None
                ) -> list[ConfigChange]:
    """The settings that differ, in key order; nothing when either run records none."""
    if base is None or candidate is None:
        return []
    before, after = flatten(base), flatten(candidate)
    return [ConfigChange(key, before.get(key, ABSENT), after.get(key, ABSENT))
            for key in sorted(before.keys() | after.keys())
            if before.get(key, ABSENT) != after.get(key, ABSENT)]


def suspects(changes: Sequence[ConfigChange], settings: Sequence[str]) -> list[ConfigChange]:
    """The changes among the settings that usually move a category, in catalogue order."""
    found: list[ConfigChange] = []
    for setting in settings:
        found += [c for c in changes if c.moves((setting,)) and c not in found]
    return found


def hint_line(name: str, changes: Sequence[ConfigChange], settings: Sequence[str]) -> str | None:
    """``retrieval_miss usually moves with top_k: top_k 5 -> 1 changed: revert it first``."""
    found = suspects(changes, settings)
    if not found:
        return None
    shown = "; ".join(c.text for c in found)
    return (f"what changed: {shown} (a setting that usually moves {name}: try reverting it "
            "first, then re-run the gate)")
