"""``failgate mcp``, driven by the official MCP SDK's own client over stdio.

One server process per test module: the calls are the same a client such as an editor
makes, and every number is compared with what the CLI gives for the same inputs.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from pytest_failgate.cli import main

DATA = Path(__file__).resolve().parent / "data" / "rag-gate"
CHECK = {"paths": ["topk1"], "baseline": ["baseline"], "noise": "baseline/noise_band.json"}


def call_all(cwd: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[Any]]:
    """Start ``failgate mcp`` in ``cwd``, list its tools, make each call, return the results."""
    async def run() -> tuple[list[str], list[Any]]:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "pytest_failgate.cli", "mcp"], cwd=str(cwd))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = [tool.name for tool in (await session.list_tools()).tools]
            results = [await session.call_tool(name, arguments) for name, arguments in calls]
            return tools, results

    return anyio.run(run)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], list[Any]]:
    cwd = tmp_path_factory.mktemp("mcp")
    shutil.copytree(DATA, cwd, dirs_exist_ok=True)
    tools, results = call_all(cwd, [
        ("check", CHECK),
        ("analyze", {"paths": ["baseline"]}),
        ("diff", {"base": "baseline", "candidate": "topk1"}),
        ("show", {"paths": ["topk1"]}),
        ("check", {"paths": ["no-such-run"], "baseline": ["baseline"]}),
        ("explain", {"paths": ["topk1"], "ceilings": "absent.yaml"}),
    ])
    return cwd, tools, results


def cli_json(cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
             *argv: str) -> Any:
    monkeypatch.chdir(cwd)
    main([*argv, "--json", "cli.json"])
    capsys.readouterr()
    return json.loads((cwd / "cli.json").read_text(encoding="utf-8"))


def test_the_server_offers_the_five_tools(served: tuple[Path, list[str], list[Any]]) -> None:
    assert served[1] == ["check", "show", "diff", "explain", "analyze"]


def test_check_returns_the_cli_json_document(
        served: tuple[Path, list[str], list[Any]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cwd, _, results = served
    check = results[0]
    assert not check.is_error
    expected = cli_json(cwd, monkeypatch, capsys, "check", "topk1", "--baseline", "baseline",
                        "--noise", "baseline/noise_band.json")
    assert check.structured_content == expected
    rows = {row["name"]: row for row in check.structured_content["reports"][0]["rows"]}
    assert rows["retrieval_miss"]["verdict"] == "fail"
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
    assert shown.structured_content["reports"][0]["counts"]["retrieval_miss"] == 73


def test_bad_input_is_a_tool_error_with_failgates_message(
        served: tuple[Path, list[str], list[Any]]) -> None:
    missing, no_ceilings = served[2][4], served[2][5]
    assert missing.is_error
    assert "no-such-run" in missing.content[0].text
    assert "no such file or directory" in missing.content[0].text
    assert no_ceilings.is_error
    assert "absent.yaml: not found" in no_ceilings.content[0].text
