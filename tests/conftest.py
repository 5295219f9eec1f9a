from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import hypothesis  # noqa: F401
import pytest
from helpers import EXAMPLES

# pytester's in-process runs drop every module imported during a run; importing the
# gate's modules here, once, lets each run reuse them instead of importing them again.
import pytest_failgate.plugin.session  # noqa: F401

if TYPE_CHECKING:
    from pathlib import Path

ROOT = EXAMPLES.parent


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
