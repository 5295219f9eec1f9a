"""One meaning per name: no two public classes of the package share a name (two
``NoiseResult`` records, two ``HistoryPoint`` classes once meant different things)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_failgate"
CLASS = re.compile(r"^\s*class ([A-Za-z]\w*)\b", re.MULTILINE)


def test_no_two_public_classes_share_a_name() -> None:
    defined: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in CLASS.findall(path.read_text(encoding="utf-8")):
            defined[name].append(str(path.relative_to(PACKAGE)))
    assert {name: where for name, where in defined.items() if len(where) > 1} == {}


def test_in_the_gate_a_plan_is_a_sequential_runs_case_plan() -> None:
    """``core/gate/plan.py`` is a run's order of cases: the ratchet's ceilings to lower are
    the run's ``lowerings`` (as ``GateResult.lowerings`` names them), not a second plan."""
    from dataclasses import fields

    from pytest_failgate.core.base.result import GateResult
    from pytest_failgate.core.gate.run import GateRun

    names = {field.name for field in fields(GateRun)}
    assert "plan" not in names
    assert "lowerings" in names
    assert "lowerings" in {field.name for field in fields(GateResult)}


def test_in_the_plugin_config_is_pytests_config() -> None:
    """The plugin's modules hold pytest's ``Config`` as ``config`` or ``pytest_config``,
    failgate's resolved settings as ``settings`` and the core's as ``gate_config``: no
    object of theirs keeps another ``config``."""
    for path in sorted((PACKAGE / "plugin").glob("*.py")):
        assert "self.config =" not in path.read_text(encoding="utf-8"), path.name
