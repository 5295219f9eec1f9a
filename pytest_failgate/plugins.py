"""Taxonomies and readers from outside failgate, loaded alike by pytest and the CLI.

Both adapters must give the same numbers, so both load the same code:

- installed packages that declare a ``failgate`` entry point (a module, as for
  ``pytest11``)::

      [project.entry-points.failgate]
      my_format = "my_package.failgate_readers"

- a project's own modules named in the ``failgate_plugins`` ini key (a module name,
  or a ``.py`` file relative to the ini file), which the ``failgate`` command reads
  from the same ``pytest.ini`` / ``pyproject.toml`` / ``tox.ini`` / ``setup.cfg``
  pytest would use, or from ``failgate --plugin``::

      [tool.pytest.ini_options]
      failgate_plugins = ["tools/failgate_readers.py"]

Each module defines ``pytest_failgate_taxonomies(config)`` and/or
``pytest_failgate_readers(config)`` as in a ``conftest.py`` (the CLI passes
``config=None``). A reader only in a ``conftest.py`` is seen by pytest alone.
This module imports nothing of pytest.
"""

from __future__ import annotations

import configparser
import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .core.errors import FailgateError, display_path
from .core.taxonomy import Taxonomy, builtin_taxonomies

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

    from .core.reports.readers import ReportReader

ENTRY_POINT_GROUP = "failgate"
INI_KEY = "failgate_plugins"
TAXONOMY_HOOK = "pytest_failgate_taxonomies"
READER_HOOK = "pytest_failgate_readers"


@dataclass
class Contributions:
    """The taxonomies (built-in ones included) and readers plugins contribute."""

    taxonomies: dict[str, Taxonomy] = field(default_factory=lambda: dict(builtin_taxonomies()))
    readers: list[ReportReader] = field(default_factory=list)


def collect(taxonomy_batches: Iterable[Mapping[str, Any]],
            reader_batches: Iterable[Sequence[Any]]) -> Contributions:
    """Check what hooks returned and gather it; a wrong kind of value is an error."""
    found = Contributions()
    for taxonomy_batch in taxonomy_batches:
        for name, taxonomy in dict(taxonomy_batch).items():
            if not isinstance(taxonomy, Taxonomy):
                raise FailgateError(f"{TAXONOMY_HOOK} returned {name!r}: "
                                    f"{type(taxonomy).__name__}, not a Taxonomy")
            found.taxonomies[name] = taxonomy
    for reader_batch in reader_batches:
        for reader in reader_batch:
            if not callable(getattr(reader, "read", None)) or not hasattr(reader, "suffixes"):
                raise FailgateError(f"{READER_HOOK} returned {reader!r}, which has no read() "
                                    "or suffixes")
            found.readers.append(reader)
    return found


def plugin_modules(specs: Sequence[str], base: Path) -> list[ModuleType]:
    """The ``failgate`` entry points' modules, then each module or file in ``specs``."""
    modules = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            loaded = point.load()
        except Exception as exc:  # a broken plugin must not become a traceback
            raise FailgateError(f"failgate plugin '{point.name}' ({point.value}) cannot be "
                                f"loaded: {type(exc).__name__}: {exc}") from None
        if isinstance(loaded, ModuleType):
            modules.append(loaded)
    modules += [_import(spec, base) for spec in specs]
    return list(dict.fromkeys(modules))


def _import(spec: str, base: Path) -> ModuleType:
    try:
        if spec.endswith(".py"):
            path = (base / spec).resolve()
            if not path.is_file():
                raise FailgateError(f"{INI_KEY}: no such file: {display_path(path)}")
            name = "failgate_plugin_" + "".join(c if c.isalnum() else "_" for c in str(path))
            if name in sys.modules:
                return sys.modules[name]
            found = importlib.util.spec_from_file_location(name, path)
            assert found is not None
            assert found.loader is not None
            module = importlib.util.module_from_spec(found)
            sys.modules[name] = module
            found.loader.exec_module(module)
            return module
        return importlib.import_module(spec)
    except FailgateError:
        raise
    except Exception as exc:
        raise FailgateError(f"{INI_KEY}: '{spec}' cannot be imported: "
                            f"{type(exc).__name__}: {exc}") from None


def contributions_of(modules: Sequence[ModuleType]) -> Contributions:
    """What the modules' hook functions return, called as the CLI calls them."""
    def calls(hook: str) -> list[Any]:
        functions = [getattr(m, hook) for m in modules if callable(getattr(m, hook, None))]
        return [result for result in (f(config=None) for f in functions) if result]

    return collect(calls(TAXONOMY_HOOK), calls(READER_HOOK))


def ini_plugins(start: Path) -> tuple[list[str], Path]:
    """``failgate_plugins`` from the ini file pytest would use from ``start``, and its folder.

    pytest's order per folder, walking up: ``pytest.ini``, ``.pytest.ini``,
    ``pyproject.toml`` with ``[tool.pytest.ini_options]``, ``tox.ini`` with
    ``[pytest]``, ``setup.cfg`` with ``[tool:pytest]``.
    """
    for folder in (start, *start.parents):
        for name, section in (("pytest.ini", "pytest"), (".pytest.ini", "pytest"),
                              ("pyproject.toml", None), ("tox.ini", "pytest"),
                              ("setup.cfg", "tool:pytest")):
            path = folder / name
            if not path.is_file():
                continue
            found = _toml_value(path) if section is None else _cfg_value(path, section)
            if found is not None:
                return found, folder
    return [], start


def _toml_value(path: Path) -> list[str] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - pytest depends on tomli before 3.11
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise FailgateError(f"cannot read: {exc}", path) from None
    options = data.get("tool", {}).get("pytest", {}).get("ini_options")
    if not isinstance(options, dict):
        return None
    value = options.get(INI_KEY, [])
    return value.split() if isinstance(value, str) else [str(v) for v in value]


def _cfg_value(path: Path, section: str) -> list[str] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (OSError, configparser.Error) as exc:
        raise FailgateError(f"cannot read: {exc}", path) from None
    if not parser.has_section(section):
        return None
    return parser.get(section, INI_KEY, fallback="").split()
