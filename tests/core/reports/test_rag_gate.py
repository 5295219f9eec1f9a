"""The RAG regression gate's run folders, read as they are, and its meta-evaluation.

tests/data/rag-gate is written by scripts/fixtures/rag_gate_runs.py (our own cases and
numbers, in the gate's formats): a baseline (retrieval_miss 65, answerable accuracy
0.20) with the noise band of five repeats, and four candidates that change one setting.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import scipy.stats  # type: ignore[import-untyped, unused-ignore]

from pytest_failgate.cli import main
from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.compare.config import diff_config, flatten, hint_line
from pytest_failgate.core.compare.metrics import compare_metric
from pytest_failgate.core.compare.noise import MetricBand
from pytest_failgate.core.gate.runner import GateConfig, run_gate
from pytest_failgate.core.taxonomy import builtin_taxonomies
from pytest_failgate.core.taxonomy.files import load_taxonomy_file
from pytest_failgate.core.taxonomy.model import CaseMetric

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "rag-gate"
SCRIPT = ROOT / "scripts" / "fixtures" / "rag_gate_runs.py"
RAG_GATE = builtin_taxonomies()["rag-gate"]


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The run folders in a directory without a ceilings file."""
    shutil.copytree(DATA, tmp_path / "runs")
    monkeypatch.chdir(tmp_path / "runs")
    return tmp_path / "runs"


# the fixture's runs were made on different days (their headers' timestamps): accepted here
GAP = ("--accept-baseline-gap", "the fixture's runs, days apart")


def check(capsys: pytest.CaptureFixture[str], candidate: str, *extra: str
          ) -> tuple[int, str, dict[str, Any]]:
    code = main(["check", f"{candidate}/", "--baseline", "baseline/", "--noise",
                 "baseline/noise_band.json", "--json", "result.json", *GAP, *extra])
    out = capsys.readouterr().out
    return code, out, json.loads(Path("result.json").read_text(encoding="utf-8"))


def verdicts(result: dict[str, Any]) -> dict[str, str]:
    """Each row's verdict against the baseline (categories and metrics)."""
    found = {}
    for row in result["reports"][0]["rows"]:
        compared = row["baseline"] or row["metric_baseline"]
        if compared is not None:
            found[row["name"]] = compared["verdict"]
    return found


def test_the_committed_run_folders_are_what_the_script_writes() -> None:
    spec = importlib.util.spec_from_file_location("rag_gate_runs", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    files = module.build()
    assert sorted(files) == sorted(p.relative_to(DATA).as_posix()
                                   for p in DATA.rglob("*") if p.is_file())
    for path, text in files.items():
        assert (DATA / path).read_text(encoding="utf-8") == text, path


def test_top_k_5_to_1_fails_on_retrieval_miss_and_names_the_change(
        runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, result = check(capsys, "topk1")
    assert code == 1
    assert verdicts(result)["retrieval_miss"] == "fail"
    row = next(r for r in result["reports"][0]["rows"] if r["name"] == "retrieval_miss")
    assert (row["count"], row["baseline"]["base_count"]) == (73, 65)
    assert (row["baseline"]["n_new"], row["baseline"]["n_fixed"]) == (10, 2)
    # P[Bin(12, 1/2) >= 10] = 79/4096, the exact McNemar tail
    assert row["baseline"]["p_value"] == pytest.approx(79 / 4096, rel=1e-12)
    assert row["baseline"]["band"] == 2  # 64..66 across the five repeats
    assert "top_k: 5 -> 1" in row["baseline"]["hint"]
    assert result["reports"][0]["config_changes"] == [
        {"key": "top_k", "before": 5, "after": 1, "text": "top_k: 5 -> 1"}]
    assert "what changed vs the baseline: top_k: 5 -> 1" in out
    # the grounded accuracy falls 0.20 -> 0.08: paired, 11 worse and none better
    accuracy = next(r for r in result["reports"][0]["rows"]
                    if r["name"] == "metric:answerable_accuracy")["metric_baseline"]
    assert accuracy["verdict"] == "fail"
    assert (round(accuracy["base_value"], 2), round(accuracy["value"], 2)) == (0.20, 0.08)
    assert (accuracy["n_worse"], accuracy["n_improved"], accuracy["paired"]) == (11, 0, 90)


def test_the_same_configuration_rerun_passes(runs: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, result = check(capsys, "rerun")
    assert code == 0
    assert set(verdicts(result).values()) == {"pass"}
    assert result["reports"][0]["config_changes"] == []
    assert "what changed" not in out


@pytest.mark.parametrize(("candidate", "change", "warned"), [
    # reranker on: fewer misses, three more hallucinations (p = 1/8: not significant)
    ("reranker", "reranker_enabled: false -> true", {"hallucination", "false_refusal"}),
    # overlap 150 -> 155: one more miss, inside the noise band
    ("overlap155", "chunk_overlap: 150 -> 155", set()),
])
def test_the_reranker_and_overlap_tweaks_do_not_fail(
        runs: Path, capsys: pytest.CaptureFixture[str], candidate: str, change: str,
        warned: set[str]) -> None:
    code, _, result = check(capsys, candidate)
    assert code == 0
    found = verdicts(result)
    assert "fail" not in found.values()
    assert {name for name, verdict in found.items() if verdict == "warn"} == warned
    assert change in [c["text"] for c in result["reports"][0]["config_changes"]]


@pytest.mark.slow
@pytest.mark.filterwarnings("default")  # a WARN verdict is a pytest warning, not an error
def test_the_meta_evaluation_through_pytest(pytester: pytest.Pytester) -> None:
    shutil.copytree(DATA, pytester.path / "runs")
    common = ["--failgate-baseline=runs/baseline",
              "--failgate-noise=runs/baseline/noise_band.json", "-p", "no:cacheprovider",
              # the fixture's runs were made days apart: judged anyway, said so
              "--failgate-accept-baseline-gap=the fixture's runs, days apart"]
    failed = pytester.runpytest("--failgate=runs/topk1", *common)
    failed.assert_outcomes(passed=6, failed=4)
    failed.stdout.fnmatch_lines(["*_ attribution::retrieval_miss _*",
                                 "retrieval_miss: regressed against the baseline*",
                                 "*what changed: top_k: 5 -> 1*",
                                 "*what changed vs the baseline: top_k: 5 -> 1*"])
    for candidate in ("rerun", "reranker", "overlap155"):
        result = pytester.runpytest(f"--failgate=runs/{candidate}", *common)
        result.assert_outcomes(passed=10)


def test_unstable_cases_are_reported_and_can_be_left_out(
        runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, kept = check(capsys, "topk1")
    assert "2 unstable cases across 5 runs (rq070, rq081), kept" in out
    _, out, left = check(capsys, "topk1", "--exclude-unstable")
    assert "left out of the paired tests" in out

    def paired(result: dict[str, Any]) -> dict[str, Any]:
        rows = result["reports"][0]["rows"]
        found: dict[str, Any] = next(
            r for r in rows if r["name"] == "metric:answerable_accuracy")["metric_baseline"]
        return found

    # rq070 is one of the eleven cases that lost grounded accuracy
    assert (paired(kept)["paired"], paired(kept)["n_worse"]) == (90, 11)
    assert (paired(left)["paired"], paired(left)["n_worse"]) == (88, 10)


def test_noise_writes_the_gate_format_with_the_same_bands(
        runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repeats = ["baseline", *(f"repeats/r{i}" for i in range(2, 6))]
    assert main(["noise", *repeats, "--out", "measured.json"]) == 0
    measured = json.loads(Path("measured.json").read_text(encoding="utf-8"))
    recorded = json.loads((runs / "baseline" / "noise_band.json").read_text(encoding="utf-8"))
    assert list(measured) == ["n_runs", "config", "run_ids", "metric_band", "case_stability",
                              "unstable_cases", "measured_from"]
    # relative to the band, for `noise --check`, each with when it ran (its header's time)
    assert [entry["run"] for entry in measured["measured_from"]] == repeats
    assert measured["n_runs"] == 5
    assert measured["run_ids"] == recorded["run_ids"]
    assert measured["case_stability"] == recorded["case_stability"]
    assert measured["unstable_cases"] == recorded["unstable_cases"] == ["rq070", "rq081"]
    assert recorded["config"].items() <= measured["config"].items()
    for key, band in recorded["metric_band"].items():
        # a count band also says how many cases moved (the gate reads entries by key and
        # ignores the two it does not know)
        extra = {"moved", "discordant"} if key.startswith("mode:") else set()
        assert set(measured["metric_band"][key]) == {"mean", "std", "min", "max", "n", *extra}
        for field in ("mean", "std", "min", "max", "n"):
            # the script rounds rates to 4 places before measuring; failgate to 6
            assert measured["metric_band"][key][field] == pytest.approx(band[field], abs=2e-4)
    # rq070 and rq081 each missed retrieval in 2 of the 5 runs: 2 * 3 pairs of runs apart
    assert measured["metric_band"]["mode:retrieval_miss"] == {
        "mean": 65.0, "std": 1.0, "min": 64, "max": 66, "n": 5, "moved": 2, "discordant": 12}
    assert measured["metric_band"]["mode:hallucination"]["discordant"] == 0
    # the file failgate writes is read back by the gate
    code, _, result = check(capsys, "topk1", "--noise", "measured.json")
    assert code == 1
    assert verdicts(result)["retrieval_miss"] == "fail"


def test_a_metric_over_cases_where_it_never_applies_is_not_applicable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # docs/design.md: unanswerable cases have no accuracy; a run of only those has none at all
    monkeypatch.chdir(tmp_path)
    for run in ("base", "cand"):
        rows = [{"id": f"u{i}", "slice": "no_answer", "answerable": False, "correct": i > 0,
                 "value_present": None, "retrieval_strict_ok": None, "over_answer": i == 0,
                 "primary_failure": "correct" if i else "over_answer"} for i in range(4)]
        (tmp_path / run).mkdir()
        (tmp_path / run / "attribution.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["check", "cand", "--baseline", "base", "--json", "r.json"]) == 0
    result = json.loads(Path("r.json").read_text(encoding="utf-8"))
    names = [row["name"] for row in result["reports"][0]["rows"]]
    assert "metric:answerable_accuracy" not in names
    assert "metric:no_answer_accuracy" in names
    assert any("answerable_accuracy is not applicable" in w for w in result["warnings"])


def test_accuracy_is_over_answerable_cases_only() -> None:
    gate = run_gate(GateConfig((DATA / "baseline",), DATA / "absent.yaml",
                               baseline=(DATA / "baseline",)))
    report = gate.reports[0].report
    assert report is not None
    accuracy = report.case_metrics["answerable_accuracy"]
    assert len(accuracy) == 90  # the ten no-answer cases are left out, not counted as 1.0
    assert sum(accuracy.values()) == 18
    assert report.config is not None
    assert report.config["top_k"] == 5
    assert report.config["generation_model"] == "gpt-4o-mini-2024-07-18"


def test_the_run_log_header_must_be_a_header(tmp_path: Path) -> None:
    shutil.copytree(DATA / "baseline", tmp_path / "run")
    log = tmp_path / "run" / "run.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines()
    log.write_text("\n".join([*lines[1:], lines[0]]) + "\n", encoding="utf-8")
    gate = run_gate(GateConfig((tmp_path / "run",), tmp_path / "absent.yaml",
                               baseline=(DATA / "baseline",)))
    error = gate.reports[0].error
    assert error is not None
    assert "run.jsonl:1:1" in str(error)
    assert "header" in str(error)


def test_a_broken_noise_band_is_one_clear_error(
        runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    noise = json.loads((runs / "baseline" / "noise_band.json").read_text(encoding="utf-8"))
    noise["metric_band"]["mode:retrieval_miss"]["min"] = 64.5
    Path("bad.json").write_text(json.dumps(noise), encoding="utf-8")
    code = main(["check", "topk1", "--baseline", "baseline", "--noise", "bad.json"])
    err = capsys.readouterr().err
    assert code == 2
    assert "bad.json" in err
    assert "mode:retrieval_miss" in err
    assert "must be an int" in err


# ---------------------------------------------------------------- the pieces


def metric(better: str = "higher") -> CaseMetric:
    return CaseMetric("score", lambda case: case.get("score"), ("score",),
                      "lower" if better == "lower" else "higher")


def test_a_continuous_metric_is_compared_with_the_exact_sign_test() -> None:
    base = {f"c{i}": 0.5 + i / 100 for i in range(30)}
    candidate = {case: value - (0.1 if i < 12 else -0.02 if i < 14 else 0.0)
                 for i, (case, value) in enumerate(base.items())}
    change = compare_metric(metric(), base, candidate, None, Fraction(1, 20))
    assert (len(change.worse), len(change.improved), change.n_pairs) == (12, 2, 30)
    expected = scipy.stats.binomtest(12, 14, 0.5, alternative="greater").pvalue
    assert change.p_value == pytest.approx(expected, rel=1e-12)
    assert change.verdict == "fail"  # p ~ 0.0065 and a fall of 1.16 > one case
    lower = compare_metric(metric("lower"), base, candidate, None, Fraction(1, 20))
    assert (len(lower.worse), len(lower.improved), lower.verdict) == (2, 12, "pass")


def test_a_metric_band_is_in_cases_and_ties_carry_no_information() -> None:
    base = {f"c{i}": 1.0 for i in range(40)}
    candidate = {**base, **{f"c{i}": 0.0 for i in range(6)}}
    wide = MetricBand(std=0.05, min=Fraction(3, 4), max=Fraction(9, 10), n=5)
    change = compare_metric(metric(), base, candidate, wide, Fraction(1, 20))
    # 6 lost cases, p = 1/64 significant, but the band is 0.15 * 40 = 6 cases: WARN
    assert (change.band, change.verdict) == (Fraction(6), "warn")
    same = compare_metric(metric(), base, dict(base), None, Fraction(1, 20))
    assert same.verdict == "pass"
    assert (same.p_value, same.decline) == (1.0, Fraction(0))
    none = compare_metric(metric(), {}, {"c1": 1.0}, None, Fraction(1, 20))
    assert none.verdict is None
    assert none.n_pairs == 0


def test_config_diffs_flatten_nested_settings() -> None:
    base = {"retriever": {"top_k": 5, "reranker": None}, "model": "a", "tags": ["x"]}
    candidate = {"retriever": {"top_k": 1}, "model": "a", "tags": ["x", "y"], "seed": 3}
    assert flatten(base) == {"retriever.top_k": 5, "retriever.reranker": None,
                             "model": "a", "tags": ["x"]}
    assert [c.text for c in diff_config(base, candidate)] == [
        "retriever.reranker: null -> (absent)", "retriever.top_k: 5 -> 1",
        "seed: (absent) -> 3", 'tags: ["x"] -> ["x", "y"]']
    assert diff_config(base, None) == []
    changes = diff_config(base, candidate)
    assert hint_line("retrieval_miss", changes, ["top_k"]) == (
        "what changed: retriever.top_k: 5 -> 1 (a setting that usually moves retrieval_miss: "
        "try reverting it first, then re-run the gate)")
    assert hint_line("retrieval_miss", changes, ["chunk_size"]) is None


def test_the_hint_catalogue_and_metrics_live_in_the_taxonomy_file(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        "name: t\nfailed: not ok\ncategories:\n"
        "  - {name: miss, when: 'not found', settings: [top_k, chunk_size]}\n"
        "  - {name: other}\n"
        "metrics:\n  - {name: ok_rate, value: 'ok if found is not None else null'}\n",
        encoding="utf-8")
    taxonomy = load_taxonomy_file(path)
    rule = taxonomy.category("miss")
    assert rule is not None
    assert rule.settings == ("top_k", "chunk_size")
    assert [m.name for m in taxonomy.metrics] == ["ok_rate"]
    assert taxonomy.metrics[0].value({"ok": True, "found": None}) is None
    assert RAG_GATE.category("retrieval_miss") is not None
    path.write_text(path.read_text(encoding="utf-8").replace("better", "x").replace(
        "value: 'ok", "better: sideways, value: 'ok"), encoding="utf-8")
    with pytest.raises(FailgateError, match=r"t\.yaml:7.*better is 'higher' or 'lower'"):
        load_taxonomy_file(path)


# ---------------------------------------------------------------- what changed, elsewhere


def test_an_eval_summary_config_is_diffed_next_to_the_verdicts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from helpers import case, category_case

    monkeypatch.chdir(tmp_path)
    base_cases = [case(f"ok-{i}") for i in range(30)]
    worse = [category_case("retrieval_miss", f"ok-{i}") for i in range(8)] + base_cases[8:]
    for run, cases, top_k in (("base", base_cases, 5), ("cand", worse, 1)):
        (tmp_path / run).mkdir()
        (tmp_path / run / "eval_summary.json").write_text(json.dumps(
            {"config": {"retriever": {"top_k": top_k, "mode": "dense"}}, "case_results": cases}),
            encoding="utf-8")
    assert main(["check", "cand", "--baseline", "base", "--md", "pr.md", "--html", "r.html",
                 "--json", "r.json"]) == 1
    out = capsys.readouterr().out
    assert "what changed vs the baseline: retriever.top_k: 5 -> 1" in out
    # the rag taxonomy's catalogue: top_k usually moves retrieval_miss
    assert "what changed: retriever.top_k: 5 -> 1 (a setting that usually moves " \
           "retrieval_miss" in out
    assert "`retriever.top_k: 5 -> 1`" in Path("pr.md").read_text(encoding="utf-8")
    assert "retriever.top_k: 5 -&gt; 1" in Path("r.html").read_text(encoding="utf-8")
    result = json.loads(Path("r.json").read_text(encoding="utf-8"))
    assert result["reports"][0]["config_changes"][0]["key"] == "retriever.top_k"


def test_inspect_and_promptfoo_logs_carry_their_configuration() -> None:
    from pytest_failgate.core.reports.builtin import builtin_readers

    readers = {reader.name: reader for reader in builtin_readers()}
    inspect_log = next((ROOT / "tests" / "data" / "inspect_ai" / "generated" / "json").glob(
        "*.json"))
    found = readers["inspect_ai"].read(inspect_log)
    assert found is not None
    assert found.config is not None
    assert found.config["model"] == "mockllm/model"
    assert found.config["config"]["epochs"] == 2
    assert "eval_id" not in found.config  # ids and times are not configuration
    promptfoo = ROOT / "tests" / "data" / "promptfoo" / "generated" / "repeat" / "results.json"
    output = readers["promptfoo"].read(promptfoo)
    assert output is not None
    assert output.config is not None
    assert "providers" in output.config
    assert "tests" not in output.config
