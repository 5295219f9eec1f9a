"""``failgate watch`` at check's cost a case: ``check``'s decoder for each line, progress
at a human rate, and the same verdict, state changes and errors as a line at a time.

A run of thousands of cases replayed in a moment prints the first ``PROGRESS_BURST``
progress lines and then a few a second, while every line saying an item changed state,
with its case, and the verdict are printed whatever the rate; a line the fast decoder
refuses is read by ``json`` as before, so errors keep their words and places.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from helpers import cases_for, write_ceilings, write_jsonl
from helpers import run_cli as run

from pytest_failgate.commands import sequential
from pytest_failgate.core.reports import jsondecode
from pytest_failgate.core.stats.sequential import CountSequence, StratifiedCount

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 60, "unknown": 30,
                                                "generator_hallucination": 20})
    return tmp_path


def _cases(n_failed: int = 40, passed: int = 1960, seed: int = 3) -> list[dict[str, object]]:
    return cases_for({"retrieval_miss": n_failed, "unknown": 10}, passed=passed, seed=seed)


def test_a_fast_replay_prints_progress_at_a_human_rate_and_every_state_change(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_jsonl(project / "run.jsonl", _cases())
    code, out, _ = run(capsys, "watch", "run.jsonl", "--replay")
    lines = out.split("\n\n")[0].splitlines()  # what watch printed, before check's summary
    progress = [line for line in lines if line.startswith("case ")]
    changes = [line for line in lines if line.startswith("  ")]
    assert code == 0
    assert progress[0].startswith("case 1 of 2010 ")
    # the burst, then a few lines a second (the replay takes about a second), not 2,000
    assert sequential.PROGRESS_BURST <= len(progress) < 400
    assert changes, "the items' states changed during the run"
    for index, line in enumerate(lines):  # each state change follows its case's line
        if line.startswith("  ") and not lines[index - 1].startswith("  "):
            assert lines[index - 1].startswith("case ")
    assert out.splitlines()[-1].startswith("verdict pass: ")


def test_progress_and_state_changes_match_a_line_per_case(
        project: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With no rate (a burst as large as the run), every case's line is printed as before,
    and with the rate the state changes are the same lines."""
    write_jsonl(project / "run.jsonl", _cases(n_failed=70, passed=1500, seed=5))
    code, paced, _ = run(capsys, "watch", "run.jsonl", "--replay", "--json", "paced.json")
    monkeypatch.setattr(sequential, "PROGRESS_BURST", 10**9)
    again, every, _ = run(capsys, "watch", "run.jsonl", "--replay", "--json", "every.json")
    assert (code, again) == (1, 1)
    assert [line for line in every.splitlines() if line.startswith("case ")] == [
        f"case {n} of 1580 " + line.split(" ", 4)[4]
        for n, line in enumerate((x for x in every.splitlines() if x.startswith("case ")),
                                 start=1)]
    assert len([line for line in every.splitlines() if line.startswith("case ")]) >= 1
    assert [x for x in paced.splitlines() if not x.startswith("case ")] == [
        x for x in every.splitlines() if not x.startswith("case ")]
    assert (project / "paced.json").read_text() == (project / "every.json").read_text()


def test_the_last_case_before_an_error_is_shown(project: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sequential, "PROGRESS_BURST", 5)
    monkeypatch.setattr(sequential, "PROGRESS_RATE", 1e-9)
    cases = _cases(n_failed=5, passed=95, seed=2)
    lines = [json.dumps(c) for c in cases]
    lines[60] = '{"id": "broken", '
    (project / "run.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "watch", "run.jsonl", "--replay")
    assert code == 2
    assert "run.jsonl:61:" in err
    assert out.splitlines()[-1].startswith("case 60 of 110 ")


@pytest.mark.parametrize("line", ['{"id": "a", "accuracy": 1.0,}', '[1, 2]', '"text"',
                                  '{"id": "a"} {"id": "b"}', '{"id": "a", "accuracy": NaN}',
                                  '{"id": "\\ud800", "accuracy": 1.0}', "\x1c"])
@pytest.mark.parametrize("install", ["default", "fast"])
def test_a_line_is_read_as_a_line_at_a_time_with_json(
        project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        line: str, install: str) -> None:
    """Whatever the line, the outcome (exit, output, error and its place) is the one of
    reading it with ``json`` (the decoder made to refuse every line, so ``json`` reads it)."""
    if install == "default":
        monkeypatch.setattr(jsondecode, "decoder", jsondecode._Default)
    cases = [json.dumps(c) for c in _cases(n_failed=1, passed=3, seed=1)]
    (project / "run.jsonl").write_text("\n".join([*cases[:2], line, *cases[2:]]) + "\n",
                                       encoding="utf-8")
    got = run(capsys, "watch", "run.jsonl", "--replay", "--planned", "5")

    def refuse(fields: tuple[str, ...]) -> object:
        def decode(raw: bytes) -> object:
            raise jsondecode.JsonSyntaxError("refused")
        return decode

    monkeypatch.setattr(sequential, "_case_decoder", refuse)
    assert got == run(capsys, "watch", "run.jsonl", "--replay", "--planned", "5")


def test_stratified_bounds_are_the_sums_of_the_strata() -> None:
    """The stratified count keeps its sums as cases come, equal to summing the strata."""
    import random

    rng = random.Random(4)
    count = StratifiedCount([300, 200, 500], 0.01, 2.0, 8.0)
    for _ in range(1000):
        stratum = rng.choice([i for i, p in enumerate(count.parts) if p.n < p.population])
        count.add(rng.random() < 0.2, stratum=stratum, narrow=rng.random() < 0.9)
        assert (count.n, count.s, count.low, count.high) == (
            sum(p.n for p in count.parts), sum(p.s for p in count.parts),
            sum(p.low for p in count.parts), sum(p.high for p in count.parts))
    one = CountSequence(1000, 0.01, 2.0, 8.0)
    assert (one.low, one.high) == (0, 1000)
