"""The field's report formats read natively: real files, their own counts, no configuration.

Each folder of ``tests/data`` holds real output of one tool (sources and licences beside
them; ``tests/data/README.md`` lists the failed counts each format records itself).
``failgate init`` then ``failgate check`` on the folder, and the same through pytest,
must give exactly those counts, with each format's own taxonomy picked automatically.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_failgate.cli import main

DATA = Path(__file__).resolve().parents[2] / "data"

# folder -> report -> (cases, failed) as the format records them (tests/data/README.md)
RECORDED: dict[str, dict[str, tuple[int, int]]] = {
    "lm_eval": {"samples_math_perturbed_full": (10, 10)},
    "helm": {"mmlu_philosophy": (10, 9), "narrative_qa": (5, 5)},
    "openai_evals": {"promptfoo__openai-evals-items": (2, 1),
                     "promptfoo__openai-evals-multi-run-items": (2, 1)},
    "karenina": {"results_export": (2, 1), "results_export_full": (2, 1),
                 "with_results": (1, 0)},
}
TAXONOMY = {"lm_eval": "lm-eval", "helm": "helm", "openai_evals": "openai-evals",
            "karenina": "karenina"}
# a report with no cases is an error item, never a pass (karenina's empty export)
EMPTY = {"karenina": ["results_export_empty"]}
# reports where more than a quarter of the cases failed outside the system under test (a
# sampling error, a retry budget run out on timeouts): inconclusive, so init leaves them out
INCONCLUSIVE = {"openai_evals": {"promptfoo__openai-evals-multi-run-items"},
                "karenina": {"results_export", "results_export_full"}}


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


@pytest.fixture
def folder(request: pytest.FixtureRequest, tmp_path: Path,
           monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of one data folder as the working directory."""
    target: Path = tmp_path / request.param
    shutil.copytree(DATA / request.param, target)
    target.chmod(0o755)
    monkeypatch.chdir(target)
    return target


def counts(result: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {r["name"]: (r["n_cases"], r["failed"]) for r in result["reports"]
            if r["error"] is None}


@pytest.mark.parametrize("folder", sorted(RECORDED), indirect=True)
def test_init_then_check_gives_the_counts_the_format_records(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = folder.name
    code, out = cli(capsys, "init", ".")
    assert code == (2 if name in EMPTY else 3 if name in INCONCLUSIVE else 0), out
    assert ("init: not recorded, as" in out) == (name in INCONCLUSIVE)
    text = (folder / "ceilings.yaml").read_text()
    assert f"taxonomy: {TAXONOMY[name]}\n" in text
    assert "taxonomies:" not in text
    code, out = cli(capsys, "check", ".", "--json", "gate.json")
    assert code == (2 if name in EMPTY else 3 if name in INCONCLUSIVE else 0), out
    result = json.loads((folder / "gate.json").read_text())
    assert counts(result) == RECORDED[name]
    assert {r["name"] for r in result["reports"] if r.get("inconclusive")} == \
        INCONCLUSIVE.get(name, set())
    assert {r["taxonomy"] for r in result["reports"] if r["error"] is None} == {TAXONOMY[name]}
    broken = [r["name"] for r in result["reports"] if r["error"] is not None]
    assert broken == EMPTY.get(name, [])
    assert all("no cases" in r["error"] for r in result["reports"] if r["error"])


@pytest.mark.slow
@pytest.mark.parametrize("folder", sorted(RECORDED), indirect=True)
def test_pytest_init_then_gate_gives_the_same_counts(
    folder: Path, pytester: pytest.Pytester
) -> None:
    assert pytester.runpytest(f"--failgate={folder}", "--failgate-init").ret in (0, 1)
    result = pytester.runpytest(f"--failgate={folder}", "--failgate-json=gate.json")
    outcomes = result.parseoutcomes()
    # the load items, and one inconclusive item per report that cannot be judged
    unjudged = sorted(INCONCLUSIVE.get(folder.name, ()))
    assert outcomes.get("failed", 0) == len(EMPTY.get(folder.name, [])) + len(unjudged)
    result.stdout.fnmatch_lines([f"FAILED ceilings.yaml::{report}::inconclusive*"
                                 for report in unjudged], consecutive=False)
    gate = json.loads((pytester.path / "gate.json").read_text())
    assert counts(gate) == RECORDED[folder.name]


def test_a_folder_of_every_format_is_gated_with_a_taxonomy_per_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("lm_eval", "helm", "openai_evals"):
        shutil.copytree(DATA / name, tmp_path / "runs" / name)
    # the OpenAI Evals run with a sampling error in one of its two items is inconclusive
    (tmp_path / "runs" / "openai_evals" / "promptfoo__openai-evals-multi-run-items.jsonl"
     ).unlink()
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "init", "runs")[0] == 0
    text = (tmp_path / "ceilings.yaml").read_text()
    assert "taxonomy: helm\n" in text  # two of the five reports are HELM's
    assert "taxonomies:\n  lm-eval: lm-eval\n  openai-evals: openai-evals\n" in text
    code, out = cli(capsys, "check", "runs", "--json", "gate.json")
    assert code == 0, out
    found = counts(json.loads((tmp_path / "gate.json").read_text()))
    expected = {f"{folder}/{report}": recorded for folder, reports in RECORDED.items()
                for report, recorded in reports.items()
                if folder != "karenina" and report not in INCONCLUSIVE.get(folder, ())}
    assert found == expected


def test_rag_on_a_helm_file_is_an_error_naming_the_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(DATA / "helm", tmp_path / "helm")
    monkeypatch.chdir(tmp_path)
    code, out = cli(capsys, "init", "helm", "--taxonomy", "rag")
    assert code == 2
    assert ("none of the 10 cases has any field taxonomy rag reads (accuracy, answerable, "
            "abstained") in out
    assert "this is a helm report: use its taxonomy with `taxonomies: {helm: helm}`" in out
    assert not (tmp_path / "ceilings.yaml").exists()


# -- lm-evaluation-harness ---------------------------------------------------------


def write_lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def sample(doc_id: int, value: Any, metric: str = "acc", flt: str = "none") -> dict[str, Any]:
    return {"doc_id": doc_id, "filter": flt, "metrics": [metric], metric: value,
            "target": "B", "resps": [["B"]]}


def show(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out = cli(capsys, "show", *args, "--top", "9")
    assert code == 0, out
    return out


def test_lm_eval_cases_are_per_document_and_filter_and_named_without_the_timestamp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_lines(tmp_path / "out" / "samples_arc_2026-02-01T10-00-00.123.jsonl",
                [sample(0, 1.0), sample(0, 0.0, flt="strict"), sample(1, True),
                 sample(2, 0.5), {**sample(3, None), "acc": "n/a"}])
    out = show(capsys, "out")
    assert "samples_arc  5 cases, 3 failed" in out
    assert "0/strict" in out
    assert "2/none" in out
    assert "3/none" in out
    lines = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:] if line.strip()}
    assert lines == {"no_score": "1", "wrong": "1", "partial": "1"}


def test_lm_eval_direction_comes_from_the_runs_results_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_lines(tmp_path / "out" / "samples_ppl_2026-02-01T10-00-00.jsonl",
                [sample(0, 0.0, "err"), sample(1, 1.0, "err")])
    (tmp_path / "out" / "results_2026-02-01T10-00-00.json").write_text(json.dumps(
        {"results": {}, "higher_is_better": {"ppl": {"err": False}}, "n-samples": {}}))
    out = show(capsys, "out")
    assert "samples_ppl  2 cases, 1 failed" in out  # err 0 passes, err 1 is the worst
    assert "wrong" in out
    assert "1/none" in out


def test_a_rag_jsonl_with_nested_doc_ids_and_a_metrics_object_is_read_by_its_own_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``retrieved_docs[].doc_id`` and a top-level ``metrics`` object on the first line
    made the lm-eval reader claim the file and refuse it ("doc_id is null"); it is
    failgate's own JSON Lines under rag. The control: a real lm-eval line is still lm-eval's."""
    monkeypatch.chdir(tmp_path)
    rows = [{"id": f"q{i}", "retrieved_docs": [{"doc_id": f"d{i}", "score": 0.5}],
             "metrics": {"latency_ms": 120}, "accuracy": i % 2, "answerable": True,
             "abstained": False, "evidence_doc_ids": [f"d{i}"], "expected_doc_ids": [f"d{i}"]}
            for i in range(4)]
    write_lines(tmp_path / "run" / "cases.jsonl", rows)
    out = show(capsys, "run")
    assert "cases  4 cases, 2 failed" in out
    assert "doc_id" not in out
    write_lines(tmp_path / "lm" / "samples_arc_2026-02-01T10-00-00.jsonl",
                [sample(0, 1.0), sample(1, 0.0)])
    assert "samples_arc  2 cases, 1 failed" in show(capsys, "lm")


@pytest.mark.parametrize(("line", "claimed"), [
    (b'{"doc_id": 0, "doc": {}, "filter": "none", "metrics": ["acc"], "acc": 1}', True),
    (b'{"doc_id": 0, "doc": {"q": "' + b"x" * 70_000, True),  # a line past the head
    (b'{"id": "a", "retrieved_docs": [{"doc_id": 1}], "metrics": {"f1": 1}}', False),
    (b'{"id": "a", "metrics": ["acc"], "doc": {"doc_id": 3}}', False),
    (b'{"doc_id": 0, "metrics": {"acc": 1}}', False),  # a metrics object: not lm-eval's list
    (b'{"note": "\\"doc_id\\": 1, \\"metrics\\": [1]"}', False),  # inside a string
    (b'["doc_id", "metrics"]', False),
])
def test_the_lm_eval_reader_claims_its_own_top_level_shape_only(line: bytes,
                                                                 claimed: bool) -> None:
    from pytest_failgate.core.reports.lm_eval import LmEvalSamplesReader
    from pytest_failgate.core.reports.source import HEAD_BYTES

    assert LmEvalSamplesReader().claims((line + b"\n{}\n")[:HEAD_BYTES]) is claimed


def test_the_openai_evals_reader_claims_its_own_top_level_shape_only() -> None:
    from pytest_failgate.core.reports.openai_evals import OpenAIEvalsReader

    real = (DATA / "openai_evals" / "promptfoo__openai-evals-items.jsonl").read_bytes()
    assert OpenAIEvalsReader().claims(real[:1 << 16])
    nested = b'{"id": "a", "trace": {"data_source_idx": 0, "passes": true}, "accuracy": 1}\n'
    assert not OpenAIEvalsReader().claims(nested)


# -- HELM --------------------------------------------------------------------------


def test_helm_keeps_perturbations_apart_and_skips_the_run_folders_aggregates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "runs" / "mmlu:subject=philosophy,model=m"
    run.mkdir(parents=True)
    instances = json.loads((DATA / "helm" / "mmlu_philosophy" / "per_instance_stats.json")
                           .read_text())[:2]
    perturbed = copy.deepcopy(instances[0])
    perturbed["perturbation"] = {"name": "typos", "prob": 0.1}
    (run / "per_instance_stats.json").write_text(json.dumps([*instances, perturbed]))
    (run / "stats.json").write_text(json.dumps(
        [{"name": {"name": "exact_match", "split": "test"}, "count": 150, "sum": 30,
          "sum_squared": 30, "mean": 0.2}]))
    out = show(capsys, "runs")
    assert "mmlu:subject=philosophy,model=m  3 cases, 3 failed" in out
    assert 'id147#0@typos{"prob":0.1}' in out
    assert "id147#0," in out
    assert "runs/mmlu:subject=philosophy,model=m/stats.json" in out  # skipped, not 150 cases


# -- OpenAI Evals ------------------------------------------------------------------


def test_openai_evals_ids_are_run_and_index_and_the_failing_grader_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = show(capsys, str(DATA / "openai_evals"))
    assert "grader_failed" in out
    assert "evalrun_import_fixture/3" in out
    assert "sample_error" in out
    assert "evalrun_error_fixture/0" in out
    Path("c.yaml").write_text("version: 1\ntaxonomy: openai-evals\n")
    cli(capsys, "check", str(DATA / "openai_evals"), "--ceilings", "c.yaml",
                  "--json", "g.json")
    report = json.loads(Path("g.json").read_text())["reports"][0]
    rows = report["rows"]
    assert report["inconclusive"] is None  # its one failure is a grader's: judged
    example = next(r for r in rows if r["name"] == "grader_failed")["examples"][0]
    assert example["fields"]["failed_grader"] == "Relevance"


# -- karenina ----------------------------------------------------------------------


def test_karenina_replicates_and_models_get_their_own_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    export = json.loads((DATA / "karenina" / "results_export_full.json").read_text())
    results = []
    for model in ("gpt-4o", "claude"):
        for replicate in (1, 2):
            for result in copy.deepcopy(export["results"]):
                result["metadata"]["replicate"] = replicate
                result["metadata"]["answering"]["model_name"] = model
                results.append(result)
    export["results"] = results
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "multi.json").write_text(json.dumps(export))
    out = show(capsys, "runs")
    assert "multi  8 cases, 4 failed" in out
    assert "q-timeout@gpt-4o#1, q-timeout@gpt-4o#2, q-timeout@claude#1" in out
