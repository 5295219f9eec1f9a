"""A ``FailgateError`` crosses a process whole: its message, its place, its class, and what
a subclass adds, whatever that subclass's ``__init__`` takes; its ``str`` never raises."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.engines.sqlquery import RuleNotExpressible


class _OwnInit(FailgateError):
    """A subclass whose ``__init__`` takes other arguments than the message."""

    def __init__(self, rule: str, *, why: str) -> None:
        super().__init__(f"rule '{rule}': {why}", Path("taxonomy.yaml"), 7, 3)
        self.rule = rule


def test_an_error_with_its_place_survives_pickling() -> None:
    error = FailgateError("not a number", Path("reports/run.json"), 12, 5)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is FailgateError
    assert (copy.message, copy.path, copy.line, copy.col) == (
        "not a number", Path("reports/run.json"), 12, 5)
    assert str(copy) == str(error) == "reports/run.json:12:5: not a number"


def test_a_subclass_with_its_own_init_survives_pickling() -> None:
    error = _OwnInit("score", why="no SQL form")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is _OwnInit
    assert copy.rule == "score"
    assert str(copy) == "taxonomy.yaml:7:3: rule 'score': no SQL form"
    engine = pickle.loads(pickle.dumps(RuleNotExpressible("rule 'x' has no exact SQL form")))
    assert type(engine) is RuleNotExpressible
    assert str(engine) == "rule 'x' has no exact SQL form"


def test_str_never_raises_when_the_working_directory_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    os.rmdir(gone)
    error = FailgateError("bad", Path("/data/report.json"), 2)
    assert str(pickle.loads(pickle.dumps(error))) == "/data/report.json:2: bad"


@pytest.mark.slow
def test_the_controllers_error_reaches_every_xdist_worker_whole(
    pytester: pytest.Pytester, project: Path
) -> None:
    (project / "ceilings.yaml").write_text("version: 1\ntaxonomy: rag\nceilings:\n  total: [1\n")
    result = pytester.runpytest("--failgate=reports", "-n", "2")
    plain = pytester.runpytest("--failgate=reports")
    assert result.ret == plain.ret == pytest.ExitCode.INTERRUPTED
    line = next(line for line in plain.stdout.lines
                if "ceilings.yaml:" in line and "FAILED" not in line)
    assert "ceilings.yaml:" in line
    assert line in result.stdout.lines
    assert "str() failed" not in result.stdout.str()
