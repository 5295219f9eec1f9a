"""Result records: frozen dataclasses that meet pydantic only for JSON and its schema.

Every run builds a result (``GateResult`` and its rows), but few write it as JSON: a
pytest run or a ``failgate check`` on the terminal reads attributes and renders text.
Plain dataclasses cost nothing to define or build, where models cost the import of
pydantic and a validator built per class, which was most of the time a small report
took. So the records are dataclasses, and the JSON they are written as, read back from
and described by (``failgate schema``) goes through a ``pydantic.TypeAdapter`` over the
same classes, imported on first use: the documents and the schema are pydantic's, as
before, field for field.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, cast

if TYPE_CHECKING:
    from pydantic import TypeAdapter

R = TypeVar("R", bound="Record")

_ADAPTERS: dict[type, TypeAdapter[Any]] = {}
_FLOATS: dict[type, tuple[tuple[str, bool], ...]] = {}
_FLOAT_TYPES = {"float": False, "float | None": False, "list[float]": True,
                "list[float] | None": True}


def described(text: str | None = None, **options: Any) -> Any:
    """A field with its description in the JSON schema (pydantic reads ``metadata``); an
    empty list or mapping by default is written in the schema as the models wrote it."""
    metadata: dict[str, Any] = {"description": text}
    factory = options.get("default_factory")
    if factory is not None:
        metadata["json_schema_extra"] = {"default": factory()}
    return dataclasses.field(metadata=metadata, **options)


def adapter(cls: type) -> TypeAdapter[Any]:
    """The pydantic adapter of a record class, built once, on first use."""
    found = _ADAPTERS.get(cls)
    if found is None:
        from pydantic import TypeAdapter

        found = _ADAPTERS[cls] = TypeAdapter(cls)
    return found


class Record:
    """The base of result records: what pydantic models offered, on a dataclass.

    Subclasses are ``@dataclass(frozen=True, slots=True, kw_only=True)``. Fields typed
    ``float`` hold floats (a count divided or an exact fraction is converted once,
    here), so a document says ``1.0`` where a float is meant, as the models wrote it.
    """

    __slots__ = ()
    # pydantic reads this when it writes or reads the JSON: unknown keys are refused
    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}

    def __post_init__(self) -> None:
        cls = type(self)
        floats = _FLOATS.get(cls)
        if floats is None:
            floats = _FLOATS[cls] = tuple(
                (f.name, _FLOAT_TYPES[str(f.type)]) for f in dataclasses.fields(cast("Any", self))
                if str(f.type) in _FLOAT_TYPES)
        for name, many in floats:
            value = getattr(self, name)
            if value is None:
                continue
            if many:
                if any(type(v) is not float for v in value):
                    object.__setattr__(self, name, [float(v) for v in value])
            elif type(value) is not float:
                object.__setattr__(self, name, float(value))

    @classmethod
    def json_type(cls) -> type:
        """The class the JSON document is written from (itself, unless it derives fields)."""
        return cls

    def json_value(self) -> Any:
        """The instance of ``json_type`` the JSON is written from."""
        return self

    def model_dump(self, mode: Literal["json", "python"] = "python", exclude: Any = None
                   ) -> dict[str, Any]:
        """The record as plain data (``mode="json"``: JSON's types), as pydantic dumps it;
        ``exclude`` leaves fields out (pydantic's nested sets and mappings)."""
        dumped: dict[str, Any] = adapter(self.json_type()).dump_python(
            self.json_value(), mode=mode, exclude=exclude)
        return dumped

    def model_dump_json(self, indent: int | None = None, exclude: Any = None) -> str:
        """The record as the JSON document ``--json`` writes (``exclude`` as above)."""
        written: bytes = adapter(self.json_type()).dump_json(self.json_value(), indent=indent,
                                                             exclude=exclude)
        return written.decode("utf-8")

    def model_copy(self: R, update: dict[str, Any] | None = None) -> R:
        """A copy with some fields replaced."""
        return cast("R", dataclasses.replace(cast("Any", self), **(update or {})))

    @classmethod
    def model_validate(cls: type[R], data: Any) -> R:
        """A record read back from plain data (a document it was written as), validated."""
        if isinstance(data, dict):
            data = cls.without_derived(data)
        found: R = adapter(cls).validate_python(data)
        return found

    @classmethod
    def model_validate_json(cls: type[R], text: str | bytes) -> R:
        """A record read back from its JSON document, validated."""
        return cls.model_validate(json.loads(text))

    @classmethod
    def without_derived(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The document without the fields derived from the rest (recomputed on reading)."""
        return data

    @classmethod
    def model_json_schema(cls, mode: Literal["validation", "serialization"] = "validation"
                          ) -> dict[str, Any]:
        """The JSON schema of the record's document."""
        schema: dict[str, Any] = adapter(cls.json_type()).json_schema(mode=mode)
        return schema
