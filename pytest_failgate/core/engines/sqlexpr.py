"""One rule expression as a SQL expression with the Python classifier's exact meaning.

The rule text has already been checked by the Python compiler (``compile_expr``);
this module walks the same ``ast`` again and emits SQL by the static types of the
columns the rule reads (``sqltypes``). Each operation is spelt for its operand
types so that its value is the Python one on every row: null-safe equality
(``None == None``), NaN never equal nor ordered, ``True == 1``, ``len(null) = 0``,
``x in null`` false, ``/ 0`` null, truthiness of strings, numbers and lists.

Where Python's result cannot be reproduced exactly the compiler refuses with
``SqlUnsupported`` (the caller names the rule): an operation Python rejects for
these types (``len(5)``, ``"a" < 1``), list or object equality, regular
expressions outside a subset that Python, RE2 and Java read alike. Two
operations are exact only for ASCII text (``lower``/``upper``: Unicode case rules
differ between Python and the engines); for other text the query stops with an
error naming the rule, never a different count.

Presence: ``present`` gives, per top-level column, the SQL test that a case has
the field. In a table (Parquet, Spark) a null top-level value is an absent field,
as a JSON writer that drops nulls would have it: the field's default applies and
``has()`` is false. Inside a struct every field is a key (``has(o.y)`` holds for
any non-null ``o``), as in the object a row of the table decodes to. JSON Lines
read by DuckDB keep the raw object, so there an absent key and a null stay apart
exactly as in Python.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from ..taxonomy.expr import compile_expr
from .sqlfunctions import FUNCTIONS, fn_matches, quantifier
from .sqltypes import (
    BOOL,
    EMPTY_LIST,
    FLOAT,
    INT,
    NULL,
    STR,
    SqlType,
    follow_path,
    python_equal,
    type_of_value,
    unify,
)
from .sqlvalue import RAISES, SqlUnsupported, V

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .dialects import Dialect

_ALIASES: dict[str, Any] = {"true": True, "false": False, "null": None}
_ORDER = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class SqlExpr:
    """Compiles expressions over one source; ``schema`` maps columns to types."""

    def __init__(self, schema: Mapping[str, SqlType], defaults: Mapping[str, Any],
                 dialect: Dialect, raw_json: str | None = None) -> None:
        self.schema = schema
        self.defaults = defaults
        self.d = dialect
        self._vars = 0
        self.raw_json = raw_json  # the raw JSON object of a case, when the source has it
        self.scope: dict[str, V] = {}  # the items of enclosing quantifiers, by name

    def column(self, name: str) -> str:
        return self.d.ident(name)

    def present(self, name: str) -> str:
        """SQL: the case has the top-level field ``name``."""
        if self.raw_json is not None:
            return f"json_exists({self.raw_json}, {self.d.string('$.' + _json_key(name))})"
        return f"({self.column(name)} IS NOT NULL)"

    # ------------------------------------------------------------------ entry points

    def parse(self, text: str) -> ast.expr:
        compile_expr(text, self.defaults)  # the language's own checks and messages
        return ast.parse(text.strip(), mode="eval").body

    def predicate(self, text: str) -> str:
        """A SQL boolean, never null: the Python truthiness of the expression."""
        return self.truth(self.parse(text))

    def value(self, text: str) -> V:
        return self.val(self.parse(text))

    # ------------------------------------------------------------------ helpers

    def var(self) -> str:
        self._vars += 1
        return f"_e{self._vars}"  # rules cannot name a field starting with '_'

    def const(self, value: Any) -> V:
        d = self.d
        if value is None:
            return V("NULL", NULL, constant=None)
        if isinstance(value, bool):
            return V("TRUE" if value else "FALSE", BOOL, constant=value)
        if isinstance(value, int | float):
            return V(d.number(value), type_of_value(value), constant=value)
        if isinstance(value, str):
            if "\x00" in value:
                raise SqlUnsupported("a NUL character in a string has no SQL form")
            return V(d.string(value), STR, constant=value)
        if isinstance(value, list | tuple):
            if not value:
                return V("NULL", EMPTY_LIST, never_null=True, constant=())
            items = [self.const(item) for item in value]
            item = unify([i.type for i in items])
            if item.kind not in ("bool", "int", "float", "str", "null"):
                raise SqlUnsupported("a list literal in SQL holds values of one kind")
            if item.kind == "float":
                items = [i if i.constant is None else V(d.number(float(i.constant)), FLOAT)
                         for i in items]
            return V(d.array([i.sql for i in items]), SqlType("list", item),
                     never_null=True, constant=tuple(value))
        raise SqlUnsupported(f"a {type(value).__name__} value has no SQL form here")

    def truth_of(self, v: V) -> str:
        """Python ``bool(v)`` as a SQL boolean that is never null."""
        if v.constant is not ...:
            return "TRUE" if v.constant else "FALSE"
        kind = v.type.kind
        if kind == "bool":
            return f"coalesce({v.sql}, FALSE)"
        if kind in ("int", "float"):
            return f"coalesce({v.sql} <> 0, FALSE)"
        if kind == "str":
            return f"coalesce({v.sql} <> '', FALSE)"
        if kind in ("list", "set"):
            return f"({self.d.list_len(v.sql)} > 0)"
        if kind == "map":
            return f"({self.d.map_len(v.sql)} > 0)"
        if kind == "struct":
            if v.json_path is not None:
                return f"({self.object_len(v)} > 0)"
            return f"({v.sql} IS NOT NULL)" if v.type.fields else "FALSE"
        if kind == "null":
            return "FALSE"
        raise SqlUnsupported(f"the truth of a {v.type.describe()} has no SQL form")

    def is_null(self, v: V) -> str:
        if v.constant is not ...:
            return "TRUE" if v.constant is None else "FALSE"
        if v.never_null:
            return "FALSE"
        return f"({v.sql} IS NULL)"

    # ------------------------------------------------------------------ truth

    def truth(self, node: ast.expr) -> str:
        if isinstance(node, ast.BoolOp):
            parts = [self.truth(v) for v in node.values]
            if any(RAISES in part for part in parts[1:]):
                # a guard must not fire where Python's short circuit never looks
                result = parts[-1]
                for part in reversed(parts[:-1]):
                    result = (f"(CASE WHEN {part} THEN {result} ELSE FALSE END)"
                              if isinstance(node.op, ast.And)
                              else f"(CASE WHEN {part} THEN TRUE ELSE {result} END)")
                return result
            joiner = " AND " if isinstance(node.op, ast.And) else " OR "
            return "(" + joiner.join(parts) + ")"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return f"(NOT {self.truth(node.operand)})"
        if isinstance(node, ast.IfExp):
            return (f"(CASE WHEN {self.truth(node.test)} THEN {self.truth(node.body)} "
                    f"ELSE {self.truth(node.orelse)} END)")
        if isinstance(node, ast.Compare):
            return self.compare(node)
        return self.truth_of(self.val(node))

    # ------------------------------------------------------------------ values

    def val(self, node: ast.expr) -> V:
        if isinstance(node, ast.Constant):
            return self.const(node.value)
        if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
            return self.field(node)
        if isinstance(node, ast.BoolOp):
            return self.boolop(node)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return V(f"(NOT {self.truth(node.operand)})", BOOL, never_null=True)
            operand = self.val(node.operand)
            if operand.constant is not ... and isinstance(operand.constant, int | float) \
                    and not isinstance(operand.constant, bool):
                return self.const(-operand.constant)
            if operand.type.kind == "null":
                return self.const(None)
            if not operand.type.number:
                raise SqlUnsupported(f"unary '-' needs a number, not a {operand.type.describe()}")
            return V(f"(-{operand.sql})", operand.type, operand.raises)
        if isinstance(node, ast.IfExp):
            return self.choose(self.truth(node.test), self.val(node.body), self.val(node.orelse))
        if isinstance(node, ast.Compare):
            return V(self.compare(node), BOOL, never_null=True)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.List | ast.Tuple) and all(
                isinstance(e, ast.Constant) for e in node.elts):
            return self.const(tuple(e.value for e in node.elts))  # type: ignore[attr-defined]
        raise SqlUnsupported(f"'{ast.unparse(node)}' has no SQL form here")

    def choose(self, test: str, body: V, orelse: V) -> V:
        kind = unify([body.type, orelse.type])
        if kind.kind == "other":
            raise SqlUnsupported(
                f"the two branches are a {body.type.describe()} and a "
                f"{orelse.type.describe()}; a SQL value has one type")
        if orelse.constant == () and body.type.kind in ("list", "set"):
            # a falsy list and [] behave alike everywhere but in 'is None'
            return V(f"CASE WHEN {test} THEN {body.sql} ELSE NULL END", body.type,
                     body.raises, never_null=True)
        if body.constant == () and orelse.type.kind in ("list", "set"):
            return V(f"CASE WHEN {test} THEN NULL ELSE {orelse.sql} END", orelse.type,
                     orelse.raises, never_null=True)
        return V(f"CASE WHEN {test} THEN {body.sql} ELSE {orelse.sql} END", kind,
                 body.raises or orelse.raises)

    def boolop(self, node: ast.BoolOp) -> V:
        values = [self.val(v) for v in node.values]
        result = values[-1]
        for left in reversed(values[:-1]):
            truth = self.truth_of(left)
            if isinstance(node.op, ast.Or):
                if left.type.kind in ("list", "set") and result.constant == ():
                    result = V(left.sql, left.type, left.raises, never_null=True)
                else:
                    result = self.choose(truth, left, result)
            else:
                result = self.choose(truth, result, left)
        return result

    # ------------------------------------------------------------------ fields

    def path(self, node: ast.expr) -> tuple[str, list[str | int]]:
        keys: list[str | int] = []
        while True:
            if isinstance(node, ast.Attribute):
                keys.append(node.attr)
                node = node.value
            elif isinstance(node, ast.Subscript):
                key = node.slice
                if isinstance(key, ast.UnaryOp):
                    assert isinstance(key.operand, ast.Constant)
                    keys.append(-int(key.operand.value))  # type: ignore[arg-type]
                else:
                    assert isinstance(key, ast.Constant)
                    assert isinstance(key.value, str | int)
                    keys.append(key.value)
                node = node.value
            else:
                assert isinstance(node, ast.Name)
                keys.reverse()
                return node.id, keys

    def field(self, node: ast.expr) -> V:
        root, keys = self.path(node)
        if root in _ALIASES and not keys:
            return self.const(_ALIASES[root])
        if root in self.scope:  # a quantifier's item
            item = self.scope[root]
            for key in keys:
                item = self.step(item, key)
            return item
        if root not in self.schema:
            value: Any = self.defaults.get(root)
            for key in keys:  # a path into a default: followed now, in Python
                value = follow_path(value, key)
            if isinstance(value, dict):
                raise SqlUnsupported(f"the default of '{root}' is an object; it has no SQL form")
            return self.const(value)
        current = V(self.column(root), self.schema[root], json_path=self._json_path([root]))
        default = self.defaults.get(root)
        if default is not None:
            fallback = self.const(default)
            if unify([current.type, fallback.type]).kind == "other":
                raise SqlUnsupported(f"'{root}' holds {current.type.describe()} values and its "
                                     "default is of another kind")
            current = V(f"(CASE WHEN {self.present(root)} THEN {current.sql} ELSE "
                        f"{fallback.sql} END)", current.type)
        for i, key in enumerate(keys):
            current = self.step(current, key)
            if current.type.kind == "struct" and self.raw_json is not None:
                current = V(current.sql, current.type, current.raises,
                            json_path=self._json_path([root, *keys[:i + 1]]))
        return current

    def _json_path(self, keys: list[str | int]) -> str | None:
        if self.raw_json is None:
            return None
        return "$" + "".join(f".{_json_key(k)}" if isinstance(k, str) else f"[{k}]"
                             if k >= 0 else f"[#{k}]" for k in keys)

    def object_len(self, v: V) -> str:
        """The number of keys of an object: a struct's fields, or a JSON object's keys."""
        if v.json_path is not None:
            return (f"coalesce(len(json_keys({self.raw_json}, {self.d.string(v.json_path)})),"
                    " 0)")
        return f"CASE WHEN {v.sql} IS NULL THEN 0 ELSE {len(v.type.fields)} END"

    def step(self, current: V, key: str | int) -> V:
        t = current.type
        if isinstance(key, str) and t.kind == "struct":
            inner = t.field(key)
            if inner is None:
                return self.const(None)
            return V(self.d.struct_field(current.sql, key), inner)
        if isinstance(key, str) and t.kind == "map":
            if t.key is None or t.key.kind != "str":
                raise SqlUnsupported("a map whose keys are not strings has no SQL form here")
            return V(self.d.map_get(current.sql, self.d.string(key)), t.item or NULL)
        if isinstance(key, int) and t.kind == "list":
            return V(self.d.list_get(current.sql, key), t.item or NULL)
        if t.kind == "other":
            raise SqlUnsupported(f"a column of type {t.describe()} has no SQL form here")
        return self.const(None)  # Python's path lookup gives null

    def has(self, node: ast.expr) -> str:
        root, keys = self.path(node)
        if root in self.scope:
            return self.has_within(self.scope[root], keys)
        if root not in self.schema:
            return "FALSE"  # a default is what an absent field reads as; it is still absent
        path = self._json_path([root, *keys])
        if path is not None:
            return f"coalesce(json_exists({self.raw_json}, {self.d.string(path)}), FALSE)"
        return self.has_within(V(self.column(root), self.schema[root]), keys,
                               [self.present(root)])

    def has_within(self, current: V, keys: list[str | int],
                   tests: list[str] | None = None) -> str:
        """``has()`` of the path ``keys`` below ``current`` (a column or an item)."""
        tests = list(tests or ["TRUE"])
        if keys and self.raw_json is not None and current.json_path is None:
            raise SqlUnsupported("has() inside a JSON list item has no SQL form")
        for key in keys:
            t = current.type
            if isinstance(key, str) and t.kind == "struct" and t.field(key) is not None:
                # inside a struct every field is a key of the object (null or not)
                tests.append(f"{current.sql} IS NOT NULL")
            elif isinstance(key, str) and t.kind == "map" and t.key is not None \
                    and t.key.kind == "str":
                tests.append(self.d.map_has(current.sql, self.d.string(key)))
            elif isinstance(key, int) and t.kind == "list":
                size = self.d.list_len(current.sql)
                tests.append(f"{size} > {key}" if key >= 0 else f"{size} >= {-key}")
            else:
                return "FALSE"
            current = self.step(current, key)
        return "(" + " AND ".join(tests) + ")"

    # ------------------------------------------------------------------ comparisons

    def compare(self, node: ast.Compare) -> str:
        operands = [node.left, *node.comparators]
        tests = []
        for i, op in enumerate(node.ops):
            tests.append(self.comparison(op, operands[i], operands[i + 1]))
        return tests[0] if len(tests) == 1 else "(" + " AND ".join(tests) + ")"

    def comparison(self, op: ast.cmpop, left_node: ast.expr, right_node: ast.expr) -> str:
        if isinstance(op, ast.Is | ast.IsNot):
            test = self.is_null(self.val(left_node))
            return test if isinstance(op, ast.Is) else f"(NOT {test})"
        if isinstance(op, ast.In | ast.NotIn):
            test = self.member(left_node, right_node)
            return test if isinstance(op, ast.In) else f"(NOT {test})"
        left, right = self.val(left_node), self.val(right_node)
        if isinstance(op, ast.Eq | ast.NotEq):
            test = self.eq(left, right)
            return test if isinstance(op, ast.Eq) else f"(NOT {test})"
        return self.order(left, right, _ORDER[type(op)])

    def eq(self, a: V, b: V) -> str:
        """Python ``a == b`` as a SQL boolean that is never null."""
        ka, kb = a.type.kind, b.type.kind
        if a.constant is not ... and b.constant is not ...:
            return "TRUE" if python_equal(a.constant, b.constant) else "FALSE"
        if ka == "null" or a.constant is None:
            return self.is_null(b)
        if kb == "null" or b.constant is None:
            return self.is_null(a)
        numeric = {"int", "float", "bool"}
        if (ka in numeric and kb in numeric) and not (ka == kb == "bool") and \
                "bool" in (ka, kb):
            a = V(self.d.as_int(a.sql), INT) if ka == "bool" else a
            b = V(self.d.as_int(b.sql), INT) if kb == "bool" else b
            ka, kb = a.type.kind, b.type.kind
        both_null = f"({self.is_null(a)} AND {self.is_null(b)})"
        if (a.type.number and b.type.number) or (ka == kb and ka in ("bool", "str")):
            nan = "".join(f" AND NOT {self.d.isnan(x.sql)}" for x in (a, b)
                          if x.type.kind == "float" and x.constant is ...)
            return f"({both_null} OR coalesce({a.sql} = {b.sql}{nan}, FALSE))"
        if ka == "list" and isinstance(b.constant, tuple):
            # a list equals a literal list item by item ([1] == [1.0], as in Python)
            tests = [f"{self.d.list_len(a.sql)} = {len(b.constant)}"]
            if not a.never_null:
                tests.insert(0, f"{a.sql} IS NOT NULL")
            tests += [self.eq(V(self.d.list_get(a.sql, i), a.type.item or NULL),
                              self.const(item)) for i, item in enumerate(b.constant)]
            return "(" + " AND ".join(tests) + ")"
        if kb == "list" and isinstance(a.constant, tuple):
            return self.eq(b, a)
        families = {"bool": "n", "int": "n", "float": "n", "str": "s", "list": "l",
                    "set": "set", "struct": "o", "map": "o"}
        fa, fb = families.get(ka), families.get(kb)
        if fa is not None and fb is not None and fa != fb:
            return both_null  # values of different kinds are never equal
        raise SqlUnsupported(
            f"'==' between a {a.type.describe()} and a {b.type.describe()} has no exact SQL form")

    def order(self, a: V, b: V, op: str) -> str:
        if a.type.kind == "null" or b.type.kind == "null" or a.constant is None \
                or b.constant is None:
            return "FALSE"
        if not ((a.type.number and b.type.number) or (a.type.kind == b.type.kind == "str")):
            raise SqlUnsupported(f"'{op}' cannot order a {a.type.describe()} and a "
                                 f"{b.type.describe()} (Python raises)")
        floats = [x.sql for x in (a, b) if x.type.kind == "float" and x.constant is ...]
        test = f"coalesce({a.sql} {op} {b.sql}, FALSE)"
        if not floats:
            return test
        # NaN or infinite: no answer, an error as in Python (``runtime._finite``)
        bad = " OR ".join(f"coalesce({self.d.nonfinite(x)}, FALSE)" for x in floats)
        message = (f"'{op}' cannot order a number that is not finite (NaN or infinite): "
                   "have the scorer write a finite number, or null where it has none")
        return f"(CASE WHEN {bad} THEN {self.d.raise_error(message)} ELSE {test} END)"

    def member(self, item_node: ast.expr, container_node: ast.expr) -> str:
        if isinstance(container_node, ast.Set | ast.List | ast.Tuple) and all(
                isinstance(e, ast.Constant) for e in container_node.elts):
            item = self.val(item_node)
            members = [e.value for e in container_node.elts]  # type: ignore[attr-defined]
            if item.type.kind in ("list", "set", "struct", "map"):
                if isinstance(container_node, ast.Set):
                    return "FALSE"  # an unhashable value is never a set member
                raise SqlUnsupported("a list or object in a list literal has no SQL form")
            return self.in_constants(item, members)
        item = self.val(item_node)
        container = self.val(container_node)
        kind = container.type.kind
        if kind == "null" or container.constant is None or container.constant == ():
            return "FALSE"
        if kind in ("list", "set"):
            if not item.type.scalar:
                raise SqlUnsupported("'in' with a list or object on its left has no SQL form")
            var = self.var()
            element = V(var, container.type.item or NULL)
            return self.d.exists(container.sql, var, self.eq(element, item))
        if kind == "str":
            if item.type.kind == "null" or item.constant is None:
                return "FALSE"
            if item.type.kind != "str":
                raise SqlUnsupported(f"'in' a string needs a string, not a "
                                     f"{item.type.describe()} (Python raises)")
            return f"coalesce({self.d.contains(container.sql, item.sql)}, FALSE)"
        if kind == "map" and container.type.key is not None \
                and container.type.key.kind == "str":
            if item.type.kind == "str":
                return self.d.map_has(container.sql, item.sql)
            if item.type.kind == "null":
                return "FALSE"
        if kind == "struct" and isinstance(item.constant, str):
            if container.json_path is not None:
                path = container.json_path + "." + _json_key(item.constant)
                return f"coalesce(json_exists({self.raw_json}, {self.d.string(path)}), FALSE)"
            return f"({container.sql} IS NOT NULL)" if container.type.field(
                item.constant) is not None else "FALSE"
        raise SqlUnsupported(f"'in' a {container.type.describe()} has no SQL form here")

    def in_constants(self, item: V, members: list[Any]) -> str:
        tests = []
        seen: list[Any] = []
        for member in members:
            if any(python_equal(member, s) and type(member) is type(s) for s in seen):
                continue
            seen.append(member)
            tests.append(self.eq(item, self.const(member)))
        tests = [t for t in tests if t != "FALSE"]
        if not tests:
            return "FALSE"
        return "(" + " OR ".join(tests) + ")"

    # ------------------------------------------------------------------ arithmetic

    def binop(self, node: ast.BinOp) -> V:
        left, right = self.val(node.left), self.val(node.right)
        raises = left.raises or right.raises
        op = node.op
        sets = ("list", "set")
        if isinstance(op, ast.BitAnd | ast.BitOr) or (
                isinstance(op, ast.Sub) and (left.type.kind in sets or right.type.kind in sets)):
            return self.set_op(op, left, right)
        if left.type.kind == "null" or right.type.kind == "null" or left.constant is None \
                or right.constant is None:
            return self.const(None)
        if not (left.type.number and right.type.number):
            raise SqlUnsupported(f"arithmetic on a {left.type.describe()} and a "
                                 f"{right.type.describe()} (Python raises)")
        if isinstance(op, ast.Div):
            kind = FLOAT
            return V(f"(CASE WHEN {right.sql} = 0 THEN NULL ELSE "
                     f"CAST({left.sql} AS DOUBLE) / {right.sql} END)", kind, raises)
        symbol = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}[type(op)]
        kind = INT if left.type.kind == right.type.kind == "int" else FLOAT
        return V(f"({left.sql} {symbol} {right.sql})", kind, raises)

    def set_op(self, op: ast.operator, left: V, right: V) -> V:
        for side in (left, right):
            if side.type.kind not in ("list", "set", "null"):
                raise SqlUnsupported(f"a set operation on a {side.type.describe()} "
                                     "(Python raises)")
            item = side.type.item
            if item is not None and not item.scalar:
                raise SqlUnsupported("sets of lists or objects have no SQL form")
        item = unify([left.type.item or NULL, right.type.item or NULL])
        if item.kind == "other":
            item = left.type.item or NULL
        result = SqlType("set", item)
        empty = V("NULL", result, never_null=True, constant=())
        if isinstance(op, ast.BitOr):
            if _nothing(left):
                return V(right.sql, result, right.raises, right.never_null, right.constant)
            if _nothing(right):
                return V(left.sql, result, left.raises, left.never_null, left.constant)
            if unify([left.type.item or NULL, right.type.item or NULL]).kind == "other":
                raise SqlUnsupported("'|' of sets of different kinds has no SQL form")
            return V(self.d.concat(left.sql, right.sql), result, left.raises or right.raises)
        if _nothing(left):
            return empty
        if _nothing(right):
            return left if isinstance(op, ast.Sub) else empty
        var, other = self.var(), self.var()
        found = self.d.exists(right.sql, other, self.eq(V(other, right.type.item or NULL),
                                                         V(var, left.type.item or NULL)))
        keep = found if isinstance(op, ast.BitAnd) else f"NOT {found}"
        return V(self.d.filter(left.sql, var, keep), SqlType("set", left.type.item),
                 left.raises or right.raises)

    # ------------------------------------------------------------------ functions

    def call(self, node: ast.Call) -> V:
        assert isinstance(node.func, ast.Name)
        name = node.func.id
        if name == "has":
            return V(self.has(node.args[0]), BOOL, never_null=True)
        if name in ("any", "all"):
            return V(quantifier(self, name, node), BOOL, never_null=True)
        if name == "matches":
            return fn_matches(self, node)
        handler = FUNCTIONS.get(name)
        if handler is None:
            raise SqlUnsupported(f"{name}() has no SQL form")
        return handler(self, *[self.val(a) for a in node.args])

def _nothing(v: V) -> bool:
    """A null or a constant empty list or set: an empty set to a set operation, with no
    SQL value to hand to a list function (Spark refuses an untyped ``NULL`` there)."""
    return v.type.kind == "null" or v.constant is None or v.constant == ()


def _json_key(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
