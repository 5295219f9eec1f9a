"""The MCP ``ratchet`` tool takes the ratchet's confirmations (``confirm``,
``confirm_baseline``) as ``failgate ratchet`` does, inside the server's roots."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import SAME_DAY_CEILINGS as CEILINGS
from helpers import mcp_calls, same_day_outcomes, same_day_run

from pytest_failgate.cli import main


@pytest.mark.slow
def test_the_mcp_ratchet_lowers_on_a_same_day_pairing_as_the_cli_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A harsh day: before the fix 16 misses, after it 6 the same day. Unconfirmed, and
    confirmed by the run itself, nothing lowers; paired with the day's run before the fix,
    the tool writes what ``failgate ratchet --confirm-baseline`` writes."""
    served, cli = tmp_path / "served", tmp_path / "cli"
    same_day_run(served / "before", same_day_outcomes(16))
    same_day_run(served / "after", same_day_outcomes(16, fixed=10))
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
