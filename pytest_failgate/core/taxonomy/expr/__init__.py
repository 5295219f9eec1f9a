"""The expression language of taxonomy rules: a small, safe subset of Python.

A rule such as ``answerable and abstained and term_match`` is parsed with
``ast.parse(text, mode="eval")``, checked node by node against a whitelist, and
turned into an ordinary Python function of one argument, the case (a mapping of
the fields present in a report's case; an absent field is simply not a key).

What the language has
    literals (numbers, strings, ``True/False/None`` and ``true/false/null``), list,
    tuple and set displays (lists and tuples evaluate to tuples, sets to
    frozensets); field paths (``name``, ``a.b.c``, ``a["key"]``, ``a[0]``, ``a[-1]``;
    a missing step gives null); ``and or not``, ``a if c else b``; comparisons
    ``== != < <= > >=`` (chains allowed), ``in``, ``not in``, ``x is None``,
    ``x is not None``; ``+ - * /`` and unary ``-`` on numbers; ``& | -`` on sets;
    and the functions in ``FUNCTIONS``. ``reads`` names the top-level fields.

Null safety and types
    Ordering with null is false, arithmetic with null is null, division by zero is
    null, ``x in null`` is false, ``len(null)`` is 0, ``set(null)`` is empty,
    ``lower/upper(null)`` are null, ``startswith/endswith/matches(null, ...)`` are
    false. An operation with no meaning on the values it gets raises
    ``ExprRuntimeError`` (``len(5)``, ``"a" + 1``, ``1 < "a"``). Choices beyond that:

    - booleans are never numbers (ordering, arithmetic, ``abs``, ``min``, ``max``);
      only number-number and string-string pairs can be ordered;
    - JSON arrays may be lists or tuples and are alike everywhere, ``==`` included
      (at any depth); a set never equals an array;
    - ``& |`` count null as an empty set; ``-`` is set difference when either side
      is a set or array (null then counts as empty), else number subtraction;
    - ``set(x)`` takes arrays (nested arrays become tuples), sets and objects (their
      keys); a string or number raises; ``empty(x)`` is false for numbers and bools;
    - ``x in s`` for a string ``s`` needs a string ``x`` (null is never in it); a
      list or object is never a member of a set (no error);
    - ``min``/``max`` skip nulls (all null: null); one array argument means its items;
    - ``startswith``/``endswith`` also take a list of strings, as Python does;
    - names and attributes may not start with ``_``; subscript keys may (``a["_id"]``
      is an object key, never a Python attribute).

Quantifiers and type tests (added for other tools' formats; an engine that compiles
rules elsewhere, such as to SQL, must support or refuse each of these by name)
    - ``any(<body> for <x> in <items> [if <cond>])`` and ``all(...)``: one ``for``, one
      optional ``if``, the item a plain name (not ``_x``, not a literal, not an item of
      an enclosing quantifier). Inside, ``x``, ``x.a.b`` and ``x["k"]`` read the item
      with the usual null safety (a missing step is null); ``has(x.a)`` tests presence.
      ``items`` is a list (its items), an object (its keys, as in Python) or null (no
      items); anything else raises. ``any`` over no items is false and ``all`` is
      true, as in Python: write ``not empty(xs) and all(...)`` where that matters.
      ``any(xs)`` / ``all(xs)`` without a ``for`` test the items' truthiness.
    - ``values(o)``: an object's values (null gives none; anything else raises), so
      ``any(v == false for v in values(passes))`` quantifies over a map.
    - ``kind(x)``: ``"null"``, ``"bool"``, ``"number"``, ``"string"``, ``"array"`` or
      ``"object"`` (a taxonomy's ``types:`` words), the type test:
      ``kind(score) == "number" and score < 0.5``.

Why this is safe
    User text is only ever *parsed*; it never reaches ``eval``/``exec`` (neither is
    called in this module) nor ``compile``, which sees only the tree we build. The
    validator builds a *new* tree from
    the user's nodes, so nothing the validator did not look at can end up in it:
    field names become string constants in ``case.get("name", default)`` (a user
    name can never become a Python name), every other name in the new tree is one
    of ours (``case``, a helper, a ``_tN`` temporary, a quantifier's ``_iN`` item bound
    by a generated ``lambda _iN:``), and the only attribute the
    new tree ever reads is ``case.get``. A second pass re-checks the new tree
    against that short list before it is compiled. The tree is wrapped as
    ``lambda case: <body>``; the lambda's code object is taken from the compiled
    module's constants and bound with ``types.FunctionType`` to a namespace holding
    only our helpers (plus non-literal defaults) and ``{"__builtins__": {}}``, so
    even our own generated code cannot reach a builtin.

Why this is fast
    The generated code is plain inline Python wherever Python's own semantics are
    already the language's: field reads are ``case.get(...)`` with the default as a
    constant, ``and/or/not/if`` and truthiness are inline, ``==`` is inline when one
    side is known to be a scalar or a set, ordering is inline when both sides are
    known numbers (``len(x) <= 1``) or both known strings, ``&`` is inline between
    known sets, and ``x in {"a", "b"}`` is a frozenset lookup (inline for a known
    scalar ``x``, else one tiny per-set helper that turns "unhashable" into false).
    Helpers are called only where null safety or type checks need them. The rag
    rules written this way classify about as fast as the same rules written as plain
    Python functions (bench/expr_speed.py).
"""


from .compiler import MAX_DEPTH, Compiled, compile_expr
from .errors import ExprError, ExprRuntimeError
from .runtime import FUNCTIONS

__all__ = ["FUNCTIONS", "MAX_DEPTH", "Compiled", "ExprError", "ExprRuntimeError", "compile_expr"]
