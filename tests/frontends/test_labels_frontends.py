"""Gold labels give the same verdict in every front end: ``failgate check --labels``,
``pytest --failgate-labels``, the CI step (``python -m pytest_failgate.ci --labels``) and the
MCP ``check`` tool with ``labels``: one run where a corrected count fails, one where a
count is inconclusive, one where 120 cherry-picked labels appended outside the sample's
draw (each saying a case truly passes) are not used, so the count still fails, and one
where a quarter of the labelled answers changed since (stale labels, not used)."""

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
    "inconclusive": ({"retrieval_miss": 60, "generator_hallucination": 40}, 0.0, ""),
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
    assert cli[0] in ("fail", "inconclusive")
    assert cli_code == {"fail": 1, "inconclusive": 3}[cli[0]]
    assert any(row[2] is not None for row in cli[1].values())  # corrected rows
    if route == "cherry-picked":
        assert cli[0] == "fail"
        assert any("120 labels (" in note and "did not draw" in note for note in cli[2])
    if route == "stale":
        assert any("50 labels (" in note and "changed since" in note for note in cli[2])
        assert cli[0] == "inconclusive"

    pytester.makeini("[pytest]\n")
    ran = pytester.runpytest_subprocess("--failgate=reports", "--failgate-labels=gold.jsonl",
                                        "--failgate-json=pytest.json", "-p", "no:cacheprovider")
    assert ran.ret == pytest.ExitCode.TESTS_FAILED
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
