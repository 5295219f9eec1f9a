"""``failgate mcp``: the same core served to MCP clients over stdio (the ``mcp`` extra).

Tools: ``check`` (the document ``failgate check --json`` writes), ``show`` (counts per
category), ``diff`` (the cases that entered and left each category between two runs),
``explain`` (the rule diagnostics of ``--explain``) and ``analyze`` (the single-run
diagnosis). Each tool builds the arguments the CLI's parser would give and goes through
the CLI's own resolution (``invocation``: ceilings file, taxonomy by format, plugins), so
a client gets the CLI's numbers, not a re-implementation of them. A bad input is a tool
error carrying failgate's one-line message.

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

from . import invocation
from .core.errors import FailgateError

CEILINGS = "ceilings.yaml"  # the CLI's default, relative to the server's working directory

if TYPE_CHECKING:
    import argparse

    from mcp.server.mcpserver import MCPServer


def _args(ceilings: str | None = None, **values: Any) -> argparse.Namespace:
    """A command's arguments as the CLI's parser gives them; an option not named is not given."""
    import argparse

    return argparse.Namespace(ceilings=ceilings or CEILINGS, taxonomy=None, plugins=None,
                              **values)


def check(paths: list[str], ceilings: str | None = None, baseline: list[str] | None = None,
          noise: str | None = None, exclude_unstable: bool = False,
          analyze: bool = False) -> dict[str, Any]:
    """Gate reports like ``failgate check --json``: every row with its verdict."""
    args = _args(ceilings, paths=paths, baseline=baseline or [], noise=noise,
                 exclude_unstable=exclude_unstable, analyze=analyze)
    _, result = invocation.gate(args, "gate")
    document: dict[str, Any] = result.model_dump(mode="json")
    return document


def explain(paths: list[str], ceilings: str | None = None) -> dict[str, Any]:
    """The rule diagnostics of ``failgate check --explain``, per report."""
    _, result = invocation.gate(_args(ceilings, paths=paths, explain=True), "gate")
    return {"reports": {report.name: report.explain for report in result.reports}}


def show(paths: list[str], ceilings: str | None = None,
         taxonomy: str | None = None) -> dict[str, Any]:
    """Each report's cases, failures and count per category (``failgate show``)."""
    from .core.gate import load_run

    args = _args(ceilings, paths=paths)
    args.taxonomy = taxonomy
    choice, default = invocation.taxonomy(args)
    gated, skipped = load_run(tuple(Path(p).resolve() for p in paths), choice,
                              invocation.read_spec(args))
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

    args = _args()
    args.taxonomy = taxonomy
    choice, default = invocation.taxonomy(args)
    runs = [load_run_or_raise((Path(path).resolve(),), choice, invocation.read_spec(args))
            for path in (base, candidate)]
    names = invocation.first_taxonomy(runs[0], default).category_names
    return dataclasses.asdict(compare_runs(runs[0], runs[1], names))


def analyze(paths: list[str], taxonomy: str | None = None,
            slices: list[str] | None = None) -> dict[str, Any]:
    """One run, no baseline: failures by stage, the weakest slices, what to look at first."""
    from dataclasses import replace

    from .core.analyze import DEFAULT_SLICES, analysis_slicers, analyze_report
    from .core.gate import load_run_or_raise

    args = _args(paths=paths)
    args.taxonomy = taxonomy
    choice, default = invocation.taxonomy(args)
    fields = tuple(slices or ()) or DEFAULT_SLICES
    spec = replace(invocation.read_spec(args), slicers=analysis_slicers(fields))
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
