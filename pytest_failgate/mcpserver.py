"""``failgate mcp``: the same commands served to MCP clients over stdio (the ``mcp`` extra).

Each tool maps its arguments onto the run's configuration, resolved as the CLI and pytest
resolve it (``commands.config``: the arguments, else the ini file pytest would use from
the server's working directory, else the defaults), calls the command the CLI calls
(``commands``), and returns its result model: a client gets the CLI's numbers, not a
re-implementation of them. A bad input is a tool error carrying failgate's one-line
message. Tools: ``check`` (the document ``failgate check --json`` writes, with its
``verdict``), ``show``, ``diff``, ``explain`` (``check``'s rule diagnostics), ``analyze``,
``init`` and ``ratchet`` (which write the ceilings file, as the commands do).

Why no REST server: ``failgate check --json`` already gives any program the whole
result as a documented JSON document (``failgate schema``), and MCP gives assistants a
typed, discoverable interface over stdio with no port, no authentication and no
process to keep running; an HTTP service would be a third copy of the same calls.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .core.errors import FailgateError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from .commands.config import Config
    from .core.advice import Advice


def tool_advice(config: Config) -> Advice:
    """MCP's words for the actions the core suggests: the tool, with the arguments this
    call was given that the tool takes (what the ini file sets, the tool reads again)."""
    import json

    from .core.advice import Advice

    def call(tool: str) -> str:
        arguments: dict[str, Any] = {
            option.attribute: words if option.kind in ("paths", "names") else
            words[0] if words else True for option, words in config.given_words(tool, False)}
        shown = f" with `{json.dumps(arguments, ensure_ascii=False)}`" if arguments else ""
        return f"the `{tool}` tool{shown}"

    return Advice(init=call("init"), ratchet=call("ratchet"))


def _config(**arguments: Any) -> Config:
    """The configuration of one call: its arguments (paths relative to the server's working
    directory), the ini file, the defaults; advice in MCP's words."""
    from dataclasses import replace

    from .commands.config import load

    config = load(arguments)
    return replace(config, advice=tool_advice(config))


def check(paths: list[str] | None = None, ceilings: str | None = None,
          baseline: list[str] | None = None, noise: str | None = None,
          exclude_unstable: bool = False, analyze: bool = False,
          strict: bool = False) -> dict[str, Any]:
    """Gate reports like ``failgate check --json``: the run's ``verdict`` (pass, fail, error,
    or inconclusive when a report cannot be judged) and every row with its own."""
    from .commands.gating import check as run

    config = _config(paths=paths, ceilings=ceilings, baseline=baseline, noise=noise,
                     exclude_unstable=exclude_unstable, analyze=analyze, strict=strict)
    document: dict[str, Any] = run(config).model_dump(mode="json")
    return document


def explain(paths: list[str] | None = None, ceilings: str | None = None) -> dict[str, Any]:
    """The rule diagnostics of ``failgate check --explain``, per report."""
    from .commands.gating import check as run

    result = run(_config(paths=paths, ceilings=ceilings, explain=True))
    return {"verdict": result.verdict,
            "reports": {report.name: report.explain for report in result.reports}}


def show(paths: list[str] | None = None, ceilings: str | None = None,
         taxonomy: str | None = None, top: int = 3) -> dict[str, Any]:
    """Each report's count per category with its first ``top`` case ids, and its ceiling
    and headroom when the ceilings file exists (``failgate show``)."""
    from .commands.gating import show as run

    return run(_config(paths=paths, ceilings=ceilings, taxonomy=taxonomy), top).model_dump(
        mode="json")


def diff(base: str, candidate: str, taxonomy: str | None = None,
         ceilings: str | None = None) -> dict[str, Any]:
    """Per report and category, the cases that entered and left it between two runs."""
    from .commands.runs import diff as run

    config = _config(taxonomy=taxonomy, ceilings=ceilings)
    return run(config, Path(base).resolve(), Path(candidate).resolve()).model_dump(mode="json")


def analyze(paths: list[str] | None = None, taxonomy: str | None = None,
            slices: list[str] | None = None) -> dict[str, Any]:
    """One run, no baseline: failures by stage, the weakest slices, what to look at first."""
    from .commands.runs import analyze as run

    return run(_config(paths=paths, taxonomy=taxonomy), slices or ()).model_dump(mode="json")


def init(paths: list[str] | None = None, ceilings: str | None = None,
         taxonomy: str | None = None, noise: str | None = None) -> dict[str, Any]:
    """Write a new ceilings file from the current counts (``failgate init``); never
    overwrites one. With ``noise`` (a noise_band.json, or ``repeats``) each ceiling is
    observed + allowance. Returns the gate's document and what was written."""
    from .commands.gating import init as run

    return run(_config(paths=paths, ceilings=ceilings, taxonomy=taxonomy, noise=noise)
               ).model_dump(mode="json")


def ratchet(paths: list[str] | None = None, ceilings: str | None = None,
            noise: str | None = None) -> dict[str, Any]:
    """Lower every ceiling whose count fell (``failgate ratchet``); never raises one. On a
    noisy pipeline (``noise``, or the ceilings file's ``noise:``) only past the allowance."""
    from .commands.gating import ratchet as run

    return run(_config(paths=paths, ceilings=ceilings, noise=noise)).model_dump(mode="json")


TOOLS = (check, show, diff, explain, analyze, init, ratchet)


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
    """The MCP server with failgate's tools."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        from .core.install import needs_extra

        raise FailgateError(needs_extra("failgate mcp", "mcp", "the MCP SDK")) from None
    from . import __version__

    app = MCPServer("failgate", version=__version__, instructions=(
        "Gate LLM/RAG evaluation reports by failure category: check (ceilings and a baseline "
        "comparison; its verdict), show, diff, explain, analyze, init and ratchet (which "
        "write the ceilings file). Paths are relative to the server's working directory, "
        "whose pytest ini file (failgate_ceilings, failgate, ...) applies as in pytest."))
    for function in TOOLS:
        app.tool(structured_output=True)(_guarded(function))
    return app


def serve() -> None:
    """Serve over stdio until the client closes the connection."""
    server().run("stdio")
