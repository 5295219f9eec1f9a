"""The MCP ``ratchet`` tool takes the ratchet's confirmations (``confirm``,
``confirm_baseline``) as ``failgate ratchet`` does, inside the server's roots."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import mcp_calls

from pytest_failgate.cli import main

CEILINGS = """\
version: 1
taxonomy: rag-gate
ceilings:
  retrieval_miss:
    max: 20
    observed: 12
    allowance: 8
  hallucination: {max: 9, observed: 6, allowance: 3}
  false_refusal: 5
  over_answer: 5
  other: 5
"""
OTHERS = ["hallucination"] * 6 + ["false_refusal"] * 5 + ["over_answer"] * 5 + ["other"] * 5


def _run(folder: Path, missed: int, fixed: int = 0) -> None:
    """A run folder: ``missed`` retrieval misses of which the first ``fixed`` now pass."""
    outcomes = ["correct"] * fixed + ["retrieval_miss"] * (missed - fixed) + OTHERS + [
        "correct"] * 40
    folder.mkdir(parents=True)
    (folder / "attribution.jsonl").write_text("".join(
        json.dumps({"id": f"c{i:03d}", "primary_failure": mode}) + "\n"
        for i, mode in enumerate(outcomes)), encoding="utf-8")
    (folder / "run.jsonl").write_text(json.dumps(
        {"type": "header", "judge_model": "gpt-4o-2024-08-06", "n_cases": len(outcomes),
         "config": {"top_k": 5}})
        + "\n", encoding="utf-8")


@pytest.mark.slow
def test_the_mcp_ratchet_lowers_on_a_same_day_pairing_as_the_cli_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A harsh day: before the fix 16 misses, after it 6 the same day. Unconfirmed, and
    confirmed by the run itself, nothing lowers; paired with the day's run before the fix,
    the tool writes what ``failgate ratchet --confirm-baseline`` writes."""
    served, cli = tmp_path / "served", tmp_path / "cli"
    _run(served / "before", 16)
    _run(served / "after", 16, fixed=10)
    (served / "ceilings.yaml").write_text(CEILINGS, encoding="utf-8")
    outside = tmp_path / "outside"
    shutil.copytree(served / "before", outside)
    shutil.copytree(served, cli)
    monkeypatch.chdir(cli)
    assert main(["ratchet", "after", "--confirm-baseline", "before"]) == 0
    lowered = (cli / "ceilings.yaml").read_text(encoding="utf-8")
    assert lowered != CEILINGS
    _, results = mcp_calls(served, [
        ("ratchet", {"paths": ["after"], "confirm": ["after"]}),
        ("ratchet", {"paths": ["after"], "confirm_baseline": [str(outside)]}),
    ], roots=[served])
    assert (served / "ceilings.yaml").read_text(encoding="utf-8") == CEILINGS
    assert not results[0].is_error
    assert results[1].is_error
    assert "is outside the folders this server may read" in results[1].content[0].text
    _, results = mcp_calls(served, [
        ("ratchet", {"paths": ["after"], "confirm_baseline": ["before"]})], roots=[served])
    assert not results[0].is_error
    assert (served / "ceilings.yaml").read_text(encoding="utf-8") == lowered
