"""failgate's own readers and taxonomies are written with the public plugin API.

A plugin author gets what the built-in formats get: each built-in reader subclasses
``api.Reader`` and imports from the package only names ``pytest_failgate.api`` exports
(the very objects), so no built-in format relies on a helper a plugin cannot use; each
built-in taxonomy is a taxonomy file built by ``api.taxonomy_from_yaml`` itself, the one
builder ``api.taxonomy`` and the taxonomy files of a ceilings file go through too.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest
from helpers import reader_classes

from pytest_failgate import api
from pytest_failgate.commands.config import Config, load
from pytest_failgate.core.reports.builtin import BuiltinReader, builtin_readers
from pytest_failgate.core.taxonomy import BUILTIN_DIR, BuiltinTaxonomies, builtin_taxonomies
from pytest_failgate.core.taxonomy import files as taxonomy_files

PACKAGE = "pytest_failgate"
READERS = [reader.loaded() for reader in builtin_readers()
           if isinstance(reader, BuiltinReader)]
READER_MODULES = sorted({type(reader).__module__ for reader in READERS})


def _imports(module_name: str) -> list[tuple[str, str, int]]:
    """(module, name, line) of every name the module imports from the package, resolved
    to absolute module names; ``import pytest_failgate.x`` gives the name ``*``."""
    module = importlib.import_module(module_name)
    tree = ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))
    package = module_name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            if source == PACKAGE or source.startswith(PACKAGE + "."):
                found += [(source, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "*", node.lineno) for alias in node.names
                      if alias.name.startswith(PACKAGE)]
    return found


def test_every_built_in_reader_is_an_api_reader_subclass() -> None:
    assert {type(reader) for reader in READERS} == reader_classes()  # the registry's all
    for reader in READERS:
        assert isinstance(reader, api.Reader), reader
        assert type(reader).read is not api.Reader.read, reader  # it reads for itself
        assert reader.name
        assert reader.suffixes
        assert reader.taxonomy in builtin_taxonomies()


@pytest.mark.parametrize("module_name", READER_MODULES)
def test_a_built_in_reader_imports_only_what_the_api_exports(module_name: str) -> None:
    imported = _imports(module_name)
    assert imported, module_name  # the walk sees the module's imports
    for source, name, line in imported:
        where = f"{module_name}:{line}: {name} from {source}"
        assert name != "*", f"{where}: a whole module, not the API's names"
        assert name in api.__all__, f"{where}: not in pytest_failgate.api"
        value = getattr(importlib.import_module(source), name)
        assert getattr(api, name) is value, f"{where}: another object than api.{name}"


def test_the_walk_finds_an_import_outside_the_api() -> None:
    """The check above can fail: a module importing internals is caught by it."""
    imported = _imports("pytest_failgate.core.reports.read")
    assert any(name not in api.__all__ for _, name, _ in imported)


def test_every_built_in_taxonomy_is_a_taxonomy_file_the_public_builder_builds_alike() -> None:
    files = sorted(BUILTIN_DIR.glob("*.yaml"))
    assert {path.stem for path in files} == set(builtin_taxonomies())
    for path in files:
        built = api.taxonomy_from_yaml(path.read_text(encoding="utf-8"), str(path))
        shipped = builtin_taxonomies()[path.stem]
        assert isinstance(shipped, api.Taxonomy)
        assert (built.name, built.category_names, built.failed.text) == (
            shipped.name, shipped.category_names, shipped.failed.text)
        assert [rule.text for rule in built.categories] == [
            rule.text for rule in shipped.categories]


class _Recorded:
    """``taxonomy_from_yaml`` recording each call (its source) and what it built."""

    def __init__(self) -> None:
        self.builder = taxonomy_files.taxonomy_from_yaml
        self.built: dict[str, tuple[str | Path, api.Taxonomy]] = {}

    def __call__(self, text: str, source: str | Path = "<taxonomy>") -> api.Taxonomy:
        built = self.builder(text, source)
        self.built[built.name] = (source, built)
        return built


def test_every_built_in_taxonomy_is_built_by_the_builder_the_api_exports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # one builder: the API's is the package's own, not a copy
    assert api.taxonomy_from_yaml is taxonomy_files.taxonomy_from_yaml
    assert api.taxonomy is taxonomy_files.taxonomy
    recorded = _Recorded()
    monkeypatch.setattr(taxonomy_files, "taxonomy_from_yaml", recorded)
    shelf = BuiltinTaxonomies()  # a fresh shelf: nothing compiled yet
    shipped = {name: shelf[name] for name in shelf}
    assert set(shipped) == {path.stem for path in BUILTIN_DIR.glob("*.yaml")}
    for name, taxonomy in shipped.items():
        assert name in recorded.built, f"built-in taxonomy {name}: not built by the API's builder"
        source, built = recorded.built[name]
        assert built is taxonomy
        assert source == BUILTIN_DIR / f"{name}.yaml"
        assert taxonomy.source == source  # a file's taxonomy names its file


def test_the_recording_sees_only_what_the_builder_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a taxonomy compiled past the builder is not recorded."""
    from pytest_failgate.core.base.yamlsource import load_yaml

    recorded = _Recorded()
    monkeypatch.setattr(taxonomy_files, "taxonomy_from_yaml", recorded)
    path = BUILTIN_DIR / "rag.yaml"
    taxonomy_files.taxonomy_from(load_yaml(path), (), source=path)
    assert recorded.built == {}
    api.taxonomy("status", failed="status != 'ok'", categories=["other"])
    assert list(recorded.built) == ["status"]  # api.taxonomy goes through it


def test_hooks_get_a_config_the_plugin_config_protocol_describes(tmp_path: Path) -> None:
    config: api.PluginConfig = load({"ceilings": str(tmp_path / "ceilings.yaml")})
    assert isinstance(config, Config)
    assert isinstance(config, api.PluginConfig)
    assert config.ceilings == tmp_path / "ceilings.yaml"
    assert config.taxonomy is None
    assert config.paths == ()
    # the protocol is the documented few, not the internal configuration's every field
    documented = {name for name, _ in inspect.getmembers(api.PluginConfig)
                  if not name.startswith("_")}
    assert documented == {"ceilings", "rootdir", "paths", "taxonomy"}
