"""Gold labels give the same verdict in every front end: ``failgate check --labels``,
``pytest --failgate-labels``, the CI step (``python -m pytest_failgate.ci --labels``) and the
MCP ``check`` tool with ``labels``: one run where a corrected count fails, one where the
ceilings sit at the judge's counts and agreeing labels pass them (the labels do not show a
true count over its ceiling); one where 120 cherry-picked labels appended outside the
sample's draw (each saying a case truly passes) are not used, so the count still fails,
and one where a quarter of the labelled answers changed since (stale labels, not used:
the counts they could move are inconclusive); the same failing items in each (pytest, with
and without xdist, never fails an undecided count: its report's one ``inconclusive`` item
fails instead)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import mcp_calls
from labelled_project import COUNTS, draw, make_project, write_gold

from pytest_failgate.cli import main

FIELDS = ("verdict", "count", "estimate", "lower", "upper")
RUNS = {  # ceilings, the share of passing cases the judge missed as retrieval misses, and
    # what happens after labelling: 120 labels appended for cases the seed did not draw, or
    # 50 of the labelled answers changed
    "fails": ({"retrieval_miss": 80, "generator_hallucination": 40}, 0.3, ""),
    "passes": ({"retrieval_miss": 60, "generator_hallucination": 20}, 0.0, ""),
    "cherry-picked": ({"retrieval_miss": 80, "generator_hallucination": 40}, 0.3, "picked"),
    "stale": ({"retrieval_miss": 80, "generator_hallucination": 40}, 0.0, "stale"),
}


def _decided(document: dict[str, Any]) -> tuple[str, dict[str, tuple[Any, ...]], list[str]]:
    """The verdict, each row's corrected count, and what the labels' notes say."""
    rows = document["reports"][0]["rows"]
    return document["verdict"], {row["name"]: tuple(row[key] for key in FIELDS)
                                 for row in rows}, sorted(
        note for note in document["warnings"] if note.startswith("labels:"))


@pytest.fixture(params=sorted(RUNS))
def project(request: pytest.FixtureRequest, pytester: pytest.Pytester) -> Path:
    ceilings, share, then = RUNS[request.param]
    root = make_project(pytester.path, ceilings)
    sample = draw(root)
    gold = write_gold(root, sample, missed_share=share)
    if then == "stale":
        changed = {x["id"] for x in sample["cases"] if x["id"].startswith("ok-")}
        run = root / "reports" / "run.jsonl"
        records = [json.loads(line) for line in run.read_text().splitlines()]
        changed = set(sorted(changed)[:50])
        run.write_text("".join(json.dumps({**r, "evidence_doc_ids": ["doc-c", "doc-a"]}
                                          if r["id"] in changed else r) + "\n"
                               for r in records))
    if then == "picked":
        drawn = {item["id"] for item in sample["cases"]}
        outside = [f"{name}-{i}" for name, n in COUNTS.items() for i in range(n)]
        outside += [f"ok-{i}" for i in range(320)]
        with gold.open("a", encoding="utf-8") as handle:
            handle.writelines(json.dumps({"id": x, "category": None}) + "\n"
                              for x in [x for x in outside if x not in drawn][:120])
    return root


@pytest.mark.slow
def test_every_front_end_gives_the_same_corrected_verdict(
        project: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest) -> None:
    route = request.node.callspec.params["project"]
    monkeypatch.chdir(project)
    cli_code = main(["check", "reports", "--labels", "gold.jsonl", "--json", "cli.json"])
    capsys.readouterr()
    cli = _decided(json.loads((project / "cli.json").read_text()))
    assert cli_code == {"fail": 1, "pass": 0, "inconclusive": 3}[cli[0]]
    assert any(row[2] is not None for row in cli[1].values())  # corrected rows
    if route == "fails":
        assert cli[0] == "fail"
    if route == "passes":  # agreeing labels at the judge's counts: not shown over them
        assert cli[0] == "pass"
    if route == "cherry-picked":
        assert cli[0] == "fail"
        assert any("120 labels (" in note and "did not draw" in note for note in cli[2])
    if route == "stale":
        assert any("50 labels (" in note and "changed since" in note for note in cli[2])
        assert cli[0] == "inconclusive"

    pytester.makeini("[pytest]\n")
    ran = pytester.runpytest_subprocess("--failgate=reports", "--failgate-labels=gold.jsonl",
                                        "--failgate-json=pytest.json", "-p", "no:cacheprovider")
    assert ran.ret == (pytest.ExitCode.OK if cli[0] == "pass" else pytest.ExitCode.TESTS_FAILED)
    assert _decided(json.loads((project / "pytest.json").read_text())) == cli

    step = subprocess.run([sys.executable, "-I", "-m", "pytest_failgate.ci", "reports",
                           "--labels", "gold.jsonl", "--out-dir", "ci"], cwd=project,
                          capture_output=True, text=True, check=False)
    assert step.returncode == cli_code, step.stdout + step.stderr
    verdict = json.loads((project / "ci" / "verdict.json").read_text())
    assert verdict["verdict"] == cli[0]

    _, results = mcp_calls(project, [("check", {"paths": ["reports"],
                                                "labels": "gold.jsonl"})])
    assert not results[0].is_error
    assert _decided(dict(results[0].structured_content)) == cli


# One count fails (the labels show the judge missed retrieval misses), one is undecided (ten
# labelled passing cases changed since they were labelled: whether those ten are truly
# hallucinations decides generator_hallucination's verdict): the run fails, and every front
# end fails the same two items, the failing count and the report's one ``inconclusive``
# item, never the undecided count.
MIXED = {"retrieval_miss": 80, "generator_hallucination": 20}
MIXED_FAILED = {"ceilings.yaml::run::retrieval_miss", "ceilings.yaml::run::inconclusive"}
UNDECIDED = "ceilings.yaml::run::generator_hallucination"


def _labelled_then_changed(root: Path, missed_share: float, changed: int = 10) -> None:
    """Gold labels for the sample, then ``changed`` labelled passing cases' answers changed:
    their labels no longer hold, so the gate cannot use them."""
    gold = write_gold(root, draw(root), missed_share=missed_share)
    labelled = [json.loads(line) for line in gold.read_text().splitlines()[1:]]
    stale = {x["id"] for x in labelled if x["id"].startswith("ok-") and x["category"] is None}
    stale = set(sorted(stale)[:changed])
    run = root / "reports" / "run.jsonl"
    records = [json.loads(line) for line in run.read_text().splitlines()]
    run.write_text("".join(json.dumps({**r, "evidence_doc_ids": ["doc-c", "doc-a"]}
                                      if r["id"] in stale else r) + "\n" for r in records))


@pytest.fixture
def mixed(pytester: pytest.Pytester) -> Path:
    root = make_project(pytester.path, MIXED)
    _labelled_then_changed(root, missed_share=0.3)
    pytester.makeini("[pytest]\n")
    return root


def _cli_failed(project: Path, monkeypatch: pytest.MonkeyPatch,
                capsys: pytest.CaptureFixture[str]) -> tuple[int, set[str], dict[str, Any]]:
    monkeypatch.chdir(project)
    code = main(["check", "reports", "--labels", "gold.jsonl", "--json", "cli.json"])
    out = capsys.readouterr().out
    failed = {line.split()[1] for line in out.splitlines() if line.startswith("FAILED ")}
    return code, failed, json.loads((project / "cli.json").read_text())


def test_pytest_fails_the_items_the_command_fails_never_an_undecided_count(
        mixed: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, failed, document = _cli_failed(mixed, monkeypatch, capsys)
    assert code == 1
    rows = {row["name"]: row for row in document["reports"][0]["rows"]}
    assert rows["generator_hallucination"]["verdict"] == "inconclusive"  # the table says so
    assert rows["retrieval_miss"]["verdict"] == "fail"
    assert failed == MIXED_FAILED
    recorded = pytester.inline_run("--failgate=reports", "--failgate-labels=gold.jsonl",
                                   "-p", "no:cacheprovider")
    _, skipped, failures = recorded.listoutcomes()
    assert {report.nodeid for report in failures} == MIXED_FAILED
    assert UNDECIDED in {r.nodeid for r in skipped}
    assert recorded.ret == pytest.ExitCode.TESTS_FAILED


def test_an_undecided_run_is_one_failing_inconclusive_item(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    root = make_project(pytester.path, MIXED)
    _labelled_then_changed(root, missed_share=0.0)
    pytester.makeini("[pytest]\n")
    code, failed, _ = _cli_failed(root, monkeypatch, capsys)
    assert code == 3
    assert failed == {"ceilings.yaml::run::inconclusive"}
    recorded = pytester.inline_run("--failgate=reports", "--failgate-labels=gold.jsonl",
                                   "-p", "no:cacheprovider")
    _, skipped, failures = recorded.listoutcomes()
    assert [report.nodeid for report in failures] == ["ceilings.yaml::run::inconclusive"]
    assert UNDECIDED in {r.nodeid for r in skipped}


@pytest.mark.heavy
def test_every_front_end_fails_the_same_items_with_labels_under_xdist_too(
        mixed: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_failgate.core.base.result import GateResult
    from pytest_failgate.output.text import item_id

    code, failed, _ = _cli_failed(mixed, monkeypatch, capsys)
    assert failed == MIXED_FAILED
    for xdist in ([], ["-n", "2"]):
        ran = pytester.runpytest_subprocess("--failgate=reports", "--failgate-labels=gold.jsonl",
                                            "-p", "no:cacheprovider", "-rf", *xdist)
        shown = {line.split()[1] for line in ran.outlines if line.startswith("FAILED ")}
        assert shown == MIXED_FAILED, (xdist, ran.outlines[-15:])
        assert ran.ret == pytest.ExitCode.TESTS_FAILED
    step = subprocess.run([sys.executable, "-m", "pytest_failgate.ci", "reports",
                           "--labels", "gold.jsonl", "--out-dir", "ci"], cwd=mixed,
                          capture_output=True, text=True, check=False)
    assert step.returncode == code, step.stdout + step.stderr
    assert set(json.loads((mixed / "ci" / "verdict.json").read_text())["failed"]) == MIXED_FAILED
    summary = (mixed / "ci" / "failgate.md").read_text(encoding="utf-8")
    assert "Judge vs gold labels" in summary  # the CI step's summary says how far to trust it
    _, results = mcp_calls(mixed, [("check", {"paths": ["reports"], "labels": "gold.jsonl"})])
    served = GateResult.model_validate(dict(results[0].structured_content))
    assert {item_id(served.ceilings_path, row) for row in served.rows
            if row.failing} == MIXED_FAILED
