"""Gold labels are evidence: ``failgate guard`` compares the labels file the gate reads (the
ceilings file's ``labels:``, or the ``failgate_labels`` setting) as it compares a noise
band. A label removed, or changed away from a category, lets a run fail less: a loosening
unless the change writes a reason; a label changed from null to a category does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import commit, git, run_cli
from labelled_project import draw, make_project, write_gold

CEILINGS = {"retrieval_miss": 80, "generator_hallucination": 40}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    make_project(tmp_path, CEILINGS)
    write_gold(tmp_path, draw(tmp_path), missed_share=0.2)
    text = (tmp_path / "ceilings.yaml").read_text()
    (tmp_path / "ceilings.yaml").write_text(text.replace("taxonomy: rag\n",
                                                         "taxonomy: rag\nlabels: gold.jsonl\n"))
    (tmp_path / "sample.json").unlink()
    git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path)
    return tmp_path


def _labels(repo: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (repo / "gold.jsonl").read_text().splitlines()]


def _write(repo: Path, labels: list[dict[str, Any]]) -> None:
    (repo / "gold.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))


def _guard(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code, out, err = run_cli(capsys, "guard", "reports", "--base", "main")
    assert "Traceback" not in err
    return code, out + err


def _first(labels: list[dict[str, Any]], category: str | None) -> dict[str, Any]:
    return next(x for x in labels if "id" in x and x["category"] == category)


def test_unchanged_labels_pass(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _guard(capsys)[0] == 0


def test_a_label_changed_away_from_a_category_is_a_loosening(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = _labels(repo)
    changed = _first(labels, "retrieval_miss")
    changed["category"] = None
    _write(repo, labels)
    code, out = _guard(capsys)
    assert code == 1
    assert f"{changed['id']}: retrieval_miss -> null" in out


def test_a_label_changed_from_null_to_a_category_tightens(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = _labels(repo)
    _first(labels, None)["category"] = "generator_hallucination"
    _write(repo, labels)
    assert _guard(capsys)[0] == 0


def test_a_removed_label_is_a_loosening_and_a_reason_excuses_it(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = _labels(repo)
    gone = _first(labels, None)
    _write(repo, [x for x in labels if x is not gone])
    code, out = _guard(capsys)
    assert code == 1
    assert "1 removed" in out
    assert gone["id"] in out
    text = (repo / "ceilings.yaml").read_text()
    (repo / "ceilings.yaml").write_text(
        text + 'reason: "a duplicate case dropped from the dataset"\n')
    assert _guard(capsys)[0] == 0


def test_labels_added_where_the_judges_counts_were_gated_is_a_change_to_explain(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (repo / "ceilings.yaml").read_text()
    (repo / "ceilings.yaml").write_text(text.replace("labels: gold.jsonl\n", ""))
    commit(repo)
    (repo / "ceilings.yaml").write_text(text)
    code, out = _guard(capsys)
    assert code == 1
    assert "corrected counts where the judge's were gated" in out


def test_the_labels_setting_is_compared_by_content_too(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (repo / "ceilings.yaml").read_text()
    (repo / "ceilings.yaml").write_text(text.replace("labels: gold.jsonl\n", ""))
    (repo / "pytest.ini").write_text("[pytest]\nfailgate_labels = gold.jsonl\n")
    commit(repo)
    labels = _labels(repo)
    _first(labels, "retrieval_miss")["category"] = "generator_hallucination"
    _write(repo, labels)
    code, out = _guard(capsys)
    assert code == 1
    assert "-> generator_hallucination" in out


def _append(repo: Path, labels: list[dict[str, Any]]) -> None:
    with (repo / "gold.jsonl").open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(x) + "\n" for x in labels)


def test_labels_appended_outside_the_draw_are_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = {x["id"] for x in _labels(repo) if "id" in x}
    picked = [f"ok-{i}" for i in range(320) if f"ok-{i}" not in listed][:120]
    _append(repo, [{"id": x, "category": None} for x in picked])
    code, out = _guard(capsys)
    assert code == 1
    assert "120 added outside the draw of seed 7" in out
    assert picked[0] in out


def test_a_changed_or_dropped_seed_header_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    header, *labels = _labels(repo)
    _write(repo, [{**header, "seed": 8}, *labels])
    code, out = _guard(capsys)
    assert code == 1
    assert f"seed 7, n 200, run {header['run']} -> seed 8, n 200" in out
    _write(repo, labels)
    code, out = _guard(capsys)
    assert code == 1
    assert "no seed header: the draw the labels are checked against changed" in out


def test_filling_in_a_drawn_cases_line_is_not_a_loosening(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    header, *labels = _labels(repo)
    blank = {key: value for key, value in labels[0].items() if key != "category"}
    _write(repo, [header, blank, *labels[1:]])
    commit(repo)
    _write(repo, [header, *labels])
    assert _guard(capsys)[0] == 0


@pytest.mark.parametrize("where", ["now", "base"])
def test_a_fake_labels_key_is_refused_by_name_by_the_gate_and_the_guard(
        repo: Path, capsys: pytest.CaptureFixture[str], where: str) -> None:
    header, first, *labels = _labels(repo)
    _write(repo, [header, {**first, "confidence": 0.9}, *labels])
    code, out, err = run_cli(capsys, "check", "reports", "--labels", "gold.jsonl")
    assert code == 2
    assert "gold.jsonl:2: unknown key 'confidence'" in out + err
    if where == "base":
        commit(repo)
        _write(repo, [header, first, *labels])
    code, out = _guard(capsys)
    assert code == 2
    assert "gold.jsonl:2: unknown key 'confidence'" in out


def _csv(repo: Path, labels: list[dict[str, Any]], extra: str = "") -> None:
    rows = [f"id,category{extra}"] + [f"{x['id']},{x['category'] or ''}" + (",x" if extra
                                                                          else "")
                                      for x in labels if "id" in x]
    (repo / "gold.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_a_csv_label_changed_to_passes_is_a_loosening(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = _labels(repo)
    _csv(repo, labels)
    text = (repo / "ceilings.yaml").read_text()
    (repo / "ceilings.yaml").write_text(text.replace("labels: gold.jsonl", "labels: gold.csv"))
    commit(repo)
    assert _guard(capsys)[0] == 0
    changed = _first(labels, "retrieval_miss")
    changed["category"] = None
    _csv(repo, labels)
    code, out = _guard(capsys)
    assert code == 1
    assert f"{changed['id']}: retrieval_miss -> null" in out


def test_a_fake_csv_column_is_refused_by_name_by_the_gate_and_the_guard(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (repo / "ceilings.yaml").read_text()
    (repo / "ceilings.yaml").write_text(text.replace("labels: gold.jsonl", "labels: gold.csv"))
    _csv(repo, _labels(repo))
    commit(repo)
    _csv(repo, _labels(repo), extra=",confidence")
    code, out, err = run_cli(capsys, "check", "reports")
    assert code == 2
    assert "gold.csv:1:13: unknown column 'confidence'" in out + err
    code, out = _guard(capsys)
    assert code == 2
    assert "gold.csv:1:13: unknown column 'confidence'" in out
