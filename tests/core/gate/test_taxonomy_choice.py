"""Which taxonomy classifies each report is decided once per run, at the gate level, and
handed down: every read of the run (its reports, a baseline, a confirming run) gets that
one choice, and a command reading several runs makes it once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from helpers import EXAMPLES

from pytest_failgate.commands.app import Failgate
from pytest_failgate.commands.config import load
from pytest_failgate.core.gate import runner
from pytest_failgate.core.gate.runner import GateConfig, run_gate

if TYPE_CHECKING:
    import pytest

    from pytest_failgate.core.reports.choice import TaxonomyChoice

ROOT = EXAMPLES.parent
REPORT = EXAMPLES / "reports" / "eval_summary.json"


class _Counted:
    """``taxonomy_choice`` counting the choices it makes; ``load_run`` recording the choice
    each read of a run was given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made: list[TaxonomyChoice] = []
        self.given: list[TaxonomyChoice] = []
        make, load_run = runner.taxonomy_choice, runner.load_run

        def counted(*args: Any) -> TaxonomyChoice:
            self.made.append(make(*args))
            return self.made[-1]

        def recorded(paths: Any, choice: TaxonomyChoice, *args: Any) -> Any:
            self.given.append(choice)
            return load_run(paths, choice, *args)

        monkeypatch.setattr(runner, "taxonomy_choice", counted)
        monkeypatch.setattr(runner, "load_run", recorded)


def test_a_gate_makes_one_choice_and_reads_its_reports_baseline_and_confirming_run_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted = _Counted(monkeypatch)
    gate = run_gate(GateConfig((REPORT,), ROOT / "ceilings.yaml", "ratchet", baseline=(REPORT,),
                               confirm=(REPORT,)))
    assert gate.baseline is not None  # the baseline was read and paired
    assert len(counted.made) == 1
    [choice] = counted.made
    assert len(counted.given) == 3  # the run, its baseline, the confirming run
    assert all(given is choice for given in counted.given)
    assert choice.run_taxonomy is gate.taxonomy
    assert choice.run_taxonomy.name == "rag"  # the ceilings file's taxonomy: line


def test_a_command_reading_several_runs_makes_its_choice_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted = _Counted(monkeypatch)
    app = Failgate(load({"ceilings": str(ROOT / "ceilings.yaml")}))
    first, second = app.load_all((REPORT,)), app.load_all((REPORT,))
    assert len(counted.made) == 1
    assert len(counted.given) == 2
    assert all(given is app.choice() for given in counted.given)
    assert [r.counts for r in first] == [r.counts for r in second]
    assert first[0].taxonomy.name == "rag"
