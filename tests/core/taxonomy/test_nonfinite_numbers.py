"""A number a rule orders that is NaN or infinite is an error naming its cases and their
count, never a silent pass.

``failed: score < 0.5`` with a score of NaN (``NaN`` in JSON, which Python's parser takes)
or of 1e400 (infinite once parsed) was a passed case: Python's ``nan < 0.5`` is False. Such
a comparison has no answer, so neither failed nor passed is true of the case: the report
does not load (exit 2), and the error says how many cases and which. The SQL engines stop
with the same words. A NaN in a field no rule orders changes nothing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from helpers import run_cli

if TYPE_CHECKING:
    from pathlib import Path

@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no ceilings file of this repository's


TAXONOMY = "name: scored\nfailed: score < 0.5\ncategories:\n  - name: low\n"


def _report(folder: Path, scores: list[str], extra: str = "") -> Path:
    (folder / "scored.yaml").write_text(TAXONOMY)
    lines = [f'{{"id": "c{i}", "score": {score}{extra}}}' for i, score in enumerate(scores)]
    path = folder / "run.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("bad", ["NaN", "1e400", "-1e400", "Infinity"])
def test_a_non_finite_score_under_an_ordering_rule_is_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    path = _report(tmp_path, ["0.9", bad, "0.2", bad, "0.7"])
    code, out, err = run_cli(capsys, "show", str(path), "--taxonomy",
                             str(tmp_path / "scored.yaml"))
    assert code == 2, out + err
    said = out + err
    assert "2 of 5 cases have a number that is NaN or infinite where a rule compares it" in said
    assert "the first, case #2 ('c1'): failed: '<' cannot order" in said
    assert "also #4" in said


def test_past_the_generated_loop_the_cases_are_counted_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After 1,000 cases the reader classifies in a generated loop: the same count."""
    scores = ["0.9"] * 1500
    for index in (1100, 1200, 1300):
        scores[index] = "NaN"
    path = _report(tmp_path, scores)
    code, out, err = run_cli(capsys, "show", str(path), "--taxonomy",
                             str(tmp_path / "scored.yaml"))
    assert code == 2
    assert "3 of 1500 cases have a number that is NaN or infinite" in out + err
    assert "case #1101 ('c1100')" in out + err


def test_a_nan_no_rule_orders_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _report(tmp_path, ["0.9", "0.2"], extra=', "latency": NaN')
    code, out, _ = run_cli(capsys, "show", str(path), "--taxonomy",
                           str(tmp_path / "scored.yaml"))
    assert code == 0
    assert "2 cases, 1 failed" in out


def test_a_finite_float_still_orders_as_before(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = _report(tmp_path, ["0.49999", "0.5", "1e300", "-0.0", "5"])
    code, out, _ = run_cli(capsys, "show", str(path), "--taxonomy",
                           str(tmp_path / "scored.yaml"))
    assert code == 0
    assert "5 cases, 2 failed" in out


@pytest.mark.parametrize("form", ["parquet", "jsonl"])
def test_duckdb_stops_on_a_non_finite_score_with_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    duckdb = pytest.importorskip("duckdb")
    (tmp_path / "scored.yaml").write_text(TAXONOMY)
    path = tmp_path / f"run.{form}"
    if form == "parquet":
        duckdb.sql("COPY (SELECT * FROM (VALUES ('a', 'nan'::DOUBLE), ('b', 0.2), "
                   f"('c', 0.9)) t(id, score)) TO '{path}'")
    else:
        path.write_text("\n".join(json.dumps({"id": i, "score": s}) for i, s in
                                  [("a", float("inf")), ("b", 0.2)]) + "\n")
    code, out, err = run_cli(capsys, "show", str(path), "--engine", "duckdb", "--taxonomy",
                             str(tmp_path / "scored.yaml"))
    assert code == 2
    assert "'<' cannot order a number that is not finite (NaN or infinite)" in out + err


@pytest.mark.parametrize("rule", ["score < 1e999", "score > -1e400", "1e999 > score"])
def test_a_rule_whose_threshold_is_not_finite_is_refused_where_it_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], rule: str) -> None:
    (tmp_path / "t.yaml").write_text(f"name: scored\nfailed: '{rule}'\n"
                                     "categories:\n  - name: low\n", encoding="utf-8")
    path = _report(tmp_path, ["0.2", "0.9"])
    code, out, err = run_cli(capsys, "show", str(path), "--taxonomy", str(tmp_path / "t.yaml"))
    assert code == 2
    assert "t.yaml:2:" in out + err
    assert "too large to be finite" in out + err
