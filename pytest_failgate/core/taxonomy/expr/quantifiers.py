"""The runtime of quantifiers and type tests: ``any``/``all`` over lists and objects,
``values()`` and ``kind()``.

``any(x.passed == false for x in checks)`` compiles to ``_any(<checks>, lambda _i1:
<body>)``: the item variable is a generated name bound by a generated lambda, so user
text still never becomes a Python name. Each item is visited once, so a quantifier is
linear in its list (nested quantifiers multiply, as nested loops do).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..model import kind_of
from .runtime import _describe, _fail

Predicate = Callable[[Any], Any]


def _items(value: Any, name: str) -> tuple[Any, ...] | list[Any]:
    """What a quantifier goes over: a list's items, an object's keys (as Python); null
    is empty."""
    if value is None:
        return ()
    if isinstance(value, list | tuple):
        return value
    if isinstance(value, Mapping):
        return tuple(value)
    _fail(f"{name}() goes over a list or an object, not {_describe(value)}")


def _any(value: Any, predicate: Predicate | None = None,
         condition: Predicate | None = None) -> bool:
    for item in _items(value, "any"):
        if (condition is None or condition(item)) and (
                predicate(item) if predicate is not None else item):
            return True
    return False


def _all(value: Any, predicate: Predicate | None = None,
         condition: Predicate | None = None) -> bool:
    for item in _items(value, "all"):
        if (condition is None or condition(item)) and not (
                predicate(item) if predicate is not None else item):
            return False
    return True


def _values(value: Any) -> tuple[Any, ...]:
    """An object's values (null: none)."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        return tuple(value.values())
    _fail(f"values() takes an object, not {_describe(value)}")


def _kind(value: Any) -> str:
    """The JSON kind of a value in the words of a taxonomy's ``types:`` (one vocabulary);
    a set the language built is a ``set``."""
    return "set" if isinstance(value, frozenset) else kind_of(value)


QUANTIFIER_HELPERS: dict[str, Callable[..., Any]] = {
    "_any": _any, "_all": _all, "_values": _values, "_kind": _kind,
}
