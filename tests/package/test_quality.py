"""The codebase stays ruff clean and mypy --strict clean; a lint regression fails the suite."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.heavy  # CI runs it (CI=true); `ruff check` does the same by hand
def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    result = _run(ruff, "check", "pytest_failgate", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.heavy  # about two minutes of CPU: CI runs it (CI=true), as does --run-heavy
def test_mypy_strict_finds_nothing() -> None:
    result = _run(sys.executable, "-m", "mypy", "--strict")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_data_file_in_the_package_is_shipped_in_the_wheel() -> None:
    """A non-Python file the package reads at run time must match a package-data glob,
    or an installed (non-editable) copy cannot find it."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["pytest_failgate"]
    package = ROOT / "pytest_failgate"
    data_files = [
        path
        for path in package.rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts
    ]
    assert data_files, "expected the built-in taxonomies and the schema"
    unshipped = [
        str(path.relative_to(package))
        for path in data_files
        if not any(path.relative_to(package).match(pattern) for pattern in globs)
    ]
    assert unshipped == [], f"add these to [tool.setuptools.package-data]: {unshipped}"


def _marks(decorators: list[ast.expr]) -> set[str]:
    """The ``pytest.mark.NAME`` names among decorators or a ``pytestmark`` value."""
    return {node.attr for decorator in decorators for node in ast.walk(decorator)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "mark"}


def _names_pyspark(node: ast.AST) -> bool:
    return any(isinstance(c, ast.Constant) and c.value == "pyspark" for c in ast.walk(node))


@pytest.mark.slow
def test_every_test_that_needs_pyspark_is_marked_spark_so_ci_runs_it() -> None:
    """CI installs the spark extra only for ``-m spark``; an unmarked test that needs
    pyspark would be skipped in every run, CI's too, and its engine never checked."""
    unmarked, marked = [], 0
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_marks: set[str] = set()
        whole_module = False
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
                module_marks |= _marks([node.value])
            whole_module |= isinstance(node, ast.Expr) and _names_pyspark(node)
        for found in ast.walk(tree):
            if isinstance(found, ast.FunctionDef) and found.name.startswith("test_") and (
                    whole_module or _names_pyspark(found)):
                if "spark" in module_marks | _marks(found.decorator_list):
                    marked += 1
                else:
                    unmarked.append(f"{path.name}::{found.name}")
    assert not unmarked, unmarked
    assert marked >= 5  # the Spark engine's own tests at least: the walk found them


def test_no_function_of_the_gate_is_above_complexity_15() -> None:
    """The gate's functions (``core/gate``) are where every feature adds a step: each stays
    at most 15 branches (mccabe, as ruff's C901 counts it), so a new step is a new function
    rather than another branch of ``run_gate``."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is in the test extra")
    result = _run(ruff, "check", "--select", "C901", "--config",
                  "lint.mccabe.max-complexity = 15", "pytest_failgate/core/gate")
    assert result.returncode == 0, result.stdout + result.stderr
