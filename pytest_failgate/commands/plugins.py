"""Every plugin, from every source, through one ``pluggy.PluginManager("failgate")``.

A plugin is a module (or any object) defining the hooks of ``hookspecs``:
``pytest_failgate_taxonomies(config)`` and ``pytest_failgate_readers(config)``. They are
registered, and their readers tried, in this order, the same in every front end:

1. installed packages' ``failgate`` entry points, by entry point name::

       [project.entry-points.failgate]
       my_format = "my_package.failgate_readers"

2. the modules the ini key ``failgate_plugins`` names (a module name, or a ``.py`` file
   relative to the ini file), in the order written::

       [tool.pytest.ini_options]
       failgate_plugins = ["tools/failgate_readers.py"]

3. those given for one run (``failgate --plugins``, ``--failgate-plugins``, the MCP
   tools' ``plugins``);
4. under pytest only: ``conftest.py`` files and pytest plugins defining the hooks, in
   the order pytest loaded them.

A module met twice is registered once. **Conflicts**: two plugins that contribute one
taxonomy name (or two readers of one format name) are an error naming both; a plugin's
taxonomy may replace a built-in one of the same name. ``config`` is the run's
``Config`` in every front end, which a plugin may rely on as ``hookspecs.PluginConfig``.
This module imports nothing of pytest.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import field
from typing import TYPE_CHECKING, Any

from ..core.base.classes import dataclass
from ..core.base.errors import FailgateError, display_path
from ..core.reports.readers import as_reader
from ..core.taxonomy import Taxonomies, Taxonomy, builtin_taxonomies

if TYPE_CHECKING:
    from collections.abc import Iterable, MutableMapping, Sequence
    from importlib.metadata import EntryPoint

    from ..core.reports.readers import ReportReader
    from .config import Config
    from .manager import PluginManager

ENTRY_POINT_GROUP = "failgate"
INI_KEY = "failgate_plugins"
TAXONOMY_HOOK = "pytest_failgate_taxonomies"
READER_HOOK = "pytest_failgate_readers"
HOOKS = (TAXONOMY_HOOK, READER_HOOK)


@dataclass
class Contributions:
    """The taxonomies (built-in ones included) and readers plugins contribute."""

    # the built-in ones beneath what plugins add; a built-in is compiled when first used
    taxonomies: MutableMapping[str, Taxonomy] = field(
        default_factory=lambda: Taxonomies(builtin_taxonomies()))
    readers: list[ReportReader] = field(default_factory=list)


def load_plugins(config: Config, pytest_plugins: Iterable[tuple[str, object]] = ()
                 ) -> Contributions:
    """The taxonomies and readers of every plugin, in the documented order.

    ``pytest_plugins``: under pytest, the ``conftest.py`` files and plugins that define
    a hook, as ``(label, plugin)`` in pytest's order.
    """
    if not config.run_plugins:
        if config.plugins:
            named = ", ".join(map(spec_label, config.plugins))
            raise FailgateError(
                f"the pytest configuration names {INI_KEY} ({named}): "
                "this server runs no plugin code unless started with `failgate mcp "
                "--allow-plugins`, and the numbers depend on them")
        return Contributions()
    points, pytest_plugins = entry_point_plugins(), list(pytest_plugins)
    if not points and not config.plugins and not pytest_plugins:
        return Contributions()  # no hook to call: no plugin manager (nor pluggy) to build
    from .manager import PluginManager

    manager = PluginManager(HOOKS)
    for label, plugin in points:
        manager.add(plugin, label)
    for spec in config.plugins:
        manager.add(import_plugin(spec), f"{INI_KEY} {spec_label(spec)}")
    for label, plugin in pytest_plugins:
        manager.add(plugin, label)
    return contributions(manager, config)


def entry_points(group: str) -> list[EntryPoint]:
    """The installed distributions' entry points of ``group``, as importlib.metadata finds
    them; [] without asking it where no distribution can declare the group
    (``may_declare``): importing it (and the email parser it reads metadata with) cost a
    small run more than anything else it imported."""
    if not may_declare(group):
        return []
    from importlib.metadata import entry_points as found

    return list(found(group=group))


def may_declare(group: str) -> bool:
    """False only when no distribution importlib.metadata would find declares ``group``:
    every ``sys.path`` entry is a plain folder (not a zip, not an egg) whose dist-info and
    egg-info folders' ``entry_points.txt`` have no ``[group]`` section, and no import hook
    lists distributions of its own. Anything else: True, and importlib.metadata decides."""
    from importlib.machinery import PathFinder

    if any(hasattr(finder, "find_distributions") and finder is not PathFinder
           for finder in sys.meta_path):
        return True
    for entry in sys.path:
        folder = entry or "."
        if folder.lower().endswith(".egg"):
            return True
        try:
            names = os.listdir(folder)
        except NotADirectoryError:  # a zip file on the path
            return True
        except OSError:
            continue
        for name in names:
            if name.lower().endswith((".dist-info", ".egg-info")) and _declares(
                    os.path.join(folder, name, "entry_points.txt"), group):
                return True
    return False


def _declares(path: str, group: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            lines = file.read().splitlines()
    except OSError:  # no entry points (or an egg-info that is a file)
        return False
    return any(line.strip().startswith("[") and line.strip().endswith("]")
               and line.strip()[1:-1].strip() == group for line in lines)


def entry_point_plugins() -> list[tuple[str, object]]:
    """The ``failgate`` entry points' objects, by entry point name."""
    found = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            loaded = point.load()
        except Exception as exc:  # a broken plugin must not become a traceback
            raise FailgateError(f"failgate plugin '{point.name}' ({point.value}) cannot be "
                                f"loaded: {type(exc).__name__}: {exc}") from None
        found.append((f"entry point {point.name} ({point.value})", loaded))
    return found


def spec_label(spec: str) -> str:
    """A plugin as its user wrote it: a module name, or a file relative to here."""
    from pathlib import Path

    return display_path(Path(spec)) if spec.endswith(".py") else spec


def import_plugin(spec: str) -> object:
    """A module by name, or a ``.py`` file by its (absolute) path."""
    try:
        if spec.endswith(".py"):
            return _import_file(spec)
        return importlib.import_module(spec)
    except FailgateError:
        raise
    except Exception as exc:
        raise FailgateError(f"{INI_KEY}: '{spec_label(spec)}' cannot be imported: "
                            f"{type(exc).__name__}: {exc}") from None


def _import_file(spec: str) -> object:
    from pathlib import Path

    path = Path(spec)
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
    try:
        found.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _calls(manager: PluginManager, hook: str, config: Config) -> list[tuple[str, Any]]:
    """Each implementation's (plugin label, non-empty result), in registration order."""
    results = []
    for impl in getattr(manager.hook, hook).get_hookimpls():
        try:
            result = impl.function(**{name: config for name in impl.argnames})
        except FailgateError:
            raise
        except Exception as exc:
            raise FailgateError(f"plugin {impl.plugin_name}: {hook} raised "
                                f"{type(exc).__name__}: {exc}") from None
        if result:
            results.append((impl.plugin_name, result))
    return results


def contributions(manager: PluginManager, config: Config) -> Contributions:
    """What the registered plugins' hooks return, checked; conflicts are errors."""
    found = Contributions()
    owner: dict[str, str] = {}
    for label, batch in _calls(manager, TAXONOMY_HOOK, config):
        if not hasattr(batch, "items"):
            raise FailgateError(f"plugin {label}: {TAXONOMY_HOOK} returned "
                                f"{type(batch).__name__}, not a mapping of names to taxonomies")
        for name, taxonomy in dict(batch).items():
            if not isinstance(taxonomy, Taxonomy):
                raise FailgateError(f"plugin {label}: {TAXONOMY_HOOK} returned {name!r}: "
                                    f"{type(taxonomy).__name__}, not a Taxonomy")
            _claim(owner, f"taxonomy '{name}'", label)
            found.taxonomies[name] = taxonomy
            if isinstance(found.taxonomies, Taxonomies):  # what the guard names
                from ..core.guard.routes import source_of

                found.taxonomies.origins[name] = (label, source_of(manager.get_plugin(label)))
    for label, batch in _calls(manager, READER_HOOK, config):
        for reader in _readers(label, batch):
            _claim(owner, f"reader '{reader.name}'", label)
            found.readers.append(reader)
    return found


def _claim(owner: dict[str, str], what: str, label: str) -> None:
    other = owner.setdefault(what, label)
    if other != label:
        raise FailgateError(f"two plugins define the {what}: {other} and {label}; rename one "
                            "or drop one of the plugins")


def _readers(label: str, batch: Any) -> Sequence[ReportReader]:
    try:
        readers: list[ReportReader] = [] if isinstance(batch, str | bytes) else list(batch)
    except TypeError:
        readers = []
    if not readers:
        raise FailgateError(f"plugin {label}: {READER_HOOK} returned {batch!r}, not a list of "
                            "readers")
    return [as_reader(reader, label) for reader in readers]


def pytest_hook_plugins(registered: Iterable[tuple[str | None, object]]
                        ) -> list[tuple[str, object]]:
    """Of pytest's plugins ``(name, plugin)`` in its order, those defining a failgate hook,
    labelled for errors (a ``conftest.py`` by its path)."""
    from pathlib import Path

    found = []
    for name, plugin in registered:
        if plugin is None or not any(callable(getattr(plugin, hook, None)) for hook in HOOKS):
            continue
        path = getattr(plugin, "__file__", None)
        if isinstance(path, str) and Path(path).name == "conftest.py":
            found.append((f"conftest {display_path(Path(path))}", plugin))
        else:
            found.append((f"pytest plugin {name}", plugin))
    return found
