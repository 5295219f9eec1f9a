"""Data classes that cost a quarter of the stdlib's to define: one compile per class.

A ``failgate check`` of a small report is mostly start-up, and the data classes on its
path (about seventy) were about 40% of its imports: ``dataclasses.dataclass`` compiles
each generated method on its own (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
and for a frozen class ``__setattr__`` and ``__delattr__``), about 1.8 ms a class before
Python 3.13. Here the stdlib still reads the fields, so ``dataclasses.fields``,
``replace``, ``asdict`` and pydantic see an ordinary data class, but only ``__init__`` is
compiled (it must be fast: some classes are built once per case); the other methods are
shared functions over a per-class tuple of field names, built without a compile.

The decorator takes the stdlib's options that the package uses (``frozen``, ``slots``,
``kw_only``, ``repr``, ``eq``) and means by them what the stdlib means: the methods,
their results and the errors they raise are the stdlib's (``tests/core/base/
test_classes.py`` compares the two on the same declarations). What the stdlib refuses
when a class is defined (a field without a default after one with a default, frozen over
non-frozen or back) is refused alike, with its words; ``InitVar`` is refused when the class
is defined, ``order`` is not taken. On Python 3.13 the stdlib's decorator is still about
four times slower to define a class (measured), so this one is used on every version.
"""

from __future__ import annotations

import dataclasses
import reprlib
import sys
import types
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from collections.abc import Callable

    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_options: object) -> Callable[[Any], Any]:
        """The typing marker, a no-op at run time (it is ``typing``'s from Python 3.11)."""
        return lambda function: function

T = TypeVar("T")


class _Factory:
    """The default of a parameter whose field has a ``default_factory`` (as the stdlib's)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


@overload
def dataclass(cls: type[T], /) -> type[T]: ...


@overload
def dataclass(*, frozen: bool = False, slots: bool = False, kw_only: bool = False,
              repr: bool = True, eq: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def dataclass(cls: type[T] | None = None, /, *, frozen: bool = False, slots: bool = False,
              kw_only: bool = False, repr: bool = True, eq: bool = True
              ) -> type[T] | Callable[[type[T]], type[T]]:
    """``dataclasses.dataclass`` with the options above, built with one compile."""

    def build(declared: type[T]) -> type[T]:
        any_frozen_base = _check_bases(declared, frozen)
        if frozen:  # checked before the stdlib (or our methods) would put them there
            for name in ("__setattr__", "__delattr__"):
                if name in declared.__dict__:
                    raise TypeError(f"Cannot overwrite attribute {name} in class "
                                    f"{declared.__name__}")
        undocumented = not declared.__doc__
        if undocumented:  # else the stdlib writes a signature before there is an __init__
            declared.__doc__ = "-"
        # frozen is passed on only over a frozen base, where the stdlib checks it (the only
        # case the stdlib's own frozen methods, two compiles, are paid for)
        made = dataclasses.dataclass(declared, init=False, repr=False, eq=False,
                                     slots=slots, kw_only=kw_only,
                                     frozen=frozen and any_frozen_base)
        _refuse_init_vars(made)
        _check_defaults(made)
        params = made.__dataclass_params__  # type: ignore[attr-defined]
        params.init, params.repr, params.eq, params.frozen = True, repr, eq, frozen
        _add_methods(made, frozen=frozen, repr_=repr, eq=eq)
        if undocumented:  # as the stdlib: the signature is the doc (and the schema's text)
            import inspect

            _compiled_init(made)
            made.__doc__ = made.__name__ + str(inspect.signature(made)).replace(" -> None", "")
        return made

    return build if cls is None else build(cls)


def _check_bases(cls: type, frozen: bool) -> bool:
    """The stdlib's rule, with its words: a frozen class's data-class bases are frozen, and
    a class over a frozen one is frozen. Returns whether a base is frozen."""
    bases = [base for base in cls.__mro__[-1:0:-1] if hasattr(base, "__dataclass_fields__")]
    any_frozen_base = any(base.__dataclass_params__.frozen  # type: ignore[attr-defined]
                          for base in bases)
    if bases and any_frozen_base and not frozen:
        raise TypeError("cannot inherit non-frozen dataclass from a frozen one")
    if bases and not any_frozen_base and frozen:
        raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    return any_frozen_base


def _refuse_init_vars(cls: type) -> None:
    """An ``InitVar`` would need ``__post_init__`` to take it: not done here, so refused when
    the class is defined rather than at its first instance."""
    for name, found in cls.__dataclass_fields__.items():  # type: ignore[attr-defined]
        if found._field_type is dataclasses._FIELD_INITVAR:  # type: ignore[attr-defined]
            raise TypeError(f"{cls.__qualname__}.{name}: InitVar fields are not taken by "
                            "core.base.classes.dataclass; pass the value to a classmethod "
                            "that builds the instance")


def _check_defaults(cls: type) -> None:
    """The stdlib's rule, with its words, when the class is defined (our ``__init__`` is
    compiled later): a positional parameter without a default follows none with one."""
    seen: dataclasses.Field[Any] | None = None
    for found in dataclasses.fields(cls):
        if not found.init or found.kw_only:
            continue
        if not (found.default is dataclasses.MISSING
                and found.default_factory is dataclasses.MISSING):
            seen = found
        elif seen is not None:
            after = f" {seen.name!r}" if sys.version_info >= (3, 13) else ""
            raise TypeError(f"non-default argument {found.name!r} follows default "
                            f"argument{after}")


def _add_methods(cls: type, *, frozen: bool, repr_: bool, eq: bool) -> None:
    fields = dataclasses.fields(cls)
    own = cls.__dict__  # a live view: what the class body defined is not replaced

    def put(name: str, method: Any) -> None:
        if name not in own:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, method)

    put("__init__", _first_init(cls, fields, frozen=frozen, slots="__slots__" in own))
    if repr_:
        put("__repr__", _repr(tuple(f.name for f in fields if f.repr)))
    if eq:
        put("__eq__", _eq(_getter(tuple(f.name for f in fields if f.compare))))
    # the stdlib's rule: a body's own __hash__ stays; its __eq__ alone leaves __hash__ None
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    if eq and not explicit_hash:
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        cls.__hash__ = _hash(_getter(hashed)) if frozen else None  # type: ignore[assignment]
    if frozen:  # (a body's own was refused before the stdlib ran)
        for name, method in (("__setattr__", _frozen_setattr), ("__delattr__", _frozen_delattr)):
            setattr(cls, name, method)
        if "__slots__" in own:
            getstate, setstate = _state(tuple(f.name for f in fields))
            put("__getstate__", getstate)
            put("__setstate__", setstate)


def _first_init(cls: type, fields: tuple[dataclasses.Field[Any], ...], *, frozen: bool,
                slots: bool) -> _FirstInit:
    """``__init__`` until the first instance: it compiles the real one and puts it in its
    place, so a class no run instantiates costs no compile (half the classes a check
    imports). ``inspect.signature`` compiles it too, so the class reads its real
    signature from the start."""
    return _FirstInit(cls, (fields, frozen, slots))


class _FirstInit:
    """A class's first ``__init__``: a method that compiles the real one when called, or
    when its signature is asked for."""

    def __init__(self, cls: type, pending: tuple[Any, ...]) -> None:
        self.owner = cls
        self.__compile__ = pending
        self.__qualname__ = f"{cls.__qualname__}.__init__"

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return types.MethodType(self, instance)

    def __call__(self, instance: Any, /, *args: Any, **kwargs: Any) -> None:
        _compiled_init(self.owner)(instance, *args, **kwargs)

    @property
    def __signature__(self) -> Any:
        """The compiled ``__init__``'s signature (``self`` included, as a function's)."""
        import inspect

        return inspect.signature(_compiled_init(self.owner))


def _compiled_init(cls: type, init: Callable[..., None] | None = None) -> Callable[..., None]:
    """The class's compiled ``__init__``, compiled now if it is still the first one."""
    current = cls.__dict__["__init__"]
    pending = getattr(current, "__compile__", None)
    if pending is None:
        return current  # type: ignore[no-any-return]
    if init is None:
        fields, frozen, slots = pending
        init = _init(cls, fields, frozen=frozen, slots=slots)
    init.__qualname__ = current.__qualname__
    type.__setattr__(cls, "__init__", init)
    return init


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...], *, frozen: bool,
          slots: bool) -> Callable[..., None]:
    """``__init__``, compiled: parameters and assignments as the stdlib writes them."""
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY, "_set": object.__setattr__}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    annotations: dict[str, Any] = {}
    for number, f in enumerate(fields):
        default = f"_default{number}"
        factory = f"_factory{number}"
        has_default = f.default is not dataclasses.MISSING
        has_factory = f.default_factory is not dataclasses.MISSING
        namespace[default] = f.default
        namespace[factory] = f.default_factory
        if f.init:
            annotations[f.name] = f.type
            suffix = "=_FACTORY" if has_factory else f"={default}" if has_default else ""
            (keyword if f.kw_only else positional).append(f.name + suffix)
        if has_factory:
            value = f"{factory}()" + (f" if {f.name} is _FACTORY else {f.name}" if f.init else "")
        elif f.init:
            value = f.name
        elif slots and has_default:
            value = default
        else:
            continue  # read from the class attribute, or set by __post_init__
        body.append(f"_set(self, {f.name!r}, {value})" if frozen else f"self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    parameters = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({parameters}):\n " + "\n ".join(body or ["pass"])
    exec(source, namespace)  # the package's own field names, never a user's text
    init: Callable[..., None] = namespace["__init__"]
    init.__annotations__ = {**annotations, "return": None}
    return init


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of the named attributes (always a tuple, as the stdlib compares)."""
    if len(names) > 1:
        many: Callable[[Any], tuple[Any, ...]] = attrgetter(*names)
        return many
    if names:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    return lambda self: ()


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _eq(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, object], Any]:
    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _frozen_setattr(self: Any, name: str, value: object) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _state(names: tuple[str, ...]) -> tuple[Callable[[Any], list[Any]],
                                            Callable[[Any, list[Any]], None]]:
    """Pickling and copying of a frozen class with slots (its ``__setattr__`` refuses)."""

    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)

    return __getstate__, __setstate__
