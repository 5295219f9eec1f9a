from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import hypothesis  # noqa: F401
import pytest
from helpers import EXAMPLES

# pytester's in-process runs drop every module imported during a run; importing the
# gate's modules here, once, lets each run reuse them instead of importing them again.
import pytest_failgate.core.ceilings.writeback
import pytest_failgate.core.gate.runner
import pytest_failgate.output.files
import pytest_failgate.output.text
import pytest_failgate.plugin.session  # noqa: F401

if TYPE_CHECKING:
    from pathlib import Path

ROOT = EXAMPLES.parent


CHROMIUM = "chromium"
BROWSER_SKIP = (f"{CHROMIUM} is not installed (Debian: apt-get install chromium); the HTML "
                "report's browser tests run where it is, and are required with CI=true or "
                "--run-browser")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the tests marked slow or heavy (CI runs them: CI=true)")
    parser.addoption("--run-heavy", action="store_true", default=False,
                     help="also run the tests marked heavy: mypy, ruff, the docs build and "
                          "the runs of whole subprocesses (CI runs them: CI=true)")
    parser.addoption("--run-browser", action="store_true", default=False,
                     help="fail the HTML report's browser tests (marked heavy: run them with "
                          "--run-heavy) when chromium is missing, instead of skipping them "
                          "(CI=true does too)")


def in_ci() -> bool:
    """CI says so (``CI=true``, as CI services and the project's CI set it)."""
    return os.environ.get("CI", "").lower() in ("1", "true")


def browser_tests_required(config: pytest.Config) -> str | None:
    """What asks for the browser tests to run whatever is installed, if anything."""
    if config.getoption("--run-browser"):
        return "--run-browser"
    return "CI=true" if in_ci() else None


def pytest_report_header(config: pytest.Config) -> str | None:
    """Said once at the top, so a run that skipped the browser tests says why up front."""
    if shutil.which(CHROMIUM) is None and browser_tests_required(config) is None:
        return f"browser tests: skipped, {BROWSER_SKIP}"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``slow`` tests (load tests, long property runs) and ``heavy`` ones (mypy, ruff,
    the docs build, whole subprocess runs) unless asked for, or in CI.

    The default ``pytest -n 2`` stays about a minute on two idle cores; ``.ci/run`` sets
    ``CI=true``, so CI runs everything. ``-m slow`` / ``-m heavy`` select them explicitly,
    and run them.
    """
    selected = config.getoption("-m") or ""
    for marker, flags in (("slow", ("--run-slow",)), ("heavy", ("--run-slow", "--run-heavy"))):
        if in_ci() or marker in selected or any(config.getoption(f) for f in flags):
            continue
        skip = pytest.mark.skip(reason=f"{marker}: run with --run-slow (CI runs it)")
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def project(pytester: pytest.Pytester) -> Path:
    """A project holding the example reports and the repository's ceilings file."""
    pytester.makeini("[pytest]\n")
    shutil.copytree(EXAMPLES / "reports", pytester.path / "reports")
    shutil.copy(ROOT / "ceilings.yaml", pytester.path / "ceilings.yaml")
    return pytester.path


@pytest.fixture
def regression(project: Path) -> Path:
    """The same project after a change that made retrieval miss three more cases."""
    shutil.copy(EXAMPLES / "regression" / "eval_summary.json",
                project / "reports" / "eval_summary.json")
    return project


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example reports and the repository's ceilings file, as the working directory."""
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    shutil.copy(EXAMPLES.parent / "ceilings.yaml", tmp_path / "ceilings.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path
