"""The null-safe runtime of compiled rules: the helpers generated code calls.

Every helper takes decoded JSON values (lists or tuples for arrays, dicts for
objects) and sets built by the language (frozensets); the semantics are described
in the package docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from ...base.confine import shown
from .errors import ExprRuntimeError, NonFinite

_EMPTY: frozenset[Any] = frozenset()


def _fail(message: str) -> NoReturn:
    raise ExprRuntimeError(message)


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        kind = "a number"
    elif isinstance(value, str):
        kind = "a string"
    elif isinstance(value, list | tuple):
        kind = "a list"
    elif isinstance(value, set | frozenset):
        kind = "a set"
    elif isinstance(value, Mapping):
        kind = "an object"
    else:
        kind = type(value).__name__
    text = repr(value)
    if len(text) > 30:
        text = text[:27] + "..."
    return f"{kind} ({shown(text)})"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _norm(value: Any) -> Any:
    """``value`` with every tuple turned into a list, recursively (for equality)."""
    if isinstance(value, list | tuple):
        return [_norm(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _norm(item) for key, item in value.items()}
    return value


def _freeze(value: Any) -> Any:
    """``value`` as a set member: arrays become tuples, recursively."""
    if isinstance(value, list | tuple):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, set):
        return frozenset(value)
    if isinstance(value, Mapping):
        _fail(f"an object cannot be a member of a set: {_describe(value)}")
    return value


def _path(value: Any, keys: tuple[str | int, ...]) -> Any:
    """Follow ``keys`` (object keys and array indices) from ``value``; null when lost."""
    for key in keys:
        if key.__class__ is str:
            if value.__class__ is dict or isinstance(value, Mapping):
                value = value.get(key)
            else:
                return None
        elif isinstance(value, list | tuple) and -len(value) <= key < len(value):  # type: ignore[operator]
            value = value[key]  # type: ignore[index]
        else:
            return None
    return value


def _has(case: Mapping[str, Any], keys: tuple[str | int, ...]) -> bool:
    """Whether the path ``keys`` is present in ``case`` (a null value counts)."""
    value: Any = case
    for key in keys:
        if key.__class__ is str:
            if not isinstance(value, Mapping) or key not in value:
                return False
            value = value[key]
        elif isinstance(value, list | tuple) and -len(value) <= key < len(value):  # type: ignore[operator]
            value = value[key]  # type: ignore[index]
        else:
            return False
    return True


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, list | tuple | Mapping) and isinstance(b, list | tuple | Mapping):
        return bool(_norm(a) == _norm(b))
    return bool(a == b)


def _ne(a: Any, b: Any) -> bool:
    return not _eq(a, b)


def _orderable(a: Any, b: Any, op: str) -> bool:
    """False when either side is null; raises unless both are numbers or both strings,
    and for a number that is not finite (``_finite``)."""
    if a is None or b is None:
        return False
    if _is_number(a) and _is_number(b):
        return _finite(a, b, op)
    if isinstance(a, str) and isinstance(b, str):
        return True
    _fail(f"'{op}' cannot order {_describe(a)} and {_describe(b)}")


def _finite(a: Any, b: Any, op: str) -> bool:
    """True, unless a side is a float that is NaN or infinite (``x - x`` is 0.0 for every
    other float): such a number has no place in an order (NaN is neither below nor above
    a threshold; an infinite score, ``1e400`` in JSON, is no measurement), so comparing it
    raises ``NonFinite``, and the reader names such cases with their count, rather than
    the rule silently calling the case passed (``reports.sink``)."""
    for value in (a, b):
        if value.__class__ is float and value - value != 0:
            raise NonFinite(f"'{op}' cannot order {value!r}, a number that is not finite")
    return True


def _lt(a: Any, b: Any) -> bool:
    ca = a.__class__
    cb = b.__class__
    if (ca is int and cb is int) or (ca is str and cb is str):
        return bool(a < b)
    return _orderable(a, b, "<") and bool(a < b)


def _le(a: Any, b: Any) -> bool:
    ca = a.__class__
    cb = b.__class__
    if (ca is int and cb is int) or (ca is str and cb is str):
        return bool(a <= b)
    return _orderable(a, b, "<=") and bool(a <= b)


def _gt(a: Any, b: Any) -> bool:
    ca = a.__class__
    cb = b.__class__
    if (ca is int and cb is int) or (ca is str and cb is str):
        return bool(a > b)
    return _orderable(a, b, ">") and bool(a > b)


def _ge(a: Any, b: Any) -> bool:
    ca = a.__class__
    cb = b.__class__
    if (ca is int and cb is int) or (ca is str and cb is str):
        return bool(a >= b)
    return _orderable(a, b, ">=") and bool(a >= b)


def _in(item: Any, container: Any) -> bool:
    if container is None:
        return False
    if isinstance(container, str):
        if isinstance(item, str):
            return item in container
        if item is None:
            return False
        _fail(f"'in' a string needs a string on its left, got {_describe(item)}")
    if isinstance(container, list | tuple):
        if item is None or isinstance(item, str | int | float):
            return item in container
        wanted = _norm(item)
        return any(_norm(member) == wanted for member in container)
    if isinstance(container, set | frozenset):
        try:
            return _freeze(item) in container
        except (TypeError, ExprRuntimeError):
            return False  # an unhashable value is never a set member
    if isinstance(container, Mapping):
        try:
            return item in container
        except TypeError:
            return False
    _fail(f"'in' needs a list, set, string or object on its right, got {_describe(container)}")


def _not_in(item: Any, container: Any) -> bool:
    return not _in(item, container)


def _set(value: Any) -> frozenset[Any]:
    cls = value.__class__
    if cls is tuple or cls is list:
        try:
            return frozenset(value)
        except TypeError:
            return frozenset(_freeze(item) for item in value)
    if value is None:
        return _EMPTY
    if isinstance(value, frozenset):
        return value
    if isinstance(value, list | tuple | set):
        return _set(list(value))
    if isinstance(value, Mapping):
        return frozenset(value)
    _fail(f"set() needs a list, set or object, got {_describe(value)}")


def _make_set(*items: Any) -> frozenset[Any]:
    return frozenset(_freeze(item) for item in items)


def _set_operand(value: Any, op: str) -> frozenset[Any]:
    if value is None:
        return _EMPTY
    if isinstance(value, list | tuple | set | frozenset):
        return _set(value)
    _fail(f"'{op}' needs sets or lists, got {_describe(value)}")


def _and(a: Any, b: Any) -> frozenset[Any]:
    return _set_operand(a, "&") & _set_operand(b, "&")


def _or(a: Any, b: Any) -> frozenset[Any]:
    return _set_operand(a, "|") | _set_operand(b, "|")


def _numbers(a: Any, b: Any, op: str) -> bool:
    """False when either side is null; raises unless both are numbers."""
    if a is None or b is None:
        return False
    if _is_number(a) and _is_number(b):
        return True
    _fail(f"'{op}' needs numbers, got {_describe(a)} and {_describe(b)}")


def _arith(a: Any, b: Any, op: str) -> Any:
    if not _numbers(a, b, op):
        return None
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if b == 0:
            return None
        return a / b
    except OverflowError:
        _fail(f"'{op}' overflowed on {_describe(a)} and {_describe(b)}")


def _add(a: Any, b: Any) -> Any:
    return _arith(a, b, "+")


def _sub(a: Any, b: Any) -> Any:
    """Set difference when either side is a set or list, else number subtraction."""
    if isinstance(a, list | tuple | set | frozenset) or isinstance(
        b, list | tuple | set | frozenset
    ):
        return _set_operand(a, "-") - _set_operand(b, "-")
    return _arith(a, b, "-")


def _mul(a: Any, b: Any) -> Any:
    return _arith(a, b, "*")


def _div(a: Any, b: Any) -> Any:
    return _arith(a, b, "/")


def _neg(a: Any) -> Any:
    if a is None:
        return None
    if _is_number(a):
        return -a
    _fail(f"unary '-' needs a number, got {_describe(a)}")


def _len(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, str | list | tuple | set | frozenset | Mapping):
        return len(value)
    _fail(f"len() needs a string, list, set or object, got {_describe(value)}")


def _lower(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        return value.lower()
    _fail(f"lower() needs a string, got {_describe(value)}")


def _upper(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        return value.upper()
    _fail(f"upper() needs a string, got {_describe(value)}")


def _affix(value: Any, affix: Any, name: str) -> tuple[str, str | tuple[str, ...]] | None:
    if value is None or affix is None:
        return None
    if not isinstance(value, str):
        _fail(f"{name}() needs a string first, got {_describe(value)}")
    if isinstance(affix, str):
        return value, affix
    if isinstance(affix, list | tuple) and all(isinstance(a, str) for a in affix):
        return value, tuple(affix)
    _fail(f"{name}() needs a string or a list of strings second, got {_describe(affix)}")


def _startswith(value: Any, prefix: Any) -> bool:
    pair = _affix(value, prefix, "startswith")
    return pair is not None and pair[0].startswith(pair[1])


def _endswith(value: Any, suffix: Any) -> bool:
    pair = _affix(value, suffix, "endswith")
    return pair is not None and pair[0].endswith(pair[1])


def matcher(search: Callable[[str], bool]) -> Callable[[Any], bool]:
    """``matches()`` over a compiled linear-time search (see ``regex``)."""

    def matches(value: Any) -> bool:
        if value is None:
            return False
        if not isinstance(value, str):
            _fail(f"matches() needs a string, got {_describe(value)}")
        return search(value)

    return matches


def member(members: frozenset[Any]) -> Callable[[Any], bool]:
    """Membership in a constant set of scalars; an unhashable value is not a member."""

    def member(value: Any) -> bool:
        try:
            return value in members
        except TypeError:
            return False

    return member


def _empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str | list | tuple | set | frozenset | Mapping):
        return len(value) == 0
    return False


def _abs(value: Any) -> Any:
    if value is None:
        return None
    if _is_number(value):
        return abs(value)
    _fail(f"abs() needs a number, got {_describe(value)}")


def _extreme(args: tuple[Any, ...], name: str) -> Any:
    values: list[Any] = list(args)
    if len(args) == 1 and isinstance(args[0], list | tuple | set | frozenset):
        values = list(args[0])
    values = [v for v in values if v is not None]
    if not values:
        return None
    if not (all(_is_number(v) for v in values) or all(isinstance(v, str) for v in values)):
        shown = ", ".join(_describe(v) for v in values[:3])
        _fail(f"{name}() needs numbers or strings, all of one kind, got {shown}")
    return min(values) if name == "min" else max(values)


def _min(*args: Any) -> Any:
    return _extreme(args, "min")


def _max(*args: Any) -> Any:
    return _extreme(args, "max")


HELPERS: dict[str, Callable[..., Any]] = {
    "_path": _path,
    "_has": _has,
    "_eq": _eq,
    "_ne": _ne,
    "_lt": _lt,
    "_le": _le,
    "_gt": _gt,
    "_ge": _ge,
    "_in": _in,
    "_not_in": _not_in,
    "_set": _set,
    "_make_set": _make_set,
    "_and": _and,
    "_or": _or,
    "_add": _add,
    "_sub": _sub,
    "_mul": _mul,
    "_div": _div,
    "_neg": _neg,
    "_len": _len,
    "_lower": _lower,
    "_upper": _upper,
    "_startswith": _startswith,
    "_endswith": _endswith,
    "_empty": _empty,
    "_abs": _abs,
    "_min": _min,
    "_max": _max,
}

# name -> (fewest, most arguments; None for no limit)
FUNCTIONS: Mapping[str, tuple[int, int | None]] = {
    "abs": (1, 1),
    "all": (1, 1),
    "any": (1, 1),
    "empty": (1, 1),
    "endswith": (2, 2),
    "has": (1, 1),
    "kind": (1, 1),
    "len": (1, 1),
    "lower": (1, 1),
    "matches": (2, 2),
    "max": (1, None),
    "min": (1, None),
    "set": (1, 1),
    "startswith": (2, 2),
    "upper": (1, 1),
    "values": (1, 1),
}
"""The functions an expression may call, with how many arguments each takes."""
