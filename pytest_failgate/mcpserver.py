"""``failgate mcp``: the same commands served to MCP clients over stdio (the ``mcp`` extra).

Each tool maps its arguments onto the run's configuration, resolved as the CLI and pytest
resolve it (``commands.config``: the arguments, else the ini file pytest would use from
the server's working directory, else the defaults), calls the command the CLI calls
(``commands``), and returns its result model: a client gets the CLI's numbers, not a
re-implementation of them. A bad input is a tool error carrying failgate's one-line
message. Tools: ``check`` (the document ``failgate check --json`` writes, with its
``verdict``), ``show``, ``diff``, ``explain`` (``check``'s rule diagnostics), ``analyze``,
``init`` and ``ratchet`` (which write the ceilings file, as the commands do).

What the server may read and run (each call, in a process of its own):

- **Reads** only inside its working folder and the roots the client declares (MCP
  ``roots``): every path a call names, every file a report folder holds and every file
  opened (ceilings, taxonomies, reports), symbolic links followed, must lie there; the
  ini file's paths too. Anything else is refused, naming the path.
- **Writes** only the ceilings file (``init``, ``ratchet``), under the same rule.
- **Runs no plugin code** (``failgate_plugins``, entry points) unless started with
  ``failgate mcp --allow-plugins``; a project whose ini file names plugins is refused
  until then, since its numbers depend on them.
- **Never echoes report values** in errors: a message names a value by its kind only.
- **Bounds each call**: report files larger than ``--max-report-bytes`` (default 100MB,
  or the ini file's smaller limit) are refused, archives decompress within it, and a
  call running longer than ``--call-seconds`` (default 60) is stopped.

Why no REST server: ``failgate check --json`` already gives any program the whole
result as a documented JSON document (``failgate schema``), and MCP gives assistants a
typed, discoverable interface over stdio with no port, no authentication and no
process to keep running; an HTTP service would be a third copy of the same calls.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import options
from .core.base.classes import dataclass
from .core.base.errors import FailgateError
from .options import DEFAULT_DELTA, DEFAULT_MARGIN

if TYPE_CHECKING:
    import inspect

    from mcp.server.mcpserver import MCPServer

    from .commands.config import Config
    from .core.base.advice import Advice


def tool_advice(config: Config) -> Advice:
    """MCP's words for the actions the core suggests: the tool, with the arguments this
    call was given that the tool takes (what the ini file sets, the tool reads again)."""
    import json

    from .core.base.advice import Advice

    def call(tool: str) -> str:
        arguments: dict[str, Any] = {
            option.attribute: words if option.kind in ("paths", "names") else
            words[0] if words else True for option, words in config.given_words(tool, False)}
        shown = f" with `{json.dumps(arguments, ensure_ascii=False)}`" if arguments else ""
        return f"the `{tool}` tool{shown}"

    return Advice(init=call("init"), ratchet=call("ratchet"),
                  init_taxonomy="the `init` tool with `taxonomy` naming your taxonomy file",
                  ceilings="the `ceilings` argument")


@dataclass(frozen=True)
class Limits:
    """What the server allows each call (``failgate mcp`` options)."""

    max_report_bytes: str = "100MB"
    seconds: float = 60.0
    plugins: bool = False


LIMITS = Limits()  # replaced by ``serve``
# the tools' own file arguments (not options of the table): confined like the options'
TOOL_FILES = ("base", "candidate", "report", "plan")


def _config(**arguments: Any) -> Config:
    """The configuration of one call: its arguments (paths relative to the server's working
    directory), the ini file, the defaults; advice in MCP's words; the server's limits
    (plugins off unless allowed, the smaller byte limit), every path inside the roots."""
    from dataclasses import replace

    from .commands.config import load
    from .core.base.confine import check_inside
    from .core.base.safeopen import byte_limit

    _check_named_paths(arguments)
    config = load(arguments)
    limit = byte_limit(LIMITS.max_report_bytes)
    ini_limit = byte_limit(config.max_report_bytes)
    if ini_limit is not None and limit is not None:
        limit = min(limit, ini_limit)
    config = replace(config, advice=tool_advice(config), run_plugins=LIMITS.plugins,
                     max_report_bytes=str(limit) if limit is not None else None)
    for option in options.OPTIONS:  # every setting that names a file, by its kind
        if option.kind not in ("path", "paths") or option.action:
            continue
        value = config.setting(option.attribute)
        for path in (value if option.kind == "paths" else (value,)):
            if path is not None:
                check_inside(path)
    return config


def _check_named_paths(arguments: dict[str, Any]) -> None:
    """Every path the call names is inside the roots, checked as written before anything
    reads or even looks for it: a path outside gets the same answer whether or not a file
    is there (no existence oracle), whatever would have looked first (the configuration's
    loading, a taxonomy's lookup)."""
    from .core.base.confine import check_inside
    from .core.compare.noisemodel import REPEATS
    from .core.taxonomy.files import names_a_file

    # every option of the table whose value may name a file (by its kind), and the tools'
    # own file arguments
    keys = [option.attribute for option in options.OPTIONS if option.names_files] + list(TOOL_FILES)
    for key in keys:
        value = arguments.get(key)
        for named in (value if isinstance(value, list) else [value]):
            if not isinstance(named, str) or not named:
                continue
            if (key == "noise" and named == REPEATS) or (key == "taxonomy"
                                                          and not names_a_file(named)):
                continue  # a name, not a path
            check_inside(Path(named))


def check(paths: list[str] | None = None, **settings: Any) -> dict[str, Any]:
    """Gate reports like ``failgate check --json``: the run's ``verdict`` (pass, fail, error,
    or inconclusive when a report cannot be judged) and every row with its own. With
    ``labels`` (gold labels, ``failgate sample``) each count is gated on its corrected true
    count: rows carry ``estimate``, ``lower`` and ``upper`` beside the judge's ``count``. A
    ``baseline`` measured outside ``baseline_window`` (hours, or ``day``) is inconclusive
    unless ``accept_baseline_gap`` gives the reason to judge it anyway."""
    from .commands.gating import check as run

    config = _config(paths=paths, **_settings("check", settings))
    document: dict[str, Any] = run(config).model_dump(mode="json")
    return document


def explain(paths: list[str] | None = None, ceilings: str | None = None) -> dict[str, Any]:
    """The rule diagnostics of ``failgate check --explain``, per report."""
    from .commands.gating import check as run

    result = run(_config(paths=paths, ceilings=ceilings, explain=True))
    return {"verdict": result.verdict,
            "reports": {report.name: report.explain for report in result.reports}}


def show(paths: list[str] | None = None, top: int = 3, **settings: Any) -> dict[str, Any]:
    """Each report's count per category with its first ``top`` case ids, and its ceiling
    and headroom when the ceilings file exists (``failgate show``)."""
    from .commands.gating import show as run

    return run(_config(paths=paths, **_settings("show", settings)), top).model_dump(
        mode="json")


def diff(base: str, candidate: str, **settings: Any) -> dict[str, Any]:
    """Per report and category, the cases that entered and left it between two runs."""
    import os

    from .commands.runs import diff as run
    from .core.base.confine import check_inside

    _check_named_paths({"base": base, "candidate": candidate})
    config = _config(**_settings("diff", settings))
    runs = Path(os.path.realpath(base)), Path(os.path.realpath(candidate))
    for path in runs:
        check_inside(path)
    return run(config, *runs).model_dump(mode="json")


def analyze(paths: list[str] | None = None, slices: list[str] | None = None,
            **settings: Any) -> dict[str, Any]:
    """One run, no baseline: failures by stage, the weakest slices, what to look at first."""
    from .commands.runs import analyze as run

    return run(_config(paths=paths, **_settings("analyze", settings)), slices or ()
               ).model_dump(mode="json")


def init(paths: list[str] | None = None, **settings: Any) -> dict[str, Any]:
    """Write a new ceilings file from the current counts (``failgate init``); never
    overwrites one. With ``noise`` (a noise_band.json, or ``repeats``) each ceiling is
    observed + allowance. Returns the gate's document and what was written."""
    from .commands.gating import init as run

    return run(_config(paths=paths, **_settings("init", settings))).model_dump(mode="json")


def ratchet(paths: list[str] | None = None, **settings: Any) -> dict[str, Any]:
    """Lower every ceiling whose count fell (``failgate ratchet``); never raises one. On a
    noisy pipeline (``noise``, or the ceilings file's ``noise:``) only past the allowance,
    and only a drop confirmed by ``confirm`` (a second, independent run of the same system)
    or ``confirm_baseline`` (the system before the change, re-run the same day)."""
    from .commands.gating import ratchet as run

    return run(_config(paths=paths, **_settings("ratchet", settings))).model_dump(
        mode="json")


def replay(report: str, plan: str | None = None,
           planned: int | None = None, delta: float = float(DEFAULT_DELTA),
           name: str | None = None, futility: float | None = None,
           margin: int = DEFAULT_MARGIN,
           baseline: str | None = None, **settings: Any) -> dict[str, Any]:
    """Gate a finished JSON Lines report as if its cases were arriving (``failgate watch
    --replay``): the verdict a sequential run would have settled on, after how many of the
    planned cases, and with what probability it is the full run's (``sequential``), in
    ``check``'s document. ``plan`` is a ``failgate plan`` file (the order the cases are
    judged in, within strata when it was drawn with them); without it, the report's order
    is taken as the random one. ``futility`` (a beta) also stops as a pass once a
    regression of ``margin`` cases past every open ceiling is ruled out; ``baseline`` (one
    JSON Lines report of the baseline run) fails the run once a category's new cases
    exceed its fixed ones (paired mode)."""
    from fractions import Fraction

    from .commands.app import Failgate
    from .commands.sequential import Watch, Watched, futility_of, read_plan
    from .commands.watching import watch
    from .core.base.safeopen import byte_limit

    _check_named_paths({"report": report, "plan": plan})
    config = _config(futility=futility, margin=margin,
                     baseline=[baseline] if baseline else None, **_settings("replay", settings))
    limit = byte_limit(config.max_report_bytes)
    path = Path(report)
    for read in (path, *config.baseline):
        if limit is not None and read.is_file() and read.stat().st_size > limit:
            raise FailgateError(f"larger than the {limit} bytes this server reads", read)
    request = Watch(report=path, planned=planned, plan=read_plan(Path(plan)) if plan else None,
                    delta=Fraction(str(delta)), replay=True, name=name,
                    futility=futility_of(config))
    for item in watch(Failgate(config), request):
        if isinstance(item, Watched):
            document: dict[str, Any] = item.result.model_dump(mode="json")
            return document
    raise AssertionError("watch ends with how it ended")  # pragma: no cover


TOOLS = (check, show, diff, explain, analyze, init, ratchet, replay)
# The CLI command each tool serves: besides its own parameters (in its signature; the tool's
# own typing of an option, as ``replay``'s ``delta``), it takes every option of that command
# the server is not said to leave out (``Option.unserved``), with the option's type
# (``tool_signature``). ``explain`` is ``check``'s diagnostics only.
SERVES = {"check": "check", "show": "show", "diff": "diff", "analyze": "analyze",
          "init": "init", "ratchet": "ratchet", "replay": "watch"}
# a tool parameter's type and default by the option's kind
_KINDS: dict[str, tuple[Any, Any]] = {
    "path": (str | None, None), "paths": (list[str] | None, None), "flag": (bool, False),
    "text": (str | None, None), "names": (list[str] | None, None)}


TOOL_NAMES = {function.__name__: function for function in TOOLS}


def tool_options(function: Any) -> list[options.Option]:
    """The options of the command ``function`` serves (``SERVES``) that it takes as
    parameters from the table: those the server serves, not among its own parameters."""
    import inspect

    command = SERVES.get(function.__name__)
    own = set(inspect.signature(function).parameters)
    return [option for option in options.for_command(command or "") if
            option.served_by("mcp") and not option.positional and option.attribute not in own]


def tool_signature(function: Any) -> inspect.Signature:
    """The tool's parameters as MCP describes them: its own, then its command's options
    (``tool_options``), each typed by its kind."""
    import inspect

    signature = inspect.signature(function, eval_str=True)  # types, not their text
    own = [parameter for parameter in signature.parameters.values()
           if parameter.kind is not inspect.Parameter.VAR_KEYWORD]
    table = [inspect.Parameter(option.attribute, inspect.Parameter.KEYWORD_ONLY,
                               default=_KINDS[option.kind][1], annotation=_KINDS[option.kind][0])
             for option in tool_options(function)]
    return signature.replace(parameters=[*own, *table])


def _settings(tool: str, given: dict[str, Any]) -> dict[str, Any]:
    """A tool's table options as given, refusing a name the tool does not take (as Python
    refuses an unknown keyword; an MCP client's call is checked against the signature)."""
    taken = {option.attribute for option in tool_options(TOOL_NAMES[tool])}
    unknown = sorted(set(given) - taken)
    if unknown:
        raise TypeError(f"{tool}() got an unexpected keyword argument {unknown[0]!r}")
    return given


def _guarded(function: Any) -> Any:
    """The tool as MCP sees it: the call runs confined, in a process of its own stopped
    after ``LIMITS.seconds``; failgate's errors become one clear tool error."""
    import inspect

    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.exceptions import ToolError

    async def tool(**kwargs: Any) -> Any:
        context = kwargs.pop("ctx")
        roots = await _client_roots(context)
        import anyio.to_thread

        outcome, value = await anyio.to_thread.run_sync(
            functools.partial(run_call, function.__name__, kwargs, roots, LIMITS))
        if outcome == "error":
            raise ToolError(f"failgate: error: {value}")
        return value

    functools.update_wrapper(tool, function)  # the docstring and name MCP describes it by
    signature = tool_signature(function)
    tool.__signature__ = signature.replace(parameters=[  # type: ignore[attr-defined]
        *signature.parameters.values(),
        inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)])
    tool.__annotations__ = {**{name: parameter.annotation for name, parameter
                               in signature.parameters.items()},
                            "return": signature.return_annotation, "ctx": Context}
    del tool.__wrapped__  # type: ignore[attr-defined]  # the signature above is the tool's
    return tool


async def _client_roots(context: Any) -> list[str]:
    """The client's MCP roots as folder paths (none when it declares no roots)."""
    from urllib.parse import unquote, urlparse

    capabilities = context.client_capabilities
    if capabilities is None or getattr(capabilities, "roots", None) is None:
        return []
    try:
        listed = await context.session.list_roots()
    except Exception:  # a client that declared roots but cannot list them: none
        return []
    found = []
    for root in listed.roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file":
            found.append(unquote(uri.path))
    return found


def run_call(name: str, arguments: dict[str, Any], roots: list[str],
             limits: Limits) -> tuple[str, Any]:
    """One tool call in a child process (started from a clean fork server), stopped after
    ``limits.seconds``: ``("ok", result)`` or ``("error", message)``. Where processes
    cannot be forked from a server (Windows), the call runs here, without a time limit."""
    import multiprocessing
    import os

    allowed = [os.getcwd(), *roots]
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return _call(name, arguments, allowed, limits)
    context = multiprocessing.get_context("forkserver")
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(sending, name, arguments, allowed, limits),
                            daemon=True)
    child.start()
    sending.close()
    try:
        if not receiving.poll(limits.seconds):
            child.kill()
            return ("error", f"the call took longer than {limits.seconds:g} s and was stopped "
                             "(failgate mcp --call-seconds)")
        try:
            outcome, value = receiving.recv()
            return outcome, value
        except EOFError:
            return ("error", "the call's process ended without an answer (out of memory?)")
    finally:
        receiving.close()
        child.join(5)
        if child.is_alive():  # pragma: no cover - a child that ignores the end of its call
            child.kill()


def _child(sending: Any, name: str, arguments: dict[str, Any], allowed: list[str],
           limits: Limits) -> None:
    sending.send(_call(name, arguments, allowed, limits))
    sending.close()


def _call(name: str, arguments: dict[str, Any], allowed: list[str],
          limits: Limits) -> tuple[str, Any]:
    global LIMITS
    from .core.base.confine import confined, values_hidden

    LIMITS = limits
    own = Path(__file__).parent  # failgate's own files: the built-in taxonomies
    with confined([*(Path(root) for root in allowed), own]), values_hidden():
        try:
            return ("ok", TOOL_NAMES[name](**arguments))
        except FailgateError as exc:
            return ("error", str(exc))
        except Exception as exc:  # never a traceback, nor a value, to the client
            return ("error", f"failgate failed ({type(exc).__name__}); the server's log has "
                             "no more: run the same command with the failgate CLI")


def server() -> MCPServer:
    """The MCP server with failgate's tools."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        from .core.base.install import needs_extra

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


def serve(limits: Limits | None = None) -> None:
    """Serve over stdio until the client closes the connection."""
    global LIMITS
    if limits is not None:
        LIMITS = limits
    server().run("stdio")
