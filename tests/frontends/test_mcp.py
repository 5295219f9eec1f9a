"""``failgate mcp``, driven by the official MCP SDK's own client over stdio.

One server process per test module: the calls are the same a client such as an editor
makes, and every number is compared with what the CLI gives for the same inputs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import mcp_calls

from pytest_failgate.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "rag-gate"
# the fixture's runs were made on different days: the gap is accepted, by MCP and the CLI alike
CHECK = {"paths": ["topk1"], "baseline": ["baseline"], "noise": "baseline/noise_band.json",
         "accept_baseline_gap": "fixture runs"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], list[Any]]:
    cwd = tmp_path_factory.mktemp("mcp")
    shutil.copytree(DATA, cwd, dirs_exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:  # a ceilings file from the baseline's counts
        patch.chdir(cwd)
        assert main(["init", "baseline", "--ceilings", "gate.yaml"]) == 0
    tools, results = mcp_calls(cwd, [
        ("check", CHECK),
        ("analyze", {"paths": ["baseline"]}),
        ("diff", {"base": "baseline", "candidate": "topk1"}),
        ("show", {"paths": ["topk1"]}),
        ("check", {"paths": ["no-such-run"], "baseline": ["baseline"]}),
        ("explain", {"paths": ["topk1"], "ceilings": "absent.yaml"}),
        ("show", {"paths": ["topk1"], "ceilings": "gate.yaml"}),
    ])
    return cwd, tools, results


def cli_json(cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
             *argv: str) -> Any:
    monkeypatch.chdir(cwd)
    main([*argv, "--json", "cli.json"])
    capsys.readouterr()
    return json.loads((cwd / "cli.json").read_text(encoding="utf-8"))


def test_the_server_offers_its_tools(served: tuple[Path, list[str], list[Any]]) -> None:
    assert served[1] == ["check", "show", "diff", "explain", "analyze", "init", "ratchet",
                         "replay"]


def test_check_returns_the_cli_json_document(
        served: tuple[Path, list[str], list[Any]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cwd, _, results = served
    check = results[0]
    assert not check.is_error
    expected = cli_json(cwd, monkeypatch, capsys, "check", "topk1", "--baseline", "baseline",
                        "--noise", "baseline/noise_band.json", "--accept-baseline-gap",
                        "fixture runs")
    document = dict(check.structured_content)
    # the same gate; the advice in MCP's words, as the CLI's is in its own (the ratchet takes
    # the noise too: it lowers only past the allowances)
    assert document.pop("ratchet_advice") == ('the `ratchet` tool with `{"paths": ["topk1"], '
                                              '"noise": "baseline/noise_band.json"}`')
    assert expected.pop("ratchet_advice") == (
        "`failgate ratchet topk1 --noise baseline/noise_band.json`")
    assert document == expected
    rows = {row["name"]: row for row in check.structured_content["reports"][0]["rows"]}
    assert rows["retrieval_miss"]["verdict"] == "fail"
    assert check.structured_content["verdict"] == "fail"  # no need to scan the rows
    assert rows["retrieval_miss"]["baseline"]["n_new"] == 10
    assert check.structured_content["reports"][0]["config_changes"][0]["text"] == "top_k: 5 -> 1"


def test_analyze_and_diff_give_the_cli_numbers(
        served: tuple[Path, list[str], list[Any]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cwd, _, results = served
    analyzed, diffed, shown = results[1], results[2], results[3]
    expected = cli_json(cwd, monkeypatch, capsys, "analyze", "baseline")
    assert analyzed.structured_content == {"reports": expected}
    change = next(c for c in diffed.structured_content["reports"][0]["changes"]
                  if c["category"] == "retrieval_miss")
    assert (change["base_count"], change["count"], len(change["new"]), len(change["fixed"])) \
        == (65, 73, 10, 2)
    categories = {c["name"]: c for c in shown.structured_content["reports"][0]["categories"]}
    assert categories["retrieval_miss"]["count"] == 73
    assert categories["retrieval_miss"]["ceiling"] is None  # no ceilings file: no gate


def test_show_runs_the_gate_and_lists_as_many_cases_as_the_cli(
        served: tuple[Path, list[str], list[Any]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cwd, _, results = served
    shown = results[6].structured_content
    assert shown["gated"] is True
    report = shown["reports"][0]
    monkeypatch.chdir(cwd)
    assert main(["show", "topk1", "--ceilings", "gate.yaml"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for category in report["categories"]:
        line = next(line for line in lines if line.startswith(f"  {category['name']} "))
        assert f"ceiling {category['ceiling']:<8} headroom" in line
        assert len(category["first_cases"]) == min(3, category["count"])
        assert line.endswith(", ".join(category["first_cases"])
                             + (" …" if category["count"] > 3 else ""))
    over = [c for c in report["categories"] if c["headroom"] is not None and c["headroom"] < 0]
    assert "retrieval_miss" in [c["name"] for c in over]  # what top_k 1 made worse


def test_bad_input_is_a_tool_error_with_failgates_message(
        served: tuple[Path, list[str], list[Any]]) -> None:
    missing, no_ceilings = served[2][4], served[2][5]
    assert missing.is_error
    assert "no-such-run" in missing.content[0].text
    assert "no such file or directory" in missing.content[0].text
    assert no_ceilings.is_error
    assert "absent.yaml: not found" in no_ceilings.content[0].text
