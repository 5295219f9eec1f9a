"""Gold labels give the same verdict in every front end: ``failgate check --labels``,
``pytest --failgate-labels``, the CI step (``python -m pytest_failgate.ci --labels``) and the
MCP ``check`` tool with ``labels``: one run where a corrected count fails, one where the
ceilings sit at the judge's counts and agreeing labels pass them (the labels do not show a
true count over its ceiling)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import mcp_calls
from labelled_project import draw, make_project, write_gold

from pytest_failgate.cli import main

FIELDS = ("verdict", "count", "estimate", "lower", "upper")
RUNS = {  # ceilings, and the share of passing cases the judge missed as retrieval misses
    "fails": ({"retrieval_miss": 80, "generator_hallucination": 40}, 0.3),
    "passes": ({"retrieval_miss": 60, "generator_hallucination": 20}, 0.0),
}


def _decided(document: dict[str, Any]) -> tuple[str, dict[str, tuple[Any, ...]]]:
    rows = document["reports"][0]["rows"]
    return document["verdict"], {row["name"]: tuple(row[key] for key in FIELDS)
                                 for row in rows}


@pytest.fixture(params=sorted(RUNS))
def project(request: pytest.FixtureRequest, pytester: pytest.Pytester) -> Path:
    ceilings, share = RUNS[request.param]
    root = make_project(pytester.path, ceilings)
    write_gold(root, draw(root), missed_share=share)
    return root


@pytest.mark.slow
def test_every_front_end_gives_the_same_corrected_verdict(
        project: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(project)
    cli_code = main(["check", "reports", "--labels", "gold.jsonl", "--json", "cli.json"])
    capsys.readouterr()
    cli = _decided(json.loads((project / "cli.json").read_text()))
    assert cli[0] in ("fail", "pass")
    assert cli_code == {"fail": 1, "pass": 0}[cli[0]]
    assert any(row[2] is not None for row in cli[1].values())  # corrected rows

    pytester.makeini("[pytest]\n")
    ran = pytester.runpytest_subprocess("--failgate=reports", "--failgate-labels=gold.jsonl",
                                        "--failgate-json=pytest.json", "-p", "no:cacheprovider")
    assert ran.ret == (pytest.ExitCode.TESTS_FAILED if cli[0] == "fail" else pytest.ExitCode.OK)
    assert _decided(json.loads((project / "pytest.json").read_text())) == cli

    step = subprocess.run([sys.executable, "-m", "pytest_failgate.ci", "reports",
                           "--labels", "gold.jsonl", "--out-dir", "ci"], cwd=project,
                          capture_output=True, text=True, check=False)
    assert step.returncode == cli_code, step.stdout + step.stderr
    verdict = json.loads((project / "ci" / "verdict.json").read_text())
    assert verdict["verdict"] == cli[0]

    _, results = mcp_calls(project, [("check", {"paths": ["reports"],
                                                "labels": "gold.jsonl"})])
    assert not results[0].is_error
    assert _decided(dict(results[0].structured_content)) == cli
