"""The selective JSON reader must agree with ``json.loads`` on every input."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_failgate.core.reports import jsonscan
from pytest_failgate.core.reports.jsonscan import (
    FieldPicker,
    FieldValueError,
    JsonSyntaxError,
    Wanted,
    decode_at,
)

WANTED = ("id", "flag", "score", "docs", "nested", "k\u00e9y", 'q"uote')
ABSENT = object()


def picker(exact_first: int = 0) -> FieldPicker:
    reader = FieldPicker([Wanted(name, ABSENT) for name in WANTED], [],
                         lambda values, absent: (values, absent))
    reader._objects_seen = jsonscan._EXACT_FIRST - exact_first  # test the patterns at once
    return reader


def expected(obj: dict[str, Any]) -> tuple[list[Any], int]:
    values = [
        (tuple(obj[name]) if isinstance(obj[name], list) else obj[name])
        if name in obj else ABSENT
        for name in WANTED
    ]
    return values, sum(1 << i for i, name in enumerate(WANTED) if name not in obj)


def read_one(data: bytes) -> tuple[list[Any], int]:
    derived, raws, end, comma = picker().pick(data, 0)
    assert raws == ()
    assert end == len(data)
    assert not comma
    return derived  # type: ignore[no-any-return]


def read_array(data: bytes) -> list[tuple[list[Any], int]]:
    reader = picker()
    found = [derived for derived, _ in reader.iter_array(data, data.index(b"["))]
    assert data[reader.end - 1:reader.end] == b"]"
    assert data[reader.end:].strip() in (b"", b"}")
    return found


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


@settings(max_examples=200, deadline=None)
@given(obj=objects, indent=st.sampled_from([None, 0, 2]), ascii_only=st.booleans())
def test_picked_fields_equal_json_loads(obj: dict[str, Any], indent: int | None,
                                        ascii_only: bool) -> None:
    data = json.dumps(obj, indent=indent, ensure_ascii=ascii_only).encode()
    assert read_one(data) == expected(obj)


@settings(max_examples=100, deadline=None)
@given(items=st.lists(objects, max_size=12), indent=st.sampled_from([None, 2]))
def test_every_object_of_an_array_equals_json_loads(items: list[dict[str, Any]],
                                                    indent: int | None) -> None:
    data = json.dumps({"x": 1, "cases": items}, indent=indent, ensure_ascii=False).encode()
    assert read_array(data) == [expected(obj) for obj in items]


def test_objects_sharing_a_layout_still_read_each_difference() -> None:
    rng = random.Random(7)
    items: list[dict[str, Any]] = []
    for i in range(300):
        obj: dict[str, Any] = {"id": f"c{i}", "text": "x" * rng.randint(0, 50),
                               "flag": rng.choice([True, False, None]), "score": i / 7}
        if i % 50 == 7:
            obj["flag"] = "a string where a scalar was"
        if i % 60 == 11:
            obj = dict(reversed(list(obj.items())))
        if i % 70 == 13:
            obj["docs"] = [{"deep": [[[[1]]]]}]
        if i % 80 == 17:
            del obj["score"]
        items.append(obj)
    data = json.dumps(items, indent=2).encode()
    assert read_array(data) == [expected(obj) for obj in items]


SEPARATORS = [(", ", ": "), (",", ":"), (" ,\t", " :\n"), (",\n  ", ": ")]


@settings(max_examples=100, deadline=None)
@given(styles=st.lists(st.sampled_from(range(len(SEPARATORS))), min_size=1, max_size=40),
       mixed=st.booleans())
def test_objects_in_one_layout_with_any_whitespace_equal_json_loads(
    styles: list[int], mixed: bool
) -> None:
    # Layouts learn a case's exact whitespace; a case written differently must still
    # read exactly (through the layout that allows any whitespace, or a new one).
    items = [{"id": f"c{i}", "flag": i % 3 == 0, "text": "t" * i, "docs": [i, {"a": "b"}],
              "score": None if i % 4 else i / 3} for i in range(len(styles))]
    texts = []
    for obj, style in zip(items, styles, strict=True):
        text = json.dumps(obj, separators=SEPARATORS[style])
        if mixed and style == 0:
            text = text.replace(", ", ",", 1)  # one object mixing two separators
        texts.append(text)
    data = ("[" + ",\n".join(texts) + "]").encode()
    assert read_array(data) == [expected(obj) for obj in items]


def test_duplicate_keys_keep_the_last_value_like_json() -> None:
    data = b'{"flag": true, "other": 1, "flag": false}'
    assert read_one(data)[0][1] is False


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
    assert read_one(text.encode()) == expected(json.loads(text))


def test_a_wanted_value_that_is_not_json_is_an_error_at_its_place() -> None:
    data = b'{"id": "a", "flag": tru}'
    with pytest.raises((FieldValueError, JsonSyntaxError)) as info:
        picker().pick(data, 0)
    assert getattr(info.value, "index", None) == data.index(b"tru")


def test_a_failed_check_names_the_field() -> None:
    reader = FieldPicker([Wanted("flag", None, lambda v: None if v is True else "not true")],
                         [], lambda values, absent: values)
    with pytest.raises(FieldValueError) as info:
        reader.pick(b'{"flag": false}', 0)
    assert (info.value.field, info.value.problem) == ("flag", "not true")


@pytest.mark.parametrize("exact_first", [0, 64])
def test_raw_fields_come_back_as_json_bytes(exact_first: int) -> None:
    reader = FieldPicker([Wanted("flag")], ["id"], lambda values, absent: values[0])
    reader._objects_seen = jsonscan._EXACT_FIRST - exact_first
    data = b'[{"id": "a", "flag": true}, {"flag": true, "id": 2}, {"flag": false}]'
    assert list(reader.iter_array(data, 0)) == [(True, (b'"a"',)), (True, (b"2",)),
                                                 (False, (None,))]


def test_decode_at_reads_one_value_from_a_window_of_the_data() -> None:
    value = {"answer": "\u00e9" * 10_000, "n": 12345}
    data = b"[" + json.dumps(value, ensure_ascii=False).encode() + b", 1]"
    assert decode_at(data, 1) == (value, len(data) - 4)
    # A number cut by the first window is not mistaken for a shorter one.
    digits = b" " * 4090 + b"1234567"
    assert decode_at(digits, 4090) == (1234567, len(digits))


def test_a_missing_comma_between_pairs_is_not_accepted() -> None:
    with pytest.raises(JsonSyntaxError):
        picker().pick(b'{"id": 1 "flag": true}', 0)
