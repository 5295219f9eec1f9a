"""Labels belong to a run: ``failgate sample`` records what it drew from (the seed, the size,
the run's case set, each drawn case's content), and the gate uses a label only for a case
of the seed's draw on this run whose content is unchanged. The rest are named and never
enter the estimate: cherry-picked labels appended outside the draw, last week's labels on
today's changed answers, a file made for another run, a drawn case left unlabelled."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import case, cases_for, run_cli, write_jsonl
from labelled_project import COUNTS, check_json, draw, judge_of, make_project, write_gold

from pytest_failgate.core.compare.labels import read_labels

CEILINGS = {"retrieval_miss": 80, "generator_hallucination": 40}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return make_project(tmp_path, CEILINGS)


_check = check_json


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _reports(project: Path) -> list[Any]:
    """The run's reports as the gate reads them for labels (with content digests)."""
    from dataclasses import replace

    from pytest_failgate.commands.app import Failgate
    from pytest_failgate.commands.config import Config

    app = Failgate(Config(paths=(project / "reports",), ceilings=project / "ceilings.yaml",
                          rootdir=project))
    return app.load_all(app.config.paths, replace(app.read_spec(), digests=True))


def _cherry_picked(project: Path) -> tuple[Path, list[str]]:
    """The sample's labels (the judge missed 30% of the passing cases' retrieval misses:
    the gate fails), then 120 labels appended for cases the seed did not draw, saying
    each truly passes: every failing case it did not draw, then passing ones."""
    sample = draw(project)
    gold = write_gold(project, sample, missed_share=0.3)
    drawn = {item["id"] for item in sample["cases"]}
    failing = [f"{name}-{i}" for name, n in COUNTS.items() for i in range(n)]
    picked = [x for x in failing if x not in drawn]
    assert len(picked) >= 30  # (the run has 80 failing cases, about half of them drawn)
    picked += [f"ok-{i}" for i in range(320) if f"ok-{i}" not in drawn]
    picked = picked[:120]
    with gold.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"id": x, "category": None}) + "\n" for x in picked)
    return gold, picked


def test_the_sample_written_as_jsonl_is_the_labels_file_to_fill_in(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "sample", "reports", "--n", "200", "--seed", "7",
                           "--out", "gold.jsonl")
    assert code == 0
    assert 'add "category" to each case\'s line of gold.jsonl' in out
    header, *cases = _lines(project / "gold.jsonl")
    assert (header["seed"], header["n"], header["of"]) == (7, 200, 400)
    assert len(header["run"]) == 16
    assert len(cases) == 200
    assert all(set(item) == {"id", "content"} for item in cases)
    # the labeller fills in the category of 195 lines, and leaves 5 blank
    filled = [{**item, "category": judge_of(item["id"])} for item in cases[5:]]
    _write(project / "gold.jsonl", [header, *cases[:5], *filled])
    code, out, _ = _check(capsys, "--labels", "gold.jsonl")
    assert "5 drawn cases" in out
    assert "without a usable label" in out
    labels = read_labels(project / "gold.jsonl", _reports(project))
    assert len(labels.labels) == 195
    assert {case_id for _, case_id in labels.unknown} == {item["id"] for item in cases[:5]}
    assert labels.drawn
    # every line filled: the gate passes on the labels alone, no note
    _write(project / "gold.jsonl",
           [header, *({**item, "category": judge_of(item["id"])} for item in cases)])
    code, out, _ = _check(capsys, "--labels", "gold.jsonl")
    assert code == 0
    assert "labels: gold.jsonl" not in out
    assert read_labels(project / "gold.jsonl", _reports(project)).unknown == ()


def test_cherry_picked_labels_outside_the_draw_are_named_and_not_used(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold, picked = _cherry_picked(project)
    code, out, document = _check(capsys, "--labels", str(gold))
    assert code == 1  # as without the 120
    assert "120 labels (" in out
    assert "the seed 7 did not draw: never used" in out
    assert picked[0] in out
    labels = read_labels(gold, _reports(project))
    assert len(labels.outside) == 120
    assert len(labels.labels) == 200
    assert not {case_id for _, case_id in labels.outside} & {x.id for x in labels.labels}
    rows = {row["name"]: row for row in document["reports"][0]["rows"]}
    assert rows["retrieval_miss"]["verdict"] == "fail"
    assert rows["retrieval_miss"]["count"] == 60


@pytest.mark.heavy
def test_cherry_picked_labels_fail_the_ci_step_too(project: Path) -> None:
    gold, _ = _cherry_picked(project)
    step = subprocess.run([sys.executable, "-I", "-m", "pytest_failgate.ci", "reports",
                           "--labels", gold.name, "--out-dir", "ci"], cwd=project,
                          capture_output=True, text=True, check=False)
    assert step.returncode == 1, step.stdout + step.stderr
    assert json.loads((project / "ci" / "verdict.json").read_text())["verdict"] == "fail"


def test_a_plain_seed_header_takes_the_longest_draw_its_labels_cover(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold, _ = _cherry_picked(project)
    lines = _lines(gold)
    plain = [{"seed": lines[0]["seed"]}] + [{"id": x["id"], "category": x["category"]}
                                             for x in lines[1:]]
    _write(gold, plain)
    labels = read_labels(gold, _reports(project))
    # (an appended case that happens to be the draw's next is a larger sample's, rightly)
    assert labels.inferred is not None
    assert 200 <= labels.inferred < 210
    assert len(labels.outside) == 320 - labels.inferred
    assert len(labels.labels) == labels.inferred
    code, out, _ = _check(capsys, "--labels", str(gold))
    assert code == 1
    assert f"the sample taken as the seed's draw of {labels.inferred}" in out


def test_labels_of_no_draw_may_fail_a_count_but_never_pass_one_the_judge_fails(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the judge's 60 retrieval misses over a ceiling of 50: the judge fails it
    (project / "ceilings.yaml").write_text("version: 1\ntaxonomy: rag\nceilings:\n  "
                                           "retrieval_miss: 50\n  generator_hallucination: 40\n")
    assert _check(capsys)[0] == 1
    # labels with no seed, each of a failing case saying it truly passes
    lines = [{"id": f"retrieval_miss-{i}", "category": None} for i in range(40)]
    lines += [{"id": f"ok-{i}", "category": None} for i in range(160)]
    gold = _write(project / "gold.jsonl", lines)
    code, out, document = _check(capsys, "--labels", str(gold))
    assert code == 1
    assert "the labels would pass it" in out
    assert "the judge's count fails it" in out
    rows = {row["name"]: row for row in document["reports"][0]["rows"]}
    assert rows["retrieval_miss"]["verdict"] == "fail"


def test_last_weeks_labels_on_todays_changed_answers_are_named_and_not_used(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = draw(project)
    gold = write_gold(project, sample)
    assert _check(capsys, "--labels", str(gold))[0] == 0
    # today's run: the same cases, 50 of the 200 labelled answers changed (25%)
    changed = [item["id"] for item in sample["cases"] if item["id"].startswith("ok-")][:50]
    records = [json.loads(line) for line in
               (project / "reports" / "run.jsonl").read_text().splitlines()]
    for record in records:
        if record["id"] in changed:
            record["evidence_doc_ids"] = ["doc-b", "doc-a", "doc-c"]
    write_jsonl(project / "reports" / "run.jsonl", records)
    code, out, _ = _check(capsys, "--labels", str(gold))
    assert code != 0  # 50 drawn cases have no usable label: never a silent pass
    assert "50 labels (" in out
    assert "changed since they were labelled" in out
    assert changed[0] in out
    labels = read_labels(gold, _reports(project))
    assert {case_id for _, case_id in labels.changed} == set(changed)
    assert not set(changed) & {label.id for label in labels.labels}
    assert {case_id for _, case_id in labels.unknown} == set(changed)
    assert len(labels.labels) == 150


def test_labels_made_for_another_run_are_not_used(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write_gold(project, draw(project))
    # another run: the case set grew by ten cases
    write_jsonl(project / "reports" / "run.jsonl",
                [*cases_for(COUNTS, passed=320, seed=4),
                 *(case(f"new-{i}") for i in range(10))])
    code, out, _ = _check(capsys, "--labels", str(gold))
    assert code != 0
    assert "made for another run" in out
    assert "none of its labels is used" in out
    labels = read_labels(gold, _reports(project))
    assert labels.labels == ()
    assert labels.other_run is not None
    assert len(labels.unknown) == 200


def test_a_cases_digest_is_its_content_as_the_taxonomy_reads_it(tmp_path: Path) -> None:
    from pytest_failgate.core.reports.choice import TaxonomyChoice
    from pytest_failgate.core.reports.model import Report, ReportFile
    from pytest_failgate.core.reports.read import ReadSpec, load_report
    from pytest_failgate.core.reports.sink import SCAN_AFTER

    records = cases_for(COUNTS, passed=SCAN_AFTER + 600, seed=2)  # the generated loop's too
    path = write_jsonl(tmp_path / "run.jsonl", records)

    def digests(spec: ReadSpec) -> dict[str, str] | None:
        report = load_report(ReportFile(path, "run"), TaxonomyChoice(), spec)
        assert isinstance(report, Report)
        return report.digests

    assert digests(ReadSpec()) is None  # kept only when asked for
    by_loop = digests(ReadSpec(digests=True))
    by_add = digests(ReadSpec(digests=True, explain=True))  # (explain: no loop, all by add)
    assert by_loop is not None
    assert by_loop == by_add
    assert len(set(by_loop.values())) > 1
    first, second = records[0]["id"], records[-1]["id"]
    records[0] = {**records[0], "answer": "a new wording no rule reads"}
    records[-1] = {**records[-1], "evidence_doc_ids": ["doc-z"]}
    write_jsonl(path, records)
    after = digests(ReadSpec(digests=True))
    assert after is not None
    assert after[first] == by_loop[first]
    assert after[second] != by_loop[second]
    assert sum(after[key] != by_loop[key] for key in by_loop) == 1


def test_labels_without_their_content_digest_are_used_with_a_note(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = draw(project)
    sample["cases"] = [{"id": item["id"]} for item in sample["cases"]]  # no "content"
    gold = write_gold(project, sample)
    code, out, _ = _check(capsys, "--labels", str(gold))
    assert code == 0
    assert "200 of its labels carry no content digest" in out


def _change(project: Path, ids: set[str]) -> None:
    """The answers of ``ids`` changed (another evidence list): their labels no longer hold."""
    run = project / "reports" / "run.jsonl"
    records = [json.loads(line) for line in run.read_text().splitlines()]
    run.write_text("".join(json.dumps({**r, "evidence_doc_ids": ["doc-c", "doc-a"]}
                                      if r["id"] in ids else r) + "\n" for r in records))


def test_labelling_again_is_labelling_what_changed(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write_gold(project, draw(project), missed_share=0.3)
    labelled = _lines(gold)[1:]
    changed = {x["id"] for x in labelled if x["id"].startswith("ok-")}
    changed = set(sorted(changed)[:10])
    _change(project, changed)
    code, out, _ = run_cli(capsys, "sample", "reports", "--n", "200", "--seed", "7",
                           "--labels", str(gold), "--out", "again.jsonl")
    assert code == 0
    assert "190 labels carried over from" in out
    assert "(10 left)" in out
    again = _lines(project / "again.jsonl")
    assert again[0]["seed"] == 7
    left = {x["id"] for x in again[1:] if "category" not in x}
    assert left == changed  # exactly the changed cases are left to label
    by_id = {x["id"]: x["category"] for x in labelled}
    assert all(x["category"] == by_id[x["id"]] for x in again[1:] if "category" in x)
    # labelled as they truly are now, the file is this run's sample: every label used
    (project / "again.jsonl").write_text("".join(
        json.dumps({**x, "category": judge_of(x["id"])} if "category" not in x and "id" in x
                   else x) + "\n" for x in again), encoding="utf-8")
    code, out, document = _check(capsys, "--labels", "again.jsonl")
    assert code == 1  # the judge's misses the labels show: retrieval_miss over its 80
    assert document["verdict"] == "fail"
    assert "without a usable label" not in out


def test_a_label_without_its_content_is_not_carried_over(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write_gold(project, draw(project))
    lines = _lines(gold)
    stripped = [lines[0], *({k: v for k, v in x.items() if k != "content"} for x in lines[1:6]),
                *lines[6:]]
    gold.write_text("".join(json.dumps(x) + "\n" for x in stripped), encoding="utf-8")
    code, out, _ = run_cli(capsys, "sample", "reports", "--n", "200", "--seed", "7",
                           "--labels", str(gold), "--out", "again.jsonl")
    assert code == 0
    assert "195 labels carried over" in out
    # another seed's draw meets only some of the same cases: only those are carried
    code, out, _ = run_cli(capsys, "sample", "reports", "--n", "200", "--seed", "8",
                           "--labels", str(gold), "--out", "other.jsonl")
    assert code == 0
    other = _lines(project / "other.jsonl")[1:]
    carried = {x["id"] for x in other if "category" in x}
    assert 0 < len(carried) < 200
    assert carried <= {x["id"] for x in lines[6:]}
