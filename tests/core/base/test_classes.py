"""The package's data-class decorator behaves as the stdlib's on the same declarations.

Each declaration below is built twice, once with ``dataclasses.dataclass`` and once with
``pytest_failgate.core.base.classes.dataclass``, and the two are compared through what a
caller can see: signatures, docs, instances, repr, equality, hashing, frozenness,
pickling, copying, ``replace``/``asdict``/``fields``, ``__post_init__``, and pydantic's
schema and round trip.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import TypeAdapter

from pytest_failgate.core.base import classes

ROOT = Path(__file__).resolve().parents[3]
OPTIONS: list[dict[str, bool]] = [
    {"frozen": True, "slots": True, "kw_only": True},
    {"frozen": True},
    {"frozen": True, "kw_only": True},
    {"kw_only": True},
    {},
    {"frozen": True, "slots": True},
    {"frozen": True, "eq": False},
    {"repr": False},
]


def declare(decorator: Any, options: dict[str, bool]) -> dict[str, type]:
    """The same class bodies, decorated by ``decorator(**options)``."""

    @decorator(**options)
    class Plain:
        """A documented class with defaults of each kind."""

        name: str
        count: int = 0
        tags: list[str] = dataclasses.field(default_factory=list)
        note: str | None = dataclasses.field(default=None, compare=False)
        limit: ClassVar[int] = 7

    @decorator(**options)
    class Undocumented:
        path: str
        rows: list[int] = dataclasses.field(default_factory=list)

    @decorator(**options)
    class Derived:
        """A field set after ``__init__`` and one left out of the repr."""

        text: str
        size: int = dataclasses.field(init=False, repr=False, default=0)
        index: dict[str, int] = dataclasses.field(init=False, repr=False, compare=False,
                                                  default_factory=dict)

        def __post_init__(self) -> None:
            object.__setattr__(self, "size", len(self.text))
            self.index["text"] = len(self.text)

    @decorator(**options)
    class Child(Plain):
        """A subclass adding a field."""

        extra: float = 1.5

    @decorator(**options)
    class OwnMethods:
        """A class whose body writes its own repr and hash."""

        value: int

        def __repr__(self) -> str:
            return f"<{self.value}>"

        def __hash__(self) -> int:
            return 42

    return {"Plain": Plain, "Undocumented": Undocumented, "Derived": Derived,
            "Child": Child, "OwnMethods": OwnMethods}


def samples(kinds: dict[str, type]) -> list[tuple[str, Any, Any]]:
    """Pairs of instances per class: equal twins and one that differs."""
    made: list[tuple[str, Any, Any]] = []
    for name, cls in kinds.items():
        if name in ("Plain", "Child"):
            arguments: dict[str, Any] = {"name": "ä", "count": 2, "tags": ["x"], "note": "n"}
            other = {**arguments, "count": 3}
        elif name == "Undocumented":
            arguments, other = {"path": "p"}, {"path": "q"}
        elif name == "Derived":
            arguments, other = {"text": "héllo"}, {"text": "hi"}
        else:
            arguments, other = {"value": 1}, {"value": 2}
        made.append((name, cls(**arguments), cls(**other)))
    return made


def outcome(action: Any) -> tuple[str, Any]:
    """What an action returns, or the type and text of what it raises (addresses blanked)."""
    try:
        value = action()
    except Exception as error:  # the error is the observation
        return type(error).__name__, str(error)
    return "value", blank(value) if isinstance(value, str) else value


def blank(text: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x", text)


def hashed(instance: object) -> object:
    """The hash, or "identity" where it is object's (not comparable across two classes)."""
    value = hash(instance)
    return "identity" if value == object.__hash__(instance) else value


def observe(kinds: dict[str, type]) -> list[Any]:
    """Everything a caller can see of the classes and their instances."""
    seen: list[Any] = []
    pairs = samples(kinds)  # first instances: each class's __init__ is compiled by now
    for name, cls in kinds.items():
        seen.append((name, str(inspect.signature(cls)), cls.__doc__,
                     [(f.name, f.init, f.repr, f.compare, f.kw_only) for f in
                      dataclasses.fields(cls)], getattr(cls, "__match_args__", None),
                     hasattr(cls, "__slots__"), cls.__hash__ is None))
    for name, one, other in pairs:
        twin = copy.copy(one)
        first = dataclasses.fields(one)[0].name
        seen.append((name, blank(repr(one)), one == twin, one == other, one != other,
                     one == "text", outcome(lambda o=one: hashed(o)),
                     outcome(lambda o=one, f=first: setattr(o, f, 9)),
                     outcome(lambda o=one, f=first: delattr(o, f)),
                     outcome(lambda o=one: dataclasses.asdict(o)),
                     outcome(lambda o=one: repr(pickle.loads(pickle.dumps(o)))),
                     outcome(lambda o=one: repr(copy.deepcopy(o))),
                     outcome(lambda o=one, n=name: repr(dataclasses.replace(
                         o, **({"value": 5} if n == "OwnMethods" else {"text": "x"} if
                               n == "Derived" else {"path": "r"} if n == "Undocumented"
                               else {"count": 8}))))))
    return seen


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "plain")
def test_a_class_behaves_as_the_stdlib_builds_it(options: dict[str, bool]) -> None:
    stdlib = observe(declare(dataclasses.dataclass, options))
    ours = observe(declare(classes.dataclass, options))
    assert ours == stdlib


def test_a_class_compiles_its_init_at_its_first_instance_and_only_then() -> None:
    kinds = declare(classes.dataclass, {"frozen": True, "slots": True, "kw_only": True})
    plain = kinds["Plain"]
    first = plain.__dict__["__init__"]
    assert hasattr(first, "__compile__")  # defined, not compiled
    plain(name="a")
    compiled = plain.__dict__["__init__"]
    assert compiled is not first
    assert str(inspect.signature(plain)) == (
        "(*, name: 'str', count: 'int' = 0, tags: 'list[str]' = <factory>, "
        "note: 'str | None' = None) -> None")
    plain(name="b")
    assert plain.__dict__["__init__"] is compiled
    # asking for the signature compiles it too (the stdlib's, before any instance)
    derived = kinds["Derived"]
    assert hasattr(derived.__dict__["__init__"], "__compile__")
    assert str(inspect.signature(derived)) == "(*, text: 'str') -> None"
    assert not hasattr(derived.__dict__["__init__"], "__compile__")
    # an undocumented class's doc is its signature, as the stdlib writes it: compiled at once
    assert kinds["Undocumented"].__doc__ == (
        "Undocumented(*, path: 'str', rows: 'list[int]' = <factory>)")


def test_default_factories_give_each_instance_its_own_value() -> None:
    kinds = declare(classes.dataclass, {"frozen": True, "slots": True, "kw_only": True})
    first, second = kinds["Plain"](name="a"), kinds["Plain"](name="b")
    first.tags.append("x")
    assert second.tags == []
    assert kinds["Derived"](text="ab").index is not kinds["Derived"](text="ab").index


def test_missing_and_unknown_arguments_are_refused_as_the_stdlib_refuses_them() -> None:
    for options in OPTIONS:
        for build in (dataclasses.dataclass, classes.dataclass):
            kinds = declare(build, options)
            seen = [outcome(lambda k=kinds: k["Plain"]()),
                    outcome(lambda k=kinds: k["Plain"](name="a", other=1))]
            if build is dataclasses.dataclass:
                expected = seen
            else:
                assert seen == expected
                assert all(kind == "TypeError" for kind, _ in seen)


def test_pydantic_reads_writes_and_describes_both_alike() -> None:
    options = {"frozen": True, "slots": True, "kw_only": True}
    documents = []
    for build in (dataclasses.dataclass, classes.dataclass):
        kinds = declare(build, options)
        adapters: dict[str, TypeAdapter[Any]] = {
            name: TypeAdapter(cls) for name, cls in kinds.items()}
        documents.append([
            (name, adapter.json_schema(), adapter.dump_json(instance),
             repr(adapter.validate_json(adapter.dump_json(instance))))
            for (name, instance, _), adapter in
            zip(samples(kinds), adapters.values(), strict=True)])
    assert documents[0] == documents[1]


@classes.dataclass(frozen=True, slots=True, kw_only=True)
class Pickled:
    """A module-level record, so that pickle can find it by name."""

    name: str
    values: tuple[int, ...] = ()


def test_a_frozen_record_with_slots_pickles_and_copies_to_an_equal_record() -> None:
    record = Pickled(name="é", values=(1, 2))
    for copied in (pickle.loads(pickle.dumps(record)), copy.copy(record),
                   copy.deepcopy(record)):
        assert copied == record
        assert copied is not record
        assert hash(copied) == hash(record)


def test_a_body_that_writes_its_own_setattr_cannot_be_frozen() -> None:
    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):
        @classes.dataclass(frozen=True)
        class Bad:
            value: int

            def __setattr__(self, name: str, value: object) -> None:
                pass


def test_the_package_defines_its_data_classes_with_the_cheap_decorator() -> None:
    """The stdlib's decorator costs ~1.8 ms a class: none of the package's modules uses it."""
    stdlib_use = re.compile(r"^from dataclasses import [^\n]*\bdataclass\b(?!\w)"
                            r"|@dataclasses\.dataclass\b", re.M)
    offenders = [str(path.relative_to(ROOT)) for path in
                 sorted((ROOT / "pytest_failgate").rglob("*.py"))
                 if path.name != "classes.py"
                 and stdlib_use.search(path.read_text(encoding="utf-8"))]
    assert offenders == []


# What the stdlib decides when a class is defined: each case below once failed only at the
# first instance (or never) with the package's decorator, and is now decided, with the
# stdlib's words, when the class is defined.

def _define(decorator: Any, case: str) -> tuple[str, Any]:
    """Define the class of ``case`` with ``decorator``: ("defined", params) or the error."""
    def define() -> Any:
        if case == "non-default after default":
            @decorator
            class Late:
                first: int = 0
                second: str
            return Late
        if case == "non-frozen over frozen":
            @decorator(frozen=True)
            class Base:
                value: int

            @decorator
            class Thawed(Base):
                extra: int = 0
            return Thawed
        if case == "frozen over non-frozen":
            @decorator
            class Loose:
                value: int

            @decorator(frozen=True)
            class Frozen(Loose):
                extra: int = 0
            return Frozen
        if case == "frozen over frozen":
            @decorator(frozen=True)
            class Top:
                value: int

            @decorator(frozen=True)
            class Below(Top):
                extra: int = 0
            return Below
        raise AssertionError(case)

    try:
        made = define()
    except Exception as error:  # the error is the observation
        return type(error).__name__, str(error)
    params = made.__dataclass_params__
    return "defined", (params.init, params.repr, params.eq, params.frozen,
                       str(inspect.signature(made)))


@pytest.mark.parametrize("case", ["non-default after default", "non-frozen over frozen",
                                  "frozen over non-frozen", "frozen over frozen"])
def test_a_class_the_stdlib_refuses_is_refused_alike_when_it_is_defined(case: str) -> None:
    assert _define(classes.dataclass, case) == _define(dataclasses.dataclass, case)


def test_a_frozen_class_of_ours_is_frozen_to_the_stdlib_too() -> None:
    """A stdlib data class over one of ours reads its frozenness from its parameters."""
    @classes.dataclass(frozen=True)
    class Ours:
        value: int

    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen"):
        @dataclasses.dataclass
        class Theirs(Ours):  # type: ignore[misc]  # (what the test shows the stdlib refuses)
            extra: int = 0


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "plain")
def test_parameters_and_signature_read_as_the_stdlibs_before_any_instance(
        options: dict[str, bool]) -> None:
    seen = []
    for build in (dataclasses.dataclass, classes.dataclass):
        kinds = declare(build, options)  # no instance made yet
        seen.append([(name, str(inspect.signature(cls)),
                      str(inspect.signature(cls.__dict__["__init__"])),
                      *(getattr(cls.__dataclass_params__, key)  # type: ignore[attr-defined]
                        for key in ("init", "repr", "eq", "order", "frozen")))
                     for name, cls in kinds.items()])
    assert seen[0] == seen[1]


def test_an_init_var_is_refused_when_the_class_is_defined() -> None:
    """The stdlib passes an ``InitVar`` to ``__post_init__``; the package's decorator does
    not, so it refuses one at once instead of failing at the first instance."""
    @dataclasses.dataclass
    class Stdlib:
        value: int
        seed: dataclasses.InitVar[int] = 0

        def __post_init__(self, seed: int) -> None:
            self.value += seed

    assert Stdlib(1, 2).value == 3
    with pytest.raises(TypeError, match=r"Ours\.seed: InitVar fields are not taken"):
        @classes.dataclass
        class Ours:
            value: int
            seed: dataclasses.InitVar[int] = 0

            def __post_init__(self, seed: int) -> None:
                self.value += seed
