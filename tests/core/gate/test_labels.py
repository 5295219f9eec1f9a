"""Gold labels correct the judge: ``failgate sample`` draws the sample, ``--labels`` gates
each count's corrected true count (fail, pass or inconclusive), bad labels are exit 2
naming the file and the line."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli
from labelled_project import check_json, draw, make_project, write_gold

CEILINGS = {"retrieval_miss": 80, "generator_hallucination": 40}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return make_project(tmp_path, CEILINGS)


_check = check_json


def _rows(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in document["reports"][0]["rows"]}


def _decided(document: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    return {name: tuple(row[key] for key in ("verdict", "count", "estimate", "lower", "upper"))
            for name, row in _rows(document).items()}


def test_the_same_seed_draws_the_same_distinct_cases(project: Path) -> None:
    first = draw(project, 200, seed=7)["cases"]
    again = draw(project, 200, seed=7)["cases"]
    other = draw(project, 200, seed=8)["cases"]
    assert first == again
    assert len({case["id"] for case in first}) == 200
    assert {case["id"] for case in other} != {case["id"] for case in first}


def test_the_sample_file_says_how_to_label(project: Path) -> None:
    document = draw(project, 50, seed=3)
    assert document["n"] == 50
    assert document["of"] == 400
    assert document["seed"] == 3
    assert (f'{{"seed": 3, "n": 50, "run": "{document["run"]}"}}'
            in document["how_to_label"])
    assert "retrieval_miss" in document["categories"]
    # what it drew from: each case's content digest, and no judge's category
    assert all(set(case) == {"id", "content"} for case in document["cases"])
    assert all(len(case["content"]) == 16 for case in document["cases"])


def test_too_small_a_sample_is_refused(project: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    code, _, err = run_cli(capsys, "sample", "reports", "--n", "10", "--seed", "1")
    assert code == 2
    assert "at least 30" in err


def test_labels_that_find_the_judge_missed_cases_fail_a_count_the_judge_passes(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _check(capsys)[0] == 0  # the judge's 60 retrieval misses are under 80
    gold = write_gold(project, draw(project), missed_share=0.3)
    code, out, document = _check(capsys, "--labels", str(gold))
    assert code == 1
    row = _rows(document)["retrieval_miss"]
    assert row["count"] == 60
    assert row["verdict"] == "fail"
    assert row["lower"] > 80
    assert row["lower"] <= row["estimate"] <= row["upper"]
    assert (f"judge 60, corrected {round(row['estimate'])} [{row['lower']}, {row['upper']}]"
            in out)


def test_agreeing_labels_pass_a_count_well_under_its_ceiling_and_one_at_it(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write_gold(project, draw(project))
    code, out, document = _check(capsys, "--labels", str(gold))
    rows = _rows(document)
    assert rows["retrieval_miss"]["verdict"] == "pass"
    assert rows["retrieval_miss"]["upper"] <= 80
    assert rows["generator_hallucination"]["verdict"] == "pass"
    assert code == 0
    assert "assume" not in out  # the labels are the seed's sample: no note
    # the ceilings of the run they came from (init's): the labels do not show the true
    # count over them, so the run is green; the largest count not ruled out is above
    (project / "ceilings.yaml").write_text("version: 1\ntaxonomy: rag\nceilings:\n  "
                                           "retrieval_miss: 60\n  generator_hallucination: 20\n")
    code, out, document = _check(capsys, "--labels", str(gold))
    assert code == 0
    rows = _rows(document)
    assert {row["verdict"] for row in rows.values()} == {"pass"}
    assert rows["retrieval_miss"]["lower"] <= 60 < rows["retrieval_miss"]["upper"]
    assert rows["retrieval_miss"]["detectable"] > 0
    assert document["verdict"] == "pass"


def test_a_ceiling_of_0_passes_with_no_labelled_case_in_it_and_fails_on_one(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "ceilings.yaml").write_text("version: 1\ntaxonomy: rag\nceilings:\n  "
                                           "retrieval_miss: 80\n  generator_hallucination: 40\n  "
                                           "context_dilution: 0\n")
    sample = draw(project)
    gold = write_gold(project, sample)
    code, _, document = _check(capsys, "--labels", str(gold))
    assert code == 0
    assert _rows(document)["context_dilution"]["verdict"] == "pass"
    lines = gold.read_text(encoding="utf-8").splitlines()
    passing = next(number for number, line in enumerate(lines)
                   if '"category": null' in line)
    lines[passing] = lines[passing].replace('"category": null', '"category": '
                                            '"context_dilution"')
    gold.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, document = _check(capsys, "--labels", str(gold))
    assert code == 1
    row = _rows(document)["context_dilution"]
    assert row["verdict"] == "fail"
    assert row["count"] == 0
    assert row["lower"] >= 1
    assert "the labels show the true count over the ceiling of 0" in out


def test_a_category_with_no_labelled_case_of_the_judges_is_gated_on_its_count(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = draw(project, 200, seed=7)
    path = project / "ok.jsonl"  # only cases the judge passed: none of its 20 hallucinations
    path.write_text("".join(json.dumps({"id": c["id"], "category": None}) + "\n"
                            for c in sample["cases"] if c["id"].startswith("ok-")),
                    encoding="utf-8")
    code, out, document = _check(capsys, "--labels", str(path))
    assert code == 0
    rows = _rows(document)
    assert rows["generator_hallucination"]["estimate"] is None  # the judge's count
    assert "no labelled case among the judge's cases of" in out
    assert rows["retrieval_miss"]["estimate"] is None


def test_drawn_cases_without_a_usable_label_are_decided_both_ways(
        project: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from pytest_failgate.core.compare import labels as labels_module

    real = labels_module.read_labels
    dropped: list[tuple[str, str]] = []

    def with_unknown(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        kept = [label for label in found.labels if (label.report, label.id) not in dropped]
        return replace(found, labels=tuple(kept), unknown=tuple(dropped))

    monkeypatch.setattr(labels_module, "read_labels", with_unknown)
    gold = write_gold(project, draw(project))
    ids = [json.loads(line)["id"] for line in gold.read_text().splitlines()[1:]]
    # two passing cases unusable: whichever they truly are, 80 holds retrieval misses
    dropped[:] = [("run", case) for case in ids if case.startswith("ok-")][:2]
    code, out, document = _check(capsys, "--labels", str(gold))
    assert code == 0
    assert _rows(document)["retrieval_miss"]["verdict"] == "pass"
    assert "2 drawn cases without a usable label" in out
    # against a ceiling of 0, sixty passing cases unusable: truly in it fails, not passes
    (project / "ceilings.yaml").write_text("version: 1\ntaxonomy: rag\nceilings:\n  "
                                           "retrieval_miss: 80\n  generator_hallucination: 40\n  "
                                           "context_dilution: 0\n")
    dropped[:] = [("run", case) for case in ids if case.startswith("ok-")][:60]
    code, out, document = _check(capsys, "--labels", str(gold))
    assert code == 3
    row = _rows(document)["context_dilution"]
    assert row["verdict"] == "inconclusive"
    assert "60 drawn cases without a usable label decide it" in out
    # and too few usable labels left: every corrected count inconclusive
    dropped[:] = [("run", case) for case in ids][:185]
    code, out, document = _check(capsys, "--labels", str(gold))
    assert code == 3
    assert {row["verdict"] for row in _rows(document).values()
            if row["estimate"] is not None} == {"inconclusive"}
    assert "fewer than the 30 a corrected count needs" in out


def test_the_ceilings_files_labels_key_gates_as_the_option_does(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_gold(project, draw(project), missed_share=0.3)
    code, _, by_option = _check(capsys, "--labels", "gold.jsonl")
    text = (project / "ceilings.yaml").read_text()
    (project / "ceilings.yaml").write_text(text.replace("taxonomy: rag\n",
                                                        "taxonomy: rag\nlabels: gold.jsonl\n"))
    again, _, by_key = _check(capsys)
    assert (code, again) == (1, 1)
    assert _decided(by_option) == _decided(by_key)


def test_labels_not_drawn_by_sample_are_accepted_with_a_note(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write_gold(project, draw(project), header=False)
    code, out, _ = _check(capsys, "--labels", str(gold))
    assert code == 0
    assert "assume its cases are a uniform random sample" in out


def _bad(project: Path, lines: list[Any]) -> Path:
    sample = draw(project)
    good = [{"id": case["id"], "category": None if case["id"].startswith("ok-")
             else case["id"].rsplit("-", 1)[0]} for case in sample["cases"]]
    text = "\n".join(json.dumps(line) if not isinstance(line, str) else line
                     for line in (*lines, *good[len(lines):]))
    path = project / "bad.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("lines", "line", "says"), [
    ([{"id": "no-such-case", "category": None}], 1, "not a case of report 'run'"),
    ([{"id": "ok-1", "category": None}, {"id": "ok-1", "category": None}], 2,
     "labelled twice (first on line 1)"),
    ([{"id": "ok-1", "category": "retreival_miss"}], 1,
     "unknown category 'retreival_miss' (taxonomy rag); did you mean 'retrieval_miss'?"),
    (["{not json"], 1, "not JSON"),
    ([["ok-1", None]], 1, "a label is a JSON object"),
    ([{"id": "ok-1"}], 1, "a label needs 'category'"),
    ([{"id": "ok-1", "category": None, "catgory": 1}], 1, "unknown key 'catgory'"),
    ([{"id": "ok-1", "category": None, "report": "other"}], 1,
     "report \"other\" is not a report of the run"),
    (['{"seed": ' + "9" * 5000 + "}"], 1, "a number too large to read"),
    (['{"id": ' + "7" * 5000 + ', "category": null}'], 1, "a number too large to read"),
])
def test_a_bad_label_is_exit_2_naming_the_file_and_line(
        project: Path, capsys: pytest.CaptureFixture[str], lines: list[Any], line: int,
        says: str) -> None:
    path = _bad(project, lines)
    code, out, _ = _check(capsys, "--labels", str(path))
    assert code == 2
    assert f"bad.jsonl:{line}" in out
    assert says in out


def test_fewer_than_30_labels_are_exit_2(project: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    sample = draw(project, 30, seed=2)
    path = project / "few.jsonl"
    path.write_text("".join(json.dumps({"id": c["id"], "category": None}) + "\n"
                            for c in sample["cases"][:29]), encoding="utf-8")
    code, out, _ = _check(capsys, "--labels", str(path))
    assert code == 2
    assert "few.jsonl:29: 29 labels, fewer than the 30" in out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_labels_is_refused_without_blocking(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(project / "gold.jsonl")
    code, out, _ = _check(capsys, "--labels", "gold.jsonl")
    assert code == 2
    assert "gold.jsonl: expected a regular file, found a FIFO" in out


def test_a_missing_labels_file_named_by_the_ceilings_file_names_its_line(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "ceilings.yaml").write_text("version: 1\ntaxonomy: rag\nlabels: gone.jsonl\n"
                                           "ceilings:\n  retrieval_miss: 80\n")
    code, out, _ = _check(capsys)
    assert code == 2
    assert "ceilings.yaml:3" in out
    assert "labels: gone.jsonl is not a file" in out


def test_the_markdown_and_html_reports_show_the_corrected_count(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write_gold(project, draw(project), missed_share=0.3)
    code, _, document = _check(capsys, "--labels", str(gold), "--md", "gate.md",
                               "--html", "gate.html")
    assert code == 1
    row = _rows(document)["retrieval_miss"]
    shown = f"judge 60, corrected {round(row['estimate'])} [{row['lower']}, {row['upper']}]"
    # (Markdown escapes the brackets, so that no id or count can start a link)
    assert shown.replace("[", "\\[").replace("]", "\\]") in Path("gate.md").read_text(
        encoding="utf-8")
    assert shown in Path("gate.html").read_text(encoding="utf-8")
    # the headroom is the true count's estimate's: negative, where the judge's count would
    # leave 20
    room = 80 - math.ceil(row["estimate"])
    assert room < 0
    assert f"| {room} |" in Path("gate.md").read_text(encoding="utf-8")


def _good_lines(project: Path) -> list[str]:
    return [json.dumps({"id": case["id"], "category": None if case["id"].startswith("ok-")
                        else case["id"].rsplit("-", 1)[0]}) for case in draw(project)["cases"]]


def test_a_bad_byte_is_named_by_line_and_column(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [line.encode() for line in _good_lines(project)]
    lines[2] = b'{"id": "ok-1", "category": null, "note": "caf\xe9"}'
    (project / "bad.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    code, out, _ = _check(capsys, "--labels", "bad.jsonl")
    assert code == 2
    assert "bad.jsonl:3:46: not UTF-8 text (byte 0xe9)" in out


@pytest.mark.parametrize(("line", "says"), [
    ('{"id": "ok-1", "category": null, "note": ' + "[" * 100_000 + "]" * 100_000 + "}",
     "not JSON: nested too deeply"),
    ('{"seed": 7, "n": ' + "9" * 5000 + "}", "a number too large to read"),
    ('{"seed": 7, "n": 5000}', "a sample of 5000 cases, and the run has 400"),
    ('{"seed": 7, "n": 0}', "n is the sample's size, at least 1"),
    ('{"seed": 7, "size": 200}', "unknown key 'size' in the header"),
])
def test_a_bad_first_line_is_exit_2_naming_the_line(
        project: Path, capsys: pytest.CaptureFixture[str], line: str, says: str) -> None:
    (project / "bad.jsonl").write_text("\n".join([line, *_good_lines(project)]) + "\n")
    code, out, _ = _check(capsys, "--labels", "bad.jsonl")
    assert code == 2
    assert "bad.jsonl:1:" in out
    assert says in out


def _csv_text(project: Path, header: str = "id,category") -> list[str]:
    rows = [json.loads(line) for line in _good_lines(project)]
    return [header, *(f"{row['id']},{row['category'] or ''}" for row in rows)]


def test_csv_labels_give_the_verdict_json_lines_give(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jsonl = write_gold(project, draw(project), missed_share=0.3, header=False)
    code, _, by_jsonl = _check(capsys, "--labels", str(jsonl))
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    # columns in another order, with a report column; an empty category cell passes
    (project / "gold.csv").write_text("category,report,id\n" + "".join(
        f"{row['category'] or ''},run,{row['id']}\n" for row in rows), encoding="utf-8")
    again, out, by_csv = _check(capsys, "--labels", "gold.csv")
    assert (code, again) == (1, 1)
    assert _decided(by_csv) == _decided(by_jsonl)
    assert "names no seed" in out  # a CSV file carries no sample's header


@pytest.mark.parametrize(("rows", "where", "says"), [
    (["id,catgory"], "bad.csv:1:4", "unknown column 'catgory' in the header; did you mean "
     "'category'?"),
    (["id,report"], "bad.csv:1", "the header names no 'category' column"),
    (["id,category,id"], "bad.csv:1:13", "the column 'id' is named twice"),
    (["id,category", "ok-1,", "ok-1,retrieval_miss"], "bad.csv:3",
     "case 'ok-1' is labelled twice (first on line 2)"),
    (["id,category", "ok-1"], "bad.csv:2", "1 cells where the header names 2"),
    (["id,category", ",retrieval_miss"], "bad.csv:2", "the id cell is empty"),
    (["id,category", '"ok-1,'], "bad.csv:", "not CSV"),
    (["id,category", "ok-1,retreival_miss"], "bad.csv:2", "unknown category 'retreival_miss'"),
])
def test_a_bad_csv_is_exit_2_naming_the_line(
        project: Path, capsys: pytest.CaptureFixture[str], rows: list[str], where: str,
        says: str) -> None:
    text = _csv_text(project)
    (project / "bad.csv").write_text("\n".join([*rows, *text[len(rows):]]) + "\n")
    code, out, _ = _check(capsys, "--labels", "bad.csv")
    assert code == 2
    assert f"{where}" in out
    assert says in out


def test_a_case_listed_twice_is_refused_in_json_lines_and_csv_alike(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _good_lines(project)
    (project / "twice.jsonl").write_text("\n".join([*lines, lines[4]]) + "\n")
    code, out, _ = _check(capsys, "--labels", "twice.jsonl")
    assert code == 2
    assert "twice.jsonl:201: case" in out
    assert "labelled twice (first on line 5)" in out
    text = _csv_text(project)
    (project / "twice.csv").write_text("\n".join([*text, text[5]]) + "\n")
    code, out, _ = _check(capsys, "--labels", "twice.csv")
    assert code == 2
    assert "twice.csv:202: case" in out
    assert "labelled twice (first on line 6)" in out


def test_init_with_labels_writes_true_max_beside_each_max_and_a_labelled_rerun_passes(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a judge that misses a tenth of the passing cases' retrieval misses: its count 60,
    # the true count about 100; init writes max 60 (the judge's) and true_max above 100
    gold = write_gold(project, draw(project), missed_share=0.1)
    (project / "ceilings.yaml").unlink()
    code, _, _ = run_cli(capsys, "init", "reports", "--labels", str(gold))
    assert code == 0
    import yaml

    written = yaml.safe_load((project / "ceilings.yaml").read_text(encoding="utf-8"))
    assert written["ceilings"]["retrieval_miss"]["max"] == 60
    true_max = written["ceilings"]["retrieval_miss"]["true_max"]
    assert true_max > 100
    code, _, document = _check(capsys, "--labels", str(gold))
    assert code == 0  # the run the ceilings came from, with its labels: green
    row = _rows(document)["retrieval_miss"]
    assert row["limit"] == true_max
    assert row["upper"] > 60  # against max, the judge's 60, it would not be green
    code, _, document = _check(capsys)  # a run without labels: the judge's count and max
    assert code == 0
    assert _rows(document)["retrieval_miss"]["limit"] == 60


def test_true_max_raised_or_removed_is_a_loosening_and_lowered_is_not() -> None:
    from pytest_failgate.core.ceilings.limit import Limit

    old = Limit(max=60, true_max=106)
    assert Limit(max=60, true_max=120).loosenings(old) == []
    assert old.loosenings(Limit(max=60, true_max=120)) == [(".true_max", 106, 120)]
    assert old.loosenings(Limit(max=60)) == []  # tested against max 60 then: tighter
    assert old.loosenings(Limit(max=80)) == [("", 60, 80)]
    assert Limit(max=60).loosenings(Limit(max=60, true_max=90)) == [(".true_max", 60, 90)]


def test_the_labelled_ratchet_lowers_true_max_only_to_the_bound_the_labels_show(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    (project / "ceilings.yaml").unlink()
    before = write_gold(project, draw(project), missed_share=0.1, name="before.jsonl")
    assert run_cli(capsys, "init", "reports", "--labels", str(before))[0] == 0
    written = yaml.safe_load((project / "ceilings.yaml").read_text(encoding="utf-8"))
    old = written["ceilings"]["retrieval_miss"]["true_max"]
    # the same labels again: no evidence of a fix, nothing lowered
    assert run_cli(capsys, "ratchet", "reports", "--labels", str(before))[0] == 0
    again = yaml.safe_load((project / "ceilings.yaml").read_text(encoding="utf-8"))
    assert again["ceilings"]["retrieval_miss"]["true_max"] == old
    # after a fix the labels agree with the judge's 60: lowered to the upper bound shown
    after = write_gold(project, draw(project), name="after.jsonl")
    code, _, document = _check(capsys, "--labels", str(after))
    assert code == 0
    bound = _rows(document)["retrieval_miss"]["upper"]
    assert 60 <= bound < old
    assert run_cli(capsys, "ratchet", "reports", "--labels", str(after))[0] == 0
    lowered = yaml.safe_load((project / "ceilings.yaml").read_text(encoding="utf-8"))
    assert lowered["ceilings"]["retrieval_miss"]["true_max"] == bound
    assert lowered["ceilings"]["retrieval_miss"]["max"] == 60  # the judge's: unchanged
    # and without labels the ratchet leaves every true_max where it is
    assert run_cli(capsys, "ratchet", "reports")[0] == 0
    assert yaml.safe_load((project / "ceilings.yaml").read_text(encoding="utf-8")) == lowered
