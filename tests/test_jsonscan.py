"""The selective JSON reader must agree with ``json.loads`` on every input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_failgate.reports.jsonscan import FieldPicker, FieldValueError, JsonSyntaxError, Wanted

WANTED = ("id", "flag", "score", "docs", "nested", "k\u00e9y", 'q"uote')
ABSENT = object()


def picker() -> FieldPicker:
    return FieldPicker([Wanted(name, ABSENT) for name in WANTED])


def expected(obj: dict[str, Any]) -> list[Any]:
    return [
        (tuple(obj[name]) if isinstance(obj[name], list) else obj[name])
        if name in obj else ABSENT
        for name in WANTED
    ]


json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
keys = st.sampled_from(WANTED) | st.text(max_size=10)
objects = st.dictionaries(keys, json_values, max_size=8)


@settings(max_examples=400, deadline=None)
@given(obj=objects, indent=st.sampled_from([None, 0, 2]), ascii_only=st.booleans())
def test_picked_fields_equal_json_loads(obj: dict[str, Any], indent: int | None,
                                        ascii_only: bool) -> None:
    text = json.dumps(obj, indent=indent, ensure_ascii=ascii_only)
    values, absent, end, comma = picker().pick(text, 0)
    assert values == expected(obj)
    assert end == len(text)
    assert not comma
    assert absent == sum(1 << i for i, name in enumerate(WANTED) if name not in obj)


@settings(max_examples=200, deadline=None)
@given(first=objects, second=objects)
def test_objects_in_an_array_are_read_one_after_another(first: dict[str, Any],
                                                        second: dict[str, Any]) -> None:
    text = json.dumps([first, second], indent=1)
    reader = picker()
    values, _, end, comma = reader.pick(text, text.index("{"))
    assert values == expected(first)
    assert comma
    values, _, end, comma = reader.pick(text, end)
    assert values == expected(second)
    assert not comma
    assert text[end] == "]"


def test_duplicate_keys_keep_the_last_value_like_json() -> None:
    text = '{"flag": true, "other": 1, "flag": false}'
    assert picker().pick(text, 0)[0][1] is False


@pytest.mark.parametrize(
    "text",
    [
        '{"id": "a\\"b", "flag": true}',  # escaped quote: the exact path
        '{"nested": [[[[[[1]]]]]], "flag": true}',  # deeper than the fast pattern
        '{"\\u0069d": "escaped key", "flag": true}',  # "id" spelled with an escape
        '{"x": "ends with a backslash\\\\", "flag": true}',
    ],
)
def test_unusual_objects_fall_back_to_exact_decoding(text: str) -> None:
    assert picker().pick(text, 0)[0] == expected(json.loads(text))


def test_a_wanted_value_that_is_not_json_is_an_error_at_its_place() -> None:
    text = '{"id": "a", "flag": tru}'
    with pytest.raises((FieldValueError, JsonSyntaxError)) as info:
        picker().pick(text, 0)
    assert getattr(info.value, "index", None) == text.index("tru")


def test_a_failed_check_names_the_field() -> None:
    reader = FieldPicker([Wanted("flag", None, lambda v: None if v is True else "not true")])
    with pytest.raises(FieldValueError) as info:
        reader.pick('{"flag": false}', 0)
    assert (info.value.field, info.value.problem) == ("flag", "not true")


def test_a_missing_comma_between_pairs_is_not_accepted() -> None:
    with pytest.raises(JsonSyntaxError):
        picker().pick('{"id": 1 "flag": true}', 0)
