"""A run imports and compiles what it uses: the fixed cost of gating a small report.

Timing is the bench's job (bench/startup_speed.py); these pin what is loaded.
"""

from __future__ import annotations

import subprocess
import sys

from helpers import EXAMPLES

from pytest_failgate.core.gate.runner import GateConfig, run_gate
from pytest_failgate.core.taxonomy import BUILTIN_DIR, BuiltinTaxonomies, Taxonomies

ROOT = EXAMPLES.parent


def test_each_built_in_taxonomy_file_holds_the_taxonomy_it_is_named_after() -> None:
    shelf = BuiltinTaxonomies()
    assert sorted(shelf) == sorted(path.stem for path in BUILTIN_DIR.glob("*.yaml"))
    assert len(shelf) >= 9
    for name in shelf:
        assert shelf[name].name == name
        assert shelf[name] is shelf[name]  # compiled once


def test_a_run_compiles_only_the_taxonomies_it_uses() -> None:
    shelf = BuiltinTaxonomies()
    gate = run_gate(GateConfig(paths=(EXAMPLES / "reports",),
                               ceilings_path=ROOT / "ceilings.yaml"), shelf)
    assert [r.report.n_cases for r in gate.reports if r.report is not None] == [26, 221, 221]
    assert list(shelf._loaded) == ["rag"]
    assert "helm" in shelf  # the others are known by name all the same


def test_plugins_taxonomies_sit_over_the_built_in_ones_without_compiling_them() -> None:
    shelf = BuiltinTaxonomies()
    known = Taxonomies(shelf)
    mine = shelf["rag"]
    known["mine"] = mine
    known["helm"] = mine  # a plugin may replace a built-in
    assert list(known)[-1] == "mine"
    assert list(known)[:len(shelf)] == list(shelf)
    assert len(known) == len(shelf) + 1
    assert known["helm"] is mine
    assert "karenina" in known
    assert list(shelf._loaded) == ["rag"]


def test_a_plain_check_imports_no_guard_analysis_or_engine() -> None:
    """``failgate check`` with a ceilings file and nothing else asked: the loosening guard
    (git), the analysis and the SQL engines stay unloaded."""
    script = (
        "import sys\n"
        "from pytest_failgate.cli import main\n"
        "code = main(['check', 'examples/reports'])\n"
        "print(code)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    lines = done.stdout.split("\n")
    assert "0" in lines  # the gate ran and passed
    assert "pytest_failgate.core.gate.runner" in lines
    unused = ("pytest_failgate.core.guard.loosening",
              "pytest_failgate.core.guard.gitref", "pytest_failgate.core.gate.analyze",
              "pytest_failgate.core.engines.duckdb_engine")
    assert [m for m in unused if m in lines] == []


def test_a_plain_check_builds_the_validators_of_what_it_shows_only() -> None:
    """The result models are built when first used: a check without baseline, analysis
    or ratchet plan builds the rows' and reports' models, not the comparison's, the
    analysis's or the other commands' results."""
    script = (
        "import io, sys\n"
        "from pytest_failgate.cli import main\n"
        "sys.stdout = io.StringIO()\n"
        "code = main(['check', 'examples/reports'])\n"
        "sys.stdout = sys.__stdout__\n"
        "from pydantic import BaseModel\n"
        "from pytest_failgate.commands import results\n"
        "from pytest_failgate.core.base import result\n"
        "models = [c for m in (result, results) for c in vars(m).values()\n"
        "          if isinstance(c, type) and issubclass(c, BaseModel)\n"
        "          and c.__module__ == m.__name__]\n"
        "print(code, len(models), *sorted(c.__name__ for c in models\n"
        "                                 if c.__pydantic_complete__))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    code, n_models, *built = done.stdout.split()
    assert code == "0"
    assert int(n_models) > 20
    assert "GateResult" in built
    assert not {"BaselineResult", "ReportAnalysis", "DiffResult", "ShowResult"} & set(built)
    assert len(built) <= 6
