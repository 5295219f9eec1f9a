"""``watch --baseline --futility``: an unchanged system re-run beside its same-day baseline
passes before its last case (issue: paired mode never passed before the end), and says it
was a pass by futility; the control without ``--futility`` runs to the last case."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from helpers import case, category_case, write_ceilings, write_jsonl
from helpers import run_cli as run

PLANNED = 600


@pytest.fixture
def rerun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A baseline of 600 cases, 60 retrieval misses; the re-run misses 45 of them and 15
    others (the same count, no rise), its cases in a random order."""
    monkeypatch.chdir(tmp_path)
    write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 80})
    ids = [f"q{i:03d}" for i in range(PLANNED)]
    before = {*ids[:60]}
    now = {*ids[15:75]}
    write_jsonl(tmp_path / "baseline.jsonl", [
        category_case("retrieval_miss", i) if i in before else case(i) for i in ids])
    order = list(ids)
    random.Random(4).shuffle(order)
    write_jsonl(tmp_path / "run.jsonl", [
        category_case("retrieval_miss", i) if i in now else case(i) for i in order])
    return tmp_path


def _settled_after(out: str) -> int:
    last = out.rstrip("\n").splitlines()[-1]
    return int(last.split("settled after ")[1].split(" of ")[0])


def test_an_unchanged_rerun_beside_its_baseline_passes_early_by_futility(
        rerun: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "watch", "run.jsonl", "--replay", "--baseline", "baseline.jsonl",
                         "--futility", "0.05", "--json", "result.json")
    assert code == 0, err
    assert _settled_after(out) < PLANNED
    assert "a pass by futility" in out
    sequential = json.loads((rerun / "result.json").read_text())["sequential"]
    assert sequential["n"] < PLANNED
    assert sequential["beta"] == 0.05


def test_without_futility_the_paired_run_pays_for_every_case(
        rerun: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "watch", "run.jsonl", "--replay", "--baseline", "baseline.jsonl")
    assert code == 0
    assert _settled_after(out) == PLANNED
