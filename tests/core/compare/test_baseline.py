"""Noise-aware gating: a paired baseline comparison, noise bands, significant rates."""

from __future__ import annotations

import json
import random
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import scipy.stats  # type: ignore[import-untyped, unused-ignore]
from helpers import EXAMPLES, RAG, case, category_case, write_ceilings, write_summary

from pytest_failgate.cli import main
from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.compare.noise import NoiseBand, noise_band_document
from pytest_failgate.core.gate.runner import GateConfig, run_gate

ROOT = EXAMPLES.parent
GATE_ITEMS = 24


def _run(ids: dict[str, str | None], seed: int) -> list[dict[str, Any]]:
    """Cases by id, each passing (None) or built to land in its category."""
    records = [case(i) if c is None else category_case(c, i) for i, c in ids.items()]
    random.Random(seed).shuffle(records)
    return records


Cases = list[dict[str, Any]]


def _paired_runs(n: int, k: int, jitter: int, seed: int) -> tuple[Cases, Cases]:
    """A baseline, and a candidate where ``k`` passing cases newly miss retrieval while
    ``jitter`` cases swap between unknown and passing (noise within the band)."""
    rng = random.Random(seed)
    categories = ["verifier_false_negative", "unknown", "retrieval_miss", None, None, None]
    base = {f"c{i}": rng.choice(categories) for i in range(n)}
    candidate = dict(base)
    passing = [i for i, c in base.items() if c is None]
    rng.shuffle(passing)
    for case_id in passing[:k]:
        candidate[case_id] = "retrieval_miss"
    unknown = [i for i, c in base.items() if c == "unknown"]
    for case_id in unknown[:jitter]:
        candidate[case_id] = None
    for case_id in passing[k:k + jitter]:
        candidate[case_id] = "unknown"
    return _run(base, 1), _run(candidate, 2)


def _gate(tmp: Path, base: list[dict[str, Any]], candidate: list[dict[str, Any]],
          bands: dict[str, NoiseBand] | None = None) -> dict[str, str]:
    write_summary(tmp / "base" / "run.json", base)
    write_summary(tmp / "cand" / "run.json", candidate)
    ceilings = write_ceilings(tmp / "c.yaml", dict.fromkeys([*RAG.category_names, "total"], 10**6))
    noise = None
    if bands is not None:
        noise = tmp / "noise.json"
        noise.write_text(json.dumps(noise_band_document(bands)))
    gate = run_gate(GateConfig((tmp / "cand",), ceilings, baseline=(tmp / "base",),
                               noise=noise))
    return {row.name: row.baseline.verdict for row in gate.result().rows
            if row.baseline is not None}


def _p(new: int, fixed: int) -> float:
    if new + fixed == 0:
        return 1.0
    return float(scipy.stats.binomtest(new, new + fixed, 0.5, alternative="greater").pvalue)


def _holm(moves: dict[str, tuple[int, int]], alpha: float = 0.05) -> dict[str, bool]:
    """Holm's procedure over the tests that could be significant (written here from its
    definition: sorted p-values, the j-th against alpha / (m - j + 1), stopping at the
    first that is not; a test on d discordant cases is counted when 2**-d <= alpha)."""
    counted = [name for name, (new, fixed) in moves.items() if 2.0 ** -(new + fixed) <= alpha]
    ordered = sorted(counted, key=lambda name: _p(*moves[name]))
    significant = dict.fromkeys(moves, False)
    for j, name in enumerate(ordered):
        if _p(*moves[name]) > alpha / (len(ordered) - j):
            break
        significant[name] = True
    return significant


def _oracle(new: int, fixed: int, band: int, significant: bool) -> str:
    """The seed gate's rule, with the test decided among the run's tests (Holm)."""
    significant = significant and new > fixed
    beyond = new - fixed > band
    return "fail" if significant and beyond else "warn" if significant or beyond else "pass"


@pytest.mark.slow
@pytest.mark.parametrize("n", [221, 2000])
def test_an_injected_regression_fails_exactly_its_category(tmp_path: Path, n: int) -> None:
    band = NoiseBand(std=1.0, min=10, max=13, n=5)  # 3 cases of noise
    seen = set()
    for k in (0, 2, 4, 6, 9, 15):
        verdicts = _gate(tmp_path, *_paired_runs(n, k, jitter=2, seed=k),
                         bands={"unknown": band, "retrieval_miss": band})
        # retrieval: k cases in; unknown: 2 in, 2 out (noise); total: k + 2 in, 2 out; the
        # other categories did not move: eight tests in all, decided together
        moves = {**{name: (0, 0) for name in RAG.category_names},
                 "retrieval_miss": (k, 0), "unknown": (2, 2), "total": (k + 2, 2)}
        holm = _holm(moves)
        expected = {"retrieval_miss": _oracle(k, 0, 3, holm["retrieval_miss"]),
                    "unknown": _oracle(2, 2, 3, holm["unknown"]),
                    "total": _oracle(k + 2, 2, 1, holm["total"])}
        for name, verdict in expected.items():
            assert verdicts[name] == verdict, (k, name, verdicts)
        assert verdicts["unknown"] == "pass"
        assert {name for name, v in verdicts.items() if v == "fail"} <= {"retrieval_miss",
                                                                          "total"}
        seen.add(expected["retrieval_miss"])
    assert seen == {"pass", "warn", "fail"}


def test_a_run_compared_with_itself_passes_everywhere(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = pytester.runpytest("--failgate=reports", "--failgate-baseline=reports")
    result.assert_outcomes(passed=GATE_ITEMS)
    result.stdout.fnmatch_lines(["*category *count *ceiling *headroom *status *vs baseline",
                                 "  verifier_false_negative *6 *6 *0 *ok *+0 / -0"])
    assert "WARN" not in result.stdout.str()


# The suite turns warnings into errors; the run under test must see them as users do.
@pytest.mark.filterwarnings("default")
def test_a_warn_passes_and_is_recorded_as_a_warning(
    pytester: pytest.Pytester, regression: Path
) -> None:
    shutil.copytree(EXAMPLES / "reports", regression / "base")
    ceilings = regression / "ceilings.yaml"
    ceilings.write_text(ceilings.read_text().replace("    retrieval_miss: 1\n",
                                                     "    retrieval_miss: 4\n")
                        .replace("    total: 7\n", "    total: 10\n"))
    result = pytester.runpytest("--failgate=reports", "--failgate-baseline=base",
                                "--junitxml=out.xml")
    result.assert_outcomes(passed=GATE_ITEMS, warnings=2)
    result.stdout.fnmatch_lines([
        "*FailgateWarning: retrieval_miss: changed against the baseline, beyond the noise "
        "band but not significant*",
        "*retrieval_miss *4 *4 *0 *ok (warn) *+3 / -0 WARN",
    ])
    xml = (regression / "out.xml").read_text()
    assert '<property name="baseline_new" value="3" />' in xml
    assert '<property name="baseline_p" value="0.125" />' in xml


def test_cases_in_only_one_run_are_listed_and_too_little_overlap_is_an_error(
    tmp_path: Path,
) -> None:
    base = _run({f"c{i}": None for i in range(20)}, 0)
    cand = _run({f"c{i}": None for i in range(3, 21)}, 0)
    write_summary(tmp_path / "base" / "r.json", base)
    write_summary(tmp_path / "cand" / "r.json", cand)
    ceilings = write_ceilings(tmp_path / "c.yaml", {})
    gate = run_gate(GateConfig((tmp_path / "cand",), ceilings, baseline=(tmp_path / "base",)))
    listed = [w for w in gate.warnings if "only in" in w]
    assert listed[0].startswith("baseline: r: 3 cases only in the baseline (")
    assert sorted(listed[0][-11:-1].split(", ")) == ["c0", "c1", "c2"]
    assert listed[1] == "baseline: r: 1 case only in this run (c20)"
    write_summary(tmp_path / "cand" / "r.json", _run({f"x{i}": None for i in range(9)}, 0))
    with pytest.raises(FailgateError, match="only 0 of its 9 cases are in the baseline"):
        run_gate(GateConfig((tmp_path / "cand",), ceilings, baseline=(tmp_path / "base",)))


def test_summaries_with_a_baseline_are_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    shutil.copy(ROOT / "ceilings.yaml", tmp_path / "ceilings.yaml")
    monkeypatch.chdir(tmp_path)
    outputs = []
    for _ in range(2):
        main(["check", "examples/regression", "--baseline", "examples/reports", "--md", "g.md",
              "--json", "g.json"])
        outputs.append((capsys.readouterr().out, Path("g.md").read_bytes(),
                        Path("g.json").read_bytes()))
    assert outputs[0] == outputs[1]
    assert "+3 / -0 WARN" in outputs[0][0]


def test_noise_command_measures_bands_that_the_gate_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for run, unknown in enumerate((3, 5, 4)):
        cases = [category_case("unknown", f"u{i}") for i in range(unknown)]
        write_summary(tmp_path / f"run{run}" / "r.json", [*cases, case("ok")])
    assert main(["noise", "run0", "run1", "run2", "--out", "bands.json"]) == 0
    bands = json.loads((tmp_path / "bands.json").read_text())["metric_band"]
    assert bands["mode:unknown"] == {"mean": 4.0, "max": 5, "min": 3, "n": 3, "std": 1.0,
                                     "moved": 0, "discordant": 0}  # u0-u2 in every run
    assert main(["noise", "run0"]) == 2
    assert "at least two runs" in capsys.readouterr().err


def test_a_malformed_noise_band_file_is_a_clear_error(tmp_path: Path) -> None:
    write_summary(tmp_path / "run" / "r.json", [case("a")])
    ceilings = write_ceilings(tmp_path / "c.yaml", {})
    noise = tmp_path / "noise.json"
    noise.write_text('{"metric_band": {"mode:unknown": {"std": 1}}}')
    with pytest.raises(FailgateError, match=str(noise)):
        run_gate(GateConfig((tmp_path / "run",), ceilings, baseline=(tmp_path / "run",),
                            noise=noise))


@pytest.mark.parametrize(("count", "expected"), [(10, "pass"), (12, "warn"), (20, "fail")])
def test_a_rate_ceiling_with_significance_fails_only_when_significantly_above(
    tmp_path: Path, count: int, expected: str
) -> None:
    cases = [category_case("unknown", f"u{i}") for i in range(count)]
    cases += [case(f"ok{i}") for i in range(100 - count)]
    write_summary(tmp_path / "run" / "r.json", cases)
    ceilings = write_ceilings(tmp_path / "c.yaml",
                              {"unknown": {"max_rate": 0.1, "significance": 0.05}})
    [row] = [r for r in run_gate(GateConfig((tmp_path / "run",), ceilings)).result().rows
             if r.name == "unknown"]
    verdict = "warn" if row.verdict == "pass" and row.warnings else row.verdict
    assert verdict == expected
    tail = scipy.stats.binomtest(count, 100, 0.1, alternative="greater").pvalue
    if expected == "warn":
        assert f"p = {tail:.4g}" in row.warnings[0]
    assert (expected == "fail") == (count > 10 and tail <= 0.05)


def test_file_wide_significance_sets_the_baseline_alpha(tmp_path: Path) -> None:
    base, cand = _paired_runs(221, 5, jitter=0, seed=3)
    write_summary(tmp_path / "base" / "run.json", base)
    write_summary(tmp_path / "cand" / "run.json", cand)
    ceilings = tmp_path / "c.yaml"
    text = write_ceilings(ceilings, dict.fromkeys(RAG.category_names, 10**6)).read_text()
    # retrieval_miss and total both gained the 5 cases (p = 1/32 each): decided together
    # (Holm), 1/32 fails at 0.1 (below 0.1 / 2) and not at 0.05 (above 0.05 / 2)
    for alpha, expected in ((0.1, "fail"), (0.05, "warn"), (0.01, "warn")):
        ceilings.write_text(text.replace("taxonomy: rag", f"taxonomy: rag\nsignificance: {alpha}"))
        gate = run_gate(GateConfig((tmp_path / "cand",), ceilings, baseline=(tmp_path / "base",)))
        assert gate.baseline is not None
        assert gate.baseline.alpha == Fraction(str(alpha))
        [row] = [r for r in gate.result().rows if r.name == "retrieval_miss"]
        assert row.baseline is not None
        assert row.baseline.verdict == expected
