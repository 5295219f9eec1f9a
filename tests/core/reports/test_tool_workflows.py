"""The tools' own workflows, on fresh outputs of the real tools with no configuration:
promptfoo `-o results.jsonl`, `--repeat` and `-o results.json -o results.csv`; DeepEval's
`.deepeval/` folder as one report, and never its stale files; Inspect's log folder that
keeps every run. Each folder was written by a script in `scripts/fixtures/`."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import load_one

from pytest_failgate.cli import main
from pytest_failgate.core.base.result import GateResult
from pytest_failgate.core.compare.pairing import compare_report
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.taxonomy import builtin_taxonomies

DATA = Path(__file__).resolve().parents[2] / "data"
PROMPTFOO = DATA / "promptfoo" / "workflows"  # scripts/fixtures/promptfoo_workflows.sh
DEEPEVAL = DATA / "deepeval"  # scripts/fixtures/deepeval_folder.py: folder/, in_session/
INSPECT = DATA / "inspect_ai"  # scripts/fixtures/inspect_log_folder.py: log_folder/, crashed/
TAXONOMIES = builtin_taxonomies()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def result_of(path: Path) -> GateResult:
    return GateResult.model_validate_json(path.read_text(encoding="utf-8"))


def rows(path: Path) -> list[dict[str, Any]]:
    """promptfoo's rows, from its JSON Lines or JSON output."""
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    found: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["results"][
        "results"]
    return found


def init_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str], folder: Path
                   ) -> tuple[str, GateResult]:
    """`failgate init` then `failgate check` on a copy of ``folder``, as a new user would."""
    shutil.copytree(folder, tmp_path / "out")
    os.chdir(tmp_path / "out")
    code, out = run(capsys, "init", ".")
    assert code == 0, out
    code, checked = run(capsys, "check", ".", "--json", str(tmp_path / "result.json"))
    assert code == 0, checked
    return out, result_of(tmp_path / "result.json")


# ---------------------------------------------------------------------------- promptfoo


def test_promptfoo_jsonl_output_is_recognised_and_its_assertion_failures_counted_as_such(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = PROMPTFOO / "jsonl" / "results.jsonl"
    truth = rows(source)
    failed = [row for row in truth if not row["success"]]
    assert len(truth) == 16
    assert len(failed) == 10
    assert {row["failureReason"] for row in failed} == {1}  # promptfoo: assertion failures
    _out, result = init_and_check(tmp_path, capsys, source.parent)
    assert "taxonomy: promptfoo" in (tmp_path / "out" / "ceilings.yaml").read_text()
    [report] = result.reports
    assert (report.name, report.n_cases, report.failed) == ("results", 16, 10)
    counts = {row.name: row.count for row in report.rows if row.kind == "category"}
    assert counts["provider_error"] == 0
    # the families of the first failed assertion of each row
    assert {k: v for k, v in counts.items() if v} == {
        "text_match": 4, "format": 2, "code": 2, "similarity": 2}


def test_promptfoo_case_ids_name_the_test_and_pair_across_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    promptfoo = TAXONOMIES["promptfoo"]
    base = load_one(PROMPTFOO / "jsonl" / "results.jsonl", promptfoo)
    after = load_one(PROMPTFOO / "jsonl_v2" / "results.jsonl", promptfoo)
    uuids = {row["id"] for run in ("jsonl", "jsonl_v2")
             for row in rows(PROMPTFOO / run / "results.jsonl")}
    assert len(uuids) == 32  # promptfoo gives every row of every run a fresh id
    assert not set(base.all_case_ids()) & uuids
    comparison = compare_report(base, after, promptfoo.category_names)
    assert comparison.n_both == 16
    assert comparison.only_base == comparison.only_candidate == []
    # the edit of the second prompt made its "order number echoed" row pass
    assert comparison.change("text_match").fixed == ["echo/1/order number echoed"]
    # the description is the case's label: a failing item lists the tests by it
    shutil.copytree(PROMPTFOO / "jsonl", tmp_path / "base")
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "init", "base")[0] == 0
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text(ceilings.read_text().replace("  format: 2", "  format: 0"))
    code, out = run(capsys, "check", "base")
    assert code == 1
    assert "structured handoff" in out
    assert "echo/0/structured handoff" in out
    # a test without a description keeps an id from its number and vars
    assert "echo/0/t6#" in " ".join(base.all_case_ids())


def test_promptfoo_json_and_jsonl_outputs_of_one_config_give_the_same_cases() -> None:
    promptfoo = TAXONOMIES["promptfoo"]
    lines = load_one(PROMPTFOO / "jsonl" / "results.jsonl", promptfoo)
    whole = load_one(PROMPTFOO / "json_csv" / "results.json", promptfoo)
    assert lines.all_case_ids() == whole.all_case_ids()
    assert lines.counts == whole.counts


def test_a_promptfoo_repeat_run_keeps_every_repeat_and_its_first_pairs_with_a_single_run(
        ) -> None:
    promptfoo = TAXONOMIES["promptfoo"]
    repeat = load_one(PROMPTFOO / "repeat" / "results.jsonl", promptfoo)
    single = load_one(PROMPTFOO / "jsonl" / "results.jsonl", promptfoo)
    truth = rows(PROMPTFOO / "repeat" / "results.jsonl")
    assert repeat.n_cases == len(truth) == 48
    assert repeat.failed == sum(1 for row in truth if not row["success"]) == 30
    ids = repeat.all_case_ids()
    assert len(set(ids)) == 48
    assert sorted(ids) == sorted(i + suffix for i in single.all_case_ids()
                                 for suffix in ("", "/r2", "/r3"))
    assert {name: 3 * count for name, count in single.counts.items()} == repeat.counts


def test_promptfoo_json_and_csv_outputs_in_one_folder_do_not_clash(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out, result = init_and_check(tmp_path, capsys, PROMPTFOO / "json_csv")
    assert [(r.name, r.n_cases, r.failed) for r in result.reports] == [("results", 16, 10)]
    assert "results.csv (no reader for .csv files)" in out


def test_a_promptfoo_run_whose_provider_is_down_counts_every_row_as_a_provider_error() -> None:
    """The fixture `noise` uses for an inconclusive run: every row is an error."""
    promptfoo = TAXONOMIES["promptfoo"]
    for path in (PROMPTFOO / "outage" / "results.json",
                 PROMPTFOO / "outage_jsonl" / "results.jsonl"):
        report = load_one(path, promptfoo)
        assert {row["failureReason"] for row in rows(path)} == {2}
        assert (report.n_cases, report.failed, report.counts["provider_error"]) == (8, 8, 8)


# ---------------------------------------------------------------------------- DeepEval


def test_a_deepeval_folder_after_one_test_run_is_one_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    recorded = json.loads((DEEPEVAL / "folder" / ".deepeval" / ".latest_test_run.json")
                          .read_text(encoding="utf-8"))["testRunData"]
    out, result = init_and_check(tmp_path, capsys, DEEPEVAL / "folder")
    assert [(r.name, r.n_cases, r.failed) for r in result.reports] == [
        (".deepeval/test_run", recorded["testPassed"] + recorded["testFailed"],
         recorded["testFailed"])]
    assert ".latest_run_full.json (.deepeval/.latest_test_run.json is gated instead" in out
    written = (tmp_path / "out" / "ceilings.yaml").read_text(encoding="utf-8")
    assert "\ntaxonomy: deepeval\n" in written


def test_deepeval_files_of_an_unfinished_run_are_never_gated_silently(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder as the second `deepeval test run` left it when its pytest session ended:
    the finished files are the first run's, the in-progress file the second's."""
    shutil.copytree(DEEPEVAL / "folder", tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project")
    assert run(capsys, "init", ".deepeval")[0] == 0
    shutil.rmtree(".deepeval")
    shutil.copytree(DEEPEVAL / "in_session" / ".deepeval", ".deepeval")
    code, out = run(capsys, "check", ".deepeval")
    assert code == 2
    assert ("a DeepEval run here has not finished (it is running, or it crashed): this file "
            "holds 6 test cases that are not the run in .latest_test_run.json") in out
    assert ".latest_test_run.json (an earlier run's: .temp_test_run_data.json beside it " \
           "holds a DeepEval run that has not finished)" in out
    code, out = run(capsys, "check", ".deepeval/.latest_test_run.json")
    assert code == 2
    assert "not a report: an earlier run's" in out


def test_the_in_progress_file_of_a_finished_run_is_left_out_and_alone_it_is_gated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # the in-progress file kept during a run, beside the finished files of that same run
    out, result = init_and_check(tmp_path, capsys, DEEPEVAL / "test_run" / ".deepeval")
    assert [(r.name, r.n_cases, r.failed) for r in result.reports] == [("test_run", 7, 5)]
    assert ".temp_test_run_data.json (.latest_test_run.json is gated instead" in out
    # alone (a repository that committed only it), it is the run
    alone = tmp_path / "alone" / ".deepeval"
    alone.mkdir(parents=True)
    shutil.copyfile(DEEPEVAL / "in_session" / ".deepeval" / ".temp_test_run_data.json",
                    alone / ".temp_test_run_data.json")
    code, out = run(capsys, "init", str(alone), "--ceilings", str(tmp_path / "alone.yaml"))
    assert code == 0, out
    assert "test_run  6 cases, 3 failed" in out


def test_an_in_progress_file_being_written_or_still_empty_never_fails_as_bad_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / ".deepeval"
    shutil.copytree(DEEPEVAL / "folder" / ".deepeval", folder)
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "init", ".deepeval")[0] == 0
    temp = folder / ".temp_test_run_data.json"
    text = (DEEPEVAL / "in_session" / ".deepeval" / ".temp_test_run_data.json").read_text()
    temp.write_text(text[: len(text) // 2], encoding="utf-8")  # caught mid-write
    code, out = run(capsys, "check", ".deepeval")
    assert code == 0, out
    assert ".temp_test_run_data.json (DeepEval's in-progress file, unreadable while it is " \
           "being written" in out
    # as `deepeval test run` writes it when its session starts: no case yet
    data = json.loads(text)
    data["testCases"] = []
    temp.write_text(json.dumps(data), encoding="utf-8")
    for name in (".latest_test_run.json", ".latest_run_full.json"):
        (folder / name).unlink()
    code, out = run(capsys, "check", ".deepeval")
    assert code == 2
    assert "DeepEval's in-progress file holds no test case yet: a run is starting here" in out


def test_inside_deepeval_test_run_its_own_folder_is_refused_with_the_step_to_take(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`deepeval test run test_x.py --failgate=.deepeval/` runs pytest in DeepEval's
    process with its `DEEPEVAL` flag set, and writes the run only after pytest returns."""
    shutil.copytree(DEEPEVAL / "folder", tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project")
    assert run(capsys, "init", ".deepeval")[0] == 0
    monkeypatch.setenv("DEEPEVAL", "YES")
    code, out = run(capsys, "check", ".deepeval")
    assert code == 2
    assert ("this process runs under `deepeval test run`, which writes .deepeval/ only after "
            "its pytest session ends") in out
    assert out.count("this process runs under") == 2  # the item and its summary line, once
    # another folder (a run kept for comparison) is not the one being written
    shutil.copytree(".deepeval", "kept")
    assert run(capsys, "check", "kept")[0] == 0


# ---------------------------------------------------------------------------- Inspect AI


def test_inspect_log_folder_gates_the_latest_log_of_each_task_and_names_those_left_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    logs = sorted((INSPECT / "log_folder").glob("*.eval"))
    first, second = (p.name for p in logs if "_arithmetic_" in p.name)
    out, result = init_and_check(tmp_path, capsys, INSPECT / "log_folder")
    # the second arithmetic run answered one more question right
    assert sorted((r.name, r.n_cases, r.failed) for r in result.reports) == [
        ("arithmetic@mockllm/model", 5, 1), ("units@mockllm/model", 4, 1)]
    assert f"skipped 1 file: {first} ({second} is gated instead: the latest inspect_ai " \
           "file of report 'arithmetic@mockllm/model' in this folder)" in out
    earlier = load_one(INSPECT / "log_folder" / first, TAXONOMIES["inspect_ai"])
    assert earlier.failed == 2


def test_a_crashed_inspect_run_is_the_latest_log_of_its_task_never_hidden_by_an_older_one(
        ) -> None:
    """The crashed/ folder (`noise` decides that such a run is inconclusive): a run that
    ended in an error is gated as its task's latest log, with its status recorded."""
    from pytest_failgate.core.gate.runner import load_run
    from pytest_failgate.core.reports.builtin import builtin_readers
    from pytest_failgate.core.reports.read import ReadSpec

    gated, skipped = load_run((INSPECT / "crashed",), TaxonomyChoice(TAXONOMIES["inspect_ai"]),
                              ReadSpec(readers=builtin_readers()))
    [report] = [g.report for g in gated if g.report is not None]
    crashed = max(INSPECT.joinpath("crashed").glob("*.eval"))
    assert report.path == crashed
    assert report.recorded["status"] == "error"
    assert (report.n_cases, report.counts["error"]) == (4, 4)
    assert [s.path.name for s in skipped] == [min(INSPECT.joinpath("crashed").glob("*.eval"))
                                              .name]


def test_ceilings_naming_another_task_warn_when_one_task_is_gated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    for log in (INSPECT / "log_folder").glob("*_units_*.eval"):
        shutil.copyfile(log, tmp_path / "logs" / log.name)
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text("version: 1\ntaxonomy: inspect_ai\nceilings:\n  incorrect: 1\n"
                        "reports:\n  arithmetic@mockllm/model:\n    incorrect: 2\n"
                        "  units@mockllm/model:\n    incorrect: 1\n", encoding="utf-8")
    code, out = run(capsys, "check", "logs")
    assert code == 0, out
    assert ("reports: 'arithmetic@mockllm/model' matches no report in this run; its ceilings "
            "were not used") in out
    ceilings.write_text(ceilings.read_text().replace("  units@", "  unitz@"))
    code, out = run(capsys, "check", "logs")
    assert code == 2
    assert "'unitz@mockllm/model' matches no report; did you mean 'units@mockllm/model'?" in out


# ------------------------------------------------- DeepEval's tests in the gate's session


@pytest.fixture
def deepeval_project(pytester: pytest.Pytester) -> Path:
    """The project of `scripts/fixtures/deepeval_folder.py` after one `deepeval test run`
    (its real `.deepeval/`, written before this session), with ceilings from it. Its test
    module imports DeepEval's `assert_test`; DeepEval is not a test dependency, so a
    stand-in package of that name provides it (the run with the real DeepEval is the
    script's `--check`)."""
    shutil.copytree(DEEPEVAL / "folder" / ".deepeval", pytester.path / ".deepeval")
    old = time.time() - 600
    for path in (pytester.path / ".deepeval").iterdir():
        os.utime(path, (old, old))
    pytester.mkpydir("deepeval").joinpath("__init__.py").write_text(
        "def assert_test(test_case, metrics):\n    pass\n", encoding="utf-8")
    pytester.makepyfile(
        test_policy="from deepeval import assert_test\n\n\ndef test_refund():\n"
                    "    assert_test(None, [])\n",
        test_other="def test_plain():\n    pass\n")
    pytester.makeini("[pytest]\n")
    assert main(["init", str(pytester.path / ".deepeval"),
                 "--ceilings", str(pytester.path / "ceilings.yaml")]) == 0
    return pytester.path


EARLIER = ("*.deepeval/.latest_test_run.json: this session runs DeepEval's test cases "
           "(test_policy.py::test_refund), and pytest alone never writes DeepEval's results: "
           "this file is an earlier run's (written 10 min before this session started)*")


@pytest.mark.parametrize("workers", [  # a whole xdist run: CI runs it (CI=true)
    None, pytest.param("2", marks=pytest.mark.slow)])
def test_pytest_running_deepevals_tests_refuses_the_earlier_runs_files(
        pytester: pytest.Pytester, deepeval_project: Path, workers: str | None) -> None:
    args = ["test_policy.py", "--failgate=.deepeval", "-p", "no:cacheprovider"]
    result = pytester.runpytest(*args, *(["-n", workers] if workers else []))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([EARLIER])
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 1  # DeepEval's own test; every gate item failed
    assert outcomes["failed"] == len(TAXONOMIES["deepeval"].category_names) + 2
    assert "Run them with `deepeval test run`, then gate in a step of its own" in \
        result.stdout.str()


def test_the_gate_alone_or_beside_other_tests_reads_deepevals_files(
        pytester: pytest.Pytester, deepeval_project: Path) -> None:
    for args in (["ceilings.yaml"], ["test_other.py"]):
        result = pytester.runpytest("--failgate=.deepeval", *args, "-p", "no:cacheprovider")
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        assert "earlier run" not in result.stdout.str()


@pytest.mark.parametrize("mode", ["--failgate-init", "--failgate-ratchet"])
def test_init_and_ratchet_write_nothing_from_an_earlier_deepeval_run(
        pytester: pytest.Pytester, deepeval_project: Path, mode: str) -> None:
    ceilings = deepeval_project / "ceilings.yaml"
    if mode == "--failgate-init":
        ceilings.unlink()
    else:  # a ceiling the earlier run's counts would lower
        ceilings.write_text(ceilings.read_text().replace("  total: 3", "  total: 5"))
    before = ceilings.read_bytes() if ceilings.exists() else None
    result = pytester.runpytest("test_policy.py", "--failgate=.deepeval", mode,
                                "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"{mode.removeprefix('--failgate-')}: ceilings.yaml not "
                                 "written: .deepeval/.latest_test_run.json is an earlier "
                                 "run's (see the failing items)"])
    assert (ceilings.read_bytes() if ceilings.exists() else None) == before
