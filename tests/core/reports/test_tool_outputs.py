"""Where promptfoo, Inspect AI and DeepEval write, `failgate init` then `failgate check` just
work: no flag, no configuration, the counts each tool records; two promptfoo runs pair."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_failgate.cli import main
from pytest_failgate.core.base.result import GateResult

DATA = Path(__file__).resolve().parents[2] / "data"


Counts = dict[str, tuple[int, int | None]]  # (cases, failed) per report name


def promptfoo_truth(folder: Path) -> Counts:
    """(cases, failed) per report, from each file's own `results.stats`."""
    truth: Counts = {}
    for path in sorted(folder.glob("*.json")):
        stats = json.loads(path.read_text(encoding="utf-8"))["results"]["stats"]
        failed = stats["failures"] + stats["errors"]
        truth[path.stem] = (stats["successes"] + failed, failed)
    return truth


def deepeval_truth(folder: Path) -> Counts:
    """(cases, failed) per folder holding a run, from `testPassed`/`testFailed` (the
    in-progress file has none: it holds the same run as the others): one report each, named
    `test_run`, however many files DeepEval wrote the run to."""
    truth: Counts = {}
    paths = sorted([*folder.glob(".deepeval/.*.json"), *folder.glob("results/*.json")])
    for path in paths:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        run = data.get("testRunData", data)
        if "testFailed" in run:
            name = f"{path.parent.relative_to(folder).as_posix()}/test_run"
            truth[name] = (run["testPassed"] + run["testFailed"], run["testFailed"])
    return truth


# Each folder as the tool left it, and (cases, failed) per report name.
FOLDERS: dict[str, Counts] = {
    "promptfoo/shared": promptfoo_truth(DATA / "promptfoo" / "shared"),
    "promptfoo/generated/run1": {"results": (14, 9)},
    "promptfoo/generated/run2": {"results": (14, 11)},
    "promptfoo/generated/repeat": {"results": (28, 18)},
    "inspect_ai/shared": {  # the fixtures README's counts
        "arc_easy@ollama/qwen2.5:0.5b": (3, 2),
        "arc_easy@anthropic/claude-sonnet-4-0": (5, 0),
        "cvebench@anthropic/claude-opus-4-6": (1, 1),
        "cyse2_vulnerability_exploit@mistral/mistral-large-latest": (1, 1),
        "gdm_intercode_ctf@mistral/mistral-small-latest": (1, 1),
        "pubmedqa@openai/azure/gpt-4o-mini": (2, 0),
        # header only: the size the log records, and no failed count (no sample to count)
        "simpleqa_verified@anthropic/claude-opus-4-6": (1000, None),
    },
    "inspect_ai/generated/json": {"capitals@mockllm/model": (12, 6),
                                  "keywords@mockllm/model": (8, 6),
                                  "plots@mockllm/model": (6, 4)},
    "inspect_ai/generated/eval": {"capitals@mockllm/model": (12, 6),
                                  "keywords@mockllm/model": (8, 6),
                                  "plots@mockllm/model": (6, 4)},
    "deepeval/test_run": deepeval_truth(DATA / "deepeval" / "test_run"),
    "deepeval/evaluate": deepeval_truth(DATA / "deepeval" / "evaluate"),
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


# reports whose cases failed outside the system under test beyond the default quarter:
# inconclusive, so init leaves them out and check says so (cvebench's one sample errored)
INCONCLUSIVE = {"inspect_ai/shared": ["cvebench@anthropic/claude-opus-4-6"]}


@pytest.mark.slow
@pytest.mark.parametrize("folder", FOLDERS)
def test_init_then_check_where_the_tool_writes_gives_its_own_counts(
        folder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(DATA / folder, tmp_path / "out")
    monkeypatch.chdir(tmp_path / "out")
    code, out = run(capsys, "init", ".")
    unjudged = INCONCLUSIVE.get(folder, [])
    assert code == (3 if unjudged else 0), out
    assert ("init: not recorded" in out) == bool(unjudged)
    code, out = run(capsys, "check", ".", "--json", "../result.json")
    assert code == (3 if unjudged else 0), out
    result = GateResult.model_validate_json((tmp_path / "result.json").read_text())
    counts = {r.name: (r.n_cases, r.failed) for r in result.reports if r.error is None}
    assert counts == FOLDERS[folder]
    assert [r.error for r in result.reports if r.error is not None] == []
    assert [r.name for r in result.reports if r.inconclusive] == unjudged


# The suite turns warnings into errors; the run under test must see them as users do.
@pytest.mark.filterwarnings("default")
def test_two_promptfoo_runs_pair_case_by_case_against_a_baseline(
        pytester: pytest.Pytester) -> None:
    for name in ("run1", "run2"):
        shutil.copytree(DATA / "promptfoo" / "generated" / name, pytester.path / name)
    pytester.makeini("[pytest]\n")
    assert main(["init", str(pytester.path / "run1"),
                 "--ceilings", str(pytester.path / "ceilings.yaml")]) == 0
    result = pytester.runpytest("--failgate=run2", "--failgate-baseline=run1",
                                "-p", "no:cacheprovider")
    # run2's prompt edit broke the `equals` test for both providers: two cases moved into
    # text_match, which is over run1's ceiling of 4 (and says which cases, by stable id)
    result.stdout.fnmatch_lines([
        "*text_match: 6 cases, 2 over the ceiling of 4*",
        "*text_match *6 *4 *-2 *FAIL *+2 / -0*",
    ])
    assert "only in" not in result.stdout.str()
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 2  # text_match and total


def test_a_folder_of_inspect_logs_without_samples_is_nothing_to_gate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(DATA / "inspect_ai" / "generated" / "header_only", tmp_path / "logs")
    monkeypatch.chdir(tmp_path / "logs")
    code, out = run(capsys, "init", ".")
    assert code == 2
    assert "nothing to gate: no report counts a category" in out
    assert "the log holds no samples (written with log_samples=False, or trimmed; it records " \
           "12 samples)" in out


def test_a_log_without_samples_is_gated_by_the_metric_floors_it_records(
        pytester: pytest.Pytester) -> None:
    shutil.copytree(DATA / "inspect_ai" / "generated" / "header_only", pytester.path / "logs")
    pytester.makeini("[pytest]\n")
    pytester.makefile(".yaml", ceilings="version: 1\ntaxonomy: inspect_ai\nceilings: {}\n"
                      "metrics:\n  includes.accuracy: {min: 0.5}\n  accuracy: {min: 0.7}\n")
    result = pytester.runpytest("--failgate=logs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)  # the log records accuracy 0.6 over 5
    result.stdout.fnmatch_lines([
        "*metric:accuracy: mean 0.6 is below the floor 0.7",
        "*measured over 5 cases",
        "*capitals@mockllm/model  12 cases, ? failed (recorded counts, not recomputed)",
        "*warning: no category counted: the log holds no samples*"])


@pytest.mark.slow
@pytest.mark.parametrize(("folder", "taxonomy"), [
    ("promptfoo/generated/run1", "\ntaxonomy: promptfoo\n"),
    ("inspect_ai/generated/eval", "\ntaxonomy: inspect_ai\n"),
    # DeepEval's run has metrics of its own: init writes them as categories, inline over the
    # built-in taxonomy (as `failgate init` does)
    ("deepeval/evaluate", "\n  extends: deepeval\n")])
def test_failgate_init_under_pytest_writes_the_formats_taxonomy_with_no_flag(
        pytester: pytest.Pytester, folder: str, taxonomy: str) -> None:
    shutil.copytree(DATA / folder, pytester.path / "out")
    pytester.makeini("[pytest]\n")
    pytester.runpytest("--failgate=out", "--failgate-init", "-p", "no:cacheprovider")
    written = (pytester.path / "ceilings.yaml").read_text(encoding="utf-8")
    assert taxonomy in written
    result = pytester.runpytest("--failgate=out", "ceilings.yaml", "-p", "no:cacheprovider")
    assert result.ret == 0
    assert result.parseoutcomes()["passed"] > 0
