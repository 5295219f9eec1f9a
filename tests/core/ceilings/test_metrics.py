"""Metric floors with conditional semantics: nulls are not applicable; true/false count 1/0
as a taxonomy's metrics do, and a floor named like a taxonomy metric measures that metric."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import EXAMPLES, case, write_ceilings, write_summary

from pytest_failgate.core.base.result import GateResult, Row
from pytest_failgate.core.gate.runner import GateConfig, run_gate

ROOT = EXAMPLES.parent


def _metric_rows(tmp: Path, reports: Path, metrics: str) -> dict[str, Row]:
    ceilings = tmp / "c.yaml"
    text = (ROOT / "ceilings.yaml").read_text() + "floors:\n" + metrics
    ceilings.write_text(text)
    rows = run_gate(GateConfig((reports,), ceilings)).result().rows
    return {f"{r.report}::{r.name}": r for r in rows if r.kind == "metric"}


def test_a_floor_counts_only_the_cases_with_a_value(tmp_path: Path) -> None:
    rows = _metric_rows(tmp_path, EXAMPLES / "reports", "  accuracy: {min: 0.9}\n")
    row = rows["eval_summary::metric:accuracy"]
    assert row.verdict == "pass"
    assert row.effective_n == 19  # 7 unanswerable cases have accuracy null
    assert row.value == pytest.approx(18 / 19)
    assert row.interval is not None
    assert row.interval[0] < 18 / 19 < row.interval[1]


def test_a_mean_below_the_floor_fails_with_its_numbers(tmp_path: Path) -> None:
    rows = _metric_rows(tmp_path, EXAMPLES / "reports", "  accuracy: 0.95\n")
    row = rows["eval_summary::metric:accuracy"]
    assert row.verdict == "fail"
    assert row.message.splitlines()[:3] == [
        "metric:accuracy: mean 0.9474 is below the floor 0.95",
        "  measured over 19 cases of 26 cases; the rest have no value (not applicable)",
        f"  interval 95% Wilson {row.interval[0]:.3f} to {row.interval[1]:.3f}"  # type: ignore[index]
    ]


def test_the_vacuous_truth_trap_is_flagged(tmp_path: Path) -> None:
    # The example report predates conditional semantics (docs/design.md): a correct refusal
    # carries groundedness 1.0.
    rows = _metric_rows(tmp_path, EXAMPLES / "reports", "  groundedness: {min: 0.1}\n")
    row = rows["eval_summary::metric:groundedness"]
    assert row.verdict == "fail"
    assert "1 case that did not answer substantively carry groundedness = 1.0" in row.message


def test_a_metric_with_no_value_anywhere_is_not_applicable_not_a_pass(tmp_path: Path) -> None:
    rows = _metric_rows(tmp_path, EXAMPLES / "reports",
                        "  claim_citation_alignment: {min: 0.5}\n")
    row = rows["eval_summary::metric:claim_citation_alignment"]
    assert row.verdict == "error"
    assert "not applicable: none of the 26 cases has a value" in row.message


def test_min_n_asks_for_enough_measured_cases(tmp_path: Path) -> None:
    rows = _metric_rows(tmp_path, EXAMPLES / "reports", "  accuracy: {min: 0.5, min_n: 20}\n")
    row = rows["eval_summary::metric:accuracy"]
    assert row.verdict == "error"
    assert "only 19 cases with a value for accuracy; the floor needs at least min_n 20" in (
        row.message)


def test_an_aggregate_floor_uses_the_recorded_mean_and_its_n(tmp_path: Path) -> None:
    rows = _metric_rows(tmp_path, EXAMPLES / "reports", "  accuracy: {min: 0.15, min_n: 100}\n")
    row = rows["real100/baseline.aggregate::metric:accuracy"]
    assert row.verdict == "pass"
    assert row.effective_n == 118
    assert row.value == pytest.approx(0.16101694915254236)
    gone = rows["real100/failure_distribution.aggregate::metric:accuracy"]
    assert gone.verdict == "error"
    assert "records no accuracy" in gone.message


def test_floors_are_exact_where_float_sums_round(tmp_path: Path) -> None:
    # 0.1 + 0.2 + 0.3 + 0.4 is 0.9999999999999999 in floats: exactly 1.0 here.
    cases = [case(f"c{i}", score=v) for i, v in enumerate((0.1, 0.2, 0.3, 0.4))]
    write_summary(tmp_path / "r" / "run.json", cases)
    ceilings = write_ceilings(tmp_path / "c.yaml", {})
    ceilings.write_text(ceilings.read_text() + "metrics:\n  score: {min: 0.25}\n")
    [row] = [r for r in run_gate(GateConfig((tmp_path / "r",), ceilings)).result().rows
             if r.kind == "metric"]
    assert row.verdict == "pass"


def test_a_metric_value_that_is_not_a_number_is_a_clear_error(tmp_path: Path) -> None:
    write_summary(tmp_path / "r" / "run.json", [case("a", score=0.5), case("b", score="high")])
    ceilings = write_ceilings(tmp_path / "c.yaml", {})
    ceilings.write_text(ceilings.read_text() + "metrics:\n  score: 0.25\n")
    gate = run_gate(GateConfig((tmp_path / "r",), ceilings))
    [broken] = gate.reports
    assert ('case #2: metric score: is "high"; a metric is true/false, a number, or null '
            "where it does not apply") in str(broken.error)


def test_metric_items_run_in_pytest_with_their_properties(
    pytester: pytest.Pytester, project: Path
) -> None:
    ceilings = project / "ceilings.yaml"
    ceilings.write_text(ceilings.read_text() + "metrics:\n  accuracy: {min: 0.9}\n")
    shutil.rmtree(project / "reports" / "real100")
    result = pytester.runpytest("--failgate=reports", "-k", "metric", "--junitxml=out.xml")
    result.assert_outcomes(passed=1, deselected=8)
    result.stdout.fnmatch_lines(["  metric:accuracy *0.9474 *min 0.9 *ok"])
    xml = (project / "out.xml").read_text()
    assert '<property name="effective_n" value="19" />' in xml


RAG_GATE = Path(__file__).resolve().parents[2] / "data" / "rag-gate"


@pytest.mark.parametrize(("run", "verdict", "mean"), [("baseline", "pass", 18 / 90),
                                                      ("topk1", "fail", 7 / 90)])
def test_a_floor_on_a_taxonomy_metric_measures_that_metric(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    run: str, verdict: str, mean: float
) -> None:
    """rag-gate's ``answerable_accuracy`` is a metric of its taxonomy, not a field of its
    cases: the floor reads the metric (over the 90 answerable cases), in every engine."""
    from helpers import run_cli

    shutil.copytree(RAG_GATE / run, tmp_path / run)
    (tmp_path / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: rag-gate\nceilings: {retrieval_miss: 100, hallucination: 100, "
        "false_refusal: 100, over_answer: 100, other: 100}\n"
        "metrics:\n  answerable_accuracy: {min: 0.15}\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "check", run, "--json", "gate.json")
    assert code == (0 if verdict == "pass" else 1), out
    document = GateResult.model_validate_json((tmp_path / "gate.json").read_text())
    [row] = [r for r in document.rows if r.kind == "metric"]
    assert (row.verdict, row.effective_n) == (verdict, 90)
    assert row.value == pytest.approx(mean)


def test_a_floor_counts_true_as_one_and_false_as_zero_in_every_engine(tmp_path: Path) -> None:
    from helpers import write_jsonl

    grounded = [True, True, True, False, None, True, False, True]  # 5 of 7 with a value
    cases = [case(f"c{i}", grounded=g) for i, g in enumerate(grounded)]
    reports = write_jsonl(tmp_path / "r" / "run.jsonl", cases)
    ceilings = write_ceilings(tmp_path / "c.yaml", {})
    results: dict[tuple[str, str], tuple[str, int | None, float | None]] = {}
    for engine in ("python", "duckdb"):
        for floor in ("0.7", "0.75"):
            ceilings.write_text(ceilings.read_text().split("metrics:")[0]
                                + f"metrics:\n  grounded: {floor}\n")
            config = GateConfig((reports,), ceilings, engine=engine)
            [row] = [r for r in run_gate(config).result().rows if r.kind == "metric"]
            results[engine, floor] = (row.verdict, row.effective_n, row.value)
    assert results["python", "0.7"][:2] == ("pass", 7)
    assert results["python", "0.75"][:2] == ("fail", 7)
    assert results["python", "0.7"][2] == pytest.approx(5 / 7)
    assert results["duckdb", "0.7"] == results["python", "0.7"]
    assert results["duckdb", "0.75"] == results["python", "0.75"]


# --------------------------------------------------------------------------- the old name


def test_floors_written_under_their_old_name_metrics_are_read_with_a_note(
        tmp_path: Path) -> None:
    ceilings = tmp_path / "c.yaml"
    text = (ROOT / "ceilings.yaml").read_text()
    ceilings.write_text(text + "metrics:\n  accuracy: 0.95\n")
    result = run_gate(GateConfig((EXAMPLES / "reports",), ceilings)).result()
    [row] = [r for r in result.rows if r.report == "eval_summary" and r.kind == "metric"]
    line = text.count("\n") + 1
    assert (row.verdict, row.line) == ("fail", line + 1)
    assert f"{ceilings}:{line}: 'metrics:' is the old name of 'floors:'" in " ".join(
        result.warnings).replace(str(ceilings.resolve()), str(ceilings))
    renamed = tmp_path / "floors.yaml"
    renamed.write_text(text + "floors:\n  accuracy: 0.95\n")
    again = run_gate(GateConfig((EXAMPLES / "reports",), renamed)).result()
    assert [r.verdict for r in again.rows] == [r.verdict for r in result.rows]
    assert not [w for w in again.warnings if "old name" in w]


def test_floors_and_their_old_name_together_are_an_error(tmp_path: Path) -> None:
    from pytest_failgate.core.base.errors import FailgateError

    ceilings = tmp_path / "c.yaml"
    ceilings.write_text((ROOT / "ceilings.yaml").read_text()
                        + "floors:\n  accuracy: 0.5\nmetrics:\n  accuracy: 0.9\n")
    with pytest.raises(FailgateError, match="both 'floors' and 'metrics'"):
        run_gate(GateConfig((EXAMPLES / "reports",), ceilings))


def test_a_bad_floor_under_the_old_name_is_placed_at_its_line(tmp_path: Path) -> None:
    from pytest_failgate.core.base.errors import FailgateError

    ceilings = tmp_path / "c.yaml"
    text = (ROOT / "ceilings.yaml").read_text()
    ceilings.write_text(text + "metrics:\n  accuracy: {min: 0.5, mni_n: 3}\n")
    with pytest.raises(FailgateError) as raised:
        run_gate(GateConfig((EXAMPLES / "reports",), ceilings))
    assert raised.value.line == text.count("\n") + 2
    assert "unknown key 'mni_n'" in str(raised.value)


def test_renaming_metrics_to_floors_loosens_nothing_but_lowering_one_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    from pytest_failgate.cli import main

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                       cwd=tmp_path, check=True, capture_output=True)

    monkeypatch.chdir(tmp_path)
    ceilings = tmp_path / "ceilings.yaml"
    text = (ROOT / "ceilings.yaml").read_text()
    ceilings.write_text(text + "metrics:\n  accuracy: {min: 0.5}\n")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "floors")
    ceilings.write_text(text + "floors:\n  accuracy: {min: 0.5}\n")
    assert main(["guard", "--base", "HEAD"]) == 0
    ceilings.write_text(text + "floors:\n  accuracy: {min: 0.4}\n")
    capsys.readouterr()
    assert main(["guard", "--base", "HEAD"]) == 1
    assert "floors.accuracy.min: 0.5 -> 0.4" in capsys.readouterr().out
