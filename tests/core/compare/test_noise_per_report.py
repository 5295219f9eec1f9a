"""A run of several reports: each report's count moves, and is allowed, by its own noise.

Three simulated systems (the regression gate's run folders, ``noisy_runs``) are evaluated
together, run after run; the noise band of three such runs holds each report's own bands.
What the gate allows one report is checked against an independent computation: the band
of that report's runs alone (``failgate noise`` over single-report runs).
"""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
from noisy_runs import CATEGORIES, System, counts, write_run

from pytest_failgate.cli import main
from pytest_failgate.core.base.result import GateResult, Row
from pytest_failgate.core.compare.noise import PASSED_MODE, read_noise_band
from pytest_failgate.core.compare.noisemodel import band_movement
from pytest_failgate.core.guard.evidence import Noise, noise_changes

BUDGET = Fraction(1, 20)
NAMES = ("a", "b", "c")


@pytest.fixture
def mixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int]]:
    """Four runs of three reports (``a``, ``b``, ``c``, 200 cases each) under ``runs/``,
    and in the fourth a report ``d`` no band run has; each report's ``total`` by run."""
    monkeypatch.chdir(tmp_path)
    rng = random.Random(26)
    systems = {name: System.draw(200, 0.06, rng) for name in NAMES}
    totals: dict[str, list[int]] = {name: [] for name in NAMES}
    for run in range(1, 5):
        for name, system in systems.items():
            outcomes = system.run(rng)
            totals[name].append(sum(counts(outcomes).values()))
            write_run(tmp_path / "runs" / f"s{run}" / name, system, outcomes, rng,
                      f"s{run}-{name}")
    extra = systems["a"]
    write_run(tmp_path / "runs" / "s4" / "d", extra, extra.run(rng), rng, "s4-d")
    runs = [f"runs/s{run}" for run in (1, 2, 3)]
    assert main(["noise", *runs, "--out", "band.json", "--ceilings", "c.yaml"]) == 0
    return totals


def _rows(path: Path) -> dict[tuple[str, str], Row]:
    result = GateResult.model_validate_json(path.read_text(encoding="utf-8"))
    return {(report.name, row.name): row for report in result.reports
            for row in report.rows if row.slice is None}


def test_one_report_of_three_gets_its_own_allowance_as_its_runs_alone_measure_it(
        mixed: dict[str, list[int]], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "runs/s4", "--noise", "band.json", "--ceilings", "c.yaml"]) == 0
    assert main(["check", "runs/s4", "--noise", "band.json", "--ceilings", "c.yaml",
                 "--json", "gate.json"]) == 0
    rows = _rows(Path("gate.json"))
    result = GateResult.model_validate_json(Path("gate.json").read_text(encoding="utf-8"))
    assert result.noise is not None
    level = BUDGET / result.noise.items
    # the independent computation: the band of report c's own runs, measured alone
    alone = [f"runs/s{run}/c" for run in (1, 2, 3)]
    assert main(["noise", *alone, "--out", "c_band.json", "--ceilings", "c.yaml"]) == 0
    own = read_noise_band(json.loads(Path("c_band.json").read_text(encoding="utf-8")))
    pooled = read_noise_band(json.loads(Path("band.json").read_text(encoding="utf-8")))
    capsys.readouterr()
    for name in (*CATEGORIES, "total"):
        band = own.bands[PASSED_MODE if name == "total" else name]
        want = band_movement(band, "c").allowance(level)
        assert rows[("c/attribution", name)].noise_allowance == want, name
        assert rows[("c/attribution", name)].allowance == want, name
    # the pool of the three reports would have allowed c far more
    pool = band_movement(pooled.bands[PASSED_MODE], "pool").allowance(level)
    asked = rows[("c/attribution", "total")].noise_allowance
    assert asked is not None
    assert asked < pool
    # and each report's observed is the mean of its own runs (the band's three and this
    # one), rounded half up, not its one run's count
    for name in NAMES:
        mean = Fraction(sum(mixed[name]), 4)
        assert rows[(f"{name}/attribution", "total")].observed == math.floor(
            mean + Fraction(1, 2))


def test_a_report_the_band_does_not_measure_is_named_and_kept_exact(
        mixed: dict[str, list[int]], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "runs/s4", "--noise", "band.json", "--ceilings", "c.yaml"]) == 0
    out = capsys.readouterr().out
    assert "not covered: d/attribution (no noise source measures it" in out
    assert main(["check", "runs/s4", "--noise", "band.json", "--ceilings", "c.yaml",
                 "--json", "gate.json"]) == 0
    out = capsys.readouterr().out
    assert out.count("not covered: d/attribution") == 1
    rows = _rows(Path("gate.json"))
    assert rows[("d/attribution", "total")].noise_allowance is None
    assert rows[("d/attribution", "total")].limit == rows[("d/attribution", "total")].count
    assert rows[("a/attribution", "total")].noise_allowance is not None


def test_failgate_noise_check_measures_each_report_s_bands_again(
        mixed: dict[str, list[int]], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["noise", "--check", "band.json", "--ceilings", "c.yaml"]) == 0
    document = json.loads(Path("band.json").read_text(encoding="utf-8"))
    assert set(document["reports"]) == {"a/attribution", "b/attribution", "c/attribution"}
    document["reports"]["b/attribution"]["metric_band"]["mode:hallucination"][
        "discordant"] += 4
    Path("band.json").write_text(json.dumps(document), encoding="utf-8")
    capsys.readouterr()
    assert main(["noise", "--check", "band.json", "--ceilings", "c.yaml"]) == 1
    out = capsys.readouterr().out
    assert "reports[b/attribution] metric_band[mode:hallucination]" in out


def test_the_guard_names_one_report_s_grown_allowance(mixed: dict[str, list[int]]) -> None:
    document = json.loads(Path("band.json").read_text(encoding="utf-8"))
    old = read_noise_band(document)
    assert noise_changes(Noise("band.json", old), Noise("band.json", old), None, None) == []
    entry = document["reports"]["b/attribution"]["metric_band"]["mode:hallucination"]
    entry["discordant"] += 60
    new = read_noise_band(document)
    changes = noise_changes(Noise("band.json", old), Noise("band.json", new), None, None)
    assert [change.label for change in changes] == [
        "noise band.json b/attribution::mode:hallucination allowance"]


def test_the_guard_names_one_report_s_grown_error_rate(mixed: dict[str, list[int]]) -> None:
    """A count outside the system is tolerated up to its observed error rate: a report's
    own band that says more errors per run loosens that report's tolerance."""
    document = json.loads(Path("band.json").read_text(encoding="utf-8"))
    old = read_noise_band(document)
    document["reports"]["c/attribution"]["metric_band"]["mode:other"]["mean"] += 3
    new = read_noise_band(document)
    outside = frozenset({"other"})
    changes = noise_changes(Noise("band.json", old, outside=outside),
                            Noise("band.json", new, outside=outside), None, None)
    assert [change.label for change in changes] == [
        "noise band.json c/attribution::mode:other error rate"]
