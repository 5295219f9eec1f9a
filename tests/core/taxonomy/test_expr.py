"""The rule expression language: semantics, rejections with columns, safety, rag parity."""

from __future__ import annotations

import ast
import contextlib
import re
import types
from pathlib import Path
from typing import Any

import pytest
import rag_reference
from helpers import RAG
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_failgate.core.taxonomy import expr as expr_module
from pytest_failgate.core.taxonomy.expr import (
    FUNCTIONS,
    Compiled,
    ExprError,
    ExprRuntimeError,
    compile_expr,
)


def ev(text: str, case: dict[str, Any] | None = None, **defaults: Any) -> Any:
    """The value of ``text`` for ``case`` (the present fields)."""
    return compile_expr(text, defaults).function(case or {})


def error_of(text: str) -> ExprError:
    with pytest.raises(ExprError) as info:
        compile_expr(text)
    return info.value


# --------------------------------------------------------------------------- literals


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1),
        ("2.5", 2.5),
        ("-3", -3),
        ('"a b"', "a b"),
        ("'한국어'", "한국어"),
        ("True", True),
        ("False", False),
        ("None", None),
        ("true", True),
        ("false", False),
        ("null", None),
        ("[1, 'a']", (1, "a")),
        ("(1, 2)", (1, 2)),
        ("[]", ()),
        ("{1, 2}", frozenset({1, 2})),
    ],
)
def test_literals_and_displays_evaluate_to_their_values(text: str, value: Any) -> None:
    assert ev(text) == value


def test_displays_may_hold_any_allowed_expression() -> None:
    case = {"x": 5, "y": ["a", "b"]}
    assert ev("[x, len(y)]", case) == (5, 2)
    assert ev("{x, len(y)}", case) == frozenset({5, 2})


def test_set_display_holds_arrays_as_tuples() -> None:
    assert ev("{x}", {"x": [1, [2]]}) == frozenset({(1, (2,))})


def test_set_display_with_an_object_member_is_a_runtime_error() -> None:
    with pytest.raises(ExprRuntimeError, match="object cannot be a member of a set"):
        ev("{x}", {"x": {"a": 1}})


# --------------------------------------------------------------------------- fields


def test_field_reads_the_present_value() -> None:
    assert ev("answerable", {"answerable": False}) is False


def test_absent_field_without_default_is_null() -> None:
    assert ev("accuracy", {}) is None


def test_absent_field_takes_its_default_but_a_present_null_stays_null() -> None:
    assert ev("answerable", {}, answerable=True) is True
    assert ev("answerable", {"answerable": None}, answerable=True) is None


def test_list_default_reads_as_an_array() -> None:
    assert ev("ids == ['a']", {}, ids=["a"]) is True
    assert ev("len(ids)", {}, ids=["a", "b"]) == 2


def test_object_default_is_copied_at_compile_time() -> None:
    default = {"failure": {"category": "x"}}
    compiled = compile_expr("metadata.failure.category", {"metadata": default})
    default["failure"]["category"] = "changed"
    assert compiled.function({}) == "x"


NESTED: dict[str, Any] = {
    "m": {"f": {"c": "x", "_id": 7}, "l": [10, {"k": 1}], "n": None},
    "t": (1, 2),
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("m.f.c", "x"),
        ('m["f"]["c"]', "x"),
        ('m.f["_id"]', 7),
        ("m.l[0]", 10),
        ("m.l[1].k", 1),
        ('m.l[-1]["k"]', 1),
        ("t[1]", 2),
        ("t[-2]", 1),
    ],
)
def test_nested_path_reads_objects_and_arrays(path: str, value: Any) -> None:
    assert ev(path, NESTED) == value


@pytest.mark.parametrize(
    "path",
    [
        "m.missing.c",  # missing key, then a step beyond it
        "m.n.c",  # stepping into null
        "m.f.c.d",  # stepping into a string
        "m.l[5]",  # index out of range
        "m.l[-3]",
        "m.l.k",  # attribute of an array
        't["a"]',
        "m.f[0]",  # index into an object
        "absent.a.b",
        "m.l[0][0]",  # index into a number
    ],
)
def test_nested_path_that_gets_lost_is_null(path: str) -> None:
    assert ev(path, NESTED) is None


def test_subscript_keys_are_object_keys_never_python_attributes() -> None:
    assert ev('x["__class__"]', {"x": {"__class__": 1}}) == 1
    assert ev('x["__class__"]', {"x": "abc"}) is None
    assert ev("x.upper", {"x": "abc"}) is None


def test_field_may_be_named_like_the_lambda_argument_or_a_function() -> None:
    assert ev("case == 1", {"case": 1}) is True
    assert ev("len + 1", {"len": 2}) == 3


def test_field_reads_work_on_any_mapping() -> None:
    assert ev("a.b", types.MappingProxyType({"a": {"b": 2}})) == 2  # type: ignore[arg-type]


# --------------------------------------------------------------------------- reads


@pytest.mark.parametrize(
    ("text", "reads"),
    [
        ("b and a.x and b and has(c) and len(d)", ("b", "a", "c", "d")),
        ("x if y else z", ("x", "y", "z")),
        ("true and null and len(x)", ("x",)),
        ("len == 1", ("len",)),
        ('metadata.failure["category"] == 1', ("metadata",)),
        ("1 + 2", ()),
        ("matches(s, 'a') and startswith(t, u)", ("s", "t", "u")),
    ],
)
def test_reads_lists_top_level_fields_in_first_appearance_order(
    text: str, reads: tuple[str, ...]
) -> None:
    assert compile_expr(text).reads == reads


def test_compiled_keeps_its_text_and_holds_is_truthiness() -> None:
    compiled = compile_expr("x")
    assert isinstance(compiled, Compiled)
    assert compiled.text == "x"
    assert compiled.holds({"x": [1]}) is True
    assert compiled.holds({"x": []}) is False
    assert compiled.holds({}) is False


# --------------------------------------------------------------------------- logic


@pytest.mark.parametrize("value", [None, 0, 0.0, "", [], (), {}, False])
def test_falsy_values_follow_python_truthiness(value: Any) -> None:
    assert ev("not x", {"x": value}) is True


@pytest.mark.parametrize("value", [1, -0.5, "a", [0], (None,), {"a": None}, True])
def test_truthy_values_follow_python_truthiness(value: Any) -> None:
    assert ev("not x", {"x": value}) is False


def test_and_or_return_an_operand_like_python() -> None:
    assert ev("x or 'fallback'", {"x": ""}) == "fallback"
    assert ev("x and y", {"x": 1, "y": 2}) == 2
    assert ev("x and y", {"x": 0, "y": 2}) == 0


def test_and_or_short_circuit_past_a_runtime_error() -> None:
    assert ev("false and len(5)") is False
    assert ev("true or len(5)") is True


def test_if_else_picks_a_branch() -> None:
    assert ev("'yes' if x else 'no'", {"x": 1}) == "yes"
    assert ev("'yes' if x else 'no'", {}) == "no"


# --------------------------------------------------------------------------- comparisons


def test_equality_is_python_equality() -> None:
    assert ev("x == 1", {"x": 1.0}) is True
    assert ev("x != 'a'", {"x": "a"}) is False
    assert ev("x == null", {}) is True
    assert ev("x == y", {"x": "a", "y": "a"}) is True


def test_equality_treats_lists_and_tuples_alike_at_any_depth() -> None:
    assert ev("x == [1, 2]", {"x": [1, 2]}) is True
    assert ev("x == [1, 2]", {"x": (1, 2)}) is True
    assert ev("x == y", {"x": {"k": [1, [2]]}, "y": {"k": (1, (2,))}}) is True
    assert ev("x != y", {"x": ([1],), "y": [(1,)]}) is False
    assert ev("x == [1]", {"x": [2]}) is False


def test_comparison_chains_behave_like_python() -> None:
    assert ev("1 < x < 3", {"x": 2}) is True
    assert ev("1 < x < 3", {"x": 3}) is False
    assert ev("1 < x <= y < 9", {"x": 2, "y": 2}) is True
    assert ev("x == y == 1", {"x": 1, "y": 1}) is True
    assert ev("x == y == 1", {"x": 2, "y": 2}) is False


@pytest.mark.parametrize("op", ["<", "<=", ">", ">="])
@pytest.mark.parametrize("text", ["x {op} 1", "1 {op} x", "x {op} y", "x {op} 'a'"])
def test_ordering_with_null_on_either_side_is_false(op: str, text: str) -> None:
    assert ev(text.format(op=op), {"y": 2}) is False


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("x < 0.5", True),
        ("x <= 0.25", True),
        ("x > 0", True),
        ("x >= 1", False),
        ("len(y) <= 1", False),
        ("len(y) > 1", True),
        ("'a' < 'b'", True),
        ("y[0] >= 'a'", True),
        ("-1 < x", True),
    ],
)
def test_ordering_compares_numbers_and_strings(text: str, value: bool) -> None:
    assert ev(text, {"x": 0.25, "y": ["a", "b"]}) is value


@pytest.mark.parametrize(
    ("text", "case"),
    [
        ("x < 1", {"x": "a"}),
        ("'a' > x", {"x": 1}),
        ("x < 1", {"x": True}),  # booleans are not numbers
        ("x >= y", {"x": False, "y": True}),
        ("x < y", {"x": [1], "y": [2]}),
        ("x <= 1", {"x": {"a": 1}}),
    ],
)
def test_ordering_between_unorderable_values_is_a_runtime_error(
    text: str, case: dict[str, Any]
) -> None:
    with pytest.raises(ExprRuntimeError, match="cannot order"):
        ev(text, case)


def test_is_none_and_is_not_none() -> None:
    assert ev("x is None", {}) is True
    assert ev("x is null", {"x": None}) is True
    assert ev("x is not None", {"x": 0}) is True
    assert ev("x is not None", {"x": None}) is False


def test_is_none_of_a_literal_is_decided_at_compile_time_without_a_warning() -> None:
    # the suite turns warnings into errors: Python's "'is' with a literal" would fail here
    assert compile_expr("1 is None").python == "lambda case: False"
    assert ev("'a' is not None") is True
    assert ev("x is None is None", {}) is True


# --------------------------------------------------------------------------- membership


@pytest.mark.parametrize(
    ("text", "case", "value"),
    [
        ('x in {"a", "b"}', {"x": "a"}, True),
        ('x in {"a", "b"}', {"x": "c"}, False),
        ('x in ["a", 1]', {"x": 1.0}, True),
        ('x not in ("a",)', {"x": "a"}, False),
        ('x in {"a"}', {"x": ["a"]}, False),  # an unhashable value is never a member
        ('x in {"a"}', {"x": ([1],)}, False),
        ('x in {"a"}', {}, False),
        ("'b' in x", {"x": ["a", "b"]}, True),
        ("'b' in x", {"x": ("a", "b")}, True),
        ("'b' in set(x)", {"x": ["a", "b"]}, True),
        ("'ell' in x", {"x": "hello"}, True),
        ("'k' in x", {"x": {"k": None}}, True),
        ("'v' in x", {"x": {"k": "v"}}, False),
        ("[1, 2] in x", {"x": ([1, 2], 3)}, True),
        ("[1, 2] in x", {"x": [(1, 2)]}, True),
        ("x in {(1, 2)}", {"x": [1, 2]}, True),
        ("x in y", {"x": [1], "y": {"k": 1}}, False),
        ("null in 'abc'", {}, False),
        ("x in y", {"x": "a"}, False),  # in null
        ("x not in y", {"x": "a"}, True),
    ],
)
def test_in_and_not_in(text: str, case: dict[str, Any], value: bool) -> None:
    assert ev(text, case) is value


@pytest.mark.parametrize(
    ("text", "case"),
    [("1 in x", {"x": "abc"}), ("'a' in x", {"x": 5}), ("'a' in x", {"x": True})],
)
def test_in_without_meaning_is_a_runtime_error(text: str, case: dict[str, Any]) -> None:
    with pytest.raises(ExprRuntimeError, match="'in'"):
        ev(text, case)


# --------------------------------------------------------------------------- arithmetic


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("x + 1", 3),
        ("x - 0.5", 1.5),
        ("x * x", 4),
        ("x / 4", 0.5),
        ("-x", -2),
        ("--x", 2),
        ("1 + 2 * 3", 7),
    ],
)
def test_arithmetic_on_numbers(text: str, value: Any) -> None:
    assert ev(text, {"x": 2}) == value


@pytest.mark.parametrize("text", ["x + 1", "1 - x", "x * 2", "x / 2", "2 / x", "-x", "x + y"])
def test_arithmetic_with_null_is_null(text: str) -> None:
    assert ev(text, {"y": 1}) is None


def test_division_by_zero_is_null() -> None:
    assert ev("x / 0", {"x": 1}) is None
    assert ev("1 / x", {"x": 0.0}) is None


@pytest.mark.parametrize(
    ("text", "case"),
    [
        ("x + 1", {"x": "a"}),
        ("x + 'b'", {"x": "a"}),
        ("x * 2", {"x": "ab"}),
        ("x + 1", {"x": True}),
        ("x - 1", {"x": {"a": 1}}),
        ("-x", {"x": "a"}),
        ("x * 1.0", {"x": 10**400}),  # overflow
    ],
)
def test_arithmetic_on_other_values_is_a_runtime_error(text: str, case: dict[str, Any]) -> None:
    with pytest.raises(ExprRuntimeError):
        ev(text, case)


# --------------------------------------------------------------------------- set operators


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("set(a) & set(b)", {2}),
        ("a & b", {2}),
        ("a | b", {1, 2, 3}),
        ("a - b", {1}),
        ("set(a) - set(b)", {1}),
        ("a & {2, 9}", {2}),
        ("a & c", set()),  # null counts as an empty set
        ("c | b", {2, 3}),
        ("a - c", {1, 2}),
        ("c - a", set()),
        ("d & a", {1}),
    ],
)
def test_set_operators_on_sets_and_arrays_give_sets(text: str, value: set[int]) -> None:
    result = ev(text, {"a": (1, 2), "b": [2, 3], "d": {1}})
    assert isinstance(result, frozenset)
    assert result == value


@pytest.mark.parametrize("text", ["x & 1", "x | y", "'a' & y", "y - 'a'"])
def test_set_operators_on_other_values_are_a_runtime_error(text: str) -> None:
    with pytest.raises(ExprRuntimeError):
        ev(text, {"x": 3, "y": [1]})


# --------------------------------------------------------------------------- functions


def test_functions_are_exactly_the_documented_whitelist() -> None:
    assert set(FUNCTIONS) == {
        "len", "set", "lower", "upper", "startswith", "endswith", "matches", "empty",
        "has", "abs", "min", "max", "any", "all", "values", "kind",
    }


@pytest.mark.parametrize(
    ("value", "length"),
    [(None, 0), ("abc", 3), ([1, 2], 2), ((1,), 1), ({"a": 1}, 1), ("", 0)],
)
def test_len(value: Any, length: int) -> None:
    assert ev("len(x)", {"x": value}) == length


@pytest.mark.parametrize("value", [5, 2.5, True])
def test_len_of_a_number_or_bool_is_a_runtime_error(value: Any) -> None:
    with pytest.raises(ExprRuntimeError, match="len"):
        ev("len(x)", {"x": value})


@pytest.mark.parametrize(
    ("value", "result"),
    [
        (None, frozenset()),
        (["a", "a", "b"], frozenset({"a", "b"})),
        (("a",), frozenset({"a"})),
        ([[1, 2], [1, 2]], frozenset({(1, 2)})),
        ({"k": 1, "j": 2}, frozenset({"k", "j"})),
    ],
)
def test_set(value: Any, result: frozenset[Any]) -> None:
    assert ev("set(x)", {"x": value}) == result


@pytest.mark.parametrize("value", ["ab", 1, False, [{"a": 1}]])
def test_set_of_a_string_number_or_objects_is_a_runtime_error(value: Any) -> None:
    with pytest.raises(ExprRuntimeError):
        ev("set(x)", {"x": value})


def test_lower_and_upper() -> None:
    assert ev("lower(x)", {"x": "AbC"}) == "abc"
    assert ev("upper(x)", {"x": "AbC"}) == "ABC"
    assert ev("lower(x)", {}) is None
    assert ev("upper(x)", {}) is None
    assert ev("lower(x) == 'abc'", {"x": "ABC"}) is True
    with pytest.raises(ExprRuntimeError, match="lower"):
        ev("lower(x)", {"x": 1})


@pytest.mark.parametrize(
    ("text", "case", "value"),
    [
        ("startswith(x, 'ab')", {"x": "abc"}, True),
        ("startswith(x, 'b')", {"x": "abc"}, False),
        ("endswith(x, 'bc')", {"x": "abc"}, True),
        ("endswith(x, 'b')", {"x": "abc"}, False),
        ("startswith(x, ['z', 'a'])", {"x": "abc"}, True),
        ("startswith(x, 'a')", {}, False),
        ("endswith(x, 'a')", {}, False),
        ("startswith('abc', y)", {}, False),
    ],
)
def test_startswith_and_endswith(text: str, case: dict[str, Any], value: bool) -> None:
    assert ev(text, case) is value


@pytest.mark.parametrize("text", ["startswith(x, 'a')", "endswith('a', x)"])
def test_startswith_and_endswith_on_a_number_are_a_runtime_error(text: str) -> None:
    with pytest.raises(ExprRuntimeError):
        ev(text, {"x": 1})


def test_matches_searches_anywhere_and_null_is_false() -> None:
    assert ev("matches(x, 'b+c')", {"x": "abbc d"}) is True
    assert ev("matches(x, '^b')", {"x": "abc"}) is False
    assert ev("matches(x, 'a')", {}) is False
    with pytest.raises(ExprRuntimeError, match="matches"):
        ev("matches(x, 'a')", {"x": 1})


def test_matches_pattern_with_a_plain_backslash_escape_works_without_a_warning() -> None:
    assert ev(r"matches(x, '\d{3}')", {"x": "id-123"}) is True
    assert ev(r'matches(x, "^\w+$")', {"x": "a b"}) is False


def test_matches_compiles_its_regex_once_at_compile_time(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = compile_expr("matches(x, '[0-9]{3}')")

    def no_compiling(*args: object, **kwargs: object) -> None:
        raise AssertionError("re.compile called at run time")

    monkeypatch.setattr(re, "compile", no_compiling)
    assert compiled.function({"x": "id-123"}) is True


def test_invalid_regex_is_an_error_pointing_at_the_pattern() -> None:
    error = error_of("matches(x, '(a')")
    assert error.col == 12
    assert "invalid regular expression" in error.message


def test_matches_needs_a_string_literal_pattern() -> None:
    error = error_of("matches(x, y)")
    assert error.col == 12
    assert "string literal" in error.message


@pytest.mark.parametrize(
    ("value", "result"),
    [
        (None, True), ("", True), ([], True), ((), True), ({}, True),
        ("a", False), ([None], False), ({"a": 1}, False), (0, False), (False, False),
    ],
)
def test_empty(value: Any, result: bool) -> None:
    assert ev("empty(x)", {"x": value}) is result


def test_empty_of_an_absent_field_and_of_an_empty_set() -> None:
    assert ev("empty(x)", {}) is True
    assert ev("empty(set(x) & set(y))", {"x": [1], "y": [2]}) is True


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("has(a)", True),
        ("has(n)", True),  # present, even though null
        ("has(absent)", False),
        ("has(a.b)", True),
        ("has(a.b.c)", False),  # a.b is a number
        ("has(a.z)", False),
        ("has(a['n'])", True),
        ("has(l[1])", True),
        ("has(l[-2])", True),
        ("has(l[2])", False),
        ("has(l.x)", False),
        ("has(d)", False),  # a declared default is not presence
    ],
)
def test_has_tells_presence_not_value(text: str, value: bool) -> None:
    case = {"a": {"b": 1, "n": None}, "n": None, "l": [0, None]}
    assert compile_expr(text, {"d": 1}).function(case) is value


@pytest.mark.parametrize("text", ["has(1)", "has(len(x))", "has(true)", "has(null)"])
def test_has_needs_a_field_path(text: str) -> None:
    error = error_of(text)
    assert error.col == 5
    assert "field path" in error.message


def test_abs() -> None:
    assert ev("abs(x)", {"x": -2.5}) == 2.5
    assert ev("abs(x)", {}) is None
    with pytest.raises(ExprRuntimeError, match="abs"):
        ev("abs(x)", {"x": "a"})


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("min(3, x, 2)", 1),
        ("max(3, x, 2)", 3),
        ("min(x, y)", 1),  # null arguments are skipped
        ("max(y, z)", None),  # all null
        ("max(l)", 9),  # one array argument: its items
        ("min(l)", 4),
        ("min('b', 'a')", "a"),
        ("max(e)", None),
    ],
)
def test_min_and_max(text: str, value: Any) -> None:
    assert ev(text, {"x": 1, "l": (4, 9), "e": []}) == value


@pytest.mark.parametrize("text", ["min(1, 'a')", "max(1, true)", "max(x)"])
def test_min_and_max_of_mixed_or_boolean_values_are_a_runtime_error(text: str) -> None:
    with pytest.raises(ExprRuntimeError):
        ev(text, {"x": [1, "a"]})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("len()", "len() takes 1 argument, got 0"),
        ("len(x, y)", "len() takes 1 argument, got 2"),
        ("startswith(x)", "startswith() takes 2 arguments, got 1"),
        ("min()", "min() takes at least 1 argument, got 0"),
    ],
)
def test_wrong_number_of_arguments_is_rejected(text: str, message: str) -> None:
    error = error_of(text)
    assert (error.message, error.col) == (message, 1)


# --------------------------------------------------------------------------- rejections


@pytest.mark.parametrize(
    ("text", "col", "message"),
    [
        ("foo(x)", 1, "function 'foo' is not allowed"),
        ("x and eval('1')", 7, "function 'eval' is not allowed"),
        ("__import__('os')", 1, "function '__import__' is not allowed"),
        ("x.lower()", 3, "method calls are not allowed"),
        ("len(x).real", 8, "'.real' is not allowed here"),
        ("len(x)[0]", 8, "subscripts are not allowed here"),
        ("(a if b else c).d", 17, "'.d' is not allowed here"),
        ("'abc'.upper()", 7, "method calls are not allowed"),
        ("true.x", 1, "'true' is a literal, not a field"),
        ("a.__class__", 3, "names starting with '_' are not allowed: '__class__'"),
        ("a.b._c", 5, "names starting with '_' are not allowed: '_c'"),
        ("_a", 1, "names starting with '_' are not allowed: '_a'"),
        ("x and __builtins__", 7, "names starting with '_' are not allowed"),
        ("lambda: 1", 1, "lambda is not allowed"),
        ("x or (lambda y: y)", 7, "lambda is not allowed"),
        ("[i for i in x]", 1, "comprehensions are not allowed"),
        ("{i for i in x}", 1, "comprehensions are not allowed"),
        ("{k: 1 for k in x}", 1, "comprehensions are not allowed"),
        ("len(i for i in x)", 4, "generator expressions are not allowed"),
        ("f'{x}'", 1, "f-strings are not allowed"),
        ("(y := 1)", 2, "':=' (assignment) is not allowed"),
        ("x ** 2", 3, "'**' is not allowed"),
        ("x // 2", 3, "'//' is not allowed"),
        ("x % 2", 3, "'%' is not allowed"),
        ("x ^ y", 3, "'^' is not allowed"),
        ("x << 1", 3, "'<<' is not allowed"),
        ("x >> 1", 3, "'>>' is not allowed"),
        ("x @ y", 3, "'@' is not allowed"),
        ("~x", 1, "unary '~' is not allowed"),
        ("+x", 1, "unary '+' is not allowed"),
        ("x[1:2]", 3, "slices are not allowed"),
        ("x[y]", 3, "a subscript must be a constant string or integer"),
        ("x[True]", 3, "a subscript must be a constant string or integer"),
        ("x[1.5]", 3, "a subscript must be a constant string or integer"),
        ("len(*x)", 5, "starred arguments are not allowed"),
        ("[*x]", 2, "starred expressions are not allowed"),
        ("len(x=1)", 5, "keyword arguments are not allowed"),
        ("{}", 1, "dict displays are not allowed"),
        ("x == {'a': 1}", 6, "dict displays are not allowed"),
        ("x is 1", 3, "'is' is only allowed as 'is None' or 'is not None'"),
        ("x is not y", 3, "'is' is only allowed as 'is None' or 'is not None'"),
        ("None is x", 6, "'is' is only allowed as 'is None' or 'is not None'"),
        ("await x", 1, "'await' is not allowed"),
        ("(yield x)", 2, "'yield' is not allowed"),
        ("b'x'", 1, "bytes literals are not allowed"),
        ("1j", 1, "complex numbers are not allowed"),
        ("...", 1, "'...' is not allowed"),
        ("'한국어' == x ** 2", 12, "'**' is not allowed"),  # columns count characters
        ("  x // 2", 5, "'//' is not allowed"),  # leading blanks are kept in columns
    ],
)
def test_rejected_construct_is_an_error_at_its_column(text: str, col: int, message: str) -> None:
    error = error_of(text)
    assert message in error.message
    assert error.col == col
    assert error.line == 1


@pytest.mark.parametrize(
    ("text", "col"),
    [("x ==", 5), ("a ? b", 3), ("x if y", 1), ("(x", 1), ("x and # c", 10)],
)
def test_syntax_error_is_an_expr_error_at_its_column(text: str, col: int) -> None:
    error = error_of(text)
    assert error.message.startswith("syntax error")
    assert error.col == col


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_empty_text_is_an_error(text: str) -> None:
    error = error_of(text)
    assert (error.message, error.col) == ("the expression is empty", 1)


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    assert "nested" in error_of("not " * 300 + "x").message
    assert compile_expr(" + ".join(["x"] * 150)).function({"x": 1}) == 150
    assert error_of("(" * 300 + "x" + ")" * 300).message.startswith("syntax error")


def test_error_on_a_later_line_of_a_multi_line_expression() -> None:
    text = "(a and\n  b ** 2)"
    error = error_of(text)
    assert (error.line, error.col) == (2, 5)
    assert error.caret(text) == "      b ** 2)\n        ^"


def test_caret_puts_a_caret_under_the_column() -> None:
    text = "answerable and foo(x)"
    error = error_of(text)
    assert error.caret(text) == "    answerable and foo(x)\n                   ^"
    assert error.caret(text, indent="") == "answerable and foo(x)\n               ^"


def test_caret_counts_wide_characters_twice() -> None:
    text = "'한국어' == x ** 2"
    assert error_of(text).caret(text, indent="") == "'한국어' == x ** 2\n              ^"


def test_caret_at_the_end_of_the_text() -> None:
    assert error_of("x ==").caret("x ==", indent="") == "x ==\n    ^"


def test_expr_error_str_names_the_column_and_survives_pickling() -> None:
    import pickle

    error = error_of("x ** 2")
    assert str(error) == "'**' is not allowed (at column 3)"
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.message, copy.col, copy.line) == (error.message, 3, 1)


def test_runtime_errors_are_not_compile_errors() -> None:
    assert not issubclass(ExprRuntimeError, ExprError)
    compiled = compile_expr("len(x)")  # fine to compile, fails only on a bad value
    with pytest.raises(ExprRuntimeError, match=r"len\(\) needs .*a number \(5\)"):
        compiled.function({"x": 5})


# --------------------------------------------------------------------------- safety


def test_module_source_calls_neither_eval_nor_exec() -> None:
    modules = sorted(Path(expr_module.__file__).parent.glob("*.py"))
    assert len(modules) >= 4  # the package, its errors, runtime and compiler
    for module in modules:
        source = module.read_text(encoding="utf-8")
        calls = [
            node.func.id
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        ]
        assert "eval" not in calls, module.name
        assert "exec" not in calls, module.name
        assert not re.search(r"\b(eval|exec)\s*\(", source), module.name


def test_generated_function_has_no_builtins_and_only_our_helpers() -> None:
    compiled = compile_expr("len(x) > 1 and matches(y, 'a') and z in {1, 2} and a.b")
    function = compiled.function
    assert isinstance(function, types.FunctionType)
    assert function.__globals__["__builtins__"] == {}
    assert getattr(function, "__builtins__", None) == {}  # Python >= 3.10
    for name, value in function.__globals__.items():
        if name == "__builtins__":
            continue
        assert name.startswith("_")
        assert isinstance(value, types.FunctionType), name
        assert value.__module__ in (f"{expr_module.__name__}.runtime",
                                    f"{expr_module.__name__}.quantifiers"), name
    assert set(function.__code__.co_names) <= {"get", *function.__globals__}


def test_code_in_string_literals_is_only_data() -> None:
    text = "x == \"__import__('os').system('false')\" or lower('(lambda: 1)()') == x"
    assert ev(text, {"x": "a"}) is False


def test_rag_rules_compile_to_inline_code_where_semantics_allow() -> None:
    failed = compile_expr(RAG_FAILED, RAG_DEFAULTS).function
    assert set(failed.__code__.co_names) == {"get"}  # no helper calls at all
    negative = compile_expr(RAG_CATEGORIES["verifier_false_negative"], RAG_DEFAULTS).function
    assert set(negative.__code__.co_names) == {"get"}
    planner = compile_expr(RAG_CATEGORIES["planner_under_decomposition"]).python
    assert "_len(case.get('attempt_latency')) <= 1" in planner


# --------------------------------------------------------------------------- rag parity

RAG_DEFAULTS: dict[str, Any] = {"answerable": True}
RAG_FAILED = "(accuracy != 1.0) if answerable else not (abstained and not evidence_doc_ids)"
RAG_CATEGORIES: dict[str, str] = {
    "verifier_false_negative": "not answerable and not abstained",
    "verifier_false_positive": "answerable and abstained and term_match",
    "retrieval_miss": (
        "answerable and expected_doc_ids"
        " and not (set(expected_doc_ids) & set(evidence_doc_ids))"
    ),
    "planner_under_decomposition": (
        'query_type in {"comparison", "multi_hop"} and len(attempt_latency) <= 1'
    ),
    "generator_hallucination": (
        "claim_citation_alignment is not None and claim_citation_alignment < 0.5"
    ),
}

_numbers = st.one_of(
    st.integers(-2, 3), st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), st.floats(-1e6, 1e6)
)
_doc_ids = st.one_of(
    st.none(), st.lists(st.one_of(st.sampled_from(["a", "b", "c"]), st.integers(0, 2)),
                        max_size=3).map(tuple),
)
_RAG_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "answerable": st.booleans(),
    "abstained": st.one_of(st.none(), st.booleans()),
    "accuracy": st.one_of(st.none(), _numbers),
    "term_match": st.one_of(st.none(), st.booleans()),
    "expected_doc_ids": _doc_ids,
    "evidence_doc_ids": _doc_ids,
    "query_type": st.one_of(
        st.none(), st.sampled_from(["comparison", "multi_hop", "single_doc", "follow_up", ""])
    ),
    "attempt_latency": st.one_of(st.none(), st.lists(_numbers, max_size=3).map(tuple)),
    "claim_citation_alignment": st.one_of(st.none(), _numbers),
}
_present_cases = st.fixed_dictionaries({}, optional=_RAG_VALUES)

_COMPILED_FAILED = compile_expr(RAG_FAILED, RAG_DEFAULTS)
_COMPILED_RULES = {name: compile_expr(text, RAG_DEFAULTS) for name, text in RAG_CATEGORIES.items()}


def test_rag_expressions_cover_exactly_the_enabled_rag_rules() -> None:
    assert [rule.name for rule in RAG.categories if rule.enabled] == list(RAG_CATEGORIES)
    assert _COMPILED_FAILED.reads == ("accuracy", "answerable", "abstained", "evidence_doc_ids")
    for rule in RAG.categories:
        if rule.enabled:
            assert set(_COMPILED_RULES[rule.name].reads) == set(rule.reads)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(_present_cases)
def test_compiled_rag_expressions_agree_with_the_reference(present: dict[str, Any]) -> None:
    assert _COMPILED_FAILED.holds(present) == rag_reference.failed(present)
    for name, rule in rag_reference.RULES.items():
        assert _COMPILED_RULES[name].holds(present) == rule(present), name


# --------------------------------------------------------------------------- robustness

_json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.5, -1.5, 1e308]),
    st.sampled_from(["", "a", "ab", "B"]),
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from(["a", "k"]), inner, max_size=2),
    ),
    max_leaves=5,
)
_leaves = st.sampled_from(
    ["x", "y", "z.a", "x[0]", "y['k']", "1", "0", "0.5", "'a'", "null", "true", "[1, 'a']",
     "{'a', 2}", "[x, 1]", "{y}"]
)
_BINARY = ["and", "or", "==", "!=", "<", "<=", ">", ">=", "in", "not in", "+", "-", "*", "/",
           "&", "|"]
_UNARY = ["not ({})", "-({})", "({}) is None", "({}) is not None", "len({})", "set({})",
          "lower({})", "upper({})", "empty({})", "abs({})", "min({})", "max({})",
          "matches({}, 'a+')"]


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pair = st.tuples(children, st.sampled_from(_BINARY), children)
    return st.one_of(
        pair.map(lambda p: f"({p[0]}) {p[1]} ({p[2]})"),
        st.tuples(st.sampled_from(_UNARY), children).map(lambda p: p[0].format(p[1])),
        st.tuples(children, children, children).map(
            lambda p: f"({p[0]}) if ({p[1]}) else ({p[2]})"
        ),
        st.tuples(children, children, children).map(
            lambda p: f"({p[0]}) < ({p[1]}) <= ({p[2]})"
        ),
        st.tuples(st.sampled_from(["startswith", "endswith", "min", "max"]), children, children)
        .map(lambda p: f"{p[0]}({p[1]}, {p[2]})"),
    )


_expressions = st.recursive(_leaves, _extend, max_leaves=6)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_expressions, st.fixed_dictionaries({}, optional={"x": _json_values, "y": _json_values,
                                                          "z": _json_values}))
def test_valid_expressions_raise_nothing_but_expr_runtime_error(
    text: str, case: dict[str, Any]
) -> None:
    compiled = compile_expr(text)
    with contextlib.suppress(ExprRuntimeError):
        compiled.function(case)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*_BINARY, *_UNARY, "x", "(", ")", "[", "]", ",", "'a'", "1",
                                 "**", "lambda", ":", "_x", ".", "if", "else", "{", "}"]),
                max_size=8).map(" ".join))
def test_any_text_compiles_or_raises_expr_error(text: str) -> None:
    error: ExprError | None = None
    try:
        compile_expr(text)
    except ExprError as caught:
        error = caught
    if error is not None:
        assert error.col >= 1
        assert error.line == 1
