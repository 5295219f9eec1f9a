"""The codebase stays ruff clean and mypy --strict clean; a lint regression fails the suite."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    result = _run(ruff, "check", "pytest_failgate", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


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
