"""Under day-level drift, a baseline run made the same day decides what the ceiling cannot.

A judge harsher on some days moves every flaky case together: a ceiling whose false alarms
stay rare must allow the day-to-day spread, and a 5% regression hides in it. Main re-run on
the pull request's day shares that day's shift, and pairing the two runs case by case
cancels it. The check with ceilings and a baseline fails a count when its ceiling fails it
or the comparison does (significant and beyond the noise band); the ratchet given
``--confirm-baseline`` lowers on a paired drop. Simulated with ``noisy_runs`` (seeded):
strong drift (log-odds sigma 1.0), a noise band of three runs on three days.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from noisy_runs import CATEGORIES, Gate, System, write_run

from pytest_failgate.core.gate.runner import GateConfig, run_gate

pytestmark = pytest.mark.slow


class SameDay:
    """A drifting system, its noise band and ceilings, and runs made on shared days."""

    def __init__(self, folder: Path, seed: int, drift: float = 1.0) -> None:
        self.rng = random.Random(seed)
        self.system = System.draw(400, 0.06, self.rng, drift)
        self.folder = folder
        self.numbers = iter(range(10**6))
        self.ceilings = folder / "ceilings.yaml"
        self.band = folder / "noise_band.json"
        Gate(self.ceilings, None).measure_noise([self.run(self.system) for _ in range(3)],
                                                self.band)
        self.gate = Gate(self.ceilings, self.band)
        self.gate.init(self.run(self.system))

    def run(self, system: System, day: float | None = None) -> Path:
        number = next(self.numbers)
        return write_run(self.folder / f"run{number:03d}", system, system.run(self.rng, day),
                         self.rng, f"run-{number}")

    def day(self) -> float:
        return self.rng.gauss(0.0, self.system.drift)

    def check(self, candidate: System) -> dict[str, tuple[bool, bool]]:
        """Per category and total: (the ceiling alone fails it, the paired comparison does),
        for a pull request of ``candidate`` against main re-run the same day."""
        day = self.day()
        pull, main = self.run(candidate, day), self.run(self.system, day)
        result = run_gate(GateConfig((pull,), self.ceilings, "gate", baseline=(main,),
                                     noise=self.band)).result()
        found = {}
        for row in result.rows:
            if row.kind in ("category", "total") and row.limit is not None:
                assert row.count is not None
                assert row.baseline is not None
                ceiling = row.count > row.limit
                assert (row.verdict == "fail") == (ceiling or row.baseline.verdict == "fail")
                found[row.name] = (ceiling, row.baseline.verdict == "fail")
        return found

    def fixed(self, size: int) -> System:
        """The system with ``size`` cases that usually miss retrieval now passing."""
        s = self.system
        misses = [i for i, o in enumerate(s.outcome) if o == "retrieval_miss"][:size]
        outcome = ["correct" if i in misses else o for i, o in enumerate(s.outcome)]
        return System(s.answerable, outcome, s.slices, s.flip, s.drift)

    def ratchet(self, after: System, before: System) -> bool:
        """Main's run of ``after`` ratcheted, confirmed by ``before`` re-run that day: did the
        file change?"""
        day = self.day()
        text = self.ceilings.read_text(encoding="utf-8")
        self.gate.command("ratchet", str(self.run(after, day)), "--ceilings",
                          str(self.ceilings), "--noise", str(self.band),
                          "--confirm-baseline", str(self.run(before, day)))
        return self.ceilings.read_text(encoding="utf-8") != text


def test_the_same_day_pairing_catches_regressions_the_drift_widened_ceiling_lets_through(
        tmp_path: Path) -> None:
    loop = SameDay(tmp_path, seed=7)
    unchanged = [loop.check(loop.system) for _ in range(6)]
    assert not any(paired for found in unchanged for _, paired in found.values())
    caught = {category: loop.check(loop.system.regressed(category, 20, loop.rng))[category]
              for category in CATEGORIES}  # 5% of the cases, 20, moved into each
    by_ceiling = [category for category, (ceiling, _) in caught.items() if ceiling]
    paired = [category for category, (_, fails) in caught.items() if fails]
    assert len(paired) >= 4
    assert len(by_ceiling) < len(paired)


def test_the_ratchet_lowers_for_a_real_fix_on_a_same_day_paired_drop_and_never_unchanged(
        tmp_path: Path) -> None:
    loop = SameDay(tmp_path, seed=7)
    start = yaml.safe_load(loop.ceilings.read_text(encoding="utf-8"))["ceilings"]
    assert not any(loop.ratchet(loop.system, loop.system) for _ in range(5))
    fixed = loop.fixed(20)
    assert loop.ratchet(fixed, loop.system)
    now = yaml.safe_load(loop.ceilings.read_text(encoding="utf-8"))["ceilings"]
    drop = start["retrieval_miss"]["observed"] - now["retrieval_miss"]["observed"]
    assert 10 <= drop <= 30  # about the 20 cases fixed, whatever the day
    assert now["retrieval_miss"]["max"] == (now["retrieval_miss"]["observed"]
                                            + now["retrieval_miss"]["allowance"])
