"""``failgate mcp``: the same core served to MCP clients over stdio (the ``mcp`` extra).

Tools: ``check`` (the document ``failgate check --json`` writes), ``show`` (counts per
category), ``diff`` (the cases that entered and left each category between two runs),
``explain`` (the rule diagnostics of ``--explain``) and ``analyze`` (the single-run
diagnosis). Each tool builds the command line the CLI would parse and goes through the
CLI's own resolution (ceilings file, taxonomy by format, plugins), so a client gets the
CLI's numbers, not a re-implementation of them. A bad input is a tool error carrying
failgate's one-line message.

Why no REST server: ``failgate check --json`` already gives any program the whole
result as a documented JSON document (``failgate schema``), and MCP gives assistants a
typed, discoverable interface over stdio with no port, no authentication and no
process to keep running; an HTTP service would be a third copy of the same calls.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import cli
from .core.errors import FailgateError

if TYPE_CHECKING:
    import argparse

    from mcp.server.mcpserver import MCPServer


def _parse(argv: list[str]) -> argparse.Namespace:
    return cli._parser().parse_args(argv)


def _ceilings(ceilings: str | None) -> list[str]:
    return ["--ceilings", ceilings] if ceilings else []


def check(paths: list[str], ceilings: str | None = None, baseline: list[str] | None = None,
          noise: str | None = None, exclude_unstable: bool = False,
          analyze: bool = False) -> dict[str, Any]:
    """Gate reports like ``failgate check --json``: every row with its verdict."""
    argv = ["check", *paths, *_ceilings(ceilings)]
    for path in baseline or []:
        argv += ["--baseline", path]
    argv += ["--noise", noise] if noise else []
    argv += ["--exclude-unstable"] if exclude_unstable else []
    argv += ["--analyze"] if analyze else []
    _, result = cli._gate(_parse(argv), "gate")
    document: dict[str, Any] = result.model_dump(mode="json")
    return document


def explain(paths: list[str], ceilings: str | None = None) -> dict[str, Any]:
    """The rule diagnostics of ``failgate check --explain``, per report."""
    _, result = cli._gate(_parse(["check", *paths, *_ceilings(ceilings), "--explain"]), "gate")
    return {"reports": {report.name: report.explain for report in result.reports}}


def show(paths: list[str], ceilings: str | None = None,
         taxonomy: str | None = None) -> dict[str, Any]:
    """Each report's cases, failures and count per category (``failgate show``)."""
    from .core.gate import load_run

    argv = ["show", *paths, *_ceilings(ceilings), *(["--taxonomy", taxonomy] if taxonomy else [])]
    args = _parse(argv)
    choice, default = cli._taxonomy(args)
    gated, skipped = load_run(tuple(Path(p).resolve() for p in paths), choice, cli._spec(args))
    reports: list[dict[str, Any]] = []
    for loaded in gated:
        if loaded.report is None:
            reports.append({"name": loaded.file.name, "error": str(loaded.error)})
            continue
        report = loaded.report
        names = (report.taxonomy or default).category_names
        reports.append({"name": report.name, "n_cases": report.n_cases,
                        "failed": report.failed,
                        "taxonomy": (report.taxonomy or default).name,
                        "counts": {name: report.counts.get(name, 0) for name in names},
                        "first_cases": {name: report.case_ids(name)[:5] for name in names}})
    return {"reports": reports, "skipped": [str(s.path) for s in skipped]}


def diff(base: str, candidate: str, taxonomy: str | None = None) -> dict[str, Any]:
    """Per category, the cases that entered and left it between two runs."""
    from .core.compare.pairing import compare_runs
    from .core.gate import load_run_or_raise

    args = _parse(["diff", base, candidate, *(["--taxonomy", taxonomy] if taxonomy else [])])
    choice, default = cli._taxonomy(args)
    runs = [load_run_or_raise((Path(path).resolve(),), choice, cli._spec(args))
            for path in (base, candidate)]
    names = cli._first_taxonomy(runs[0], default).category_names
    return dataclasses.asdict(compare_runs(runs[0], runs[1], names))


def analyze(paths: list[str], taxonomy: str | None = None,
            slices: list[str] | None = None) -> dict[str, Any]:
    """One run, no baseline: failures by stage, the weakest slices, what to look at first."""
    from dataclasses import replace

    from .core.analyze import DEFAULT_SLICES, analysis_slicers, analyze_report
    from .core.gate import load_run_or_raise

    args = _parse(["analyze", *paths, *(["--taxonomy", taxonomy] if taxonomy else [])])
    choice, default = cli._taxonomy(args)
    fields = tuple(slices or ()) or DEFAULT_SLICES
    spec = replace(cli._spec(args), slicers=analysis_slicers(fields))
    reports = load_run_or_raise(tuple(Path(p).resolve() for p in paths), choice, spec)
    return {"reports": [analyze_report(r, r.taxonomy or default, fields).model_dump(mode="json")
                        for r in reports]}


TOOLS = (check, show, diff, explain, analyze)


def _guarded(function: Any) -> Any:
    """The tool as MCP sees it: failgate's errors become one clear tool error."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(function)  # the signature and docstring MCP describes the tool by
    def tool(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except FailgateError as exc:
            raise ToolError(f"failgate: error: {exc}") from None
        except SystemExit:  # argparse refused the arguments
            raise ToolError(f"failgate: error: invalid arguments for {function.__name__}"
                            ) from None

    return tool


def server() -> MCPServer:
    """The MCP server with failgate's five tools."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        raise FailgateError('failgate mcp needs the mcp extra: pip install '
                            '"pytest-failgate[mcp]"') from None
    from . import __version__

    app = MCPServer("failgate", version=__version__, instructions=(
        "Gate LLM/RAG evaluation reports by failure category: check (ceilings and a baseline "
        "comparison), show, diff, explain, analyze. Paths are relative to the server's "
        "working directory."))
    for function in TOOLS:
        app.tool(structured_output=True)(_guarded(function))
    return app


def serve() -> None:
    """Serve over stdio until the client closes the connection."""
    server().run("stdio")
