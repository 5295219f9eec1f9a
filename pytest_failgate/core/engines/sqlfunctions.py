"""The functions of the rule language in SQL: ``len``, ``set``, ``lower`` ... and the
quantifiers ``any``/``all`` with ``values()`` and ``kind()``.

Each takes the compiler and its arguments' SQL values (``V``) and returns the
SQL value of the call with Python's meaning, or raises ``SqlUnsupported``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Protocol

from .sqlregex import portable_regex
from .sqltypes import BOOL, INT, NULL, STR, SqlType, unify
from .sqlvalue import SqlUnsupported, V

if TYPE_CHECKING:
    from collections.abc import Callable

    from .dialects import Dialect


class ExprCompiler(Protocol):
    """What a function's translation asks of the rule compiler (``sqlexpr.SqlExpr``):
    named here so that this module needs nothing from the compiler that calls it."""

    d: Dialect
    scope: dict[str, V]

    def var(self) -> str: ...
    def const(self, value: Any) -> V: ...
    def truth_of(self, v: V) -> str: ...
    def is_null(self, v: V) -> str: ...
    def truth(self, node: ast.expr) -> str: ...
    def val(self, node: ast.expr) -> V: ...
    def object_len(self, v: V) -> str: ...


def quantifier(ex: ExprCompiler, name: str, node: ast.Call) -> str:
    """``any/all(body for x in items if cond)``, or ``any/all(items)``: an ``exists``
    over a list's items or a map's keys; a struct's keys are known, so unrolled."""
    arg = node.args[0]
    var: str | None = None
    body: ast.expr | None = None
    cond: ast.expr | None = None
    if isinstance(arg, ast.GeneratorExp):
        loop = arg.generators[0]
        assert isinstance(loop.target, ast.Name)
        var, body, cond = loop.target.id, arg.elt, (loop.ifs[0] if loop.ifs else None)
        items = ex.val(loop.iter)
    else:
        items = ex.val(arg)

    def test(item: V) -> tuple[str, str]:
        """(the condition, the body) for one item, as SQL booleans."""
        if var is None:
            return "TRUE", ex.truth_of(item)
        outer = ex.scope.get(var)
        ex.scope[var] = item
        try:
            assert body is not None
            return (ex.truth(cond) if cond is not None else "TRUE"), ex.truth(body)
        finally:
            if outer is None:
                del ex.scope[var]
            else:
                ex.scope[var] = outer

    kind = items.type.kind
    if kind == "null" or items.constant is None or items.constant == ():
        return "TRUE" if name == "all" else "FALSE"
    if kind in ("list", "set", "map"):
        if kind == "map":
            if items.type.key is None or items.type.key.kind != "str":
                raise SqlUnsupported("a quantifier over a map whose keys are not strings")
            listed, element = f"map_keys({items.sql})", STR
        else:
            listed, element = items.sql, items.type.item or NULL
        sql_var = ex.var()
        when, holds = test(V(sql_var, element))
        if name == "any":
            return ex.d.exists(listed, sql_var, f"({when} AND {holds})")
        return f"(NOT {ex.d.exists(listed, sql_var, f'({when} AND NOT {holds})')})"
    if kind == "struct" and items.json_path is None:
        parts = [test(ex.const(key)) for key, _ in items.type.fields]
        if name == "any":
            inner = " OR ".join(f"({w} AND {h})" for w, h in parts) or "FALSE"
            return f"({items.sql} IS NOT NULL AND ({inner}))"
        inner = " AND ".join(f"(NOT {w} OR {h})" for w, h in parts) or "TRUE"
        return f"({items.sql} IS NULL OR ({inner}))"
    raise SqlUnsupported(f"{name}() over a {items.type.describe()} has no SQL form here")

def fn_values(ex: ExprCompiler, x: V) -> V:
    if x.type.kind == "null" or x.constant is None:
        return ex.const(())
    if x.type.kind == "map":
        return V(f"map_values({x.sql})", SqlType("list", x.type.item or NULL), x.raises)
    if x.type.kind == "struct" and x.json_path is None:
        item = unify([t for _, t in x.type.fields])
        if item.kind == "other" or not x.type.fields:
            raise SqlUnsupported("values() of a struct whose fields differ in type")
        listed = ex.d.array([ex.d.struct_field(x.sql, n) for n, _ in x.type.fields])
        return V(f"(CASE WHEN {x.sql} IS NULL THEN NULL ELSE {listed} END)",
                 SqlType("list", item), x.raises)
    raise SqlUnsupported(f"values() of a {x.type.describe()} has no SQL form here")

def fn_kind(ex: ExprCompiler, x: V) -> V:
    if x.constant is not ...:
        word = {type(None): "null", bool: "bool", int: "number", float: "number",
                str: "string", tuple: "array"}.get(type(x.constant), "object")
        return ex.const(word)
    found = {"bool": "bool", "int": "number", "float": "number", "str": "string",
             "list": "array", "struct": "object", "map": "object", "set": "set",
             "null": "null"}.get(x.type.kind)
    if found is None:
        raise SqlUnsupported(f"kind() of a {x.type.describe()} has no SQL form")
    word = found
    return V(f"(CASE WHEN {x.sql} IS NULL THEN 'null' ELSE {ex.d.string(word)} END)",
             STR, x.raises, never_null=True)

def fn_len(ex: ExprCompiler, x: V) -> V:
    kind = x.type.kind
    if kind == "null" or x.constant is None or x.constant == ():
        return ex.const(0)
    if isinstance(x.constant, str):
        return ex.const(len(x.constant))
    if kind == "str":
        return V(ex.d.str_len(x.sql), INT, x.raises, never_null=True)
    if kind == "list":
        return V(ex.d.list_len(x.sql), INT, x.raises, never_null=True)
    if kind == "map":
        return V(ex.d.map_len(x.sql), INT, x.raises, never_null=True)
    if kind == "struct":
        return V(ex.object_len(x), INT, x.raises, never_null=True)
    if kind == "set":
        if x.type.item is not None and x.type.item.kind == "float":
            raise SqlUnsupported("len() of a set of floating-point numbers (NaN) has no "
                                 "exact SQL form")
        return V(ex.d.distinct_len(x.sql, ex.var()), INT, x.raises, never_null=True)
    raise SqlUnsupported(f"len() of a {x.type.describe()} (Python raises)")

def fn_set(ex: ExprCompiler, x: V) -> V:
    if x.type.kind == "null" or x.constant is None or x.constant == ():
        return V("NULL", SqlType("set", NULL), never_null=True, constant=())
    if x.type.kind in ("list", "set"):
        item = x.type.item
        if item is not None and not item.scalar:
            raise SqlUnsupported("set() of a list of lists or objects has no SQL form")
        return V(x.sql, SqlType("set", item), x.raises, never_null=x.never_null)
    raise SqlUnsupported(f"set() of a {x.type.describe()} has no SQL form here")

def fn_empty(ex: ExprCompiler, x: V) -> V:
    kind = x.type.kind
    if kind in ("str", "list", "set", "map", "struct", "null"):
        return V(f"(NOT {ex.truth_of(x)})", BOOL, x.raises, never_null=True)
    if kind in ("bool", "int", "float"):  # a scalar is empty only when null
        return V(ex.is_null(x), BOOL, x.raises, never_null=True)
    # a column of mixed kinds ("" and [] are empty, 0 is not): no one SQL test
    raise SqlUnsupported(f"empty() of a {x.type.describe()} has no exact SQL form")

def _text(ex: ExprCompiler, x: V, what: str) -> V | None:
    if x.type.kind == "null" or x.constant is None:
        return None
    if x.type.kind != "str":
        raise SqlUnsupported(f"{what}() needs a string, not a {x.type.describe()}")
    return x

def _case(ex: ExprCompiler, x: V, name: str) -> V:
    text = _text(ex, x, name)
    if text is None:
        return ex.const(None)
    if isinstance(text.constant, str):
        return ex.const(getattr(text.constant, name)())
    message = (f"{name}() on non-ASCII text: Unicode case rules differ between Python "
               "and SQL engines, so the count would not be exact")
    return V(f"(CASE WHEN {ex.d.non_ascii(text.sql)} THEN {ex.d.raise_error(message)} "
             f"ELSE {name}({text.sql}) END)", STR, True)

def fn_lower(ex: ExprCompiler, x: V) -> V:
    return _case(ex, x, "lower")

def fn_upper(ex: ExprCompiler, x: V) -> V:
    return _case(ex, x, "upper")

def _affix(ex: ExprCompiler, x: V, affix: V, name: str) -> V:
    text = _text(ex, x, name)
    if text is None or affix.type.kind == "null" or affix.constant is None:
        return ex.const(False)
    test = ex.d.starts if name == "startswith" else ex.d.ends
    if affix.type.kind == "str":
        sql = f"coalesce({test(text.sql, affix.sql)}, FALSE)"
        return V(sql, BOOL, text.raises or affix.raises, never_null=True)
    raise SqlUnsupported(f"{name}() with a {affix.type.describe()} has no SQL form here")

def fn_startswith(ex: ExprCompiler, x: V, affix: V) -> V:
    return _affix(ex, x, affix, "startswith")

def fn_endswith(ex: ExprCompiler, x: V, affix: V) -> V:
    return _affix(ex, x, affix, "endswith")

def fn_abs(ex: ExprCompiler, x: V) -> V:
    if x.type.kind == "null" or x.constant is None:
        return ex.const(None)
    if not x.type.number:
        raise SqlUnsupported(f"abs() of a {x.type.describe()} (Python raises)")
    return V(f"abs({x.sql})", x.type, x.raises)

def _extreme(ex: ExprCompiler, args: tuple[V, ...], name: str) -> V:
    if len(args) == 1 and args[0].type.kind in ("list", "set"):
        item = args[0].type.item or NULL
        if item.kind == "float":
            raise SqlUnsupported(f"{name}() of a list of floating-point numbers (NaN) has "
                                 "no exact SQL form")
        if item.kind not in ("int", "str", "null"):
            raise SqlUnsupported(f"{name}() of a list of {item.describe()}")
        return V(ex.d.list_extreme(args[0].sql, name), item, args[0].raises)
    values = [a for a in args if a.type.kind != "null" and a.constant is not None]
    if not values:
        return ex.const(None)
    kind = unify([a.type for a in values])
    if kind.kind not in ("int", "float", "str"):
        raise SqlUnsupported(f"{name}() of {', '.join(a.type.describe() for a in values)}")
    if len(values) == 1:
        return values[0]
    sql = f"{'least' if name == 'min' else 'greatest'}({', '.join(a.sql for a in values)})"
    floats = [a.sql for a in values if a.type.kind == "float" and a.constant is ...]
    if floats:
        nan = " OR ".join(f"coalesce({ex.d.isnan(f)}, FALSE)" for f in floats)
        message = f"{name}() of NaN depends on argument order in Python"
        return V(f"(CASE WHEN {nan} THEN {ex.d.raise_error(message)} ELSE {sql} END)",
                 kind, True)
    return V(sql, kind, any(a.raises for a in values))

def fn_min(ex: ExprCompiler, *args: V) -> V:
    return _extreme(ex, args, "min")

def fn_max(ex: ExprCompiler, *args: V) -> V:
    return _extreme(ex, args, "max")

def fn_matches(ex: ExprCompiler, node: ast.Call) -> V:
    subject, pattern_node = node.args
    assert isinstance(pattern_node, ast.Constant)
    pattern = portable_regex(str(pattern_node.value), SqlUnsupported)
    text = _text(ex, ex.val(subject), "matches")
    if text is None:
        return ex.const(False)
    return V(f"coalesce({ex.d.search(text.sql, pattern)}, FALSE)", BOOL, text.raises,
             never_null=True)


FUNCTIONS: dict[str, Callable[..., V]] = {
    "len": fn_len, "set": fn_set, "empty": fn_empty, "lower": fn_lower, "upper": fn_upper,
    "startswith": fn_startswith, "endswith": fn_endswith, "abs": fn_abs, "min": fn_min,
    "max": fn_max, "values": fn_values, "kind": fn_kind,
}
