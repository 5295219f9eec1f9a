"""Inconclusive runs, on the tools' real output: not a pass, not a regression.

promptfoo's provider outage (every row ``failureReason`` 2), Inspect's crashed run (the
log's ``status: error``), DeepEval's judge errors (``metric_error``): each format's own
signals that cases failed outside the system under test (see ``tests/data``'s READMEs for
how each file was made with the real tool).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_failgate.cli import main
from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.base.result import GateResult
from pytest_failgate.core.ceilings import writeback
from pytest_failgate.core.gate.runner import GateConfig, run_gate

DATA = Path(__file__).resolve().parents[2] / "data"
PROMPTFOO = DATA / "promptfoo"
CRASHED = DATA / "inspect_ai" / "crashed"
HEALTHY_LOG = "2026-12-01T11-06-25-00-00_units_JQxieW3EvZYoCKBgpX6yYX.eval"  # status success
CRASHED_LOG = "2026-12-01T11-06-52-00-00_units_gqeJvGdGFjzZDvt2z5AmKx.eval"  # status error


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def result_of(path: Path) -> GateResult:
    return GateResult.model_validate_json(path.read_text(encoding="utf-8"))


@pytest.fixture
def evals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose promptfoo run (results.jsonl) is healthy, its ceilings from it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    shutil.copy(PROMPTFOO / "workflows" / "jsonl" / "results.jsonl", tmp_path / "evals")
    assert main(["init", "evals"]) == 0
    return tmp_path / "evals"


def test_a_provider_outage_is_inconclusive_not_a_regression(
        evals: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    shutil.copy(PROMPTFOO / "workflows" / "outage_jsonl" / "results.jsonl", evals)
    before = Path("ceilings.yaml").read_text(encoding="utf-8")
    code, out = cli(capsys, "check", "evals", "--json", "gate.json", "--md", "gate.md")
    assert code == 3  # not a pass, not a regression
    result = result_of(Path("gate.json"))
    assert result.verdict == "inconclusive"
    [report] = result.reports
    assert report.inconclusive == ("8 of 8 cases failed outside the system under test "
                                   "(provider_error 8): provider_error 8 > its ceiling 0")
    head, *rest = report.rows
    assert (head.name, head.verdict, head.count) == ("inconclusive", "inconclusive", 8)
    assert "not a pass, not a regression" in head.message
    assert {row.verdict for row in rest} == {"skip"}  # no category judged: no regression
    assert not [row for row in result.rows if row.verdict == "fail"]
    assert "FAILED ceilings.yaml::results::inconclusive" in out
    assert "INCONCLUSIVE: 8 of 8 cases" in out
    assert "ratchet: not assessed: the run is inconclusive" in out
    assert Path("gate.md").read_text().startswith(
        "### failgate: ❔ 1 report cannot be judged (not a pass, not a regression)\n")
    # the ratchet records nothing from it, even where every count "fell"
    code, out = cli(capsys, "ratchet", "evals")
    assert code == 3
    assert "not written: the run is inconclusive" in out
    assert Path("ceilings.yaml").read_text(encoding="utf-8") == before


def test_mcp_gives_the_same_verdict(evals: Path) -> None:
    from pytest_failgate import mcpserver

    shutil.copy(PROMPTFOO / "workflows" / "outage_jsonl" / "results.jsonl", evals)
    document = mcpserver.check(paths=[str(evals)], ceilings="ceilings.yaml")
    assert document["verdict"] == "inconclusive"
    assert document["reports"][0]["inconclusive"].startswith("8 of 8 cases failed outside")


def test_init_never_records_an_outage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(PROMPTFOO / "workflows" / "outage", tmp_path / "evals")
    code, out = cli(capsys, "init", "evals")
    assert code == 3
    assert ("init: ceilings.yaml not written: the run is inconclusive (results: 8 of 8 cases "
            "failed outside the system under test (provider_error 8): more than the 25% of its "
            "cases the ceilings file allows (inconclusive:)); run the evaluation again") in out
    assert not (tmp_path / "ceilings.yaml").exists()


@pytest.mark.slow
def test_in_pytest_one_inconclusive_item_fails_and_the_categories_are_not_judged(
        pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "evals").mkdir()
    shutil.copy(PROMPTFOO / "workflows" / "jsonl" / "results.jsonl", pytester.path / "evals")
    assert pytester.runpytest("--failgate=evals", "--failgate-init").ret == 0
    shutil.copy(PROMPTFOO / "workflows" / "outage_jsonl" / "results.jsonl",
                pytester.path / "evals")
    result = pytester.runpytest("--failgate=evals", "-rfs")
    result.assert_outcomes(failed=1, skipped=14)  # 13 categories and total: not judged
    result.stdout.fnmatch_lines([
        "*results: inconclusive, outside the system under test: not a pass, not a regression",
        "*cause    8 of 8 cases failed outside the system under test (provider_error 8)*",
        "FAILED ceilings.yaml::results::inconclusive*",
    ])
    result.stdout.fnmatch_lines(["SKIPPED*text_match: not judged: results is inconclusive*"])


@pytest.mark.slow
def test_a_gate_item_not_judged_is_reported_at_its_line_in_the_ceilings_file(
        pytester: pytest.Pytester) -> None:
    """The skip summary points at the ceiling a skipped item stands for, as it does for a
    test skipped by a mark, never into failgate's own source."""
    pytester.makeini("[pytest]\n")
    (pytester.path / "evals").mkdir()
    shutil.copy(PROMPTFOO / "workflows" / "jsonl" / "results.jsonl", pytester.path / "evals")
    init = pytester.runpytest("--failgate=evals", "--failgate-init", "-rs")
    init.stdout.fnmatch_lines(["SKIPPED [[]9[]] ceilings.yaml: --failgate-init records 0 as *"])
    shutil.copy(PROMPTFOO / "workflows" / "outage_jsonl" / "results.jsonl",
                pytester.path / "evals")
    lines = (pytester.path / "ceilings.yaml").read_text(encoding="utf-8").splitlines()
    line = lines.index("  text_match: 4") + 1
    result = pytester.runpytest("--failgate=evals", "-rs")
    result.stdout.fnmatch_lines(
        [f"SKIPPED [[]1[]] ceilings.yaml:{line}: text_match: not judged: results is inconclusive*"])
    for output in (init, result):
        assert "items.py" not in output.stdout.str()


def test_a_crashed_inspect_run_is_inconclusive(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    shutil.copy(CRASHED / HEALTHY_LOG, tmp_path / "logs")
    assert cli(capsys, "init", "logs")[0] == 0
    (tmp_path / "logs" / HEALTHY_LOG).unlink()
    shutil.copy(CRASHED / CRASHED_LOG, tmp_path / "logs")
    code, _ = cli(capsys, "check", "logs", "--json", "gate.json")
    assert code == 3
    [report] = result_of(Path("gate.json")).reports
    assert report.inconclusive is not None
    assert report.inconclusive.startswith(
        "the run did not finish: the log's status is error: it stopped on an error: "
        "ConnectionError('unit table service unreachable: connection refused')")
    assert report.inconclusive.endswith("4 of 4 cases failed outside the system under test "
                                        "(error 4)")
    assert report.rows[0].verdict == "inconclusive"


def test_judge_errors_beyond_the_files_share_are_inconclusive(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """DeepEval's own test run: one of seven cases only has metrics that errored (the judge
    failed). Within a quarter it is judged as a category; the file can ask for less."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(DATA / "deepeval" / "test_run", tmp_path / "run")
    assert cli(capsys, "init", "run")[0] == 0
    assert cli(capsys, "check", "run")[0] == 0
    text = Path("ceilings.yaml").read_text(encoding="utf-8")
    Path("ceilings.yaml").write_text(text.replace("version: 1\n",
                                                  "version: 1\ninconclusive: 0.1\n"))
    code, _ = cli(capsys, "check", "run", "--json", "gate.json")
    assert code == 3
    reports = result_of(Path("gate.json")).reports  # .deepeval/ and its copy in results/
    assert [report.inconclusive for report in reports] == [
        "1 of 7 cases failed outside the system under test (metric_error 1): more than the 10% "
        "of its cases the ceilings file allows (inconclusive:)"] * 2


def test_the_ratchet_keeps_the_tolerance_for_failures_outside_the_system(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """provider_error is a tolerance, not a quality: a run with fewer provider errors lowers
    the other ceilings, never it (a lucky run without one would make the next inconclusive)."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(PROMPTFOO / "generated" / "run2", tmp_path / "evals")
    assert main(["init", "evals"]) == 0
    text = Path("ceilings.yaml").read_text(encoding="utf-8")
    assert "  provider_error: 1\n" in text
    Path("ceilings.yaml").write_text(text.replace("  provider_error: 1\n",
                                                  "  provider_error: 3\n"))
    shutil.rmtree(tmp_path / "evals")
    shutil.copytree(PROMPTFOO / "generated" / "run1", tmp_path / "evals")
    result = run_gate(GateConfig((tmp_path / "evals",), tmp_path / "ceilings.yaml",
                                 "ratchet")).result()
    done = writeback.ratchet(tmp_path / "ceilings.yaml", result,
                             writeback.outcomes_from_verdicts(result))
    assert done.written
    assert any("text_match 6 -> 4" in line for line in done.lines), done.lines
    after = Path("ceilings.yaml").read_text(encoding="utf-8")
    assert "  provider_error: 3\n" in after
    assert "  text_match: 4\n" in after


def test_outside_in_a_taxonomy_is_true_or_false(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(
        "name: t\nfailed: not ok\ncategories:\n"
        "  - {name: provider, when: 'error is not None', outside: yes please}\n"
        "  - {name: other}\n")
    (tmp_path / "c.yaml").write_text("version: 1\ntaxonomy: t.yaml\n")
    (tmp_path / "r.jsonl").write_text(json.dumps({"id": "a", "ok": False}) + "\n")
    with pytest.raises(FailgateError, match="outside is true or false") as error:
        run_gate(GateConfig((tmp_path / "r.jsonl",), tmp_path / "c.yaml"))
    assert error.value.line == 4


@pytest.mark.parametrize("share", ["1.5", "-0.1", '"a lot"'])
def test_the_inconclusive_share_is_a_fraction_of_the_cases(tmp_path: Path, share: str) -> None:
    (tmp_path / "c.yaml").write_text(f"version: 1\ntaxonomy: rag\ninconclusive: {share}\n")
    (tmp_path / "r.jsonl").write_text(json.dumps({"id": "a", "accuracy": 1.0}) + "\n")
    with pytest.raises(FailgateError, match="inconclusive is the share") as error:
        run_gate(GateConfig((tmp_path / "r.jsonl",), tmp_path / "c.yaml"))
    assert error.value.line == 3
