"""Comparable or not: a baseline comparison checks the measuring instrument first.

On the tools' real output: promptfoo graded by a judge relabelled from gpt-4o to gpt-4.1
(``scripts/fixtures/promptfoo_noise.sh``), Inspect with its ``grader`` model role changed
(``scripts/fixtures/inspect_judges.py``), the regression gate's run folder whose header
names another ``judge_model``. A changed system setting (``top_k``) is what is tested.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_failgate.cli import main
from pytest_failgate.core.base.result import GateResult

DATA = Path(__file__).resolve().parents[2] / "data"
# the regression gate's fixture runs were made on different days: the gap is accepted here
ACCEPTED = ("--accept-baseline-gap", "the fixture's runs, days apart")


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, GateResult]:
    code = main(["check", *args, "--json", "gate.json"])
    out, err = capsys.readouterr()
    return code, out + err, GateResult.model_validate_json(Path("gate.json").read_text())


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(DATA / "promptfoo" / "noise", tmp_path / "promptfoo")
    shutil.copytree(DATA / "inspect_ai" / "judges", tmp_path / "inspect")
    for name in ("baseline", "rerun", "topk1"):
        shutil.copytree(DATA / "rag-gate" / name, tmp_path / "rag" / name)
    header = tmp_path / "rag" / "rerun" / "run.jsonl"
    lines = header.read_text(encoding="utf-8").split("\n", 1)
    assert '"judge_model": "gpt-4o-2024-08-06"' in lines[0]
    header.write_text(lines[0].replace("gpt-4o-2024-08-06", "gpt-4.1-2025-04-14") + "\n"
                      + lines[1], encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("candidate", "base", "key", "before", "after"), [
    ("promptfoo/judge_gpt-4.1", "promptfoo/judge_gpt-4o", "grader", "gpt-4o-2024-08-06",
     "gpt-4.1-2025-04-14"),
    ("inspect/gpt-4.1", "inspect/gpt-4o", "grader_model", "mockllm/gpt-4o", "mockllm/gpt-4.1"),
    ("rag/rerun", "rag/baseline", "judge_model", "gpt-4o-2024-08-06", "gpt-4.1-2025-04-14"),
])
def test_a_changed_judge_makes_the_comparison_inconclusive(
        runs: Path, capsys: pytest.CaptureFixture[str], candidate: str, base: str, key: str,
        before: str, after: str) -> None:
    code, out, result = check(capsys, candidate, "--baseline", base)
    assert code == 3
    [report] = result.reports
    assert report.inconclusive == (f"the measuring instrument changed since the baseline: "
                                   f"{key} {before} -> {after}; the delta measures the {key}, "
                                   "not the system")
    assert report.instrument_changes == [f"{key} {before} -> {after}"]
    assert {row.verdict for row in report.rows[1:]} == {"skip"}  # no regression, no pass
    assert f"instruments: {{{key}: {{from: ..., to: ..., reason: \"why\"}}}}" in out
    # the judge is the instrument, not a setting of the system: not in "what changed"
    assert not any(change.key.endswith(("label", "judge_model")) for change in
                   report.config_changes)


def test_the_ceilings_file_accepts_the_change_with_a_reason(
        runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("ceilings.yaml").write_text(
        "version: 1\ntaxonomy: rag-gate\ninstruments:\n  judge_model:\n"
        "    from: gpt-4o-2024-08-06\n    to: gpt-4.1-2025-04-14\n"
        '    reason: "judge upgrade; the baseline was re-run with it in #51"\n'
        "ceilings:\n  retrieval_miss: 70\n  hallucination: 5\n  false_refusal: 5\n"
        "  over_answer: 5\n  total: 80\n", encoding="utf-8")
    code, out, result = check(capsys, "rag/rerun", "--baseline", "rag/baseline", *ACCEPTED)
    assert code == 0, out
    [report] = result.reports
    assert report.inconclusive is None
    assert report.instrument_changes == [
        'judge_model gpt-4o-2024-08-06 -> gpt-4.1-2025-04-14 (accepted: "judge upgrade; the '
        'baseline was re-run with it in #51")']
    assert "measured differently from the baseline: judge_model" in out
    # accepted for that very change only: another judge is inconclusive again
    Path("ceilings.yaml").write_text(Path("ceilings.yaml").read_text().replace(
        "to: gpt-4.1-2025-04-14", "to: gpt-4.1-mini"))
    assert check(capsys, "rag/rerun", "--baseline", "rag/baseline")[0] == 3


def test_a_changed_system_setting_is_what_is_tested(
        runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, result = check(capsys, "rag/topk1", "--baseline", "rag/baseline", *ACCEPTED)
    assert code == 1  # a regression, judged
    [report] = result.reports
    assert report.inconclusive is None
    assert report.instrument_changes == []
    assert [change.text for change in report.config_changes] == ["top_k: 5 -> 1"]
    # the run's tests shared one budget: retrieval_miss, total and two metrics could be
    # significant (the others moved too few cases to ever be), all four are
    assert result.significance == ("significance: 4 tests that could be significant, decided "
                                   "together (Holm): a false alarm in at most 5% of runs; "
                                   "4 significant")


def test_the_same_instrument_compares_as_before(
        runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, result = check(capsys, "promptfoo/judge_gpt-4o", "--baseline",
                            "promptfoo/judge_gpt-4o")
    assert code == 0
    assert result.reports[0].instrument_changes == []
    assert result.reports[0].inconclusive is None


@pytest.mark.parametrize(("entry", "message"), [
    ("{from: a, to: b}", "reason"),
    ("{from: a, to: b, reason: x, when: now}", "unknown key 'when'"),
    ("gpt-4.1", "an accepted change is {from: ..., to: ..., reason:"),
    ('{from: a, to: b, reason: "   "}', "no letter or digit"),
    ('{from: a, to: b, reason: "\u200b\u2060 ."}', "no letter or digit"),
])
def test_an_accepted_change_is_from_to_and_a_reason(
        runs: Path, capsys: pytest.CaptureFixture[str], entry: str, message: str) -> None:
    Path("ceilings.yaml").write_text(
        f"version: 1\ntaxonomy: rag-gate\ninstruments:\n  judge_model: {entry}\n")
    code = main(["check", "rag/rerun", "--baseline", "rag/baseline"])
    err = capsys.readouterr().err
    assert code == 2
    assert "ceilings.yaml:4" in err
    assert message in err


def test_deepeval_records_its_metrics_thresholds_and_judges(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """DeepEval's own test run (no run of DeepEval here changes a metric: the copy's
    threshold is edited, the one field that differs)."""
    monkeypatch.chdir(tmp_path)
    source = DATA / "deepeval" / "test_run" / ".deepeval"
    for name in ("base", "cand"):
        (tmp_path / name / ".deepeval").mkdir(parents=True)
        shutil.copy(source / ".latest_test_run.json", tmp_path / name / ".deepeval")
    edited = tmp_path / "cand" / ".deepeval" / ".latest_test_run.json"
    text = edited.read_text(encoding="utf-8")
    assert text.count('"threshold": 0.75') >= 1
    edited.write_text(text.replace('"threshold": 0.75', '"threshold": 0.5'), encoding="utf-8")
    code, _, result = check(capsys, "cand", "--baseline", "base")
    assert code == 3
    [change] = result.reports[0].instrument_changes
    assert change.startswith("metrics ")
    assert "Keyword Recall >= 0.75" in change
    assert "Keyword Recall >= 0.5" in change


@pytest.mark.slow
@pytest.mark.parametrize(("candidate", "base", "key", "before", "after"), [
    ("promptfoo/judge_gpt-4.1", "promptfoo/judge_gpt-4o", "grader", "gpt-4o-2024-08-06",
     "gpt-4.1-2025-04-14"),
    ("inspect/gpt-4.1", "inspect/gpt-4o", "grader_model", "mockllm/gpt-4o", "mockllm/gpt-4.1"),
    ("rag/rerun", "rag/baseline", "judge_model", "gpt-4o-2024-08-06", "gpt-4.1-2025-04-14"),
])
def test_init_records_the_instrument_and_a_run_measured_otherwise_is_inconclusive(
        runs: Path, capsys: pytest.CaptureFixture[str], candidate: str, base: str, key: str,
        before: str, after: str) -> None:
    """The ceilings file remembers what measured the runs it was set from: a later run with
    another judge is inconclusive (exit 3) without a baseline, naming the change; the
    file's `instruments:` accepts it with a reason, and the run is judged."""
    shutil.copytree(runs / base, runs / "evals")
    assert main(["init", "evals"]) == 0
    text = Path("ceilings.yaml").read_text(encoding="utf-8")
    assert "\ninstrument:\n" in text
    assert f'"{before}"' in text
    assert main(["check", "evals"]) == 0  # the same instrument: judged as before
    shutil.rmtree(runs / "evals")
    shutil.copytree(runs / candidate, runs / "evals")
    code, _, result = check(capsys, "evals")
    assert code == 3
    assert result.verdict == "inconclusive"
    [report] = [r for r in result.reports if r.inconclusive is not None]
    assert report.inconclusive == (
        f"the measuring instrument changed since the ceilings were set (the file's "
        f"instrument:): {key} {before} -> {after}; the delta measures the {key}, not the system")
    Path("ceilings.yaml").write_text(text.replace(
        "version: 1\n", f"version: 1\ninstruments:\n  {key}: {{from: {before}, to: {after}, "
        f"reason: \"judge upgrade, ceilings re-measured in #51\"}}\n"), encoding="utf-8")
    code, _, result = check(capsys, "evals")
    assert code != 3
    assert all(r.inconclusive is None for r in result.reports)
    assert any(f"{key} {before} -> {after} (accepted" in change
               for r in result.reports for change in r.instrument_changes)
