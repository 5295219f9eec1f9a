"""The package's layering, pinned: the core knows neither pytest nor the outputs; no cycles.

The import graph is read from the source (AST), so lazy imports inside functions count
like any other; imports under ``if TYPE_CHECKING:`` do not (they never run).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import pytest_failgate

PACKAGE = Path(pytest_failgate.__file__).parent
NAME = "pytest_failgate"
MAX_LINES = 700


def _module_name(path: Path) -> str:
    parts = [NAME, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


@functools.cache
def _imports(module: str, path: Path, *, type_only: bool = False) -> frozenset[str]:
    """Every module ``module`` imports at run time (or, with ``type_only``, any time).

    Read once per module and mode, when a test first asks (not at collection): the tests
    below ask for the same modules again."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not type_only:
            for branch in node.orelse:
                visit(branch)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names
                         if f"{base}.{alias.name}" in MODULES)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return frozenset(found)


@functools.cache
def _graph() -> dict[str, set[str]]:
    """The run-time import graph of the package's modules."""
    return {module: {name for name in _imports(module, path) if name in MODULES} - {module}
            for module, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_the_graph_is_read_from_every_module() -> None:
    assert f"{NAME}.core.gate.runner" in _graph()[f"{NAME}.commands.app"]
    # a lazy import inside a function is an edge too
    assert f"{NAME}.plugin.session" in _graph()[f"{NAME}.plugin.hooks"]


# The core's packages, lowest first: each imports only the ones before it (type-only
# imports too). The folders read in this order, as docs/development.md lists them.
LAYERS = ("base", "stats", "taxonomy", "reports", "ceilings", "compare", "engines", "guard",
          "gate")


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[2]) if len(parts) > 2 and parts[1] == "core" else None


def test_every_core_module_sits_in_a_layer_folder() -> None:
    loose = [m for m in MODULES if m.startswith(f"{NAME}.core.") and _layer(m) is None]
    assert loose == []
    assert {m.split(".")[2] for m in MODULES if m.startswith(f"{NAME}.core.")} == set(LAYERS)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) is not None))
def test_a_core_module_imports_only_lower_layers_and_its_own(module: str) -> None:
    own = _layer(module)
    assert own is not None
    higher = sorted(name for name in _imports(module, MODULES[module], type_only=True)
                    if name in MODULES and (_layer(name) or 0) > own)
    assert higher == [], f"{module} (layer {LAYERS[own]}) imports {higher}"


def test_the_layer_check_sees_an_upward_import() -> None:
    assert _layer(f"{NAME}.core.base.errors") == 0
    assert _layer(f"{NAME}.core.gate.runner") == len(LAYERS) - 1
    assert f"{NAME}.core.ceilings.check" in _graph()[f"{NAME}.core.gate.runner"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_among_the_package_modules() -> None:
    assert _cycles(_graph()) == []


def test_no_type_only_import_cycles() -> None:
    """Imports under ``if TYPE_CHECKING:`` count here: a cycle of them is still a knot in
    the layering (the readers name the read spec from its own module, the SQL functions
    what they ask of the rule compiler as a protocol)."""
    typed = {module: {name for name in _imports(module, path, type_only=True)
                      if name in MODULES} - {module} for module, path in MODULES.items()}
    assert _cycles(typed) == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(f"{NAME}.core")))
def test_the_core_imports_neither_pytest_nor_the_adapters_nor_the_outputs(module: str) -> None:
    imported = _imports(module, MODULES[module], type_only=True)
    forbidden = [name for name in imported if name.split(".")[0] in ("pytest", "_pytest", "xdist")
                 or name.startswith((f"{NAME}.output", f"{NAME}.plugin", f"{NAME}.cli",
                                     f"{NAME}.options"))]
    assert forbidden == []


def test_only_the_plugin_imports_pytest() -> None:
    importers = sorted(module for module, path in MODULES.items()
                       if any(name.split(".")[0] in ("pytest", "_pytest")
                              for name in _imports(module, path, type_only=True)))
    assert importers
    assert [m for m in importers if not m.startswith(f"{NAME}.plugin")] == []


def test_no_module_is_over_700_lines() -> None:
    sizes = {module: len(path.read_text(encoding="utf-8").splitlines())
             for module, path in MODULES.items()}
    assert {m: n for m, n in sizes.items() if n > MAX_LINES} == {}
