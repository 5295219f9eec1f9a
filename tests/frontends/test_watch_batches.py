"""``failgate plan --ordered`` and ``failgate watch --batch``: a harness without a per-case
hook (promptfoo, lm-eval) run in batches of the plan's order, and no batch started once the
verdict is settled."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import cases_for, write_ceilings
from helpers import run_cli as run

DATA = Path(__file__).resolve().parents[1] / "data"
LM_EVAL_SAMPLES = DATA / "lm_eval" / "samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl"

# A harness that runs the cases it is given (a comma-separated list of ids) and writes them
# as failgate's JSON Lines, last first (a harness's own order), logging each case it ran.
HARNESS = """\
import json, sys
cases = {case["id"]: case for case in json.load(open(sys.argv[1]))}
ran = [case_id for case_id in sys.argv[2].split(",") if case_id]
with open("calls.log", "a") as log:
    log.writelines(case_id + "\\n" for case_id in ran)
with open(sys.argv[3], "w") as out:
    out.writelines(json.dumps(cases[case_id]) + "\\n" for case_id in reversed(ran))
"""

# lm-eval's --samples as its 0.4.13 CLI parses it (lm_eval/_cli/run.py: a JSON mapping of
# task names to document indices), answered with the real samples file's rows of those docs.
LM_EVAL = """\
import json, sys
argv = sys.argv[1:]
samples = json.loads(argv[argv.index("--samples") + 1])
rows = {row["doc_id"]: row for row in map(json.loads, open(sys.argv[1]))}
with open("calls.log", "a") as log:
    log.writelines(f"{doc}\\n" for doc in samples["math_perturbed_full"])
with open(argv[argv.index("--output") + 1], "w") as out:
    out.writelines(json.dumps(rows[doc]) + "\\n" for doc in samples["math_perturbed_full"])
"""

SETTLED = re.compile(r"verdict (pass|fail|inconclusive): .*settled after (\d+) of (\d+) planned")


def _settled(out: str) -> tuple[str, int, int]:
    found = SETTLED.search(out.rstrip("\n").splitlines()[-1])
    assert found is not None, out[-2000:]
    return found.group(1), int(found.group(2)), int(found.group(3))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 4,
                                                "verifier_false_negative": 3,
                                                "generator_hallucination": 2})
    (tmp_path / "harness.py").write_text(HARNESS)
    return tmp_path


def _calls(project: Path) -> list[str]:
    log = project / "calls.log"
    return log.read_text().split() if log.exists() else []


def test_plan_ordered_writes_a_csv_dataset_in_the_plans_order_with_its_header(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"question": f"What is {i}?", "__expected": f"contains:{i}",
             "__description": f"q{i}"} for i in range(12)]
    with (project / "tests.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    code, out, err = run(capsys, "plan", "tests.csv", "--seed", "5", "--id", "__description",
                         "--ordered", "tests.planned.csv")
    assert code == 0, err
    assert "tests.planned.csv" in out
    planned = json.loads((project / "plan.json").read_text())["cases"]
    assert sorted(planned) == sorted(row["__description"] for row in rows)
    assert planned != [row["__description"] for row in rows]  # a permutation, not the file
    with (project / "tests.planned.csv").open(newline="") as handle:
        written = list(csv.DictReader(handle))
    assert [row["__description"] for row in written] == planned
    assert written == [next(r for r in rows if r["__description"] == i) for i in planned]


def test_plan_ordered_keeps_json_lines_lines_as_written(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [json.dumps({"id": f"c{i}", "question": "é" * i}, ensure_ascii=i % 2 == 0)
             for i in range(9)]
    (project / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run(capsys, "plan", "cases.jsonl", "--seed", "3", "--ordered", "o.jsonl")
    assert code == 0, err
    planned = json.loads((project / "plan.json").read_text())["cases"]
    by_id = {json.loads(line)["id"]: line for line in lines}
    assert (project / "o.jsonl").read_text(encoding="utf-8").splitlines() == [
        by_id[case_id] for case_id in planned]


def test_plan_with_an_id_field_a_case_lacks_is_one_error_naming_its_line(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "tests.csv").write_text("question,__description\nwhat?,q1\nwhy?,\n")
    code, _, err = run(capsys, "plan", "tests.csv", "--id", "name", "--ordered", "o.csv")
    assert code == 2
    assert err.startswith("failgate: error: tests.csv:2: case #1 has no 'name' (--id)")
    assert not (project / "o.csv").exists()
    assert not (project / "plan.json").exists()


def _broken_run(project: Path, capsys: pytest.CaptureFixture[str], planned: int = 120,
                failing: int = 60) -> list[dict[str, Any]]:
    cases = cases_for({"retrieval_miss": failing}, passed=planned - failing, seed=11)
    (project / "cases.json").write_text(json.dumps(cases))
    code, _, err = run(capsys, "plan", "cases.json", "--seed", "2")
    assert code == 0, err
    return cases


def test_batches_of_a_broken_run_settle_early_and_leave_later_batches_unrun(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _broken_run(project, capsys)
    plan = json.loads((project / "plan.json").read_text())["cases"]
    code, out, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--batch",
                         "10", "--", sys.executable, "harness.py", "cases.json", "{ids}",
                         "results.jsonl")
    assert code == 1, err
    verdict, n, of = _settled(out)
    assert (verdict, of) == ("fail", 120)
    batches = -(-n // 10)
    assert batches < 6
    # the harness ran whole batches of the plan, in its order, and none after the settled one
    assert _calls(project) == plan[:batches * 10]
    assert f"settled: the {12 - batches} later batches are not run" in out
    # the cases were gated in the plan's order, not the report's (last first)
    gated = re.findall(r"^case (\d+) of 120 (\"[^\"]+\")", out, re.MULTILINE)
    assert [json.loads(i) for _, i in gated] == plan[:n]


def test_a_clean_run_runs_every_batch_the_last_one_case_long_and_passes_at_its_end(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _broken_run(project, capsys, planned=11, failing=0)
    plan = json.loads((project / "plan.json").read_text())["cases"]
    code, out, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--batch",
                         "5", "--", sys.executable, "harness.py", "cases.json", "{ids}",
                         "results.jsonl")
    assert code == 0, err
    assert _settled(out) == ("pass", 11, 11)
    assert "batch 3 of 3: the plan's cases 10:11" in out
    assert _calls(project) == plan  # a one-line JSON Lines report is still JSON Lines


def test_a_batch_whose_report_lacks_a_planned_case_is_one_error_naming_it(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = _broken_run(project, capsys, planned=40, failing=0)
    plan = json.loads((project / "plan.json").read_text())["cases"]
    kept = [case for case in cases if case["id"] != plan[3]]
    (project / "cases.json").write_text(json.dumps([*kept, {**cases[0], "id": plan[3]}]))
    (project / "harness.py").write_text(HARNESS.replace(
        "for case_id in reversed(ran)", f"for case_id in reversed(ran) if case_id != {plan[3]!r}"))
    code, out, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--batch",
                         "10", "--", sys.executable, "harness.py", "cases.json", "{ids}",
                         "results.jsonl")
    assert code == 2
    assert err.startswith(
        f"failgate: error: results.jsonl: batch 1 (the plan's cases 0:10): its report lacks "
        f"1 of them ({json.dumps(plan[3])})")
    assert "Traceback" not in err
    assert len(_calls(project)) == 10  # no second batch
    assert "batch 2 of 4" not in out


@pytest.mark.parametrize(("words", "said"), [
    (["{ids}", "{stop}"], "argument 5 (\"{stop}\"): {stop} is no placeholder"),
    (["{ids}", "--samples", '{"t": {indices}}'], "{indices} fills in the batch's ids as "
                                                  "document indices"),
])
def test_a_bad_placeholder_is_one_error_before_any_batch_runs(
        project: Path, capsys: pytest.CaptureFixture[str], words: list[str], said: str) -> None:
    _broken_run(project, capsys, planned=20, failing=0)
    code, _, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--batch", "5",
                       "--", sys.executable, "harness.py", "cases.json", *words)
    assert code == 2
    assert said in err
    assert _calls(project) == []  # refused before the first batch


def test_an_id_holding_a_comma_cannot_fill_ids_and_no_batch_runs(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = _broken_run(project, capsys, planned=20, failing=0)
    last = json.loads((project / "plan.json").read_text())["cases"][17]  # the last batch's
    # the dataset's id holding a comma, with the same place among the sorted ids: the seed
    # draws it to the same place of the plan, in the last batch (the first three would run)
    for one in cases:
        one["id"] = one["id"] + ",b" if one["id"] == last else one["id"]
    (project / "cases.json").write_text(json.dumps(cases))
    assert run(capsys, "plan", "cases.json", "--seed", "2")[0] == 0
    code, _, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--batch", "5",
                       "--", sys.executable, "harness.py", "cases.json", "{ids}", "out.jsonl")
    assert (code, err.strip()) == (2, "failgate: error: {ids} separates the batch's ids with "
                                      f"commas, and the plan's id \"{last},b\" holds one "
                                      "(batch 4)")
    assert _calls(project) == []


def test_batch_needs_a_plan_and_a_command_and_takes_no_baseline(project: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _broken_run(project, capsys, planned=20, failing=0)
    code, _, err = run(capsys, "watch", "results.jsonl", "--planned", "20", "--batch", "5",
                       "--", sys.executable, "harness.py")
    assert (code, err.strip()) == (2, "failgate: error: --batch runs the plan's cases in "
                                      "batches: it needs --plan FILE")
    code, _, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--batch", "5")
    assert code == 2
    assert "give its command after --" in err
    (project / "baseline.jsonl").write_text("")
    code, _, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--batch", "5",
                       "--baseline", "baseline.jsonl", "--", sys.executable, "harness.py")
    assert (code, err.strip()) == (2, "failgate: error: --batch does not compare with a "
                                      "baseline run: leave out --baseline")
    assert _calls(project) == []


def test_a_batch_command_that_writes_no_report_is_one_error(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _broken_run(project, capsys, planned=20, failing=0)
    code, _, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--batch", "5",
                       "--", sys.executable, "-c", "raise SystemExit(3)")
    assert (code, err.strip()) == (2, "failgate: error: results.jsonl: the batch command "
                                      "(exit 3) did not write its report")


def test_lm_eval_batches_pass_sorted_document_indices_and_read_its_samples(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """lm-eval's real samples rows (10 documents, every answer wrong), asked for in batches
    through ``--samples`` with ``{indices}``, matched to the plan by ``doc_id``."""
    (project / "lm_eval.py").write_text(LM_EVAL)
    # room for every sample to go unscored: the run can fail before its last sample
    (project / "ceilings.yaml").write_text("version: 1\ntaxonomy: lm-eval\ninconclusive: 1\n"
                                           "ceilings:\n  wrong: 1\n  no_score: 10\n")
    code, _, err = run(capsys, "plan", str(LM_EVAL_SAMPLES), "--id", "doc_id", "--seed", "4")
    assert code == 0, err
    plan = json.loads((project / "plan.json").read_text())["cases"]
    code, out, err = run(capsys, "watch", "samples_{batch}.jsonl", "--plan", "plan.json",
                         "--batch", "3", "--batch-key", "doc_id", "--", sys.executable,
                         "lm_eval.py", str(LM_EVAL_SAMPLES), "--samples",
                         '{"math_perturbed_full": {indices}}', "--output",
                         "samples_{batch}.jsonl")
    assert code == 1, err
    verdict, n, of = _settled(out)
    assert (verdict, n, of) == ("fail", 2, 10)  # the second wrong answer is over 1
    assert _calls(project) == [str(i) for i in sorted(int(d) for d in plan[:3])]
    assert "settled: the 3 later batches are not run" in out
    assert not (project / "samples_2.jsonl").exists()


PROMPTFOO = os.environ.get("PROMPTFOO_BIN", "promptfoo")

PROVIDER = """\
const fs = require('fs');
module.exports = class {
  id() { return 'model'; }
  async callApi(prompt) {
    fs.appendFileSync('calls.log', prompt.split(' ').pop() + '\\n');
    return { output: process.env.BROKEN === '1' ? 'I do not know.' : prompt };
  }
};
"""


@pytest.mark.slow
def test_real_promptfoo_in_batches_settles_a_broken_system_early(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The real promptfoo (0.121.20, offline: a local provider that logs each call) over a
    60-test CSV written in the plan's order, ``--filter-range {start}:{end}`` a batch: a
    system whose every answer is wrong settles as a fail within two batches of ten, and
    the provider is never called for the tests after them."""
    found = shutil.which(PROMPTFOO)
    if found is None:
        pytest.skip(f"promptfoo not found ({PROMPTFOO}); set PROMPTFOO_BIN (CI installs it)")
    monkeypatch.chdir(tmp_path)
    for name, value in {"PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo"),
                        "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
                        "PROMPTFOO_DISABLE_SHARING": "1", "PROMPTFOO_CACHE_ENABLED": "false",
                        "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1", "BROKEN": "1"}.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "provider.js").write_text(PROVIDER)
    with (tmp_path / "tests.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "__expected", "__description"])
        writer.writerows([f"What is q{i}", f"contains:q{i}", f"q{i}"] for i in range(60))
    (tmp_path / "promptfooconfig.yaml").write_text(
        'prompts: ["Answer: {{question}}"]\nproviders: [file://provider.js]\n'
        "tests: file://tests.planned.csv\n")
    (tmp_path / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: promptfoo\ninconclusive: 0.5\nceilings:\n  text_match: 6\n"
        "  provider_error: 30\n  assertion_error: 30\n")
    code, _, err = run(capsys, "plan", "tests.csv", "--seed", "7", "--id", "__description",
                       "--ordered", "tests.planned.csv")
    assert code == 0, err
    plan = json.loads((tmp_path / "plan.json").read_text())["cases"]
    code, out, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--batch",
                         "10", "--batch-key", "description", "--", found, "eval",
                         "--no-cache", "--no-share", "--no-write", "--no-progress-bar",
                         "--no-table", "--filter-range", "{start}:{end}", "-o",
                         "results.jsonl")
    assert code == 1, err
    verdict, n, of = _settled(out)
    assert (verdict, of) == ("fail", 60)
    assert n <= 20
    batches = -(-n // 10)
    assert "batch 1: exit 100, 10 cases in results.jsonl" in out  # promptfoo: tests failed
    assert f"settled: the {6 - batches} later batches are not run" in out
    assert sorted((tmp_path / "calls.log").read_text().split()) == sorted(plan[:10 * batches])


# An offline lm-eval task: a local JSON Lines dataset, generate_until scored by exact_match.
# lm-eval's `dummy` model answers "lol" to every request, so a document whose target is "lol"
# passes and any other fails: the targets make the system broken or clean.
LM_EVAL_TASK = """\
task: fg
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{question}}}}"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\\n"]
metric_list:
  - metric: exact_match
"""


def _lm_eval_task(root: Path, targets: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """The task folder (for ``--include_path``) over documents ``q0``, ``q1``, ... answered
    by ``targets``, lm-eval kept offline, and the command that runs lm-eval."""
    if importlib.util.find_spec("lm_eval") is None:
        pytest.skip("lm_eval is not importable: pip install lm_eval==0.4.13 (CI installs it)")
    for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
                 "HF_HUB_DISABLE_TELEMETRY", "DO_NOT_TRACK"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("HF_HOME", str(root / "hf"))
    monkeypatch.chdir(root)
    (root / "tasks").mkdir()
    data = root / "tasks" / "fg.jsonl"
    data.write_text("".join(json.dumps({"question": f"q{i}", "answer": target}) + "\n"
                            for i, target in enumerate(targets)))
    # lm-eval resolves data_files from the working directory: the path is absolute
    (root / "tasks" / "fg.yaml").write_text(LM_EVAL_TASK.format(data=json.dumps(str(data))))
    (root / "docs.jsonl").write_text("".join(json.dumps({"doc_id": i}) + "\n"
                                             for i in range(len(targets))))
    (root / "ceilings.yaml").write_text("version: 1\ntaxonomy: lm-eval\ninconclusive: 0.5\n"
                                        "ceilings:\n  wrong: 4\n  partial: 0\n  no_score: 20\n")
    return (f"{shlex.quote(sys.executable)} -m lm_eval --model dummy --tasks fg "
            "--include_path tasks --log_samples")


def _lm_eval_rows(path: Path) -> dict[int, tuple[Any, ...]]:
    """A samples file's rows by ``doc_id``: the document, its target and its score."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    found = {row["doc_id"]: (row["doc"], row["target"], row["exact_match"]) for row in rows}
    assert len(found) == len(rows), path
    return found


def _lm_eval_in_batches(capsys: pytest.CaptureFixture[str], lm_eval: str
                        ) -> tuple[int, str, str]:
    """``watch`` running the docs' lm-eval recipe in batches of ten of plan.json's order."""
    batch = (f"{lm_eval} --output_path out/{{batch}}/results.json "
             '--samples "{\\"fg\\": {indices}}" '
             "&& cp out/{batch}/samples_fg_*.jsonl samples_{batch}.jsonl")
    return run(capsys, "watch", "samples_{batch}.jsonl", "--name", "fg", "--plan", "plan.json",
               "--batch", "10", "--batch-key", "doc_id", "--", "sh", "-c", batch)


@pytest.mark.slow
def test_real_lm_eval_in_batches_settles_a_broken_system_early(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The real lm-eval (0.4.13, offline: the ``dummy`` model over a local task) run in
    batches of ten through ``--samples`` and ``{indices}``, the docs' recipe: 36 of 40
    answers wrong settle as a fail within two batches, no later batch starts, each logged
    ``doc_id`` labels its own document, and a full run's samples fail ``check`` too."""
    lm_eval = _lm_eval_task(tmp_path, ["lol" if i % 10 == 0 else f"a{i}" for i in range(40)],
                            monkeypatch)
    code, _, err = run(capsys, "plan", "docs.jsonl", "--id", "doc_id", "--seed", "7")
    assert code == 0, err
    plan = json.loads((tmp_path / "plan.json").read_text())["cases"]
    code, out, err = _lm_eval_in_batches(capsys, lm_eval)
    assert code == 1, err
    verdict, n, of = _settled(out)
    assert (verdict, of) == ("fail", 40)
    assert n <= 20  # wrong is over at its fifth; a fail waits for no_score to clear
    batches = -(-n // 10)
    assert "batch 1: exit 0, 10 cases in samples_1.jsonl" in out
    assert f"settled: the {4 - batches} later batches are not run" in out
    # lm-eval ran only the settled batches: their output folders and samples, none later
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        str(b) for b in range(1, batches + 1)]
    assert sorted(p.name for p in tmp_path.glob("samples_*.jsonl")) == [
        f"samples_{b}.jsonl" for b in range(1, batches + 1)]
    ran: dict[int, tuple[Any, ...]] = {}
    for b in range(batches):
        rows = _lm_eval_rows(tmp_path / f"samples_{b + 1}.jsonl")
        assert sorted(rows) == sorted(int(doc) for doc in plan[10 * b:10 * b + 10])
        ran.update(rows)
    # the full run, every document: the batch's rows are its rows, and check fails it too
    full = tmp_path / "full"
    done = subprocess.run([*shlex.split(lm_eval), "--output_path", str(full / "results.json")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    (samples,) = full.glob("samples_fg_*.jsonl")
    everything = _lm_eval_rows(samples)
    assert sorted(everything) == list(range(40))
    assert all(doc == {"question": f"q{i}", "answer": target} for i, (doc, target, _)
               in everything.items())
    assert ran == {doc: everything[doc] for doc in ran}
    assert sum(score for _, _, score in everything.values()) == 4
    code, out, err = run(capsys, "check", str(samples))
    assert code == 1, out + err


@pytest.mark.slow
def test_real_lm_eval_in_batches_passes_a_clean_system_after_running_its_batches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The same recipe over 20 documents the ``dummy`` model answers right but one: a pass
    is settled only once ``wrong`` is ruled over its ceiling, so lm-eval runs both batches,
    each logging its own planned documents."""
    lm_eval = _lm_eval_task(tmp_path, ["a7" if i == 7 else "lol" for i in range(20)],
                            monkeypatch)
    code, _, err = run(capsys, "plan", "docs.jsonl", "--id", "doc_id", "--seed", "3")
    assert code == 0, err
    plan = json.loads((tmp_path / "plan.json").read_text())["cases"]
    code, out, err = _lm_eval_in_batches(capsys, lm_eval)
    assert code == 0, err
    verdict, n, of = _settled(out)
    assert (verdict, of) == ("pass", 20)
    assert n > 10  # 10 right answers cannot rule out 5 wrong in the other 10
    assert "batch 2: exit 0, 10 cases in samples_2.jsonl" in out
    for b in (1, 2):
        rows = _lm_eval_rows(tmp_path / f"samples_{b}.jsonl")
        assert sorted(rows) == sorted(int(doc) for doc in plan[10 * b - 10:10 * b])
        assert all(doc["question"] == f"q{i}" and score == (doc["answer"] == "lol")
                   for i, (doc, _, score) in rows.items())


def test_a_batch_harness_that_never_exits_nor_writes_is_stopped_after_idle_seconds(
        project: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``watch --batch 3 --idle-seconds 1 -- sleep 40`` (behind a shell that records its
    pid): the batch is stopped, its whole group, after the idle second, no later batch is
    run, and the run is inconclusive (exit 3), as an unbatched run whose report stalls: no
    case arrived, so nothing is settled. Before, watch waited for the harness to exit."""
    monkeypatch.setattr("pytest_failgate.commands.harness.STOP_GRACE_SECONDS", 1.0)
    _broken_run(project, capsys, planned=30, failing=6)
    started = time.monotonic()
    code, out, err = run(capsys, "watch", "batch.jsonl", "--plan", "plan.json", "--batch", "3",
                         "--idle-seconds", "1", "--", "sh", "-c",
                         "echo $$ > pid; exec sleep 40")
    assert code == 3, out + err  # before: exit 2 after 40 s ("did not write its report")
    assert time.monotonic() - started < 30
    assert ("batch 1: no new write of batch.jsonl for 1 seconds (--idle-seconds): the harness "
            "is stopped, and no later batch is run") in out
    assert "batch 2 of" not in out
    assert "verdict inconclusive:" in out
    pid = int((project / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the sleep is gone, reaped


def test_a_batch_harness_that_writes_in_time_is_not_stopped(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Idle means no write: a batch whose harness writes within the idle seconds runs on."""
    _broken_run(project, capsys, planned=12, failing=0)
    code, out, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--batch",
                         "6", "--idle-seconds", "30", "--", sys.executable, "harness.py",
                         "cases.json", "{ids}", "results.jsonl")
    assert code == 0, out + err
    assert "--idle-seconds" not in out
