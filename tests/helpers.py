"""Builders for reports and ceilings files used across the tests."""

from __future__ import annotations

import contextlib
import json
import random
import subprocess
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_failgate.core.base.defaults import DEFAULT_DELTA
from pytest_failgate.core.base.formatting import format_number
from pytest_failgate.core.gate.runner import load_run_or_raise
from pytest_failgate.core.reports.builtin import builtin_readers
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.model import Report
from pytest_failgate.core.reports.read import ReadSpec
from pytest_failgate.core.taxonomy import Taxonomy, builtin_taxonomies

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BUILTIN = builtin_taxonomies()
RAG = BUILTIN["rag"]
# how sure a sequential verdict is by default, as every output writes it ("95%")
CONFIDENCE = f"{format_number((1 - DEFAULT_DELTA) * 100)}%"

PASSED_CASE: dict[str, Any] = {
    "query_type": "single_doc",
    "answerable": True,
    "abstained": False,
    "accuracy": 1.0,
    "term_match": True,
    "expected_doc_ids": ["doc-a"],
    "evidence_doc_ids": ["doc-a", "doc-b"],
    "answer": "A long answer the rules never read. \"Quoted\" and [bracketed] and {braced}.",
}

# One case per rag category, each built to hit exactly that rule first.
CATEGORY_CASES: dict[str, dict[str, Any]] = {
    "verifier_false_negative": {"answerable": False, "abstained": False, "accuracy": None},
    "verifier_false_positive": {"abstained": True, "term_match": True, "accuracy": 0.0},
    "retrieval_miss": {"accuracy": 0.0, "evidence_doc_ids": ["doc-z"]},
    "planner_under_decomposition": {
        "accuracy": 0.0, "query_type": "comparison", "attempt_latency": [1.5],
    },
    "generator_hallucination": {"accuracy": 0.0, "claim_citation_alignment": 0.25},
    "unknown": {"accuracy": 0.0, "term_match": False},
}


def case(case_id: str | None = None, **fields: Any) -> dict[str, Any]:
    """A rag case that passes unless ``fields`` say otherwise."""
    record = dict(PASSED_CASE)
    if case_id is not None:
        record = {"id": case_id, **record}
    record.update(fields)
    return record


def category_case(category: str, case_id: str) -> dict[str, Any]:
    return case(case_id, **CATEGORY_CASES[category])


def cases_for(counts: Mapping[str, int], passed: int = 0, seed: int = 0) -> list[dict[str, Any]]:
    """Shuffled cases with exactly ``counts`` failures per category plus ``passed`` passes."""
    records = [case(f"ok-{i}") for i in range(passed)]
    for category, n in counts.items():
        records += [category_case(category, f"{category}-{i}") for i in range(n)]
    random.Random(seed).shuffle(records)
    return records


def write_summary(path: Path, cases: Iterable[Mapping[str, Any]], indent: int | None = 2,
                  **top: Any) -> Path:
    """An ``eval_summary.json``-shaped report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"mode": "rag", **top, "case_results": list(cases)}
    path.write_text(json.dumps(document, indent=indent), encoding="utf-8")
    return path


def write_jsonl(path: Path, cases: Iterable[Mapping[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


def write_ceilings(path: Path, ceilings: Mapping[str, object], reports: Mapping[str, Any]
                   | None = None, header: str = "") -> Path:
    """A ceilings file written the way a person would, one key per line."""
    lines = [header.rstrip("\n")] if header else []
    lines += ["version: 1", "taxonomy: rag"]
    if ceilings:
        lines.append("ceilings:")
        lines += [f"  {name}: {_flow(value)}" for name, value in ceilings.items()]
    if reports:
        lines.append("reports:")
        for report, entries in reports.items():
            lines.append(f"  {report}:")
            lines += [f"    {name}: {_flow(value)}" for name, value in entries.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _flow(value: object) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


def load_one(path: Path, taxonomy: Taxonomy) -> Report:
    """One report file through failgate's loader and the built-in readers; its load error
    raised."""
    reports = load_run_or_raise((path,), TaxonomyChoice(taxonomy),
                                ReadSpec(readers=builtin_readers()))
    assert len(reports) == 1
    return reports[0]


def random_rag_case(rng: random.Random) -> dict[str, Any]:
    """A case with every field the rag rules read present or absent, valued at random
    across the rules' branches (for comparing with ``rag_reference``)."""
    docs = ["a", "b", "c"]
    record: dict[str, Any] = {}
    maybe: dict[str, Callable[[], object]] = {
        "answerable": lambda: rng.choice([True, False]),
        "abstained": lambda: rng.choice([True, False, None]),
        "accuracy": lambda: rng.choice([1.0, 0.0, 0.5, None, 1]),
        "term_match": lambda: rng.choice([True, False, None]),
        "expected_doc_ids": lambda: rng.choice([None, [], *[[d] for d in docs], docs[:2]]),
        "evidence_doc_ids": lambda: rng.choice([None, [], *[[d] for d in docs], docs[1:]]),
        "query_type": lambda: rng.choice([None, "single_doc", "comparison", "multi_hop"]),
        "attempt_latency": lambda: rng.choice([None, [], [1.0], [1.0, 2.0]]),
        "claim_citation_alignment": lambda: rng.choice([None, 0.1, 0.5, 0.9, 0]),
    }
    for name, make in maybe.items():
        if rng.random() < 0.8:
            record[name] = make()
    return record


def run_cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    """The ``failgate`` command in-process: (exit code, stdout, stderr)."""
    from pytest_failgate.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def mcp_calls(cwd: Path, calls: list[tuple[str, dict[str, Any]]], args: Sequence[str] = (),
              roots: Sequence[Path] | None = None) -> tuple[list[str], list[Any]]:
    """Start ``failgate mcp`` in ``cwd`` with the MCP SDK's own stdio client, list its tools,
    make each call; (tool names, results). ``args``: the server's options; ``roots``: the
    folders the client declares as its MCP roots (none: it declares no roots capability)."""
    with mcp_server(cwd, args, roots) as server:
        return server.tools, server.calls(calls)


class McpServer:
    """A running ``failgate mcp`` and the MCP SDK's client session with it (``mcp_server``)."""

    def __init__(self, portal: Any, session: Any, tools: list[str]) -> None:
        self._portal = portal
        self._session = session
        self.tools = tools

    def calls(self, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        """Each call's result, in order, over the session the server was started with."""
        return [self._portal.call(self._session.call_tool, name, arguments)
                for name, arguments in calls]


@contextlib.contextmanager
def mcp_server(cwd: Path, args: Sequence[str] = (),
               roots: Sequence[Path] | None = None) -> Iterator[McpServer]:
    """``mcp_calls``'s server and session, kept open for the calls of several tests: the
    server starts once (seconds of CPU: it imports the MCP SDK) and each call still runs in
    a process of its own, reading the files as they are when it is made."""
    import sys
    import tempfile

    from anyio.from_thread import start_blocking_portal
    from mcp import ClientSession, types
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from pydantic import FileUrl

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(root.resolve().as_uri()))
                                            for root in roots or ()])

    @contextlib.asynccontextmanager
    async def session() -> AsyncIterator[Any]:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "pytest_failgate.cli", "mcp", *args],
                                       cwd=str(cwd))
        with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write, list_roots_callback=list_roots
                                  if roots is not None else None) as client:
                await client.initialize()
                yield client

    with start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(session()) as client:
        tools = [tool.name for tool in portal.call(client.list_tools).tools]
        yield McpServer(portal, client, tools)


def gate_in_pytest(pytester: Any, project: Path) -> Any:
    """pytest gating ``project``'s reports with its ceilings in a child process (a failed
    run, as the hostile-report projects are built to give)."""
    import pytest

    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_subprocess(f"--failgate={project / 'reports'}",
                                           f"--failgate-ceilings={project / 'ceilings.yaml'}",
                                           "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    return result


# A run folder of the regression gate on a harsh and a mild day: the same-day pairing tests
# (ratchet --confirm-baseline through the core, the CLI and MCP).
SAME_DAY_CEILINGS = """\
# kept as written
version: 1
taxonomy: rag-gate
ceilings:
  retrieval_miss:    # the noisy one
    max: 20
    observed: 12
    allowance: 8
  hallucination: {max: 9, observed: 6, allowance: 3}
  false_refusal: 5
  over_answer: 5
  other: 5
"""
SAME_DAY_OTHERS = (["hallucination"] * 6 + ["false_refusal"] * 5 + ["over_answer"] * 5
                   + ["other"] * 5)


def same_day_run(folder: Path, outcomes: list[str], judge: str = "gpt-4o-2024-08-06") -> Path:
    """A run folder whose case ``c<i>`` has ``outcomes[i]``, every run alike in its ids."""
    folder.mkdir(parents=True)
    lines = [json.dumps({"id": f"c{i:03d}", "primary_failure": mode, "note": "근거 없음"},
                        ensure_ascii=False) for i, mode in enumerate(outcomes)]
    (folder / "attribution.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    header = {"type": "header", "judge_model": judge, "n_cases": len(outcomes),
              "config": {"top_k": 5}}
    (folder / "run.jsonl").write_text(json.dumps(header) + "\n", encoding="utf-8")
    return folder


def same_day_outcomes(missed: int, fixed: int = 0) -> list[str]:
    """``missed`` retrieval misses (the first ``fixed`` of them now pass), then the rest."""
    misses = ["correct"] * fixed + ["retrieval_miss"] * (missed - fixed)
    return [*misses, *SAME_DAY_OTHERS, *["correct"] * 40]


def reader_classes() -> set[type]:
    """Every report reader class the package defines (a ``Reader`` subclass in a module of
    ``core/reports``, the interface's own wrappers aside), found by importing the modules:
    what the built-in registry must list, derived rather than counted."""
    import importlib
    import pkgutil

    from pytest_failgate.core import reports
    from pytest_failgate.core.reports.readers import Reader

    found = set()
    for module_info in pkgutil.iter_modules(reports.__path__):
        module = importlib.import_module(f"{reports.__name__}.{module_info.name}")
        if module_info.name in ("readers", "builtin"):
            continue  # the interface and the lazy registry: wrappers, not formats
        found |= {value for value in vars(module).values() if isinstance(value, type)
                  and issubclass(value, Reader) and value is not Reader
                  and value.__module__ == module.__name__}
    return found


def git(cwd: Path, *args: str) -> None:
    """A git command in ``cwd``, quiet, that must succeed (the guard's tests' repositories)."""
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def commit(repo: Path, message: str = "change") -> None:
    """Everything in ``repo`` committed, as a pull request's change or ``main``."""
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=ci@example.com", "-c", "user.name=ci", "commit", "-q", "-m",
        message)


def example_repo(project: Path, files: Mapping[str, str], message: str = "change") -> Path:
    """A git repository at ``project`` on ``main`` holding the example reports, the
    repository's ceilings file and ``files`` (relative path: text), all committed: what the
    guard's tests change as a pull request would."""
    import shutil

    shutil.copytree(EXAMPLES / "reports", project / "reports")
    shutil.copy(EXAMPLES.parent / "ceilings.yaml", project / "ceilings.yaml")
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    git(project, "init", "-q", "-b", "main")
    commit(project, message)
    return project


def guard_cli(capsys: Any, base: str = "main") -> tuple[int, str]:
    """``failgate guard --base main`` in the working directory: its exit code and output
    (never a traceback)."""
    code, out, err = run_cli(capsys, "guard", "--base", base)
    assert "Traceback" not in err
    return code, out + err
