"""Quantifiers (any/all with an item), values() and kind(): semantics, errors, safety."""

from __future__ import annotations

import re
from typing import Any, get_args

import pytest

from pytest_failgate.core.taxonomy.expr import ExprError, ExprRuntimeError, compile_expr
from pytest_failgate.core.taxonomy.model import Kind

PROMPTFOO_ROW = {"gradingResult": {"componentResults": [
    {"pass": True, "assertion": {"type": "contains"}},
    {"pass": False, "assertion": {"type": "latency"}},
]}}


@pytest.mark.parametrize(("text", "case", "expected"), [
    ('any(c["pass"] == false for c in gradingResult.componentResults)', PROMPTFOO_ROW, True),
    ('all(c["pass"] for c in gradingResult.componentResults)', PROMPTFOO_ROW, False),
    ('any(c.assertion.type == "latency" for c in gradingResult.componentResults '
     'if not c["pass"])', PROMPTFOO_ROW, True),
    ('any(c.assertion.type == "contains" for c in gradingResult.componentResults '
     'if not c["pass"])', PROMPTFOO_ROW, False),
    ("all(v for v in values(passes))", {"passes": {"a": True, "b": False}}, False),
    ("any(v == false for v in values(passes))", {"passes": {"a": True, "b": False}}, True),
    ('any(k == "b" for k in passes)', {"passes": {"a": 1, "b": 2}}, True),  # keys, as Python
    ("any(x > limit for x in xs)", {"xs": [1, 5], "limit": 3}, True),  # case fields inside
    ("any(x for x in xs)", {}, False),  # null has no items
    ("all(x for x in xs)", {"xs": []}, True),  # as Python; not empty(xs) guards it
    ("not empty(xs) and all(x for x in xs)", {"xs": []}, False),
    ("any(xs)", {"xs": [0, "", 3]}, True),
    ("all(xs)", {"xs": [0, 3]}, False),
    ("any(any(y == 2 for y in x) for x in rows)", {"rows": [[1], [3, 2]]}, True),
    ("any(x.missing.deeper for x in xs)", {"xs": [{"a": 1}, None]}, False),  # null-safe
    ("any(has(x.k) for x in xs)", {"xs": [{"a": 1}, {"k": None}]}, True),
    ('any(kind(x) == "string" for x in xs)', {"xs": [1, "a"]}, True),
    ('kind(a) == "array" and kind(b) == "object" and kind(c) == "null"',
     {"a": [1], "b": {}, "c": None}, True),
    ('kind(n) == "number"', {"n": True}, False),  # a bool is never a number
    ("len(values(o))", {"o": {"a": 1, "b": 2}}, 2),
    ("any(x for x in values(o))", {"o": None}, False),
])
def test_quantifiers_and_kinds_follow_the_documented_semantics(
    text: str, case: dict[str, Any], expected: Any
) -> None:
    assert compile_expr(text).function(case) == expected


def test_a_quantifiers_item_is_not_a_case_field_but_its_body_may_read_fields() -> None:
    compiled = compile_expr("any(x > limit for x in scores if x != skip)")
    assert compiled.reads == ("limit", "scores", "skip")


@pytest.mark.parametrize(("text", "message"), [
    ("any(x for x, y in z)", "the item of any() is one name"),
    ("any(x for x in y for y in z)", "any() takes one 'for'"),
    ("all(x for x in xs if a if b)", "all() takes at most one 'if'"),
    ("any(_x for _x in xs)", "'_x' cannot be the item of any(): it starts with '_'"),
    ("any(null for null in xs)", "'null' cannot be the item of any(): it is a literal"),
    ("any(any(x for x in y) for x in xs)", "'x' cannot be the item of any(): it is already"),
    ("any(x.__class__ for x in xs)", "names starting with '_' are not allowed"),
    ("any(x.lower() for x in xs)", "method calls are not allowed"),
    ("len(x for x in xs)", "generator expressions are not allowed"),
    ("[x for x in xs]", "comprehensions are not allowed"),
    ("any((x for x in xs), 1)", "any() takes 1 argument, got 2"),
])
def test_quantifier_mistakes_are_errors_when_the_rule_is_loaded(text: str, message: str) -> None:
    with pytest.raises(ExprError, match=re.escape(message)):
        compile_expr(text)


@pytest.mark.parametrize(("text", "case", "message"), [
    ("any(x for x in s)", {"s": "abc"}, "any() goes over a list or an object, not a string"),
    ("all(x for x in n)", {"n": 5}, "all() goes over a list or an object, not a number"),
    ("values(xs)", {"xs": [1]}, "values() takes an object, not a list"),
])
def test_quantifier_values_of_the_wrong_kind_raise(text: str, case: dict[str, Any],
                                                   message: str) -> None:
    with pytest.raises(ExprRuntimeError, match=re.escape(message)):
        compile_expr(text).function(case)


def test_the_item_is_a_generated_name_bound_by_a_generated_lambda() -> None:
    compiled = compile_expr("any(secret.a for secret in xs)")
    assert "secret" not in compiled.python  # user names never become Python names
    assert "lambda _i1: _path(_i1, ('a',))" in compiled.python
    assert compiled.function.__globals__["__builtins"+"__"] == {}


def test_kind_speaks_the_words_of_a_taxonomys_types() -> None:
    """One vocabulary: what ``kind(x)`` says is what ``types:`` declares."""
    samples: dict[str, Any] = {"null": None, "bool": True, "number": 1.5, "string": "a",
                               "array": [1], "object": {"a": 1}}
    assert set(samples) == set(get_args(Kind))
    for word, value in samples.items():
        assert compile_expr(f'kind(x) == "{word}"').holds({"x": value}), word
    assert not compile_expr('kind(x) == "list"').holds({"x": [1]})
