"""Noise-aware ceilings: allowances, the ratchet past the noise, power, and the exact case.

The statistics are checked against sums written here from ``math.comb``; the loop is the
one docs/ci.md recommends (init once, check each pull request, ratchet main) on simulated noisy runs
(``noisy_runs``), as ``bench/noise_loop.py`` runs it at full size.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
from helpers import SAME_DAY_CEILINGS
from noisy_runs import CATEGORIES, Loop, System, trial, write_run

from pytest_failgate.cli import main
from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.base.result import GateResult
from pytest_failgate.core.ceilings import writeback
from pytest_failgate.core.gate.runner import GateConfig, Mode, run_gate
from pytest_failgate.core.stats.allowance import allowance, detectable, may_move
from pytest_failgate.core.stats.dispersion import dispersion_bound

BUDGET = Fraction(1, 20)
DATA = Path(__file__).resolve().parents[2] / "data"


def rise_tail(moving: int, rise: int) -> Fraction:
    """P[2 Bin(moving, 1/2) - moving >= rise], summed term by term."""
    hits = sum(math.comb(moving, k) for k in range(moving + 1) if 2 * k - moving >= rise)
    return Fraction(hits, 2**moving)


@pytest.mark.parametrize("level", [Fraction(1, 20), Fraction(1, 120), Fraction(1, 5),
                                   Fraction(1, 1000)])
def test_the_allowance_is_the_least_rise_an_unchanged_count_exceeds_rarely(
        level: Fraction) -> None:
    for moving in range(0, 61):
        found = allowance(moving, level)
        assert rise_tail(moving, found + 1) <= level
        assert found == 0 or rise_tail(moving, found) > level


def test_cases_that_may_move_are_one_root_above_the_estimate_plus_two() -> None:
    for numerator in range(0, 400):
        for denominator in (1, 2, 3, 7):
            mu = Fraction(numerator, denominator)
            want = next(n for n in range(math.ceil(mu), 10**4) if (n - mu) ** 2 >= mu) + 2
            assert may_move(mu) == want
    assert may_move(Fraction(0)) == 2  # never seen to move: still two cases may
    assert may_move(Fraction(4)) == 8  # 4 + 2 + 2, exactly (no float square root)


def test_without_noise_an_item_catches_exactly_the_cases_past_its_ceiling() -> None:
    assert [detectable(0, headroom) for headroom in (0, 1, 5, -3)] == [1, 2, 6, 1]
    # with noise it takes more: 15 cases that may move, an allowance of 9
    assert detectable(15, 9) == 9 + allowance(15, Fraction(1, 5)) + 1 == 13


def gate(mode: Mode, run: Path, ceilings: Path, noise: Path | None = None) -> GateResult:
    """One command of the loop through the core (init and ratchet write the file)."""
    result = run_gate(GateConfig((run,), ceilings, mode, noise=noise)).result()
    if mode == "init":
        assert writeback.init(ceilings, result).written
    if mode == "ratchet":
        writeback.ratchet(ceilings, result, writeback.outcomes_from_verdicts(result))
    return result


@pytest.fixture
def noisy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Path]]:
    """Three repeats of a noisy 400-case system measured into a noise band, and more runs."""
    monkeypatch.chdir(tmp_path)
    rng = random.Random(7)
    system = System.draw(400, 0.06, rng)
    runs = [write_run(tmp_path / f"run{i}", system, system.run(rng), rng, f"r{i}")
            for i in range(8)]
    band = tmp_path / "noise_band.json"
    assert main(["noise", *map(str, runs[:3]), "--out", str(band)]) == 0
    return band, runs[3:]


def test_the_noise_band_counts_the_cases_that_moved_in_and_out_of_each_category(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = {"a": ["retrieval_miss", "retrieval_miss", "correct"],  # in 2 of 3 runs
            "b": ["hallucination", "retrieval_miss", "retrieval_miss"],  # in 2 of 3
            "c": ["correct", "correct", "correct"]}
    for run in range(3):
        lines = [json.dumps({"id": case, "primary_failure": modes[run], "answerable": True})
                 for case, modes in rows.items()]
        folder = tmp_path / f"r{run}"
        folder.mkdir()
        (folder / "attribution.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "band.json"
    assert main(["noise", *(str(tmp_path / f"r{i}") for i in range(3)), "--out", str(out)]) == 0
    band = json.loads(out.read_text(encoding="utf-8"))["metric_band"]
    # a and b each sat in retrieval_miss in one run of two of the three pairs of runs
    assert (band["mode:retrieval_miss"]["moved"], band["mode:retrieval_miss"]["discordant"]) \
        == (2, 4)
    assert (band["mode:hallucination"]["moved"], band["mode:hallucination"]["discordant"]) \
        == (1, 2)
    assert (band["mode:correct"]["moved"], band["mode:correct"]["discordant"]) == (1, 2)
    assert (band["mode:other"]["moved"], band["mode:other"]["discordant"]) == (0, 0)


def test_init_with_noise_writes_each_ceiling_as_observed_plus_allowance(
        tmp_path: Path, noisy: tuple[Path, list[Path]]) -> None:
    band, runs = noisy
    ceilings = tmp_path / "ceilings.yaml"
    result = gate("init", runs[0], ceilings, band)
    text = ceilings.read_text(encoding="utf-8")
    assert "noise: noise_band.json\n" in text
    assert result.noise is not None
    assert result.noise.items == 6
    measured = json.loads(band.read_text(encoding="utf-8"))["metric_band"]
    for row in result.rows:
        assert row.count is not None
        key = "mode:correct" if row.name == "total" else f"mode:{row.name}"
        mu = Fraction(measured[key]["discordant"], 3)  # three pairs of three runs
        std = Fraction(repr(measured[key]["std"]))
        moving = max(may_move(mu), math.ceil(mu * dispersion_bound(std * std, mu, 3)))
        want = allowance(moving, BUDGET / 6)
        assert want >= allowance(may_move(mu), BUDGET / 6)  # never narrower than independent
        # observed: the mean of the band's three runs and this fourth one, rounded
        band_mean = Fraction(repr(measured[key]["mean"]))
        if row.name == "total":  # the band counts the passed cases
            band_mean = 400 - band_mean
        observed = math.floor((3 * band_mean + row.count) / 4 + Fraction(1, 2))
        assert (row.observed, row.allowance, row.noise_allowance) == (observed, want, want)
        assert (f"  {row.name}:\n    max: {observed + want}\n    observed: {observed}\n"
                f"    allowance: {want}\n") in text
    # the same run passes its own ceilings, and says what each catches
    again = gate("gate", runs[0], ceilings)
    assert all(row.verdict == "pass" for row in again.rows)
    for row in again.rows:
        assert row.detectable is not None
        assert row.allowance is not None
        assert row.detectable > row.allowance


def test_a_ceilings_file_names_its_noise_source_and_check_reads_it(
        tmp_path: Path, noisy: tuple[Path, list[Path]]) -> None:
    band, runs = noisy
    ceilings = tmp_path / "ceilings.yaml"
    gate("init", runs[0], ceilings, band)
    result = gate("gate", runs[1], ceilings)  # no --noise: the file's `noise:` is read
    assert result.noise is not None
    assert result.noise.source.endswith("noise_band.json")
    assert all(row.moving is not None for row in result.rows)
    band.unlink()
    with pytest.raises(FailgateError, match=r"noise: noise_band.json is not a file") as error:
        gate("gate", runs[1], ceilings)
    assert error.value.line == 9


def test_without_a_noise_source_init_and_ratchet_are_exact_as_before(
        tmp_path: Path, noisy: tuple[Path, list[Path]]) -> None:
    _, runs = noisy
    ceilings = tmp_path / "ceilings.yaml"
    init = gate("init", runs[0], ceilings)
    text = ceilings.read_text(encoding="utf-8")
    assert "observed" not in text
    assert "allowance" not in text
    assert "noise" not in text
    counts = {row.name: row.count for row in init.rows}
    assert [line for line in text.split("\nceilings:\n")[1].splitlines()
            if line.startswith("  ")] == [
        f"  {name}: {counts[name]}" for name in (*CATEGORIES, "total")]
    assert init.noise is None
    assert all(row.moving is None for row in init.rows)
    # every lower count is ratcheted to, exactly (a run that fails anywhere writes nothing)
    later = gate("ratchet", runs[1], ceilings)
    failing = any(row.verdict == "fail" for row in later.rows)
    lowered = {row.name: counts[row.name] if failing
               else min(row.count, counts[row.name])  # type: ignore[type-var]
               for row in later.rows}
    assert [line for line in ceilings.read_text(encoding="utf-8").split("\nceilings:\n")[1]
            .splitlines() if line.startswith("  ")] == [
        f"  {n}: {lowered[n]}" for n in (*CATEGORIES, "total")]


def _run(folder: Path, counts: dict[str, int]) -> Path:
    lines = []
    for mode, n in counts.items():
        lines += [json.dumps({"id": f"{mode}-{i}", "primary_failure": mode, "note": "한국어"},
                             ensure_ascii=False) for i in range(n)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "attribution.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize(("retrieval", "confirming", "lowered"), [
    (12, 12, None), (4, 2, None),  # within the allowance of 8: the count may be a lucky one
    (3, 3, (11, 3, 8)), (0, 0, (8, 0, 8)),  # 9 and 12 below the observed 12: past the noise
    (0, 3, (10, 2, 8)),  # observed from both runs: the mean of 0 and 3, rounded half up
    (0, 5, None),  # the second run did not fall past the noise: not confirmed
    (0, None, None),  # one low run alone lowers nothing
])
def test_the_ratchet_lowers_a_noisy_ceiling_only_past_its_allowance_in_two_runs(
        tmp_path: Path, retrieval: int, confirming: int | None,
        lowered: tuple[int, int, int] | None) -> None:
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text(SAME_DAY_CEILINGS, encoding="utf-8")
    others = {"hallucination": 6, "false_refusal": 5, "over_answer": 5, "other": 5,
              "correct": 20}
    run = _run(tmp_path / "run", {"retrieval_miss": retrieval, **others})
    confirm = (() if confirming is None
               else (_run(tmp_path / "previous", {"retrieval_miss": confirming, **others}),))
    result = run_gate(GateConfig((run,), ceilings, "ratchet", confirm=confirm)).result()
    writeback.ratchet(ceilings, result, writeback.outcomes_from_verdicts(result))
    if confirming is None:
        assert any("fell past the noise in this run alone" in w for w in result.warnings)
    text = ceilings.read_text(encoding="utf-8")
    if lowered is None:
        assert text == SAME_DAY_CEILINGS
        return
    assert text == SAME_DAY_CEILINGS.replace(
        "    max: 20\n    observed: 12\n",
        f"    max: {lowered[0]}\n    observed: {lowered[1]}\n")


def test_with_a_noise_source_the_ratchet_sets_the_allowance_the_noise_asks_for(
        tmp_path: Path) -> None:
    """A noise band that moves retrieval_miss by more asks for a larger allowance: the
    ceiling still only falls, to the count plus the new allowance."""
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text(SAME_DAY_CEILINGS, encoding="utf-8")
    band = tmp_path / "band.json"
    entry = {"std": 0.0, "min": 0, "max": 0, "n": 3, "moved": 0, "discordant": 0}
    band.write_text(json.dumps({"metric_band": {
        "mode:retrieval_miss": {**entry, "moved": 3, "discordant": 6},  # mu 2: 6 may move
        **{f"mode:{c}": entry for c in CATEGORIES if c != "retrieval_miss"}}}),
        encoding="utf-8")
    others = {"hallucination": 6, "false_refusal": 5, "over_answer": 5, "other": 5,
              "correct": 20}
    run = _run(tmp_path / "run", {"retrieval_miss": 0, **others})
    previous = _run(tmp_path / "previous", {"retrieval_miss": 0, **others})
    result = run_gate(GateConfig((run,), ceilings, "ratchet", noise=band,
                                 confirm=(previous,))).result()
    writeback.ratchet(ceilings, result, writeback.outcomes_from_verdicts(result))
    asked = {row.name: row.noise_allowance for row in result.rows}
    assert asked["retrieval_miss"] == allowance(may_move(Fraction(2)), BUDGET / 5) == 6
    text = ceilings.read_text(encoding="utf-8")
    assert "    max: 6\n    observed: 0\n    allowance: 6\n" in text
    # the plain ceilings (5, exact) fall only past the noise too: 5 - 5 is no improvement
    assert "  false_refusal: 5\n" in text
    assert result.warnings
    assert "allow less than" in result.warnings[0]


@pytest.mark.parametrize(("entry", "message"), [
    ("{max: 20, observed: 12}", "'observed' needs 'allowance'"),
    ("{max: 20, allowance: 8}", "'allowance' needs 'observed'"),
    ("{observed: 12, allowance: 8}", "needs 'max'"),
    ("{max: 21, observed: 12, allowance: 8}", "max 21 is not observed 12 + allowance 8 = 20"),
    ("{max: 20, observed: 12, allowance: -8}", "allowance must be 0 or more"),
    ("{max: 20, observed: 12.0, allowance: 8}", "observed must be a whole number"),
])
def test_a_noisy_ceiling_whose_parts_do_not_add_up_is_an_error_on_its_line(
        tmp_path: Path, entry: str, message: str) -> None:
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text(f"version: 1\ntaxonomy: rag-gate\nceilings:\n  retrieval_miss: {entry}\n",
                        encoding="utf-8")
    run = _run(tmp_path / "run", {"retrieval_miss": 1, "correct": 3})
    with pytest.raises(FailgateError, match=re.escape(message)) as error:
        gate("gate", run, ceilings)
    assert error.value.line == 4


@pytest.mark.slow
def test_an_unchanged_noisy_system_rarely_fails_and_a_real_regression_is_caught(
        tmp_path: Path) -> None:
    """The CI loop at 400 cases, flip 0.06, a band from 3 repeats: with the noise
    given, 2 systems x 10 unchanged pull requests; then a regression of three band widths
    (at least 4% of the cases) in each category. Seeded, so the counts are fixed."""
    loop = Loop(merges=10)
    trials = [trial(seed, loop, tmp_path) for seed in (18, 19)]
    assert sum(t.false_alarms for t in trials) <= 1
    assert sum(caught for t in trials for caught in t.caught.values()) >= 9  # of 10
    assert all(size >= 16 for t in trials for size in t.sizes.values())


@pytest.mark.slow
def test_without_noise_the_same_loop_fails_nearly_every_unchanged_pull_request(
        tmp_path: Path) -> None:
    """What the exact loop does on a noisy system (the reason for the noise source)."""
    outcome = trial(18, Loop(mode="exact", merges=10), tmp_path)
    assert outcome.false_alarms >= 9


@pytest.mark.slow
def test_the_loop_at_full_size_meets_the_false_alarm_and_power_targets(tmp_path: Path) -> None:
    """20 systems x 20 unchanged pull requests: at most 10% fail (the aim is 5%); a
    regression of three band widths is caught in at least 80% of trials, per category."""
    trials = [trial(seed, Loop(), tmp_path) for seed in range(100, 120)]
    prs = sum(t.prs for t in trials)
    assert sum(t.false_alarms for t in trials) <= prs // 10
    for category in CATEGORIES:
        assert sum(t.caught[category] for t in trials) >= 16


def test_the_command_gives_the_noise_to_init_check_and_ratchet(
        tmp_path: Path, noisy: tuple[Path, list[Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    band, runs = noisy
    assert main(["init", str(runs[0]), "--noise", str(band)]) == 0
    out = capsys.readouterr().out
    assert "noise from noise_band.json: an unchanged system fails any of 6 counts" in out
    text = (tmp_path / "ceilings.yaml").read_text(encoding="utf-8")
    assert "noise: noise_band.json\n" in text
    assert "    observed: " in text
    assert main(["check", str(runs[1])]) == 0  # the file's noise: is read
    assert "catches" in capsys.readouterr().out
    assert main(["ratchet", str(runs[2]), "--noise", str(band)]) == 0
    assert "no count fell past its allowance" in capsys.readouterr().out


@pytest.mark.slow
def test_pytest_records_noise_aware_ceilings(pytester: pytest.Pytester) -> None:
    rng = random.Random(3)
    system = System.draw(200, 0.06, rng)
    runs = [write_run(pytester.path / f"run{i}", system, system.run(rng), rng, f"r{i}")
            for i in range(4)]
    pytester.makeini("[pytest]\n")
    assert main(["noise", *map(str, runs[:3]), "--out", str(pytester.path / "band.json"),
                 "--ceilings", str(pytester.path / "ceilings.yaml")]) == 0
    result = pytester.runpytest("--failgate=run3", "--failgate-init", "--failgate-noise=band.json")
    assert result.ret == 0
    text = (pytester.path / "ceilings.yaml").read_text(encoding="utf-8")
    assert "noise: band.json\n" in text
    assert "allowance:" in text
    result = pytester.runpytest("--failgate=run3")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["noise from band.json: an unchanged system fails any of 6*",
                                 "*category*count*ceiling*headroom*status*catches"])


def test_repeats_inside_the_run_are_its_own_noise_source(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """promptfoo --repeat 3 on a sampling model (scripts/fixtures/promptfoo_noise.sh): the
    refund test passed twice and failed once; the other three were stable."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(DATA / "promptfoo" / "noise" / "repeat", tmp_path / "evals")
    assert main(["init", "evals", "--noise", "repeats"]) == 0
    text = (tmp_path / "ceilings.yaml").read_text(encoding="utf-8")
    assert "noise: repeats\n" in text
    assert main(["check", "evals", "--json", "gate.json"]) == 0
    result = GateResult.model_validate_json((tmp_path / "gate.json").read_text())
    rows = {row.name: row for row in result.rows}
    # text_match: one unit of 3 repeats with 1 of them in it moves 2*1*2/(3-1) = 2 repeats
    assert rows["text_match"].noise == ("repeats: 4 units repeated in results; independent "
                                        "case moves (day-to-day drift not measured)")
    assert rows["text_match"].moving == may_move(Fraction(2))
    assert rows["format"].moving == may_move(Fraction(0))
    assert rows["text_match"].allowance == allowance(may_move(Fraction(2)), BUDGET / 13)


def test_repeats_is_a_keyword_and_a_file_of_that_name_is_dot_slash_repeats(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--noise repeats`` means each report's repeats even beside a file named
    ``repeats``; the file is ``./repeats`` (a noise band of another shape is refused)."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(DATA / "promptfoo" / "noise" / "repeat", tmp_path / "evals")
    (tmp_path / "repeats").write_text("not a noise band", encoding="utf-8")
    assert main(["init", "evals", "--noise", "repeats"]) == 0
    assert "noise: repeats\n" in (tmp_path / "ceilings.yaml").read_text(encoding="utf-8")
    assert main(["check", "evals", "--noise", "./repeats"]) == 2


def test_a_deterministic_pipeline_with_repeats_allows_only_what_few_repeats_cannot_see(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """promptfoo's echo provider, --repeat 3: every repeat agrees. Without a noise source the
    counts are exact; asked for its repeats, each count gets the floor for what three
    repeats cannot have seen move."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(DATA / "promptfoo" / "workflows" / "repeat", tmp_path / "evals")
    assert main(["init", "evals", "--ceilings", "exact.yaml"]) == 0
    assert "observed" not in (tmp_path / "exact.yaml").read_text(encoding="utf-8")
    assert main(["init", "evals", "--ceilings", "noisy.yaml", "--noise", "repeats"]) == 0
    assert f"    allowance: {allowance(2, BUDGET / 13)}\n" in (
        tmp_path / "noisy.yaml").read_text(encoding="utf-8")


def test_mcp_init_and_ratchet_take_the_noise(
        tmp_path: Path, noisy: tuple[Path, list[Path]]) -> None:
    from pytest_failgate import mcpserver

    band, runs = noisy
    done = mcpserver.init(paths=[str(runs[0])], ceilings=str(tmp_path / "c.yaml"),
                          noise=str(band))
    assert done["result"]["noise"]["items"] == 6
    assert "allowance:" in (tmp_path / "c.yaml").read_text(encoding="utf-8")
    done = mcpserver.ratchet(paths=[str(runs[1])], ceilings=str(tmp_path / "c.yaml"))
    assert done["result"]["noise"]["source"].endswith("noise_band.json")


def test_a_report_without_a_noise_source_in_a_noisy_run_is_named_and_left_out_of_the_promise(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A mixed folder under `--noise repeats`: promptfoo's run repeats its tests, the
    regression gate's run folder does not. Its ceilings stay exact, and the noise line says
    the false-alarm rate it promises does not cover it."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(DATA / "promptfoo" / "noise" / "repeat", tmp_path / "evals" / "promptfoo")
    shutil.copytree(DATA / "rag-gate" / "baseline", tmp_path / "evals" / "rag")
    for stale in (tmp_path / "evals" / "rag").glob("noise_band.json"):
        stale.unlink()
    assert main(["init", "evals", "--noise", "repeats"]) == 0
    out = capsys.readouterr().out
    assert "not covered: rag/attribution (no noise source measures it" in out
    assert main(["check", "evals", "--json", "gate.json"]) == 0
    result = GateResult.model_validate_json((tmp_path / "gate.json").read_text())
    assert result.noise is not None
    assert "not covered: rag/attribution" in result.noise.text
    covered = {row.report for row in result.rows if row.moving is not None}
    assert covered == {"promptfoo/results"}


@pytest.mark.parametrize(("drift", "widened"), [(0.0, False), (1.0, True)])
def test_counts_that_spread_beyond_independent_moves_get_wider_allowances_and_say_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drift: float, widened: bool) -> None:
    """Five repeats on five days of a system whose judge is harsher on some days (a shared
    shift of the log-odds, sigma 1) spread `total` far beyond what its case moves explain:
    its allowance widens by the bounded dispersion and its noise says which model; without
    drift (seeded) no count is widened and every allowance is the independent one."""
    monkeypatch.chdir(tmp_path)
    rng = random.Random(11)
    system = System.draw(400, 0.06, rng, drift)
    runs = [write_run(tmp_path / f"day{i}", system, system.run(rng), rng, f"day{i}")
            for i in range(6)]
    band = tmp_path / "noise_band.json"
    assert main(["noise", *map(str, runs[:5]), "--out", str(band)]) == 0
    measured = json.loads(band.read_text(encoding="utf-8"))["metric_band"]["mode:correct"]
    result = gate("init", runs[5], tmp_path / "ceilings.yaml", band)
    [total] = [row for row in result.rows if row.name == "total"]
    mu = Fraction(measured["discordant"], 10)  # ten pairs of five runs
    independent = allowance(may_move(mu), BUDGET / 6)
    assert result.noise is not None
    assert total.noise is not None
    assert total.allowance is not None
    if widened:
        assert total.allowance > independent
        assert "; overdispersed: spread x" in total.noise
        assert "model: " in result.noise.text
        assert "widened by their dispersion" in result.noise.text
    else:
        assert all("independent case moves" in (row.noise or "") for row in result.rows)
        assert total.allowance == independent
