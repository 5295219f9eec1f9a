"""Inspect AI logs read natively: `.json` and zstd-compressed `.eval`, errors, limits, scores."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from helpers import load_one

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.base.install import install_command
from pytest_failgate.core.gate.runner import GateConfig, load_run, run_gate
from pytest_failgate.core.reports.builtin import builtin_readers
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.inspect_ai import InspectReader, credit_of, report_name
from pytest_failgate.core.reports.model import Report
from pytest_failgate.core.reports.read import ReadSpec
from pytest_failgate.core.reports.zipzstd import ZSTD, ZipArchive
from pytest_failgate.core.taxonomy import builtin_taxonomies, classify

DATA = Path(__file__).resolve().parents[2] / "data" / "inspect_ai"
SHARED = DATA / "shared"
GENERATED = DATA / "generated"
INSPECT = builtin_taxonomies()["inspect_ai"]

# The fixtures README's truth: (cases, failed, categories) per shared log.
SHARED_TRUTH = {
    "data_arc_qwen": (3, {"incorrect": 2}),
    "data_arc_sonnet": (5, {}),
    "data_cvebench_empty_choices": (1, {"error": 1}),
    "data_cyse2_vuln_exploit_challenges": (1, {"partial": 1}),
    "data_intercode_ctf_local_path": (1, {"message_limit": 1}),
    "data_pubmedqa_gpt4o_mini": (2, {}),
}
# The generated logs: per task, (cases, categories); every task ran with epochs=2.
GENERATED_TRUTH = {
    "capitals": (12, {"error": 2, "token_limit": 2, "incorrect": 2}),
    "keywords": (8, {"no_answer": 2, "partial": 2, "incorrect": 2}),
    "plots": (6, {"incorrect": 4}),
}


def load(path: Path) -> Report:
    return load_one(path, INSPECT)


def nonzero(report: Report) -> dict[str, int]:
    return {name: count for name, count in report.counts.items() if count}


def generated(folder: str, task: str) -> Path:
    return next((GENERATED / folder).glob(f"*_{task}_*"))


@pytest.mark.parametrize("stem", SHARED_TRUTH)
def test_shared_logs_give_the_failed_samples_their_readme_records(stem: str) -> None:
    cases, categories = SHARED_TRUTH[stem]
    report = load(SHARED / f"{stem}.json")
    assert (report.n_cases, nonzero(report)) == (cases, categories)


@pytest.mark.parametrize("task", GENERATED_TRUTH)
@pytest.mark.parametrize("folder", ["json", "eval"])
def test_generated_logs_in_both_formats_classify_every_sample_of_every_epoch(
        folder: str, task: str) -> None:
    cases, categories = GENERATED_TRUTH[task]
    report = load(generated(folder, task))
    assert (report.n_cases, nonzero(report)) == (cases, categories)


@pytest.mark.parametrize("task", GENERATED_TRUTH)
def test_json_and_eval_logs_of_a_task_agree_case_by_case(task: str) -> None:
    as_json, as_eval = load(generated("json", task)), load(generated("eval", task))
    assert as_json.all_case_ids() == as_eval.all_case_ids()
    for name in INSPECT.category_names:
        assert as_json.case_ids(name) == as_eval.case_ids(name)


def test_the_eval_archive_really_is_zstd_compressed() -> None:
    with zipfile.ZipFile(generated("eval", "capitals")) as archive:
        assert {info.compress_type for info in archive.infolist()} == {ZSTD}
        with pytest.raises(NotImplementedError):
            archive.read("header.json")  # what a reader without a zstd decoder meets


def test_case_ids_are_sample_id_and_epoch() -> None:
    report = load(generated("json", "capitals"))
    assert report.case_ids("error") == ["australia#1", "australia#2"]
    assert report.case_ids("token_limit") == ["essay#1", "essay#2"]
    assert load(generated("json", "keywords")).all_case_ids()[:2] == ["1#1", "2#1"]


def test_the_lowest_credit_decides_and_the_first_scorer_wins_a_tie() -> None:
    output = InspectReader().read(generated("json", "keywords"))
    assert output is not None
    by_id = {case["id"]: case for case in output.cases}
    # sample 3: keyword_grade N, keyword_recall 0.0, concise true
    assert (by_id["3#1"]["failed_scorer"], by_id["3#1"]["failed_value"]) == ("keyword_grade", "N")
    # sample 4: C, 1.0, and concise false: the boolean fails it
    assert (by_id["4#1"]["failed_scorer"], by_id["4#1"]["credit"]) == ("concise", 0.0)
    assert by_id["1#1"]["passed"] is True


def test_map_valued_scores_are_read_key_by_key() -> None:
    output = InspectReader().read(generated("eval", "plots"))
    assert output is not None
    failed = {case["id"]: case["failed_scorer"] for case in output.cases if not case["passed"]}
    assert failed == {"macbeth#1": "rubric.names", "othello#1": "rubric.plot",
                      "macbeth#2": "rubric.names", "othello#2": "rubric.plot"}


@pytest.mark.parametrize(("value", "credit"), [
    ("C", 1.0), ("P", 0.5), ("I", 0.0), ("N", 0.0), (True, 1.0), (False, 0.0),
    ("yes", 1.0), ("False", 0.0), ("0.75", 0.75), (0.65, 0.65), (3, 3.0), ("maybe", 0.0),
    (None, 0.0), (float("nan"), 0.0),
])
def test_credit_is_what_inspects_value_to_float_gives(value: Any, credit: float) -> None:
    assert credit_of(value) == credit


def test_the_report_is_named_after_task_and_model_not_the_timestamped_file() -> None:
    header = json.loads(generated("json", "capitals").read_text(encoding="utf-8"))
    assert report_name(header) == "capitals@mockllm/model"
    shared = json.loads((SHARED / "data_arc_qwen.json").read_text(encoding="utf-8"))
    assert report_name(shared) == "arc_easy@ollama/qwen2.5:0.5b"


def test_without_a_zstd_decoder_an_eval_log_says_which_extra_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import raises ImportError
    monkeypatch.setitem(sys.modules, "compression.zstd", None)
    with pytest.raises(FailgateError) as raised:
        load(generated("eval", "plots"))
    assert ("zstd-compressed (zip method 93); reading it needs the inspect extra (zstandard, a "
            f"zstd decoder): {install_command('inspect')}") in raised.value.message


def test_a_truncated_eval_log_is_an_error_naming_the_file(tmp_path: Path) -> None:
    source = generated("eval", "plots")
    target = tmp_path / source.name
    target.write_bytes(source.read_bytes()[: source.stat().st_size // 2])
    with pytest.raises(FailgateError, match="not a readable zip archive") as raised:
        load(target)
    assert raised.value.path == target


def test_a_corrupted_member_is_an_error_naming_it(tmp_path: Path) -> None:
    source = generated("eval", "plots")
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    with zipfile.ZipFile(target) as archive:
        info = archive.getinfo("header.json")
    data = bytearray(target.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + 8:start + 16] = b"\xff" * 8  # inside the zstd frame
    target.write_bytes(bytes(data))
    with pytest.raises(FailgateError, match=r"member header\.json: cannot be read"):
        load(target)


def test_a_sample_of_the_wrong_shape_is_an_error_naming_it_and_its_line(
        tmp_path: Path) -> None:
    log = json.loads((SHARED / "data_arc_qwen.json").read_text(encoding="utf-8"))
    log["samples"][1]["scores"] = ["C"]
    target = tmp_path / "log.json"
    text = json.dumps(log, indent=1)
    target.write_text(text, encoding="utf-8")
    with pytest.raises(FailgateError, match="sample 2: its scores are a list; expected an "
                                            "object") as raised:
        load(target)
    line = raised.value.line
    assert line is not None
    assert text.splitlines()[line - 1].strip() == '"scores": ['


def test_an_eval_member_that_is_not_json_is_an_error_naming_the_member(
        tmp_path: Path) -> None:
    source = generated("eval", "plots")
    target = tmp_path / source.name
    with ZipArchive(source) as archive, zipfile.ZipFile(target, "w") as copy:
        for name in archive.names():
            data = archive.read(name)
            copy.writestr(name, data[:-2] if name == "summaries.json" else data)
    with pytest.raises(FailgateError, match=r"member summaries\.json: invalid JSON: .* \(line "
                                            r"\d+, column \d+\)"):
        load(target)


def test_other_json_is_not_claimed(tmp_path: Path) -> None:
    target = tmp_path / "other.json"
    target.write_text(json.dumps({"eval": {"name": "x"}, "samples": []}), encoding="utf-8")
    assert InspectReader().read(target) is None


def test_an_unfinished_eval_log_without_summaries_is_read_from_its_sample_members(
        tmp_path: Path) -> None:
    """Only finished runs write summaries.json; the samples are then read one by one
    (this copy stores its members uncompressed, which zipfile reads by itself)."""
    source = generated("eval", "capitals")
    target = tmp_path / source.name
    with ZipArchive(source) as archive, zipfile.ZipFile(target, "w") as copy:
        for name in archive.names():
            if name not in ("summaries.json", "header.json") and "summaries/" not in name:
                copy.writestr(name, archive.read(name))
    assert load(target).counts == load(source).counts
    assert load(target).all_case_ids() == load(generated("json", "capitals")).all_case_ids()


def test_of_two_logs_of_one_task_and_model_in_one_folder_the_later_is_gated(
        tmp_path: Path) -> None:
    """Inspect's log folder keeps every run: the later log (``eval.created``, whatever its
    format or file name) is gated, the earlier listed as skipped, naming the one gated."""
    for folder in ("json", "eval"):
        shutil.copyfile(generated(folder, "plots"), tmp_path / generated(folder, "plots").name)
    later, earlier = (tmp_path / generated(folder, "plots").name for folder in ("eval", "json"))
    gated, skipped = load_run((tmp_path,), TaxonomyChoice(INSPECT),
                              ReadSpec(readers=builtin_readers()))
    assert [(g.report.name, g.report.path) for g in gated if g.report is not None] == [
        ("plots@mockllm/model", later)]
    [left_out] = skipped
    assert left_out.path == earlier
    assert f"{later.name} is gated instead" in left_out.reason


def test_logs_of_one_task_in_two_folders_are_an_error_naming_both(tmp_path: Path) -> None:
    """Two folders given are two runs the user chose: no log is dropped silently."""
    for folder in ("json", "eval"):
        (tmp_path / folder).mkdir()
        shutil.copyfile(generated(folder, "plots"),
                        tmp_path / folder / generated(folder, "plots").name)
    with pytest.raises(FailgateError, match=r"two reports are both named "
                                            r"'plots@mockllm/model': .*\.json and .*\.eval"):
        load_run((tmp_path / "json", tmp_path / "eval"), TaxonomyChoice(INSPECT),
                 ReadSpec(readers=builtin_readers()))


def test_logs_are_reported_by_task_and_model(tmp_path: Path) -> None:
    shutil.copytree(GENERATED / "eval", tmp_path / "logs")
    gated, _ = load_run((tmp_path / "logs",), TaxonomyChoice(INSPECT),
                        ReadSpec(readers=builtin_readers()))
    assert sorted(g.report.name for g in gated if g.report is not None) == [
        "capitals@mockllm/model", "keywords@mockllm/model", "plots@mockllm/model"]


def test_a_log_without_samples_is_an_aggregate_of_what_its_header_records() -> None:
    report = load(next((GENERATED / "header_only").glob("*.json")))
    assert (report.kind, report.n_cases, report.failed, report.counts) == (
        "aggregate", 12, None, {})
    assert report.uncounted == ("the log holds no samples (written with log_samples=False, "
                                "or trimmed; it records 12 samples)")
    # the header's own numbers: accuracy over the 5 samples scored after epoch reduction
    assert (report.recorded["accuracy"], report.recorded["includes.accuracy"]) == (0.6, 0.6)
    assert report.recorded["ci"]["accuracy"] == {"n": 5}
    shared = load(SHARED / "data_with_llm_scoring.json")
    assert (shared.name, shared.n_cases, shared.failed) == (
        "simpleqa_verified@anthropic/claude-opus-4-6", 1000, None)


def test_a_ceiling_written_for_a_log_without_samples_cannot_be_checked(tmp_path: Path) -> None:
    shutil.copytree(GENERATED / "header_only", tmp_path / "logs")
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text("version: 1\ntaxonomy: inspect_ai\nceilings:\n  error: 0\nreports:\n"
                        "  capitals@mockllm/model:\n    error: 3\n", encoding="utf-8")
    gate = run_gate(GateConfig((tmp_path / "logs",), ceilings))
    (check,) = gate.checks  # the default under `ceilings:` does not apply to it
    assert (check.name, check.verdict) == ("error", "error")
    assert check.problem.startswith("the log holds no samples")


@pytest.mark.parametrize(("fields", "category"), [
    ({"error": "boom", "limit": "token", "credit": 0.0}, "error"),
    ({"limit": "message", "credit": 1.0}, "message_limit"),
    ({"limit": "token"}, "token_limit"), ({"limit": "working"}, "time_limit"),
    ({"limit": "time"}, "time_limit"), ({"limit": "context"}, "context_limit"),
    ({"limit": "operator"}, "other_limit"), ({"credit": None}, "unscored"),
    ({"credit": 0.0, "failed_value": "N"}, "no_answer"),
    ({"credit": 0.5, "failed_value": "P"}, "partial"),
    ({"credit": 0.0, "failed_value": False}, "incorrect"),
])
def test_error_then_limit_then_the_lowest_score_decide(fields: dict[str, Any],
                                                        category: str) -> None:
    case = {"passed": False, "error": None, "limit": None, "credit": 0.0,
            "failed_value": None, **fields}
    assert classify(INSPECT, case) == category
