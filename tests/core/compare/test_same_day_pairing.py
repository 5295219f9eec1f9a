"""A ratchet's drop confirmed by pairing with the system before the change, re-run the same day.

The exact tails are summed here from ``math.comb``; the runs are regression-gate run folders
whose cases keep their ids from run to run, so that pairing sees exactly the moves written.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from helpers import SAME_DAY_CEILINGS as CEILINGS
from helpers import same_day_outcomes as _outcomes
from helpers import same_day_run as _run

from pytest_failgate.cli import main
from pytest_failgate.core.ceilings import writeback
from pytest_failgate.core.compare.improvement import confirmed_drops
from pytest_failgate.core.compare.noise import NoiseBand, NoiseDocument
from pytest_failgate.core.compare.pairing import CategoryChange, ReportComparison, RunComparison
from pytest_failgate.core.gate.runner import GateConfig, run_gate

BUDGET = Fraction(1, 20)
LEVEL = BUDGET * BUDGET  # a lowering's evidence: as strong as two runs' (0.05 squared)


def sign_tail(more: int, less: int) -> Fraction:
    """P[Bin(more + less, 1/2) >= more], term by term."""
    n = more + less
    return Fraction(sum(math.comb(n, k) for k in range(more, n + 1)), 2**n)


def change(category: str, entered: int, left: int) -> CategoryChange:
    return CategoryChange(category, 40, 40 + entered - left,
                          new=[f"n{i}" for i in range(entered)],
                          fixed=[f"f{i}" for i in range(left)])


def comparison(*changes: CategoryChange, name: str = "run") -> RunComparison:
    return RunComparison([ReportComparison(name, True, list(changes), n_both=400)], [], [])


def band(low: int, high: int) -> NoiseBand:
    return NoiseBand(mean=(low + high) / 2, std=1.0, min=low, max=high, n=3)


@pytest.mark.parametrize(("entered", "left", "width", "confirmed"), [
    (2, 14, 5, True),  # p = 137/65536 <= 0.0025, a drop of 12 past a band of 5
    (2, 14, 12, False),  # significant, but a drop of 12 is within a band of 12
    (2, 14, 11, True),  # ... and past one of 11
    (4, 9, 1, False),  # a drop of 5, not significant: p = 1093/8192
    (0, 9, 1, True),  # p = 1/512: nine cases left, none entered
    (0, 8, 1, False),  # p = 1/256 can never reach 0.0025 (it would reach the budget, 0.05)
])
def test_a_drop_is_confirmed_only_when_significant_and_beyond_the_band(
        entered: int, left: int, width: int, confirmed: bool) -> None:
    noise = NoiseDocument(bands={"retrieval_miss": band(20, 20 + width)})
    found = confirmed_drops(comparison(change("retrieval_miss", entered, left)), noise, BUDGET)
    assert (sign_tail(left, entered) <= LEVEL and left - entered > width) == confirmed
    assert found == ({("run", "retrieval_miss"): left - entered} if confirmed else {})


def test_the_drops_of_a_run_are_decided_together_with_holm() -> None:
    """Alone, a drop of 9 of 9 (p = 1/512) is significant at 0.0025; beside a second such
    test neither is at most 0.00125, so Holm rejects none; beside a drop of 12 (p = 1/4096)
    the next level is 0.0025 and 1/512 passes it too."""
    single = comparison(change("hallucination", 0, 9))
    assert confirmed_drops(single, NoiseDocument(), BUDGET) == {("run", "hallucination"): 9}
    pair = comparison(change("hallucination", 0, 9), change("retrieval_miss", 0, 9))
    assert LEVEL / 2 < sign_tail(9, 0) <= LEVEL
    assert confirmed_drops(pair, NoiseDocument(), BUDGET) == {}
    strong = comparison(change("hallucination", 0, 9), change("retrieval_miss", 0, 12))
    assert sign_tail(12, 0) <= LEVEL / 2
    assert confirmed_drops(strong, NoiseDocument(), BUDGET) == {
        ("run", "hallucination"): 9, ("run", "retrieval_miss"): 12}


def test_a_report_left_out_confirms_nothing_and_takes_no_share() -> None:
    both = RunComparison([
        ReportComparison("a", True, [change("retrieval_miss", 0, 9)], n_both=40),
        ReportComparison("b", True, [change("retrieval_miss", 0, 9)], n_both=40)], [], [])
    assert confirmed_drops(both, NoiseDocument(), BUDGET, left_out={"b"}) == {
        ("a", "retrieval_miss"): 9}
    counts_only = RunComparison([ReportComparison("a", False, [change("retrieval_miss", 0, 9)])],
                                [], [])
    assert confirmed_drops(counts_only, NoiseDocument(), BUDGET) == {}


def _ratchet(tmp_path: Path, run: Path, **given: tuple[Path, ...]) -> str:
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text(CEILINGS, encoding="utf-8")
    result = run_gate(GateConfig((run,), ceilings, "ratchet", **given)).result()  # type: ignore[arg-type]
    writeback.ratchet(ceilings, result, writeback.outcomes_from_verdicts(result))
    return ceilings.read_text(encoding="utf-8")


def _retrieval_miss(text: str) -> tuple[int, int]:
    block = text.split("  retrieval_miss:")[1].splitlines()
    return int(block[1].split(":")[1]), int(block[2].split(":")[1])


def test_a_same_day_paired_drop_lowers_observed_by_the_drop_not_to_the_days_count(
        tmp_path: Path) -> None:
    """A harsh day: the system before the fix missed 16 (observed 12), the fixed one 6 that
    same day. 6 is no drop past the allowance of 8 from 12, so a second run confirms
    nothing; paired, 10 cases left and none entered (p = 1/1024, for retrieval_miss and
    total): observed 12 - 10 = 2, not this day's 6."""
    before = _run(tmp_path / "before", _outcomes(16))
    after = _run(tmp_path / "after", _outcomes(16, fixed=10))
    assert _ratchet(tmp_path, after, confirm=(after,)) == CEILINGS
    text = _ratchet(tmp_path, after, confirm_baseline=(before,))
    assert _retrieval_miss(text) == (2 + 8, 2)
    assert text == CEILINGS.replace("    max: 20\n    observed: 12\n",
                                    "    max: 10\n    observed: 2\n")
    weaker = _run(tmp_path / "weaker", _outcomes(16, fixed=8))  # p = 1/256 > 0.0025
    assert _ratchet(tmp_path, weaker, confirm_baseline=(before,)) == CEILINGS


def test_given_both_confirmations_the_ratchet_takes_the_smaller_lowering(
        tmp_path: Path) -> None:
    """A second run confirms 2 and 3 (their mean, 3); the pairing a drop of 12 (12 - 12 = 0):
    either confirms, and the ceiling falls to the higher, 3 + 8."""
    before = _run(tmp_path / "before", _outcomes(14))
    after = _run(tmp_path / "after", _outcomes(14, fixed=12))
    second = _run(tmp_path / "second", _outcomes(14, fixed=11))
    assert _retrieval_miss(_ratchet(tmp_path, after, confirm_baseline=(before,))) == (8, 0)
    assert _retrieval_miss(_ratchet(tmp_path, after, confirm=(second,))) == (11, 3)
    assert _retrieval_miss(_ratchet(tmp_path, after, confirm=(second,),
                                    confirm_baseline=(before,))) == (11, 3)


def test_a_same_day_run_measured_by_another_judge_confirms_nothing(tmp_path: Path) -> None:
    before = _run(tmp_path / "before", _outcomes(16), judge="gpt-4.1-2025-04-14")
    after = _run(tmp_path / "after", _outcomes(16, fixed=10))
    assert _ratchet(tmp_path, after, confirm_baseline=(before,)) == CEILINGS


def test_a_same_day_run_that_moved_both_ways_confirms_nothing(tmp_path: Path) -> None:
    """Unchanged: 6 misses passed and 4 passing cases missed (p = 193/512)."""
    before = _run(tmp_path / "before", _outcomes(16))
    moved = _outcomes(16, fixed=6)
    moved[-4:] = ["retrieval_miss"] * 4
    after = _run(tmp_path / "after", moved)
    assert _ratchet(tmp_path, after, confirm_baseline=(before,)) == CEILINGS


def test_the_command_takes_confirm_baseline_and_a_missing_run_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the project whose ceilings file a ratchet may write
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text(CEILINGS, encoding="utf-8")
    before = _run(tmp_path / "before", _outcomes(16))
    after = _run(tmp_path / "after", _outcomes(16, fixed=10))
    assert main(["ratchet", str(after), "--ceilings", str(ceilings),
                 "--confirm-baseline", str(before)]) == 0
    assert "    max: 10\n    observed: 2\n" in ceilings.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["ratchet", str(after), "--ceilings", str(ceilings),
                 "--confirm-baseline", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err
    assert "confirm-baseline:" in err
    assert "absent" in err
    assert "Traceback" not in err
