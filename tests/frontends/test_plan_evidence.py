"""The plan is evidence, and it plans the ids the gate reads.

- ``failgate plan`` reads a dataset's case ids by the gate's rule with the ceilings file's
  taxonomy (``id_field: qid``), and says which field it used; ``watch``'s error for a case
  the plan does not hold names ``--id``.
- ``watch`` (and the API, MCP) refuse a plan whose order is not the one its seed draws over
  its cases (a hand-reordered plan with its seed kept), naming the first difference; pytest's
  ``--failgate-sequential`` refuses tests reordered after its plan was drawn.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import cases_for, write_ceilings, write_jsonl
from helpers import run_cli as run

OWN_TAXONOMY = """\
name: own
id_field: qid
types: {score: number | null}
failed: score < 0.5
categories:
  - {name: wrong}
"""


@pytest.fixture
def own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with its own fields: cases carry ``qid`` and ``score``, the taxonomy's
    ``id_field`` is ``qid``; a dataset of 40 questions (ids only, no outcomes yet)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "own.yaml").write_text(OWN_TAXONOMY, encoding="utf-8")
    (tmp_path / "ceilings.yaml").write_text("version: 1\ntaxonomy: own.yaml\nceilings:\n"
                                            "  wrong: 5\n", encoding="utf-8")
    write_jsonl(tmp_path / "dataset.jsonl", [
        {"qid": f"HD-{i:04d}", "number": i, "question": f"question {i}?"}
        for i in range(1, 41)])
    return tmp_path


def _results(project: Path, order: list[str], wrong: int = 2) -> None:
    """The harness's report: each planned case (by qid) with its score, in plan order."""
    write_jsonl(project / "results.jsonl", [
        {"qid": qid, "score": 0.0 if index < wrong else 1.0} for index, qid in enumerate(order)])


def test_plan_reads_the_ceilings_files_id_field_and_says_so(
        own: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "plan", "dataset.jsonl", "--seed", "7")
    assert code == 0, err
    assert out.splitlines()[-1] == "case ids: the field qid"
    plan = json.loads((own / "plan.json").read_text())
    assert sorted(plan["cases"]) == [f"HD-{i:04d}" for i in range(1, 41)]
    _results(own, plan["cases"])
    code, out, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--replay")
    checked = run(capsys, "check", "results.jsonl")[0]
    assert code == checked == 0, err  # the harness's qids are the plan's: gated, a pass


def test_plan_without_an_id_field_says_it_planned_positions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "dataset.jsonl", [{"qid": f"q{i}"} for i in range(3)])
    code, out, _ = run(capsys, "plan", "dataset.jsonl", "--seed", "1")
    assert code == 0
    assert out.splitlines()[-1].startswith("case ids: positions (#1 to #3): no case has id, "
                                           "case_id, question_id or sample_id (--id FIELD")


def test_watchs_error_for_an_id_not_in_the_plan_names_id(
        own: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "plan", "dataset.jsonl", "--seed", "7", "--id", "number")[0] == 0
    numbers = json.loads((own / "plan.json").read_text())["cases"]
    _results(own, [f"HD-{int(n):04d}" for n in numbers])
    code, _, err = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--replay")
    assert code == 2
    assert err.startswith('failgate: error: results.jsonl:1: case "HD-')
    assert "is not in the plan: the report's case ids are read from qid" in err
    assert "the plan's from the field number" in err
    assert "--id FIELD" in err


def test_plan_reads_through_the_size_limit(own: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    code, _, err = run(capsys, "plan", "dataset.jsonl", "--max-report-bytes", "100")
    assert code == 2
    assert "more than the limit of 100 (--max-report-bytes)" in err
    assert not (own / "plan.json").exists()


# ------------------------------------------------------------------- the plan is evidence


@pytest.fixture
def rag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 4})
    # 300 cases, 10 retrieval misses: check fails the full run
    write_jsonl(tmp_path / "data.jsonl", cases_for({"retrieval_miss": 10}, passed=290, seed=3))
    return tmp_path


def _plan(project: Path) -> dict[str, object]:
    document: dict[str, object] = json.loads((project / "plan.json").read_text())
    return document


def test_a_plan_reordered_by_hand_with_its_seed_kept_is_refused(
        rag: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "plan", "data.jsonl", "--seed", "7")[0] == 0
    cases = {c["id"]: c for c in map(json.loads, (rag / "data.jsonl").read_text().splitlines())}
    plan = _plan(rag)
    drawn = list(plan["cases"])  # type: ignore[call-overload]
    # the control: the plan as drawn is gated, and agrees with check (a fail)
    code, _, err = run(capsys, "watch", "data.jsonl", "--plan", "plan.json", "--replay",
                       "--futility", "0.05")
    assert (code, run(capsys, "check", "data.jsonl")[0]) == (1, 1), err
    # passing cases first, the seed kept
    reordered = sorted(drawn, key=lambda i: "accuracy" in cases[i] and cases[i]["accuracy"] == 0)
    (rag / "plan.json").write_text(json.dumps({**plan, "cases": reordered}))
    code, out, err = run(capsys, "watch", "data.jsonl", "--plan", "plan.json", "--replay",
                         "--futility", "0.05")
    first = next(i for i, (a, b) in enumerate(zip(reordered, drawn, strict=True)) if a != b)
    assert (code, out) == (2, "")
    assert err == (f"failgate: error: plan.json: the plan's order is not the one its seed 7 "
                   f"draws over its 300 cases: case {first + 1} is \"{reordered[first]}\" where "
                   f"the seed draws \"{drawn[first]}\"; an order chosen by hand is not a random "
                   "one (draw it with `failgate plan`)\n")


def test_a_plan_with_a_number_too_large_to_read_is_exit_2_naming_it(
        rag: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "plan", "data.jsonl", "--seed", "7")[0] == 0
    text = (rag / "plan.json").read_text()
    (rag / "plan.json").write_text(text.replace('"seed": 7', '"seed": ' + "9" * 5000))
    code, out, err = run(capsys, "watch", "data.jsonl", "--plan", "plan.json", "--replay")
    assert (code, out) == (2, "")
    assert "plan.json" in err
    assert "a number too large to read" in err
    assert "Traceback" not in err


def test_the_order_depends_on_the_seed_and_the_case_set_not_the_files_order(
        rag: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (rag / "data.jsonl").read_text().splitlines()
    (rag / "reversed.jsonl").write_text("\n".join(reversed(lines)) + "\n")
    run(capsys, "plan", "data.jsonl", "--seed", "7", "--out", "a.json")
    run(capsys, "plan", "reversed.jsonl", "--seed", "7", "--out", "b.json")
    first = json.loads((rag / "a.json").read_text())["cases"]
    assert first == json.loads((rag / "b.json").read_text())["cases"]
    assert first != [json.loads(line)["id"] for line in lines]  # shuffled


def test_the_api_refuses_a_reordered_plan_too(rag: Path, capsys: pytest.CaptureFixture[str]
                                              ) -> None:
    from pytest_failgate.api import sequential_gate
    from pytest_failgate.core.base.errors import FailgateError

    run(capsys, "plan", "data.jsonl", "--seed", "7")
    plan = _plan(rag)
    swapped = list(plan["cases"])  # type: ignore[call-overload]
    swapped[0], swapped[-1] = swapped[-1], swapped[0]
    (rag / "plan.json").write_text(json.dumps({**plan, "cases": swapped}))
    with pytest.raises(FailgateError, match="case 1 is"):
        sequential_gate(300, plan="plan.json")


REORDER = """
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_collection_modifyitems(items):
    yield
    items.reverse()  # after every plugin's reordering: a plan's order undone
"""


def test_pytest_refuses_tests_reordered_after_the_plan(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", ceilings="version: 1\ntaxonomy: rag\nceilings:\n  unknown: 3\n")
    pytester.makepyfile(test_evals="\n".join(f"def test_{i}():\n    pass\n" for i in range(8)))
    control = pytester.runpytest("--failgate-sequential=3")
    assert control.ret == pytest.ExitCode.OK
    pytester.makeconftest(REORDER)
    result = pytester.runpytest("--failgate-sequential=3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the tests do not run in the order seed 3 draws: test 1 is*"])
