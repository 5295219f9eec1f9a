"""A tolerance for failures outside the system comes from their observed rate.

A pipeline whose provider errors on a steady 1% of the cases (simulated runs of
``noisy_runs``, with and without day-level drift): the band of three repeats saw the same
number of errors in each, and the ceiling of ``provider_error`` must leave room for what
that rate brings, not the ``+ 2`` of a count the band never saw move. Ordinary runs stay
conclusive.
"""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from noisy_runs import System, write_run

from pytest_failgate.cli import main

TAXONOMY = """\
name: rag-gate-with-errors
id_field: id
types:
  primary_failure: string
failed: primary_failure != "correct"
categories:
  - name: provider_error
    outside: true
    when: primary_failure == "provider_error"
  - name: retrieval_miss
    when: primary_failure == "retrieval_miss"
  - name: other
"""


def _run(folder: Path, system: System, rng: random.Random, name: str, rate: float,
         exactly: int | None = None) -> Path:
    """One run of the system, each case's call failing at the provider with ``rate`` (or on
    ``exactly`` that many cases)."""
    outcomes = system.run(rng)
    hit = (set(rng.sample(range(len(outcomes)), exactly)) if exactly is not None
           else {i for i in range(len(outcomes)) if rng.random() < rate})
    outcomes = ["provider_error" if i in hit else mode for i, mode in enumerate(outcomes)]
    written: Path = write_run(folder / name, system, outcomes, rng, name)
    return written


def _tail(n: int, rate: Fraction, above: int) -> Fraction:
    """P[Bin(n, rate) > above], summed term by term."""
    return sum((math.comb(n, k) * rate**k * (1 - rate) ** (n - k)
                for k in range(above + 1, n + 1)), Fraction(0))


@pytest.mark.slow
@pytest.mark.parametrize("drift", [0.0, 0.5])
def test_a_steady_error_rate_gets_a_tolerance_from_its_rate_and_ordinary_runs_are_conclusive(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        drift: float) -> None:
    """The band is the regression gate's own file (counts only, no case movement): its
    three runs each had 4 provider errors (1% of 400), so the count never moved in it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "errors.yaml").write_text(TAXONOMY, encoding="utf-8")
    rng = random.Random(26)
    system = System.draw(400, 0.06, rng, drift)
    repeats = [_run(tmp_path, system, rng, f"r{i}", 0.01, exactly=4) for i in range(3)]
    assert main(["noise", *map(str, repeats), "--out", "band.json",
                 "--taxonomy", "errors.yaml"]) == 0
    document = json.loads(Path("band.json").read_text(encoding="utf-8"))
    for entry in document["metric_band"].values():  # as the regression gate writes it
        entry.pop("moved", None)
        entry.pop("discordant", None)
    Path("band.json").write_text(json.dumps(document), encoding="utf-8")
    assert document["metric_band"]["mode:provider_error"]["std"] == 0
    init = _run(tmp_path, system, rng, "init", 0.01, exactly=4)
    assert main(["init", str(init), "--noise", "band.json", "--taxonomy", "errors.yaml"]) == 0
    entry = yaml.safe_load(Path("ceilings.yaml").read_text(encoding="utf-8"))["ceilings"][
        "provider_error"]
    # at the rate seen (16 of 1,600), an ordinary run exceeds the ceiling rarely: within the
    # run's budget (5%), where 4 + 2 would make one run in nine inconclusive
    assert _tail(400, Fraction(1, 100), entry["max"]) <= Fraction(1, 20)
    capsys.readouterr()
    codes = [main(["check", str(_run(tmp_path, system, rng, f"pr{i}", 0.01))])
             for i in range(10)]
    assert codes.count(3) <= 1  # ordinary runs at the same error rate are judged
    # an outage is still inconclusive
    assert main(["check", str(_run(tmp_path, system, rng, "outage", 0.2))]) == 3
