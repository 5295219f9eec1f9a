"""One generated classifying loop per taxonomy: check, identify, classify and count.

``CaseSink.add`` takes one case at a time through general code: a dict of the
case's fields is built, every rule is a function called on it, every check a loop
over the fields. Done that way, classifying costs more than decoding. Here the
same work is written out once per (taxonomy, what is measured, how cases arrive)
as one Python function: each field is read once into a local (a msgspec struct's
attribute or a dict's key), checked against the kinds the taxonomy declares, and
every rule, caveat, population and slice is inlined as the expression the rule
language compiled, its field reads replaced by those locals. Nothing per case is
built but what the tally keeps.

``CaseSink.add`` stays the reference. The loop takes a case only when every step
is plain (the kinds are the usual Python types, the id a string or an integer,
no rule raised, the id not seen before); anything else goes to ``add`` whole,
which accepts it or raises exactly as it always did. Both feed the same tally.

Safety is the rule language's: the loop is built as a syntax tree, never from
text a user wrote. Its skeleton is parsed from text this module writes (only its
own names and numbers: field names, defaults and category names are values in
the function's namespace), the rule expressions are the trees ``compile_expr``
already checked, and the finished tree is checked again node by node before it is
compiled. The function runs with no builtins but those named here.
"""

from __future__ import annotations

import ast
import copy
import re
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..taxonomy.expr import Compiled
from ..taxonomy.expr.quantifiers import QUANTIFIER_HELPERS
from ..taxonomy.expr.runtime import HELPERS, _has
from ..taxonomy.model import COMPOSITE
from ..taxonomy.tally import EXAMPLES, TallyTarget, slice_text

if TYPE_CHECKING:
    from ..taxonomy import Taxonomy
    from ..taxonomy.model import Field, Predicate
    from .spec import ReadSpec

MISSING = object()  # a dict case's absent key (a struct's is msgspec.UNSET)
_TYPES: dict[str, tuple[type, ...]] = {
    "bool": (bool,), "number": (int, float), "string": (str,), "null": (type(None),),
    "object": (dict,), "array": (list, tuple)}


class _Slow(Exception):
    """The case needs ``CaseSink.add``."""


def compiled_of(predicate: Predicate | None) -> Compiled | None:
    """The compiled expression behind a rule's predicate (``None`` for a Python one)."""
    owner = getattr(predicate, "__self__", None)
    if (isinstance(owner, Compiled) and owner.tree is not None
            and getattr(predicate, "__func__", None) is Compiled.holds):
        return owner
    return None


def fine_types(field: Field) -> tuple[frozenset[type], frozenset[type] | None, bool]:
    """Python types whose every value ``field.problem`` accepts; for a list field with
    item kinds, the item types it accepts; and whether a list may pass at all."""
    kinds = field.kinds if field.kinds is not None else frozenset(_TYPES)
    items = None
    if field.item_kinds is not None and "array" in kinds:
        kinds = kinds - {"array"}
        items = frozenset(t for kind in field.item_kinds for t in _TYPES[kind]
                          if t not in (list, tuple))
    fine = frozenset(t for kind in kinds for t in _TYPES[kind])
    return fine, items, list in fine or items is not None


class _Inliner(ast.NodeTransformer):
    """One compiled expression made part of the loop: reads become locals, its own
    names get a prefix so that no two expressions' names meet."""

    def __init__(self, plan: _Plan, index: int, scope: Mapping[str, Any]) -> None:
        self.plan = plan
        self.prefix = f"_x{index}_"  # never met by a name the compiler makes
        self.scope = scope
        self.eligible = True

    def rename(self, name: str) -> str:
        if name in self.scope:
            self.plan.namespace[self.prefix + name] = self.scope[name]
            return self.prefix + name
        if re.fullmatch(r"_[ti]\d+", name):
            return self.prefix + name[1:]
        if name in HELPERS or name in QUANTIFIER_HELPERS:
            return name
        self.eligible = False  # ``case`` used another way: not for the loop
        return name

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(id=self.rename(node.id), ctx=node.ctx)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return ast.arg(arg=self.rename(node.arg))

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "get"
                and isinstance(func.value, ast.Name) and func.value.id == "case"):
            name = node.args[0]
            assert isinstance(name, ast.Constant)
            assert isinstance(name.value, str)
            default = self.visit(node.args[1]) if len(node.args) > 1 else ast.Constant(None)
            return self.plan.read(name.value, default)
        if (isinstance(func, ast.Name) and func.id == "_has" and len(node.args) == 2
                and isinstance(node.args[0], ast.Name) and node.args[0].id == "case"):
            path = node.args[1]
            assert isinstance(path, ast.Constant)
            assert isinstance(path.value, tuple)
            root, *rest = path.value
            i = self.plan.index(root)
            test = ast.parse(f"not _l_m & {1 << i} and _has(_l_r{i}, _l_p)", mode="eval").body
            return _Swap({"_l_p": ast.Constant(tuple(rest))}).visit(test)
        return self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        if (len(node.ops) == 1 and isinstance(node.ops[0], ast.In)
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
                and isinstance(node.comparators[0], ast.Name)
                and node.comparators[0].id == "case"):  # has(name)
            return ast.parse(f"not _l_m & {1 << self.plan.index(node.left.value)}",
                             mode="eval").body
        return self.generic_visit(node)


class _Swap(ast.NodeTransformer):
    """Puts trees in place of the placeholder names of a skeleton."""

    def __init__(self, parts: Mapping[str, ast.expr]) -> None:
        self.parts = parts

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self.parts.get(node.id, node)


class _Plan:
    """What the loop of one sink reads, checks and evaluates, and its namespace."""

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.fields = fields
        self.positions = {name: i for i, name in enumerate(fields)}
        # field index -> (the local, its default as a tree) for every distinct read
        self.reads: dict[int, dict[str, tuple[str, ast.expr]]] = {}
        self.namespace: dict[str, Any] = {
            "__builtins__": {}, **HELPERS, **QUANTIFIER_HELPERS, "_has": _has,
            "_g_list": list, "_g_tuple": tuple, "_g_type": type, "_g_map": map,
            "_g_len": len, "_g_str": str, "_g_int": int, "_g_exception": Exception,
            "_g_Slow": _Slow, "_g_slice_text": slice_text, "_g_examples": EXAMPLES,
            "_g_missing": MISSING}
        self.eligible = True
        self.inlined = 0

    def index(self, name: str) -> int:
        if name not in self.positions:  # a field the decoder was not asked for
            self.eligible = False
            return 0
        return self.positions[name]

    def read(self, name: str, default: ast.expr) -> ast.Name:
        i = self.index(name)
        variants = self.reads.setdefault(i, {})
        key = ast.dump(default)
        if key not in variants:
            variants[key] = (f"_l_v{i}_{len(variants)}", default)
        return ast.Name(id=variants[key][0], ctx=ast.Load())

    def inline(self, compiled: Compiled) -> ast.expr:
        assert compiled.tree is not None
        self.inlined += 1
        inliner = _Inliner(self, self.inlined, compiled.scope)
        body = inliner.visit(copy.deepcopy(compiled.tree.body))
        self.eligible = self.eligible and inliner.eligible
        assert isinstance(body, ast.expr)
        return body


@dataclass(frozen=True, kw_only=True)
class LoopState:
    """What the generated loop is handed (its ``state``), by name: the tally's counters it
    updates, the sink's own, and the sink's code it calls where a case needs it."""

    tally: TallyTarget
    seen: dict[str, int]  # case id -> its position (a second one is the sink's to refuse)
    n_cases: int  # cases counted before the loop's first
    view: Callable[[int, tuple[Any, ...]], dict[str, Any]]  # a case's present fields
    key_of: Callable[[Mapping[str, Any], int], str]  # a dotted or composite id
    metrics: Callable[[Mapping[str, Any], int], list[tuple[str, float]]]  # its metrics
    store_metrics: Callable[[str, list[tuple[str, float]]], None]
    sample: list[Mapping[str, Any]]  # the first cases, as ``add`` keeps them
    room: int  # how many more the sample takes
    # keeps a case's content digest (``ReadSpec.digests``; called only when it is on)
    store_digest: Callable[[str, Mapping[str, Any]], None]


class Scan:
    """The generated loop of one kind of sink (see the module docstring)."""

    def __init__(self, function: Callable[..., None], view_names: tuple[str, ...]) -> None:
        self.function = function
        self.view_names = view_names


def build_scan(taxonomy: Taxonomy, spec: ReadSpec, fields: tuple[str, ...],
               flag_names: list[str], struct: type | None, missing: Any) -> Scan | None:
    """The loop for a sink reading ``fields`` (taxonomy fields first, in order) of cases
    that are ``struct`` instances (absent: ``missing``) or dicts; ``None`` when the
    taxonomy has a rule the loop cannot take (a Python predicate, ``--explain``)."""
    if spec.explain:
        return None
    rules = [r for r in taxonomy.categories if r.enabled]
    predicates = [compiled_of(r.predicate) for r in (taxonomy.failed, *rules)]
    flags: dict[str, Compiled | None] = {c.name: compiled_of(c.predicate)
                                         for c in taxonomy.caveats}
    flags.update(spec.measures)
    if list(flags) != flag_names or any(p is None for p in (*predicates, *flags.values())):
        return None
    plan = _Plan(fields)
    failed, *decisions = (plan.inline(p) for p in predicates if p is not None)
    flag_trees = [plan.inline(c) for c in flags.values() if c is not None]
    slice_trees = [plan.inline(c) for c in spec.slicers.values()]
    if not plan.eligible:
        return None
    source = _skeleton(taxonomy, spec, plan, struct is not None, len(flag_trees),
                       len(slice_trees), len(decisions))
    parts: dict[str, ast.expr] = {"_l_failed": failed}
    parts.update((f"_l_rule{k}", tree) for k, tree in enumerate(decisions, start=1))
    parts.update((f"_l_flag{k}", tree) for k, tree in enumerate(flag_trees))
    parts.update((f"_l_slice{k}", tree) for k, tree in enumerate(slice_trees))
    for variants in plan.reads.values():
        parts.update((f"{local}_d", default) for local, default in variants.values())
    tree = _Swap(parts).visit(ast.parse(source))
    ast.fix_missing_locations(tree)
    namespace = plan.namespace
    namespace.update(_constants(taxonomy, fields, struct, missing))
    _check(tree, namespace)
    code = compile(tree, "<failgate scan>", "exec", dont_inherit=True)
    function_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return Scan(types.FunctionType(function_code, namespace, "failgate_scan"), fields)


def _constants(taxonomy: Taxonomy, fields: tuple[str, ...], struct: type | None,
               missing: Any) -> dict[str, Any]:
    names: dict[str, Any] = {f"_g_n{i}": name for i, name in enumerate(fields)}
    for i, field in enumerate(taxonomy.fields):
        fine, items, _ = fine_types(field)
        names[f"_g_fine{i}"] = fine
        names[f"_g_items{i}"] = items
    names["_g_struct"] = struct if struct is not None else dict
    names["_g_absent"] = missing
    return names


def _skeleton(taxonomy: Taxonomy, spec: ReadSpec, plan: _Plan, struct: bool, n_flags: int,
              n_slices: int, n_rules: int) -> str:
    """The loop's text: only names and numbers of this module's own making."""
    fields = plan.fields
    checked = len(taxonomy.fields)
    out = ["def scan(_l_cases, _l_state, _l_slow, _l_count):",
           *(f"    _l_{name} = _l_state.{name}" for name in _STATE),
           *(f"    _l_{name} = _l_state.tally.{name}" for name in _TALLY),
           "    _l_n = _l_state.n_cases",
           "    _l_seen_set = _l_seen.setdefault",
           "    _l_reach_get = _l_reach.get",
           "    try:",
           "        for _c in _l_cases:",
           "            _l_n += 1",
           "            try:"]
    body: list[str] = []
    body.append("if _c.__class__ is not _g_struct: raise _g_Slow")
    body.append("_l_m = 0")
    for i in range(len(fields)):
        load = f"_c.f{i}" if struct else f"_c.get(_g_n{i}, _g_absent)"
        body.append(f"_l_r{i} = {load}")
        reads = plan.reads.get(i, {})
        body.append(f"if _l_r{i} is _g_absent:")
        body.append(f"    _l_m |= {1 << i}")
        body += [f"    {local} = {local}_d" for local, _ in reads.values()]
        body.append("else:")
        if i < checked:
            _, items, may_list = fine_types(taxonomy.fields[i])
            if may_list:
                body.append(f"    if _l_r{i}.__class__ is _g_list:")
                if items is not None:
                    body.append(f"        if not _g_items{i}.issuperset(_g_map(_g_type, _l_r{i})):"
                                " raise _g_Slow")
                body.append(f"        _l_r{i} = _g_tuple(_l_r{i})")
                body.append(f"    elif _l_r{i}.__class__ not in _g_fine{i}: raise _g_Slow")
            else:
                body.append(f"    if _l_r{i}.__class__ not in _g_fine{i}: raise _g_Slow")
        else:
            body.append(f"    if _l_r{i}.__class__ is _g_list: _l_r{i} = _g_tuple(_l_r{i})")
        body += [f"    {local} = _l_r{i}" for local, _ in reads.values()]
    body.append("_l_a = 0")
    names = [f.name for f in taxonomy.fields]
    for k, path in enumerate(p for p in taxonomy.nested_paths if p not in taxonomy.field_index):
        root, *rest = path.split(".")
        i = plan.index(root)
        plan.namespace[f"_g_below{k}"] = tuple(rest)
        body.append(f"if not _l_m & {1 << i} and _g_nested(_l_r{i}, _g_below{k}): "
                    f"_l_a |= {1 << (len(names) + k)}")
    plan.namespace["_g_nested"] = _nested_absent_below
    for k, path in enumerate(taxonomy.required):
        root, *rest = path.split(".")
        i = plan.index(root)
        plan.namespace[f"_g_required{k}"] = tuple(rest)
        body.append(f"if _l_m & {1 << i}: raise _g_Slow")
        if rest:
            body.append(f"if not _has(_l_r{i}, _g_required{k}): raise _g_Slow")
    body += _id_lines(taxonomy, plan)
    if n_flags:
        body.append("_l_fl = 0")
        body += [f"if _l_flag{k}: _l_fl |= {1 << k}" for k in range(n_flags)]
    if n_slices:
        slices = ", ".join(f"_g_slice_text(_l_slice{k})" for k in range(n_slices))
        body.append(f"_l_sl = ({slices},)")
    view = "_l_view(_l_m, (" + "".join(f"_l_r{i}, " for i in range(len(fields))) + "))"
    if spec.metrics:
        body.append(f"_l_ob = _l_observe({view})")
    if taxonomy.metrics:
        body.append(f"_l_cm = _l_metrics({view}, _l_n)")
    body.append("if not _l_failed: _l_d = 0")
    body += [f"elif _l_rule{k}: _l_d = {k}" for k in range(1, n_rules + 1)]
    body.append(f"else: _l_d = {n_rules + 1}")
    out += ["                " + line for line in body]
    out += ["            except _g_exception:",
            "                _l_n = _l_slow(_c, _l_n - 1)",
            "                continue",
            "            if _l_seen_set(_l_key, _l_n) != _l_n:",
            "                _l_n = _l_slow(_c, _l_n - 1)",
            "                continue",
            f"            _l_k = ((_l_m & {(1 << len(names)) - 1}) | _l_a) * {n_rules + 2} + _l_d",
            "            _l_reach[_l_k] = _l_reach_get(_l_k, 0) + 1",
            *(["            if _l_fl:",
               "                _l_flagged[_l_fl, _l_d] = _l_flagged.get((_l_fl, _l_d), 0) + 1"]
              if n_flags else []),
            "            if _l_d:",
            "                _l_ids = _l_ids_at[_l_d]",
            "                _l_ids.append(_l_key)",
            "                if _g_len(_l_ids) <= _g_examples:",
            f"                    _l_examples_at[_l_d].append((_l_key, {view}))",
            "            if _l_room:",  # the first cases, as ``add`` keeps them (``SAMPLE``)
            "                _l_room -= 1",
            f"                _l_sample.append({view})",
            "    finally:",
            "        _l_count(_l_n)"]
    at = out.index("    finally:")
    out[at:at] = [line for line, wanted in (
        ("            _l_record_slices(_l_key if _l_d else '', _l_d, _l_sl)", n_slices),
        ("            _l_count_observed(_l_ob)", spec.metrics),
        ("            if _l_cm: _l_store_metrics(_l_key, _l_cm)", taxonomy.metrics),
        (f"            _l_store_digest(_l_key, {view})", spec.digests)) if wanted]
    return "\n".join(out) + "\n"


def _id_lines(taxonomy: Taxonomy, plan: _Plan) -> list[str]:
    """The case's id as the string it is compared by: the first id field present and not
    null; a dotted or composite id goes through the sink's own ``_key``."""
    simple = [name for name in taxonomy.id_fields if "." not in name and COMPOSITE not in name]
    if len(simple) != len(taxonomy.id_fields):
        view = "_l_view(_l_m, (" + "".join(f"_l_r{i}, " for i in range(len(plan.fields))) + "))"
        return [f"_l_key = _l_key_of({view}, _l_n)"]
    lines = []
    for k, name in enumerate(simple):
        i = plan.index(name)
        lines.append(f"{'if' if k == 0 else 'elif'} not _l_m & {1 << i} and _l_r{i} is not None:")
        lines.append(f"    _l_key = _l_r{i} if _l_r{i}.__class__ is _g_str "
                     f"else _g_int_key(_l_r{i})")
    lines.append("else:" if lines else "if True:")
    lines.append("    _l_key = '#' + _g_str(_l_n)")
    plan.namespace["_g_int_key"] = _int_key
    return lines


def _int_key(value: Any) -> str:
    if value.__class__ is int:
        return str(value)
    raise _Slow  # anything else is the sink's to judge (and word)


def _nested_absent_below(value: Any, keys: tuple[str, ...]) -> bool:
    """``tally.nested_absent`` below a top-level field that is present."""
    for key in keys:
        if not isinstance(value, Mapping) or key not in value:
            return isinstance(value, Mapping)
        value = value[key]
    return False


_STATE = ("seen", "view", "key_of", "metrics", "store_metrics", "sample", "room",
          "store_digest")
_TALLY = ("reach", "flagged", "ids_at", "examples_at", "record_slices", "observe",
          "count_observed")
_ATTRIBUTES = frozenset({"__class__", "get", "append", "issuperset", "setdefault"})
# read only off the loop's argument (``LoopState``) and its ``tally`` (``TallyTarget``)
_STATE_ATTRIBUTES = frozenset({*_STATE, *_TALLY, "tally", "n_cases"})
_NODES = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.For, ast.Try, ast.ExceptHandler,
    ast.If, ast.Assign, ast.AugAssign, ast.Raise, ast.Expr, ast.Continue, ast.Lambda,
    ast.Name, ast.Load, ast.Store, ast.Constant, ast.Call, ast.Attribute, ast.Subscript,
    ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.Compare, ast.Eq, ast.NotEq,
    ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot, ast.IfExp,
    ast.Tuple, ast.NamedExpr, ast.BinOp, ast.BitAnd, ast.BitOr, ast.Sub, ast.Add, ast.Mult,
    ast.USub,
)


def _reads_state(node: ast.expr) -> bool:
    """Whether ``node`` is the loop's state argument or its ``tally``."""
    return (isinstance(node, ast.Name) and node.id == "_l_state") or (
        isinstance(node, ast.Attribute) and node.attr == "tally" and _reads_state(node.value))


def _check(tree: ast.Module, namespace: Mapping[str, Any]) -> None:
    """Defence in depth: the loop holds only what this module and the compiler emit."""
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise AssertionError(f"generated loop holds {type(node).__name__}")
        if isinstance(node, ast.Attribute) and not (
                node.attr in _ATTRIBUTES or re.fullmatch(r"f\d+", node.attr)
                or (node.attr in _STATE_ATTRIBUTES and _reads_state(node.value))):
            raise AssertionError(f"generated loop reads attribute {node.attr}")
        if isinstance(node, ast.Name) and not (
                (node.id in namespace and node.id != "__builtins__")
                or re.fullmatch(r"_l_\w+|_x\d+_[ti]\d+|_c", node.id)):
            raise AssertionError(f"generated loop names {node.id}")
