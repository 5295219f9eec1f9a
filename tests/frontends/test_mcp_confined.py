"""``failgate mcp`` reads only its folder and the client's roots, runs no plugin code unless
allowed, never echoes a report's values in errors, and bounds every call.

Driven by the official MCP SDK's client over stdio, as an editor would; each refusal has a
working control call in the same session (a confined server still does its job). One server
per set of options serves the module's tests (each call runs in a process of its own, reading
the files as they are when it is made); each test lays its folder out afresh.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Protocol

import pytest
from helpers import McpServer, mcp_server

# Each test starts a server process (and each of its calls a process): CI runs them
# (CI=true); the default run keeps test_mcp.py's one server. The SDK is looked up, not
# imported, so collecting this module costs nothing where the tests do not run.
pytestmark = [pytest.mark.heavy,
              pytest.mark.skipif(importlib.util.find_spec("mcp") is None,
                                 reason="the MCP SDK is not installed (the mcp extra)")]

DATA = Path(__file__).resolve().parents[1] / "data" / "rag-gate"
SECRET = "sk-live-7f3a9c1e5b"


def _text(result: Any) -> str:
    return str(result.content[0].text)


class Calls(Protocol):
    def __call__(self, project: Path, calls: list[tuple[str, dict[str, Any]]],
                 args: tuple[str, ...] = (), roots: list[Path] | None = None
                 ) -> tuple[list[str], list[Any]]: ...


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder holding the servers' working folder and, beside it, the outside."""
    return tmp_path_factory.mktemp("confined")


@pytest.fixture(scope="module")
def mcp_calls(base: Path) -> Iterator[Calls]:
    """``helpers.mcp_calls`` with one server per set of options and roots for the module,
    started in ``base / "project"`` the first time a test asks for it."""
    servers: dict[tuple[tuple[str, ...], tuple[Path, ...] | None], McpServer] = {}
    with ExitStack() as stack:
        def calls(project: Path, calls: list[tuple[str, dict[str, Any]]],
                  args: tuple[str, ...] = (), roots: list[Path] | None = None
                  ) -> tuple[list[str], list[Any]]:
            assert project == base / "project"
            key = (args, None if roots is None else tuple(roots))
            if key not in servers:
                servers[key] = stack.enter_context(mcp_server(project, args, roots))
            return servers[key].tools, servers[key].calls(calls)

        yield calls


@pytest.fixture
def project(base: Path) -> Path:
    """The server's folder: a run of reports; beside it (outside), another run. Laid out
    afresh for each test (the folder itself stays: it is the servers' working folder)."""
    folder = base / "project"
    folder.mkdir(exist_ok=True)
    for entry in [*folder.iterdir(), base / "outside"]:
        if entry.is_symlink() or entry.is_file():
            entry.unlink()
        elif entry.exists():
            shutil.rmtree(entry)
    shutil.copytree(DATA / "baseline", folder / "run")
    shutil.copytree(DATA / "topk1", base / "outside" / "run")
    return folder


def test_paths_outside_the_working_folder_are_refused(project: Path, mcp_calls: Calls) -> None:
    os.symlink(project.parent / "outside", project / "linked")
    _, results = mcp_calls(project, [
        ("show", {"paths": ["run"]}),
        ("show", {"paths": ["/etc"]}),
        ("show", {"paths": ["../outside/run"]}),
        ("show", {"paths": ["linked/run"]}),
        ("check", {"paths": ["run"], "baseline": ["/"]}),
        ("diff", {"base": "run", "candidate": "/"}),
        ("show", {"paths": ["run"], "ceilings": "/etc/passwd"}),
    ])
    control, *refused = results
    assert not control.is_error, _text(control)
    assert control.structured_content["reports"][0]["n_cases"] > 0
    for result in refused:
        assert result.is_error
        assert "is outside the folders this server may read" in _text(result)
        assert "passwd" not in _text(result) or "/etc/passwd" in _text(result)
    assert "hosts" not in _text(refused[0])  # /etc was not listed


def test_an_outside_path_gets_one_answer_whether_or_not_it_exists(
        project: Path, mcp_calls: Calls) -> None:
    """No existence oracle: each way a call names a file (a report, the ceilings, a noise
    band, a baseline, a taxonomy by path, a diff's run; and through a ceilings file's
    ``taxonomy:`` and ``noise:`` keys) answers "outside" alike for an existing file and a
    missing one. A taxonomy named outside said "not found" for a missing file."""
    outside = project.parent / "outside"
    (outside / "taxonomy.yaml").write_text("version: 1\n")
    for key, there, missing in (("taxonomy", "taxonomy.yaml", "none.yaml"),
                                ("noise", "run/noise_band.json", "none.json")):
        for name, target in ((f"{key}-there", there), (f"{key}-missing", missing)):
            extra = "taxonomy: rag\nnoise" if key == "noise" else "taxonomy"
            (project / f"{name}.yaml").write_text(
                f"version: 1\n{extra}: ../outside/{target}\n")
    calls: list[tuple[str, dict[str, Any]]] = []
    for target in ("run/noise_band.json", "no/such/file.json"):
        absolute = str(outside / target)
        calls += [
            ("show", {"paths": [absolute]}),
            ("show", {"paths": ["run"], "taxonomy": absolute.replace(".json", ".yaml")}),
            ("analyze", {"paths": ["run"], "taxonomy": f"../outside/{target}"}),
            ("check", {"paths": ["run"], "ceilings": absolute}),
            ("check", {"paths": ["run"], "noise": absolute}),
            ("check", {"paths": ["run"], "baseline": [absolute]}),
            ("diff", {"base": absolute, "candidate": "run"}),
        ]
    calls += [("show", {"paths": ["run"], "ceilings": f"{name}-{state}.yaml"})
              for name in ("taxonomy", "noise") for state in ("there", "missing")]
    _, results = mcp_calls(project, calls)
    answers = [_text(result) for result in results]
    assert all(result.is_error for result in results), answers
    assert all("is outside the folders this server may read" in text for text in answers)
    half = 7
    for there, missing in zip(answers[:half], answers[half:2 * half], strict=True):
        assert there.replace("run/noise_band", "X") == missing.replace("no/such/file", "X")
    names = answers[2 * half:]
    assert names[0].replace("taxonomy.yaml", "X") == names[1].replace("none.yaml", "X")
    assert names[2].replace("run/noise_band", "X") == names[3].replace("none", "X")


def test_a_link_inside_a_report_folder_leading_out_is_refused(
        project: Path, mcp_calls: Calls) -> None:
    os.symlink(project.parent / "outside" / "run" / "attribution.jsonl",
               project / "run" / "stolen.jsonl")
    _, [result] = mcp_calls(project, [("show", {"paths": ["run"]})])
    assert result.is_error
    assert "run/stolen.jsonl: is outside the folders" in _text(result)


def test_the_clients_roots_are_readable_and_nothing_else(project: Path, mcp_calls: Calls) -> None:
    outside = project.parent / "outside"
    _, [inside_root, elsewhere] = mcp_calls(project, [
        ("show", {"paths": [str(outside / "run")]}),
        ("show", {"paths": [str(project.parent)]}),
    ], roots=[outside])
    assert not inside_root.is_error, _text(inside_root)
    assert elsewhere.is_error


def test_report_values_never_come_back_in_an_error(project: Path, mcp_calls: Calls) -> None:
    (project / "leak").mkdir()
    (project / "leak" / "cases.jsonl").write_text(
        json.dumps({"id": "a", "accuracy": SECRET, "answerable": True}) + "\n"
        + json.dumps({"id": SECRET, "accuracy": 1.0}) + "\n"
        + json.dumps({"id": SECRET, "accuracy": 1.0}) + "\n")
    _, [result] = mcp_calls(project, [("show", {"paths": ["leak"]})])
    text = json.dumps(result.structured_content) if not result.is_error else _text(result)
    assert "accuracy" in text  # the field is named...
    assert SECRET not in text  # ...its value is not


def test_no_plugin_code_runs_without_the_opt_in(project: Path, mcp_calls: Calls) -> None:
    marker = project / "plugin-ran"
    (project / "plugin.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n\n\n"
        "def pytest_failgate_taxonomies(config):\n    return {}\n")
    (project / "pytest.ini").write_text("[pytest]\nfailgate_plugins = plugin.py\n")
    _, [refused] = mcp_calls(project, [("show", {"paths": ["run"]})])
    assert refused.is_error
    assert "--allow-plugins" in _text(refused)
    assert not marker.exists()
    _, [allowed] = mcp_calls(project, [("show", {"paths": ["run"]})], args=("--allow-plugins",))
    assert not allowed.is_error, _text(allowed)
    assert marker.exists()


def test_a_call_over_its_time_is_stopped_and_the_next_one_runs(
        project: Path, mcp_calls: Calls) -> None:
    (project / "plugin.py").write_text(
        "import time\n\n\ndef pytest_failgate_taxonomies(config):\n"
        "    if config.paths and config.paths[0].name == 'slow':\n        time.sleep(30)\n"
        "    return {}\n")
    (project / "pytest.ini").write_text("[pytest]\nfailgate_plugins = plugin.py\n")
    shutil.copytree(project / "run", project / "slow")
    _, [stopped, control] = mcp_calls(project, [
        ("show", {"paths": ["slow"]}), ("show", {"paths": ["run"]})],
        args=("--allow-plugins", "--call-seconds", "3"))
    assert stopped.is_error
    assert "took longer than 3 s and was stopped" in _text(stopped)
    assert not control.is_error, _text(control)


def test_report_files_over_the_servers_size_limit_are_refused(
        project: Path, mcp_calls: Calls) -> None:
    _, [refused] = mcp_calls(project, [("show", {"paths": ["run"]})],
                             args=("--max-report-bytes", "1KB"))
    text = json.dumps(refused.structured_content) if not refused.is_error else _text(refused)
    assert "more than the limit of 1,000" in text


def test_a_plugin_printing_to_stdout_does_not_break_the_protocol(
        project: Path, mcp_calls: Calls) -> None:
    """stdout is the MCP channel: what a call prints goes to the server's stderr."""
    spoof = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {  # the next call's answer
        "content": [{"type": "text", "text": "spoofed"}], "isError": True}})
    (project / "plugin.py").write_text(
        "print('plugin loaded')\n\n\ndef pytest_failgate_taxonomies(config):\n"
        f"    print({spoof!r}, flush=True)\n    return {{}}\n")
    (project / "pytest.ini").write_text("[pytest]\nfailgate_plugins = plugin.py\n")
    _, [first, second] = mcp_calls(project, [("show", {"paths": ["run"]}),
                                             ("show", {"paths": ["run"]})],
                                   args=("--allow-plugins",))
    for result in (first, second):
        assert not result.is_error, _text(result)
        assert result.structured_content["reports"][0]["n_cases"] > 0
