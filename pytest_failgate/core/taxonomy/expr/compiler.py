"""The compiler of the rule language: parse, check against a whitelist, build a new tree."""

from __future__ import annotations

import ast
import copy
import math
import re
import types
import warnings
from dataclasses import field
from typing import TYPE_CHECKING, Any, NoReturn

from ...base.classes import dataclass
from .errors import ExprError
from .quantifiers import QUANTIFIER_HELPERS
from .regex import UnsupportedPattern, compile_search
from .runtime import FUNCTIONS, HELPERS, matcher, member

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

MAX_DEPTH = 200
"""Deepest nesting of an expression's syntax tree that is accepted."""


_ALIASES: Mapping[str, Any] = {"true": True, "false": False, "null": None}

# Static kinds of generated values, known at compile time. ``any`` may be anything,
# null included; every other kind excludes null (except ``none`` itself).
_SCALAR_KINDS = frozenset({"num", "str", "bool", "none", "set"})

_CMP_HELPERS: dict[type[ast.cmpop], str] = {
    ast.Eq: "_eq",
    ast.NotEq: "_ne",
    ast.Lt: "_lt",
    ast.LtE: "_le",
    ast.Gt: "_gt",
    ast.GtE: "_ge",
    ast.In: "_in",
    ast.NotIn: "_not_in",
}

_REJECTED_BINOPS: dict[type[ast.operator], str] = {
    ast.Pow: "**",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.MatMult: "@",
}

_REJECTED_NODES: dict[type[ast.AST], str] = {
    ast.Lambda: "lambda is not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "generator expressions are not allowed (but as any(... for x in xs) "
                      "or all(...))",
    ast.JoinedStr: "f-strings are not allowed",
    ast.FormattedValue: "f-strings are not allowed",
    ast.NamedExpr: "':=' (assignment) is not allowed",
    ast.Starred: "starred expressions are not allowed",
    ast.Await: "'await' is not allowed",
    ast.Yield: "'yield' is not allowed",
    ast.YieldFrom: "'yield' is not allowed",
    ast.Dict: "dict displays are not allowed (an empty set is set(null))",
    ast.Slice: "slices are not allowed",
}


# --------------------------------------------------------------------------- compiled


@dataclass(frozen=True)
class Compiled:
    """A compiled expression: its text, the top-level fields it reads, its function.

    ``function(case)`` is the expression's value (``and``/``or`` give an operand, as
    in Python); call it directly in hot loops where truthiness is all that matters.
    ``python`` is the generated lambda as Python source, for debugging only.
    """

    text: str
    reads: tuple[str, ...]
    function: Callable[[Mapping[str, Any]], Any]
    # nested field paths read (``metadata.failure.category``), to report their absence
    paths: tuple[str, ...] = field(default=(), compare=False)
    # the checked tree of ``lambda case: ...`` and the names only it binds (``_member_0``):
    # what ``reports.scan`` inlines into one classifying loop
    tree: ast.Lambda | None = field(default=None, compare=False, repr=False)
    scope: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def python(self) -> str:
        """The generated lambda as Python source (debugging and tests; built on demand)."""
        return ast.unparse(self.tree) if self.tree is not None else ""

    def holds(self, case: Mapping[str, Any]) -> bool:
        """Whether the expression is true (Python truthiness) for ``case``."""
        return bool(self.function(case))


def compile_expr(text: str, defaults: Mapping[str, Any] | None = None) -> Compiled:
    """Parse, check and compile ``text``; ``defaults`` gives absent fields a value.

    Raises ``ExprError`` for a syntax error or anything outside the language.
    """
    source = _Source(text)
    if not source.body.strip():
        raise ExprError("the expression is empty", 1)
    try:
        with warnings.catch_warnings():
            # "invalid escape sequence" (as in matches(s, "\d+")): the backslash stays,
            # as in Python; a warning at rule-load time would only be noise
            warnings.simplefilter("ignore")
            tree = ast.parse(source.body, mode="eval")
    except SyntaxError as error:
        raise source.syntax_error(error) from None
    except (ValueError, RecursionError, MemoryError) as error:  # null bytes, deep nesting
        raise ExprError(f"cannot parse the expression: {error}", 1) from None
    builder = _Builder(source, defaults or {})
    body, _kind = builder.expr(tree.body)
    lam = ast.Lambda(
        args=ast.arguments(
            posonlyargs=[], args=[ast.arg(arg="case")], vararg=None, kwonlyargs=[],
            kw_defaults=[], kwarg=None, defaults=[],
        ),
        body=body,
    )
    module = ast.Expression(body=lam)
    ast.fix_missing_locations(module)
    namespace: dict[str, Any] = {"__builtins__": {}, **HELPERS, **QUANTIFIER_HELPERS,
                                 **builder.globals}
    _check_generated(lam, namespace)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "'is' with a literal" for 1 is None
            code = compile(module, "<failgate expression>", "eval", dont_inherit=True)
    except (RecursionError, MemoryError) as error:
        raise ExprError(f"the expression is too deeply nested ({error})", 1) from None
    lambda_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    function = types.FunctionType(lambda_code, namespace, "failgate_expression")
    return Compiled(text, builder.reads(), function, builder.paths(), lam, builder.globals)


# --------------------------------------------------------------------------- positions


class _Source:
    """The expression text and the mapping from ``ast`` positions to its columns.

    Leading blanks are dropped before parsing (``ast.parse`` would call them an
    indent); positions are mapped back to the original text.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.body = text.lstrip()
        self.lead = len(text) - len(self.body)
        self.lines = self.body.split("\n")
        self._encoded: dict[int, bytes] = {}  # a non-ASCII line's UTF-8 (b"" for ASCII)
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def index(self, lineno: int, byte_col: int) -> int:
        """The character index in ``body`` of an ``ast`` (line, UTF-8 byte column)."""
        lineno = min(max(lineno, 1), len(self.lines))
        encoded = self._encoded.get(lineno)
        if encoded is None:  # once per line: a long one-line rule stays linear
            line = self.lines[lineno - 1]
            encoded = self._encoded[lineno] = b"" if line.isascii() else line.encode("utf-8")
        chars = len(encoded[:byte_col].decode("utf-8", errors="ignore")) if encoded else byte_col
        return self.starts[lineno - 1] + chars

    def position(self, index: int) -> tuple[int, int]:
        """(line, 1-based column) in the original text of a ``body`` index."""
        absolute = self.lead + index
        line = self.text.count("\n", 0, absolute) + 1
        col = absolute - (self.text.rfind("\n", 0, absolute) + 1) + 1
        return line, col

    def error(self, message: str, index: int) -> ExprError:
        line, col = self.position(index)
        return ExprError(message, col, line)

    def syntax_error(self, error: SyntaxError) -> ExprError:
        lineno = min(max(error.lineno or 1, 1), len(self.lines))
        line = self.lines[lineno - 1]
        offset = error.offset or 0
        col = len(line.rstrip("\r")) if offset <= 0 else min(offset - 1, len(line))
        return self.error(f"syntax error: {error.msg}", self.starts[lineno - 1] + col)


# --------------------------------------------------------------------------- validation


def _call(helper: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(id=helper, ctx=ast.Load()), args=list(args), keywords=[])


def _const(value: Any) -> ast.Constant:
    return ast.Constant(value=value)


def _kind_of_constant(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "num"
    if isinstance(value, str):
        return "str"
    if isinstance(value, tuple):
        return "array"
    if isinstance(value, frozenset):
        return "set"
    return "any"


def _as_constant(value: Any) -> tuple[bool, Any]:
    """(True, a compile-time constant equal to ``value``) or (False, None)."""
    if value is None or isinstance(value, bool | int | float | str):
        return True, value
    if isinstance(value, list | tuple):
        items = [_as_constant(item) for item in value]
        if all(ok for ok, _ in items):
            return True, tuple(item for _, item in items)
    if isinstance(value, set | frozenset):
        items = [_as_constant(item) for item in value]
        if all(ok for ok, _ in items):
            return True, frozenset(item for _, item in items)
    return False, None


_Out = tuple[ast.expr, str]


class _Builder:
    """Checks the user's tree and builds the new one, node by node."""

    def __init__(self, source: _Source, defaults: Mapping[str, Any]) -> None:
        self.source = source
        self.defaults = defaults
        self.globals: dict[str, Any] = {}
        self._reads: list[tuple[int, str]] = []
        self._temps = 0
        self._depth = 0
        self._paths: list[str] = []  # nested case paths read, as dotted text
        self._items: dict[str, str] = {}  # a quantifier's item variable -> its generated name
        self._item_count = 0

    # positions and errors

    def index(self, node: ast.AST) -> int:
        return self.source.index(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end_index(self, node: ast.AST) -> int:
        return self.source.index(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def fail(self, message: str, node: ast.AST | None = None, index: int | None = None) -> NoReturn:
        if index is None:
            index = self.index(node) if node is not None else 0
        raise self.source.error(message, index)

    def between(self, left: ast.AST, right: ast.AST, symbol: str) -> int:
        """The index of ``symbol`` (an operator) between two operand nodes."""
        start, end = self.end_index(left), self.index(right)
        found = self.source.body.find(symbol, start, end)
        return found if found >= 0 else start

    def reads(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for _, name in sorted(self._reads, key=lambda read: read[0]):
            seen.setdefault(name)
        return tuple(seen)

    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self._paths))

    def temp(self) -> str:
        self._temps += 1
        return f"_t{self._temps}"

    # the translation

    def expr(self, node: ast.expr) -> _Out:
        self._depth += 1
        if self._depth > MAX_DEPTH:
            self.fail(f"the expression is nested more than {MAX_DEPTH} deep", node)
        try:
            return self._expr(node)
        finally:
            self._depth -= 1

    def _expr(self, node: ast.expr) -> _Out:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
            return self.field(node)
        if isinstance(node, ast.BoolOp):
            parts = [self.expr(value) for value in node.values]
            op: ast.boolop = ast.And() if isinstance(node.op, ast.And) else ast.Or()
            return ast.BoolOp(op=op, values=[p for p, _ in parts]), _common([k for _, k in parts])
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.IfExp):
            body, body_kind = self.expr(node.body)
            test, _ = self.expr(node.test)
            orelse, else_kind = self.expr(node.orelse)
            return ast.IfExp(test=test, body=body, orelse=orelse), _common([body_kind, else_kind])
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return self.display(node)
        message = _REJECTED_NODES.get(type(node), f"'{type(node).__name__}' is not allowed")
        self.fail(message, node)

    def constant(self, node: ast.Constant) -> _Out:
        value = node.value
        if isinstance(value, bytes):
            self.fail("bytes literals are not allowed", node)
        if isinstance(value, complex):
            self.fail("complex numbers are not allowed", node)
        if value is Ellipsis:
            self.fail("'...' is not allowed", node)
        if not (value is None or isinstance(value, bool | int | float | str)):
            self.fail(f"{type(value).__name__} literals are not allowed", node)
        if isinstance(value, float) and not math.isfinite(value):  # 1e999 reads as inf
            self.fail("a number too large to be finite (it reads as infinity): write a "
                      "finite threshold (a case's NaN or infinite number is an error where "
                      "a rule orders it)", node)
        return _const(value), _kind_of_constant(value)

    # field paths

    def path(self, node: ast.expr, *, what: str) -> tuple[ast.Name, list[str | int]]:
        """The root name and the keys of a field path; fails on anything else."""
        keys: list[str | int] = []
        while True:
            if isinstance(node, ast.Attribute):
                at = self.end_index(node) - len(node.attr)
                if node.attr.startswith("_"):
                    self.fail(f"names starting with '_' are not allowed: '{node.attr}'", index=at)
                keys.append(node.attr)
                if not isinstance(node.value, ast.Name | ast.Attribute | ast.Subscript):
                    self.fail(f"'.{node.attr}' is not allowed here: {what}", index=at)
                node = node.value
            elif isinstance(node, ast.Subscript):
                keys.append(self.subscript_key(node.slice))
                if not isinstance(node.value, ast.Name | ast.Attribute | ast.Subscript):
                    self.fail(f"subscripts are not allowed here: {what}", node.slice)
                node = node.value
            else:
                assert isinstance(node, ast.Name)
                if node.id.startswith("_"):
                    self.fail(f"names starting with '_' are not allowed: '{node.id}'", node)
                if node.id in _ALIASES and keys:
                    self.fail(f"'{node.id}' is a literal, not a field", node)
                keys.reverse()
                return node, keys

    def subscript_key(self, key: ast.expr) -> str | int:
        if isinstance(key, ast.Slice):
            self.fail("slices are not allowed", key)
        if isinstance(key, ast.Constant) and (
            isinstance(key.value, str)
            or (isinstance(key.value, int) and not isinstance(key.value, bool))
        ):
            return key.value
        if (
            isinstance(key, ast.UnaryOp)
            and isinstance(key.op, ast.USub)
            and isinstance(key.operand, ast.Constant)
            and isinstance(key.operand.value, int)
            and not isinstance(key.operand.value, bool)
        ):
            return -key.operand.value
        self.fail("a subscript must be a constant string or integer", key)

    def field(self, node: ast.Name | ast.Attribute | ast.Subscript) -> _Out:
        what = "attributes and subscripts can only follow a field path"
        root, keys = self.path(node, what=what)
        if root.id in self._items:  # a quantifier's item, not a case field
            item: ast.expr = ast.Name(id=self._items[root.id], ctx=ast.Load())
            return (_call("_path", item, _const(tuple(keys))) if keys else item), "any"
        if root.id in _ALIASES:
            value = _ALIASES[root.id]
            return _const(value), _kind_of_constant(value)
        self._reads.append((self.index(root), root.id))
        read: ast.expr = self.read(root.id)
        named = [root.id]
        for key in keys:  # the object keys before any list index
            if not isinstance(key, str):
                break
            named.append(key)
        if len(named) > 1:
            self._paths.append(".".join(named))
        if keys:
            read = _call("_path", read, _const(tuple(keys)))
        return read, "any"

    def read(self, name: str) -> ast.expr:
        """``case.get("name", default)``."""
        args: list[ast.expr] = [_const(name)]
        if name in self.defaults:
            ok, value = _as_constant(self.defaults[name])
            if ok:
                if value is not None:
                    args.append(_const(value))
            else:
                slot = f"_default_{len(self.globals)}"
                self.globals[slot] = copy.deepcopy(self.defaults[name])
                args.append(ast.Name(id=slot, ctx=ast.Load()))
        get = ast.Attribute(value=ast.Name(id="case", ctx=ast.Load()), attr="get", ctx=ast.Load())
        return ast.Call(func=get, args=args, keywords=[])

    # operators

    def unary(self, node: ast.UnaryOp) -> _Out:
        if isinstance(node.op, ast.Not):
            operand, _ = self.expr(node.operand)
            return ast.UnaryOp(op=ast.Not(), operand=operand), "bool"
        if isinstance(node.op, ast.USub):
            operand, kind = self.expr(node.operand)
            if isinstance(operand, ast.Constant) and kind == "num":
                number: Any = operand.value
                return _const(-number), "num"
            return _call("_neg", operand), "any"
        symbol = "~" if isinstance(node.op, ast.Invert) else "+"
        self.fail(f"unary '{symbol}' is not allowed", node)

    def binop(self, node: ast.BinOp) -> _Out:
        rejected = _REJECTED_BINOPS.get(type(node.op))
        if rejected is not None:
            at = self.between(node.left, node.right, rejected)
            self.fail(f"'{rejected}' is not allowed", index=at)
        left, left_kind = self.expr(node.left)
        right, right_kind = self.expr(node.right)
        both_sets = left_kind == "set" and right_kind == "set"
        if isinstance(node.op, ast.BitAnd | ast.BitOr | ast.Sub) and both_sets:
            return ast.BinOp(left=left, op=type(node.op)(), right=right), "set"
        if isinstance(node.op, ast.BitAnd):
            return _call("_and", left, right), "set"
        if isinstance(node.op, ast.BitOr):
            return _call("_or", left, right), "set"
        helper = {ast.Add: "_add", ast.Sub: "_sub", ast.Mult: "_mul", ast.Div: "_div"}
        return _call(helper[type(node.op)], left, right), "any"

    def compare(self, node: ast.Compare) -> _Out:
        operands = [node.left, *node.comparators]
        # check every operator before translating, so errors come left to right
        for i, op in enumerate(node.ops):
            right = operands[i + 1]
            if isinstance(op, ast.Is | ast.IsNot) and not _is_null(right):
                at = self.between(operands[i], right, "is")
                self.fail("'is' is only allowed as 'is None' or 'is not None'", index=at)
        built = [self.expr(operand) for operand in operands]
        tests: list[ast.expr] = []
        for i, op in enumerate(node.ops):
            (left, left_kind), (right, right_kind) = built[i], built[i + 1]
            if 0 < i + 1 < len(node.ops) and not isinstance(right, ast.Constant):
                name = self.temp()  # a middle operand: evaluate once, use twice
                right = ast.NamedExpr(target=ast.Name(id=name, ctx=ast.Store()), value=right)
                built[i + 1] = (ast.Name(id=name, ctx=ast.Load()), right_kind)
            tests.append(self.comparison(op, left, left_kind, right, right_kind))
        if len(tests) == 1:
            return tests[0], "bool"
        return ast.BoolOp(op=ast.And(), values=tests), "bool"

    def comparison(
        self, op: ast.cmpop, left: ast.expr, left_kind: str, right: ast.expr, right_kind: str
    ) -> ast.expr:
        inline = False
        if isinstance(op, ast.Is | ast.IsNot):
            if isinstance(left, ast.Constant):  # 1 is None: known now
                return _const((left.value is None) == isinstance(op, ast.Is))
            inline = True
        elif isinstance(op, ast.Eq | ast.NotEq):
            inline = left_kind in _SCALAR_KINDS or right_kind in _SCALAR_KINDS
        elif isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE):
            inline = left_kind == right_kind and left_kind in ("num", "str")
        elif (
            isinstance(right, ast.Constant)
            and isinstance(right.value, frozenset | tuple)
            and all(_kind_of_constant(v) in ("num", "str", "bool", "none") for v in right.value)
        ):
            return self.scalar_membership(op, left, left_kind, frozenset(right.value))
        if inline:
            return ast.Compare(left=left, ops=[type(op)()], comparators=[right])
        return _call(_CMP_HELPERS[type(op)], left, right)

    def scalar_membership(
        self, op: ast.cmpop, item: ast.expr, item_kind: str, members: frozenset[Any],
    ) -> ast.expr:
        """``x in {"a", 1}``: an inline set lookup when ``x`` is known to be a scalar,
        else one call to a small per-set helper (a list or object is never a member)."""
        if item_kind in ("num", "str", "bool", "none"):
            test: ast.expr = ast.Compare(left=item, ops=[ast.In()], comparators=[_const(members)])
        else:
            slot = f"_member_{len(self.globals)}"
            self.globals[slot] = member(members)
            test = _call(slot, item)
        return ast.UnaryOp(op=ast.Not(), operand=test) if isinstance(op, ast.NotIn) else test

    # calls

    def call(self, node: ast.Call) -> _Out:
        func = node.func
        if not isinstance(func, ast.Name):
            if isinstance(func, ast.Attribute):
                at = self.end_index(func) - len(func.attr)
                hint = ""
                if func.attr in FUNCTIONS:
                    hint = f"; write {func.attr}(x)" if FUNCTIONS[func.attr][1] == 1 else (
                        f"; write {func.attr}(x, ...)"
                    )
                self.fail(f"method calls are not allowed: '.{func.attr}()'{hint}", index=at)
            self.fail("only the functions " + ", ".join(FUNCTIONS) + " can be called", func)
        name = func.id
        if name in ("any", "all") and len(node.args) == 1 and not node.keywords and (
                isinstance(node.args[0], ast.GeneratorExp)):
            return self.quantifier(name, node.args[0]), "bool"
        if name not in FUNCTIONS:
            self.fail(
                f"function '{name}' is not allowed; the functions are: " + ", ".join(FUNCTIONS),
                func,
            )
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.fail("starred arguments are not allowed", arg)
        if node.keywords:
            self.fail("keyword arguments are not allowed", node.keywords[0])
        fewest, most = FUNCTIONS[name]
        given = len(node.args)
        if given < fewest or (most is not None and given > most):
            if most is None:
                wanted = f"at least {fewest} argument" + ("s" if fewest > 1 else "")
            else:
                wanted = f"{fewest} argument" + ("s" if fewest > 1 else "")
            self.fail(f"{name}() takes {wanted}, got {given}", node)
        if name == "has":
            return self.has(node.args[0]), "bool"
        if name == "matches":
            return self.matches(node), "bool"
        args = [self.expr(arg)[0] for arg in node.args]
        kind = {"len": "num", "set": "set", "empty": "bool", "startswith": "bool",
                "endswith": "bool", "any": "bool", "all": "bool", "kind": "str",
                "values": "array"}.get(name, "any")
        return _call(f"_{name}", *args), kind

    def quantifier(self, name: str, gen: ast.GeneratorExp) -> ast.expr:
        """``any(body for x in items if cond)``: ``_any(items, lambda _iN: body, lambda
        _iN: cond)``, the item bound to a generated name only inside the lambdas."""
        if len(gen.generators) != 1:
            self.fail(f"{name}() takes one 'for': {name}(x > 1 for x in xs)", gen)
        loop = gen.generators[0]
        if loop.is_async:
            self.fail("'async for' is not allowed", gen)
        if not isinstance(loop.target, ast.Name):
            self.fail(f"the item of {name}() is one name: {name}(x > 1 for x in xs)",
                      loop.target)
        var = loop.target.id
        if var.startswith("_") or var in _ALIASES or var in self._items:
            why = ("is a literal" if var in _ALIASES else "is already an item" if var in
                   self._items else "starts with '_'")
            self.fail(f"'{var}' cannot be the item of {name}(): it {why}", loop.target)
        if len(loop.ifs) > 1:
            self.fail(f"{name}() takes at most one 'if'", loop.ifs[1])
        items, _ = self.expr(loop.iter)  # in the enclosing scope: the item is not bound yet
        self._item_count += 1
        bound = f"_i{self._item_count}"
        self._items[var] = bound
        try:
            parts = [self.expr(gen.elt)[0], *(self.expr(test)[0] for test in loop.ifs)]
        finally:
            del self._items[var]
        lambdas = [ast.Lambda(args=ast.arguments(
            posonlyargs=[], args=[ast.arg(arg=bound)], vararg=None, kwonlyargs=[],
            kw_defaults=[], kwarg=None, defaults=[]), body=part) for part in parts]
        return _call(f"_{name}", items, *lambdas)

    def has(self, arg: ast.expr) -> ast.expr:
        what = "has() needs a field path, like has(a.b)"
        if not isinstance(arg, ast.Name | ast.Attribute | ast.Subscript):
            self.fail(what, arg)
        root, keys = self.path(arg, what=what)
        if root.id in self._items:  # an item is there; its paths may not be
            item = ast.Name(id=self._items[root.id], ctx=ast.Load())
            return _call("_has", item, _const(tuple(keys))) if keys else _const(True)
        if root.id in _ALIASES:
            self.fail(what, arg)
        self._reads.append((self.index(root), root.id))
        case = ast.Name(id="case", ctx=ast.Load())
        if not keys:
            return ast.Compare(left=_const(root.id), ops=[ast.In()], comparators=[case])
        return _call("_has", case, _const((root.id, *keys)))

    def matches(self, node: ast.Call) -> ast.expr:
        subject, regex = node.args
        if not (isinstance(regex, ast.Constant) and isinstance(regex.value, str)):
            self.fail("the pattern of matches() must be a string literal", regex)
        try:
            search = compile_search(regex.value)
        except re.error as error:
            self.fail(f"invalid regular expression: {error}", regex)
        except UnsupportedPattern as error:
            self.fail(f"unsupported regular expression: {error}", regex)
        value, _ = self.expr(subject)
        slot = f"_matches_{len(self.globals)}"
        self.globals[slot] = matcher(search)
        return _call(slot, value)

    # displays

    def display(self, node: ast.List | ast.Tuple | ast.Set) -> _Out:
        items: list[ast.expr] = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                self.fail("starred expressions are not allowed", element)
            items.append(self.expr(element)[0])
        constant = all(isinstance(item, ast.Constant) for item in items)
        values = [item.value for item in items if isinstance(item, ast.Constant)]
        if isinstance(node, ast.Set):
            if constant:
                return _const(frozenset(values)), "set"
            return _call("_make_set", *items), "set"
        if constant:
            return _const(tuple(values)), "array"
        return ast.Tuple(elts=items, ctx=ast.Load()), "array"


def _is_null(node: ast.expr) -> bool:
    return (isinstance(node, ast.Constant) and node.value is None) or (
        isinstance(node, ast.Name) and node.id == "null"
    )


def _common(kinds: list[str]) -> str:
    return kinds[0] if len(set(kinds)) == 1 else "any"


# --------------------------------------------------------------------------- self-check

_GENERATED_NODES = (
    ast.Lambda, ast.arguments, ast.arg, ast.Name, ast.Load, ast.Store, ast.Constant,
    ast.Call, ast.Attribute, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.Compare,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is,
    ast.IsNot, ast.IfExp, ast.Tuple, ast.NamedExpr, ast.BinOp, ast.BitAnd, ast.BitOr, ast.Sub,
)


def _check_generated(tree: ast.Lambda, namespace: Mapping[str, Any]) -> None:
    """Defence in depth: the new tree holds only what the builder is meant to emit."""
    for node in ast.walk(tree):
        if not isinstance(node, _GENERATED_NODES):
            raise AssertionError(f"generated code holds {type(node).__name__}")
        if isinstance(node, ast.Attribute) and not (
            node.attr == "get" and isinstance(node.value, ast.Name) and node.value.id == "case"
        ):
            raise AssertionError(f"generated code reads attribute {node.attr}")
        if isinstance(node, ast.Name) and (
            node.id == "__builtins__"
            or not (node.id == "case" or node.id in namespace
                    or re.fullmatch(r"_[ti]\d+", node.id))
        ):
            raise AssertionError(f"generated code names {node.id}")
