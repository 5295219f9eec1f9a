"""The first hour of teams on promptfoo, DeepEval and the seed's run format (issue 47):
the walls they met, each driven with the commands the docs give, on the tools' real files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers import cases_for, run_cli, write_ceilings, write_summary
from test_first_hour_own_fields import TAXONOMY, own_fields

from pytest_failgate.core.ceilings.load import load_ceilings
from pytest_failgate.core.taxonomy import builtin_taxonomies

# -- init --force keeps the file's own taxonomy, inline too ------------------------------


@pytest.mark.parametrize("reason", [None, "a new judge"])
def test_init_force_keeps_an_inline_taxonomy(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], reason: str | None
) -> None:
    root = own_fields(pytester.path)
    inline = "".join(f"  {line}\n" for line in TAXONOMY.splitlines())
    ceilings = root / "ceilings.yaml"
    ceilings.write_text(f"version: 1\ntaxonomy:\n{inline}ceilings:\n  wrong_doc: 0\n",
                        encoding="utf-8")
    assert run_cli(capsys, "check", "reports")[0] == 1  # 5 wrong_doc over a ceiling of 0
    code, out, err = run_cli(capsys, "init", "reports", "--force",
                             *(("--reason", reason) if reason else ()))
    assert code == 0, out + err
    assert "init: replaced ceilings.yaml" in out
    written = ceilings.read_text(encoding="utf-8")
    assert "\ntaxonomy:\n  name: helpdesk\n" in written  # inline still, not a name
    kept = load_ceilings(ceilings, builtin_taxonomies())
    assert kept.taxonomy.name == "helpdesk"
    assert kept.taxonomy.category_names == ("wrong_doc", "other")
    assert kept.model.ceilings["wrong_doc"].max == 5
    assert run_cli(capsys, "check", "reports")[0] == 0


# -- the seed's run format: recorded counts nested under ``aggregate`` -------------------

FOUND = {"verifier_false_negative": 2, "retrieval_miss": 2}


def _nested(root: Path, recorded: dict[str, int], **top: Any) -> None:
    write_summary(root / "reports" / "run.json", cases_for(FOUND, passed=3), **top,
                  aggregate={"failure_category_counts": recorded, "num_predictions": 7,
                             "accuracy": 0.5})
    write_ceilings(root / "ceilings.yaml", FOUND)


def test_counts_nested_under_aggregate_are_cross_checked(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _nested(pytester.path, {"verifier_false_negative": 2, "retrieval_miss": 1})
    code, out, _ = run_cli(capsys, "check", "reports")
    assert code == 1, out
    assert "the report's recorded aggregates disagree with its 7 cases" in out
    assert "retrieval_miss: recorded 1, recomputed 2" in out
    every = {name: FOUND.get(name, 0) for name in builtin_taxonomies()["rag"].category_names}
    _nested(pytester.path, every)  # every count recorded as found: the consistency holds
    code, out, _ = run_cli(capsys, "check", "reports")
    assert code == 0, out
    assert "disagree" not in out


def test_the_same_key_at_both_levels_with_two_values_is_refused_by_place(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _nested(pytester.path, FOUND, num_predictions=9)
    code, out, _ = run_cli(capsys, "check", "reports")
    assert code == 2  # the report cannot be read: an error item, the run exit 2
    assert "aggregate.num_predictions differs from the top level's num_predictions" in out
    assert re.search(r"run\.json:\d+:\d+", out), out


# -- raising one ceiling: the message says which other ceiling must move ------------------


def test_raising_one_category_says_total_must_move_too(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = pytester.path
    write_summary(root / "reports" / "run.json", cases_for({"unknown": 20}, passed=10))
    assert run_cli(capsys, "init", "reports")[0] == 0
    ceilings = root / "ceilings.yaml"
    assert "\n  total: 20\n" in ceilings.read_text()
    write_summary(root / "reports" / "run.json", cases_for({"unknown": 26}, passed=4))
    text = ceilings.read_text().replace("\n  unknown: 20\n", "\n  unknown: 26\n")
    ceilings.write_text(text)  # the one raise a pull request makes
    code, out, _ = run_cli(capsys, "check", "reports")
    assert code == 1
    assert "total: 26 cases, 6 over the ceiling of 20" in out
    assert ("every category it counts is within its own ceiling: a category's ceiling was "
            "raised without this one; total must move too, to at least 26") in out
    ceilings.write_text(text.replace("\n  total: 20\n", "\n  total: 26\n"))
    assert run_cli(capsys, "check", "reports")[0] == 0
    ceilings.write_text(text.replace("\n  total: 20\n", "\n"))  # or total not gated at all
    assert run_cli(capsys, "check", "reports")[0] == 0
    # a category over its own ceiling is the news: total's item says nothing more
    ceilings.write_text(text.replace("\n  unknown: 26\n", "\n  unknown: 21\n"))
    code, out, _ = run_cli(capsys, "check", "reports")
    assert code == 1
    assert "unknown: 26 cases, 5 over the ceiling of 21" in out
    assert "must move too" not in out


# -- advice from the reader: what fits the tool and the project -------------------------

DATA = Path(__file__).resolve().parents[1] / "data"


def _deepeval_project(root: Path) -> None:
    """A pytest-native DeepEval project: its tests under testpaths, xdist in addopts, and
    the .deepeval/ folder one `deepeval test run` left (real DeepEval 4.3.1 files)."""
    import shutil

    shutil.copytree(DATA / "deepeval" / "folder" / ".deepeval", root / ".deepeval")
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\naddopts = "-n 2 -p no:cacheprovider"\n',
        encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_unit.py").write_text(
        "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n", encoding="utf-8")


@pytest.mark.heavy
def test_deepeval_advice_is_a_step_of_its_own_and_following_it_keeps_pytest_green(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = pytester.path
    _deepeval_project(root)
    code, out, _ = run_cli(capsys, "init", ".deepeval")
    assert code == 0, out
    assert ("init: `deepeval test run tests/` writes .deepeval after its own pytest session "
            "ends, so the gate is a step of its own after it: `failgate check .deepeval` (or "
            "`pytest --failgate=.deepeval ceilings.yaml`, which runs the gate alone)") in out
    assert "set the ini key" not in out
    assert "exits 1 when a test fails" in out
    # followed: plain pytest runs the project's tests only, and stays green
    plain = pytester.runpytest_subprocess()
    plain.assert_outcomes(passed=2)
    # the gate's own step, both ways the advice gives
    assert run_cli(capsys, "check", ".deepeval")[0] == 0
    gate = pytester.runpytest_subprocess("--failgate=.deepeval", "ceilings.yaml")
    assert gate.ret == 0, gate.stdout.str()
    assert "test_unit.py" not in gate.stdout.str()  # the gate alone, not the project's tests
    assert "passed" in gate.stdout.str()


def test_a_project_without_pytest_configuration_gets_the_command_line_step(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    root = pytester.path
    (root / "package.json").write_text('{"name": "bot", "private": true}\n', encoding="utf-8")
    (root / "evals").mkdir()
    shutil.copy(DATA / "promptfoo" / "generated" / "run1" / "results.json",
                root / "evals" / "results.json")
    code, out, _ = run_cli(capsys, "init", "evals")
    assert code == 0, out
    assert ("init: this project has no pytest configuration: gate it with `failgate check "
            "evals` as a CI step after the evaluation") in out
    assert "ini key" not in out
    assert "PROMPTFOO_FAILED_TEST_EXIT_CODE=0" in out  # the tool's note, from its reader


# -- what is new: the comment marks each failing case against the base branch's run ------


def test_the_comment_marks_each_failing_case_new_or_already_failing_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from pytest_failgate.ci.__main__ import main as ci_main

    monkeypatch.chdir(tmp_path)
    runs = DATA / "promptfoo" / "generated"  # real promptfoo 0.121.20: before and after
    for folder, run in (("base", "run1"), ("evals", "run2")):
        (tmp_path / folder).mkdir()
        shutil.copy(runs / run / "results.json", tmp_path / folder / "results.json")
    assert run_cli(capsys, "init", "base")[0] == 0  # the base branch's ceilings
    code = ci_main(["evals", "--check-arg=--baseline=base", "--out-dir", "out"], env={})
    capsys.readouterr()
    assert code == 1
    comment = (tmp_path / "out" / "failgate.md").read_text(encoding="utf-8")
    block = comment[comment.index("· <code>text_match</code>"):]
    block = block[:block.index("</details>")]
    assert "2 new, 4 already failing" in block
    assert ('- `echo/0/exact answer` **new**: `Expected output "Question (answer in one '
            'line): Berlin" to equal "Question: Berlin"`') in block
    assert ('- `echo/0/arithmetic` already failing: `Expected output to match regex '
            '"\\b4\\b"`') in block
    # the new ones first
    assert block.index("**new**") < block.index(" already failing:")
    # without a baseline: the first cases, each with its reason, unmarked
    assert run_cli(capsys, "check", "evals", "--md", "plain.md")[0] == 1
    plain = (tmp_path / "plain.md").read_text(encoding="utf-8")
    assert "- `echo/0/arithmetic`: `Expected output to match regex" in plain
    assert "already failing" not in plain


# -- categories users recognise: a category per metric of their own ---------------------


def _deepeval_run(path: Path, failing: list[str]) -> None:
    """A DeepEval test run (``.deepeval/.latest_run_full.json``'s shape) whose cases fail
    the given custom metrics, one case each, beside two that pass every metric (the same
    instrument, run after run)."""
    import json

    def metric(name: str, success: bool) -> dict[str, Any]:
        return {"name": name, "success": success, "score": 1.0 if success else 0.0,
                "threshold": 0.5, "reason": f"{name} said no" if not success else "ok",
                "error": None}

    cases = [{"name": f"case_{n}", "success": False, "order": n,
              "metricsData": [metric(name, False)]} for n, name in enumerate(failing)]
    cases += [{"name": f"ok_{n}", "success": True, "order": len(failing) + n,  # every metric
               "metricsData": [metric(name, True) for name in ("Keyword", "Length", "Tone")]}
              for n in range(2)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"testCases": cases, "conversationalTestCases": [],
                                "testPassed": 2, "testFailed": len(failing)}), encoding="utf-8")


def test_deepeval_custom_metrics_are_categories_by_their_names(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    run = pytester.path / ".deepeval" / ".latest_run_full.json"
    _deepeval_run(run, ["Keyword", "Keyword", "Length"])
    code, out, _ = run_cli(capsys, "init", ".deepeval")
    assert code == 0, out
    assert ("init: a category per metric of your own, by its name (Keyword, Length), written "
            "inline as taxonomy deepeval-own (extends: deepeval)") in out
    written = (pytester.path / "ceilings.yaml").read_text(encoding="utf-8")
    assert "\n  Keyword: 2\n  Length: 1\n" in written
    assert "\n  other_metric: 0\n" in written
    code, out, _ = run_cli(capsys, "check", ".deepeval")
    assert code == 0, out
    # a new metric is a new category's failure at ceiling 0: the gate fails, naming it
    _deepeval_run(run, ["Keyword", "Keyword", "Length", "Tone"])
    code, out, _ = run_cli(capsys, "check", ".deepeval")
    assert code == 1
    assert "other_metric: 1 case, 1 over the ceiling of 0" in out


def test_an_extended_taxonomy_adds_categories_only(tmp_path: Path) -> None:
    from pytest_failgate.core.base.errors import FailgateError
    from pytest_failgate.core.taxonomy.files import taxonomy_from_yaml

    extended = taxonomy_from_yaml(
        'name: mine\nextends: deepeval\ncategories:\n  - {name: Keyword, when: '
        'failed_metric == "Keyword"}\n')
    base = builtin_taxonomies()["deepeval"]
    assert extended.category_names == ("Keyword", *base.category_names)
    assert extended.failed.text == base.failed.text
    for text, message in [
        ("name: m\nextends: nope\ncategories: []\n", "extends names a built-in taxonomy"),
        ("name: m\nextends: deepeval\nfailed: 'true'\ncategories: []\n", "unknown key 'failed'"),
        ("name: m\nextends: deepeval\ncategories:\n  - {name: x}\n", "needs a 'when'"),
        ("name: m\nextends: deepeval\ncategories:\n  - {name: safety, when: 'true'}\n",
         "'safety' is a category of deepeval already"),
    ]:
        with pytest.raises(FailgateError, match=message) as raised:
            taxonomy_from_yaml(text, tmp_path / "t.yaml")
        assert raised.value.line is not None, message


def test_a_real_deepeval_runs_own_metrics_are_its_categories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """DeepEval 4.3.1's own files (tests/data/deepeval/README.md): three custom BaseMetrics
    failed once each, where the built-in taxonomy said other_metric: 3."""
    import shutil

    shutil.copytree(DATA / "deepeval" / "test_run" / ".deepeval", tmp_path / ".deepeval")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "init", ".deepeval")
    assert code == 0, out
    assert "(Keyword_Recall, Brevity, Resolved_In_Turns)" in out
    written = (tmp_path / "ceilings.yaml").read_text(encoding="utf-8")
    assert "\n  Keyword_Recall: 1\n  Brevity: 1\n  Resolved_In_Turns: 1\n" in written
    assert 'when: failed_metric == "Keyword Recall"' in written
    assert "\n  other_metric: 0\n" in written
    assert run_cli(capsys, "check", ".deepeval")[0] == 0


def test_pytest_init_splits_a_real_deepeval_runs_own_metrics_as_failgate_init_does(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pytest --failgate-init`` writes the file ``failgate init`` writes: each of the
    run's own metrics a category by its name, not ``other_metric: 3``; and says so."""
    import shutil

    root = pytester.path
    shutil.copytree(DATA / "deepeval" / "test_run" / ".deepeval", root / ".deepeval")
    done = pytester.runpytest("-p", "no:cacheprovider", "--failgate=.deepeval",
                              "--failgate-init")
    assert done.ret == 0, done.stdout.str()
    out = done.stdout.str()
    assert "(Keyword_Recall, Brevity, Resolved_In_Turns)" in out
    written = (root / "ceilings.yaml").read_text(encoding="utf-8")
    assert "\n  Keyword_Recall: 1\n  Brevity: 1\n  Resolved_In_Turns: 1\n" in written
    assert "\n  other_metric: 0\n" in written
    (root / "ceilings.yaml").unlink()
    assert run_cli(capsys, "init", ".deepeval")[0] == 0
    assert (root / "ceilings.yaml").read_text(encoding="utf-8") == written  # one writer
    gate = pytester.runpytest("-p", "no:cacheprovider", "--failgate=.deepeval", "ceilings.yaml")
    assert gate.ret == 0, gate.stdout.str()
