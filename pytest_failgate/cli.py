"""The ``failgate`` console script: parses its arguments, runs a command, prints its result.

The commands themselves are in ``commands/`` (the same functions the MCP server calls,
over the configuration pytest resolves); this module only turns arguments into a
``Config`` and results into text and exit codes: 0 the gate passed, 1 it failed (a
regression), 2 a usage or input error, 3 inconclusive (a report cannot be judged: its
failures outside the system under test, a run that did not finish, a changed measuring
instrument; init and ratchet recorded nothing from it). ``failgate --help`` builds the
parser only: the core and the renderers are imported inside the command that needs them,
so asking for help stays cheap.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from . import __version__, options
from .core.base.errors import FailgateError, os_error_line
from .core.base.formatting import inert_lines, one_line
from .core.base.verdict import EXIT, EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_INPUT, EXIT_PASS
from .core.engines import DIALECTS
from .options import add_argument, for_command

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .commands.app import Failgate
    from .commands.config import Config
    from .core.base.advice import Advice
    from .core.base.result import GateResult
    from .core.base.verdict import RunVerdict

SHOWN_IDS = 10  # case ids per line in `diff`

_paint = False


def _out(line: str = "") -> None:
    line = _inert(line)
    if _paint:
        from .output.colour import paint

        line = paint(line)
    _print(line)


def _print(line: str) -> None:
    """Print a line; a reader that left (``failgate check ... | head``) is not an error:
    the rest goes nowhere and the command still ends with its verdict's exit code."""
    try:
        print(line)
    except BrokenPipeError:
        _reader_left()


def _reader_left() -> None:
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _inert(text: str) -> str:
    """No line of report content printed can be a CI workflow command (output.github)."""
    from .output.github import inert

    return inert(text)


def command_advice(config: Config) -> Advice:
    """The CLI's words for the actions the core suggests: the command with the paths, the
    ceilings file and the other settings this run was given (what the ini file sets, the
    command reads again)."""
    from .core.base.advice import TAXONOMY_FILE, Advice

    def command(action: str, taxonomy: str | None = None) -> str:
        parts = ["failgate", action]
        for option, words in config.given_words(action):
            if taxonomy is not None and option.name == "taxonomy":
                continue
            if option.positional:
                parts += words
            else:
                parts += [part for word in words for part in (option.cli_flag, word)] \
                    if words else [option.cli_flag]
        if taxonomy is not None:
            parts += ["--taxonomy", taxonomy]
        return "`" + " ".join(parts) + "`"

    from .options import BY_NAME

    return Advice(init=command("init"), ratchet=command("ratchet"),
                  init_taxonomy=command("init", TAXONOMY_FILE),
                  ceilings=f"`{BY_NAME['ceilings'].cli_flag} FILE`")


def _print_summary(result: GateResult) -> None:
    from .core.ceilings import writeback
    from .output.text import item_id, ratchet_status, summary_lines

    for row in result.rows:
        if row.message and row.failing:
            _out(f"FAILED {item_id(result.ceilings_path, row)}")
            _out(row.message)
            _out()
    for error in result.load_errors:
        _out(f"ERROR {inert_lines(error)}")  # it may quote the report's content
    for line in summary_lines(result, writeback.outcomes_from_verdicts(result)):
        _out(line)
    status = ratchet_status(result)
    if status is not None:
        _out()
        _out(status)


def cmd_check(args: argparse.Namespace) -> int:
    from .commands.app import Failgate
    from .commands.gating import check

    app = Failgate(configure(args))
    return _finish(app, check(app))


def _finish(app: Failgate, result: GateResult) -> int:
    """A gate's outcome (check's, or watch's once it ends): the summary, the report files
    asked for and the exit code, alike for both."""
    from .commands.gating import write_reports

    _print_summary(result)
    written = write_reports(app, result)
    for line in written.lines:
        if not line.startswith("wrote "):
            _out(line)
    for command in written.commands:
        _print(command)  # failgate's own annotations, escaped by output.github.annotation
    if written.failed:
        print("failgate: error: a report file could not be written (above)", file=sys.stderr)
        return EXIT_INPUT
    return EXIT[result.verdict]


def cmd_init(args: argparse.Namespace) -> int:
    from .cli_start import init_lines

    return _lines(*init_lines(args, configure(args)))


def _lines(lines: list[str], verdict: RunVerdict) -> int:
    for line in lines:
        _out(line)
    return EXIT[verdict]


def cmd_ratchet(args: argparse.Namespace) -> int:
    from .commands.gating import ratchet

    config = configure(args)
    done = ratchet(config)
    _print_summary(done.result)
    for line in ["", *done.lines]:
        _out(line)
    return EXIT[done.result.verdict]


def cmd_show(args: argparse.Namespace) -> int:
    from .commands.gating import show
    from .output.text import show_lines

    shown = show(configure(args), args.top)
    for line in show_lines(shown):
        _out(line)
    return EXIT_INPUT if any(r.error is not None for r in shown.reports) else EXIT_PASS


def _ids(ids: list[str], n: int, shown: int) -> str:
    return ", ".join(map(one_line, ids[:shown])) + (f" (+{n - shown} more)" if n > shown else "")


def cmd_diff(args: argparse.Namespace) -> int:
    from .commands.runs import diff

    config = configure(args)
    compared = diff(config, Path(os.path.realpath(args.base)),
                    Path(os.path.realpath(args.candidate)))
    for index, report in enumerate(compared.reports):
        if index:
            _out()
        paired = f"{report.n_both} paired cases" if report.paired else "aggregate: counts only"
        _out(f"{report.name}  ({paired})")
        moved = [c for c in report.changes if c.count != c.base_count or c.new or c.fixed]
        for change in moved:
            counts = f"  +{change.n_new} new, -{change.n_fixed} fixed" if report.paired else ""
            _out(f"  {change.category}: {change.base_count} -> {change.count}{counts}")
            for label, ids, n in (("new", change.new, change.n_new),
                                  ("fixed", change.fixed, change.n_fixed)):
                if ids:
                    _out(f"    {label}: {_ids(ids, n, SHOWN_IDS)}")
        if not moved:
            _out("  no change")
        for label, ids, n in (("only in base", report.only_base, report.n_only_base),
                              ("only in candidate", report.only_candidate,
                               report.n_only_candidate)):
            if n:
                _out(f"  {label}: {n} cases ({', '.join(ids[:5])}"
                     + (", …)" if n > 5 else ")"))
    for label, names in (("reports only in base", compared.only_base),
                         ("reports only in candidate", compared.only_candidate)):
        if names:
            _out(f"{label}: {', '.join(names)}")
    return EXIT_PASS


def cmd_guard(args: argparse.Namespace) -> int:
    from .commands.runs import guard

    config = configure(args)
    result = guard(config, args.base)
    for line in result.lines:
        _out(line)
    return EXIT_PASS if result.passed else EXIT_FAIL


def cmd_analyze(args: argparse.Namespace) -> int:
    from .commands.runs import analyze
    from .output.text import analysis_lines

    config = configure(args)
    analyses = analyze(config, args.slice).reports
    for index, analysis in enumerate(analyses):
        if index:
            _out()
        for line in analysis_lines(analysis):
            _out(line)
    if args.json:
        document = [analysis.model_dump(mode="json") for analysis in analyses]
        Path(args.json).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                                   encoding="utf-8")
    return EXIT_PASS


def cmd_mcp(args: argparse.Namespace) -> int:
    from .core.base.safeopen import byte_limit
    from .mcpserver import Limits, serve

    byte_limit(args.max_report_bytes)  # a bad size is refused now, not at the first call
    if args.call_seconds <= 0:
        raise FailgateError("--call-seconds must be more than 0")
    serve(Limits(args.max_report_bytes, args.call_seconds, args.allow_plugins))
    return EXIT_PASS


def cmd_noise(args: argparse.Namespace) -> int:
    from .cli_start import noise_lines

    return _lines(*noise_lines(args, configure(args)))


SCHEMA = Path(__file__).parent / "schema" / "gate-result.schema.json"


def cmd_history(args: argparse.Namespace) -> int:
    from .commands.runs import history
    from .output.chart import HistoryPoint
    from .output.history import history_svg

    config = configure(args)
    found = history(config, Path(os.path.realpath(args.folder)))
    names, points = found.charted, found.points
    width = max([len(p.label) for p in points] + [len("ceiling")])
    _out("  ".join([f"{'run':<{width}}", *(f"{n:>{max(len(n), 5)}}" for n in names)]))
    for point in points:
        _out("  ".join([f"{point.label:<{width}}",
                        *(f"{point.counts.get(n, 0):>{max(len(n), 5)}}" for n in names)]))
    if any(n in found.ceilings for n in names):
        _out("  ".join([f"{'ceiling':<{width}}",
                        *(f"{found.ceilings.get(n, ''):>{max(len(n), 5)}}" for n in names)]))
    if args.svg:
        chart = [HistoryPoint(p.label, p.counts) for p in points]
        Path(args.svg).write_text(history_svg(chart, found.categories, found.ceilings),
                                  encoding="utf-8")
        _out(f"chart: {args.svg}")
    return EXIT_PASS


def cmd_schema(args: argparse.Namespace) -> int:
    sys.stdout.write(SCHEMA.read_text(encoding="utf-8"))
    return EXIT_PASS


def cmd_sql(args: argparse.Namespace) -> int:
    from .commands.runs import sql

    config = configure(args)
    sample = Path(os.path.realpath(args.sample)) if args.sample else None
    sys.stdout.write(sql(config, args.dialect, args.table, sample).sql)
    return EXIT_PASS


def cmd_plan(args: argparse.Namespace) -> int:
    from .commands.app import Failgate
    from .commands.sequential import plan_command

    for line in plan_command(Failgate(configure(args)), Path(args.source), args.seed,
                             args.strata, args.id, args.name, Path(args.out), args.ordered):
        _out(line)
    return EXIT_PASS


def cmd_sample(args: argparse.Namespace) -> int:
    from .commands.labelling import sample

    _out(sample(configure(args), args.n, args.seed, Path(args.out)))
    return EXIT_PASS


def cmd_watch(args: argparse.Namespace) -> int:
    from fractions import Fraction

    from .commands.app import Failgate
    from .commands.sequential import Watch, Watched, futility_of, read_plan
    from .commands.watching import watch

    app = Failgate(configure(args))
    try:  # given, else the option table's default
        delta = Fraction(app.config.delta)
    except (ValueError, ZeroDivisionError):
        raise FailgateError(f"--delta must be a number between 0 and 1, not "
                            f"{app.config.delta}") from None
    request = Watch(report=Path(args.report), planned=args.planned,
                    futility=futility_of(app.config, "--futility", "--margin"),
                    plan=read_plan(Path(args.plan)) if args.plan else None, delta=delta,
                    replay=args.replay, name=args.name, command=tuple(args.harness),
                    idle_seconds=args.idle_seconds, batch=args.batch, batch_key=args.batch_key)
    if request.batch is not None:
        from .commands.batches import watch_batches

        watching = watch_batches(app, request)
    else:
        watching = watch(app, request)
    for item in watching:
        if isinstance(item, Watched):  # the check's summary, outputs and exit code
            _out()
            return _finish(app, item.result)
        _out(item)
    return EXIT_INCONCLUSIVE  # pragma: no cover - watch always ends with how it ended


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; ``only``, when it names a command, with that command's
    arguments alone (a run parses one command: building the others' would be most of the
    parsing time), else every command's (the top level's help and errors)."""
    from .helpformat import TerminalHelp

    parser = argparse.ArgumentParser(
        prog="failgate",
        description="Gate LLM/RAG evaluation reports by failure category, outside pytest. "
                    "Same core, configuration and numbers as `pytest --failgate`.",
        epilog=EXIT_CODES, formatter_class=TerminalHelp,
        allow_abbrev=False,  # an abbreviation (--ceil) would slip past the guard's reading
    )
    parser.add_argument("--version", action="version", version=f"failgate {__version__}")
    parser.add_argument(*COLOR_FLAG, **COLOR_ARGUMENT)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    drop = lambda *_, **__: None  # noqa: E731 - unbuilt commands' arguments go nowhere
    unbuilt = cast("argparse.ArgumentParser", SimpleNamespace(add_argument=drop, set_defaults=drop))
    built: list[str] = []

    def command(name: str, help_text: str, example: str,
                run: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        """A subcommand with the options the option table lists for it."""
        if only is not None and name != only:
            return unbuilt
        built.append(name)
        sub = commands.add_parser(
            name, help=help_text, description=help_text,
            epilog=f"example:\n  {example}", formatter_class=TerminalHelp, allow_abbrev=False,
        )
        sub.set_defaults(run=run, command_parser=sub)
        # after the command too (``failgate check --color=no``); absent, the top level's holds
        sub.add_argument(*COLOR_FLAG, **{**COLOR_ARGUMENT, "default": argparse.SUPPRESS})
        for option in for_command(name):
            add_argument(sub, option, name)
        return sub

    command("check", "check every category count against its ceiling",
            "failgate check reports/ --md gate.md --github", cmd_check)
    init = command("init", "write a new ceilings file from the current counts",
                   "failgate init reports/ --ceilings ceilings.yaml", cmd_init)
    init.add_argument("--force", action="store_true",
                      help="write over an existing ceilings file (an exact one moving onto a "
                           "noise band: --noise FILE --force), with its taxonomy unless "
                           "--taxonomy is given; the guard names every ceiling this raises")
    init.add_argument("--reason", metavar="TEXT",
                      help="with --force: why, written on every entry and at the top, so the "
                           "guard passes what this raises (a reviewed loosening)")
    command("ratchet", "lower every ceiling whose count fell; never raise one",
            "failgate ratchet reports/ && git commit -am 'Ratchet ceilings'", cmd_ratchet)
    show = command("show", "the category distribution with bars, ceilings and case ids",
                   "failgate show reports/eval_summary.json --top 5", cmd_show)
    show.add_argument("--top", type=int, default=3, metavar="N",
                      help="case ids to list per category (default: 3)")

    diff = command("diff", "per category, the cases that entered and left it between two runs",
                   "failgate diff baseline/reports/ reports/", cmd_diff)
    diff.add_argument("base", metavar="BASE", help="the baseline run's reports")
    diff.add_argument("candidate", metavar="CANDIDATE", help="the candidate run's reports")

    guard_command = command(
        "guard", "fail when anything the gate enforces was loosened since a git ref without a "
        "reason",
        "failgate guard --base origin/main", cmd_guard)
    guard_command.add_argument("--base", required=True, metavar="REF",
                               help="the git ref to compare with (e.g. origin/main)")

    analyze = command("analyze", "one run, no baseline: failures by stage, the bottleneck, the "
                      "weakest slices with exact intervals, and what to look at first",
                      "failgate analyze runs/baseline/", cmd_analyze)
    analyze.add_argument("--slice", action="append", default=[], metavar="FIELD",
                         help="a case field to slice by (repeatable; default: slice, "
                              "query_type)")
    analyze.add_argument("--json", metavar="FILE", help="write the analysis as JSON")

    mcp = command("mcp", "serve failgate's commands to MCP clients over stdio "
                  "(needs the mcp extra)", "failgate mcp", cmd_mcp)
    mcp.add_argument("--allow-plugins", action="store_true",
                     help="run the plugins the project names (failgate_plugins, entry "
                          "points); without it the server runs no plugin code")
    mcp.add_argument("--max-report-bytes", default="100MB", metavar="SIZE",
                     help="refuse report files larger than SIZE in every call (default: "
                          "100MB; the ini file's limit when smaller)")
    mcp.add_argument("--call-seconds", type=float, default=60.0, metavar="S",
                     help="stop a call that runs longer than S seconds (default: 60)")

    noise = command("noise", "measure each category's noise band from repeated runs",
                    "failgate noise run1/ run2/ run3/ --out noise_band.json", cmd_noise)
    noise.add_argument("runs", nargs="*", metavar="RUN",
                       help="the reports of one run of the same configuration (2 or more)")
    noise.add_argument("--out", default="noise_band.json", metavar="FILE",
                       help="where to write the bands (default: noise_band.json)")
    noise.add_argument("--check", metavar="FILE",
                       help="measure the band FILE again from the runs it names (or the RUNs "
                            "given) and list every number that differs; exit 1 if any does")

    history = command("history", "counts per category over a folder of runs, as a table and an "
                      "SVG chart", "failgate history reports/history/ --svg history.svg",
                      cmd_history)
    history.add_argument("folder", metavar="DIR",
                         help="one run per entry: a report file or a folder of reports")
    history.add_argument("--svg", metavar="FILE", help="write the chart as a standalone SVG")

    command("schema", "print the JSON Schema of --json / --failgate-json output",
            "failgate schema > failgate.schema.json", cmd_schema)

    plan = command("plan", "write a seeded random order of a case set's ids, for watch",
                   "failgate plan dataset.jsonl --seed 7 --out plan.json", cmd_plan)
    plan.add_argument("source", metavar="FILE",
                      help="a dataset file or a report: JSON Lines, a JSON array of cases, "
                           "an object with case_results, or CSV")
    plan.add_argument("--seed", type=int, metavar="N",
                      help="the seed of the order (default: a fresh random one, recorded in "
                           "the plan)")
    plan.add_argument("--strata", metavar="FIELD",
                      help="permute the cases within each value of this case field (the "
                           "gate then keeps a confidence sequence per stratum)")
    plan.add_argument("--out", default="plan.json", metavar="FILE",
                      help="where to write the plan (default: plan.json)")
    plan.add_argument("--id", metavar="FIELD",
                      help="the case field holding each case's id (default: the id fields of "
                           "the taxonomy the ceilings file gives the report, its id_field; "
                           "else id, case_id, question_id or sample_id, else the position)")
    plan.add_argument("--name", metavar="NAME",
                      help="the report's name in the ceilings file, whose taxonomy gives the "
                           "id field (default: the file's name without its suffix)")
    plan.add_argument("--ordered", metavar="FILE",
                      help="also write the cases in the plan's order, in the source's format "
                           "(CSV too): a harness that runs a file's cases in order by range "
                           "(promptfoo's --filter-range) then walks the plan")

    drawn = command("sample", "draw a uniform random sample of a run's cases for people to "
                    "label (gold labels for --labels)",
                    "failgate sample reports/ --n 200 --seed 7 --out gold.jsonl", cmd_sample)
    drawn.add_argument("--n", type=int, default=200, metavar="K", help="cases (default: 200)")
    drawn.add_argument("--seed", type=int, metavar="S", help="default: a fresh one, recorded")
    drawn.add_argument("--out", default="sample.json", metavar="FILE",
                       help="the sample file (.jsonl: the labels file itself, to fill in)")

    watch = command("watch", "gate a JSON Lines report as it is written, and stop as soon as "
                    "the verdict is settled (the full run's with probability 1 - delta)",
                    "failgate watch results.jsonl --plan plan.json -- python run_eval.py",
                    cmd_watch)
    watch.add_argument("report", metavar="FILE", help="the JSON Lines report being written")
    watch.add_argument("--planned", type=int, metavar="N",
                       help="the number of cases the run will have (the report's order is "
                            "then taken as the random order)")
    watch.add_argument("--plan", metavar="FILE",
                       help="the run's planned order (`failgate plan`); cases are judged in "
                            "its order, whatever order they finish in")
    watch.add_argument("--replay", action="store_true",
                       help="read a finished report as if its cases were arriving (N: its "
                            "cases, unless --planned or --plan says)")
    watch.add_argument("--name", metavar="NAME",
                       help="the report's name in the ceilings file (default: the file's "
                            "name without its suffix)")
    watch.add_argument("--idle-seconds", type=float, default=300.0, metavar="S",
                       help="give up (inconclusive, the harness stopped) when the report has "
                            "had no new case for S seconds (default: 300)")
    watch.add_argument("--batch", metavar="B",
                       help="run the command after -- once per batch of B cases of the plan, "
                            "in its order, filling in {start}, {end}, {batch}, {ids} and "
                            "{indices} in its arguments and in FILE (promptfoo, lm-eval); no "
                            "batch starts once settled; auto: from 1/50 of the plan, doubling")
    watch.add_argument("--batch-key", default="id", metavar="FIELD",
                       help="with --batch: the field of each case of a batch's report that "
                            "holds its id in the plan (default: id; promptfoo: description, "
                            "lm-eval: doc_id)")
    watch.set_defaults(harness=[])

    sql = command("sql", "print the gate as one SQL query (counts per category and slice)",
                  "failgate sql --dialect spark --table eval.cases --sample cases.parquet",
                  cmd_sql)
    sql.add_argument("--dialect", default="duckdb", choices=DIALECTS,
                     help="duckdb or spark (run and tested), or transpiled by sqlglot")
    sql.add_argument("--table", default="cases", help="the table to read (default: cases)")
    sql.add_argument("--sample", metavar="FILE",
                     help="a Parquet or JSON Lines file whose column types the query uses "
                          "(default: the taxonomy's types:)")
    if only is not None and not built:  # not a command: every command, to say so
        return _parser()
    return parser


def configure(args: argparse.Namespace) -> Config:
    """The command's configuration: its arguments, the ini file pytest would use here, the
    defaults; advice in the CLI's words."""
    from dataclasses import replace

    from .commands.config import load

    given: dict[str, Any] = {option.attribute: getattr(args, option.attribute, None)
                             for option in options.OPTIONS}
    config = load(given)
    return replace(config, advice=command_advice(config))


def check_config(argv: Sequence[str]) -> Config:
    """The configuration ``failgate check ARGV`` runs with (the CI step's gate); a usage
    error raises ``SystemExit`` as the command would, after saying so."""
    return configure(_parse(_parser("check"), ["check", *argv]))


EXIT_CODES = """\
exit codes:
  0  the gate passed
  1  it failed: a count above its ceiling, a regression, a loosening without a reason
  2  a usage or input error (one line says which file and where)
  3  inconclusive: a report cannot be judged (init and ratchet record nothing from it)

`failgate COMMAND --help` shows a command's options and an example."""

COLOR_FLAG = ("--color",)
COLOR_ARGUMENT: dict[str, Any] = {
    "choices": ("auto", "yes", "no"), "default": "auto", "metavar": "WHEN",
    "help": "colour the output: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR "
            "turns it on), yes or no (default: auto)"}


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments; one the command does not take is refused with that command's usage
    (not the top level's) and the flag it most resembles."""
    from .core.base.errors import closest

    args, unknown = parser.parse_known_args(argv)
    if unknown:
        command: argparse.ArgumentParser = args.command_parser
        flags = [flag for action in command._actions for flag in action.option_strings]
        guess = closest(unknown[0].split("=", 1)[0], flags)
        command.error(f"unrecognized arguments: {' '.join(unknown)}"
                      + (f" (did you mean {guess}?)" if guess else ""))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    harness: list[str] = []
    if words[:1] == ["watch"] and "--" in words:  # `watch FILE ... -- CMD ...`: the harness
        cut = words.index("--")
        words, harness = words[:cut], words[cut + 1:]
    args = _parse(_parser(words[0] if words else None), words)
    if harness:
        args.harness = harness
    from .output.colour import use_colour

    global _paint  # the CLI prints through ``_out``: one switch for the whole run
    _paint = use_colour(args.color, sys.stdout)
    try:
        code = int(args.run(args))
        try:
            sys.stdout.flush()  # here, not at exit: a reader that left must not change it
        except BrokenPipeError:
            _reader_left()
        return code
    except FailgateError as exc:
        print(_inert(f"failgate: error: {exc}"), file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # the reader left while the verdict was still being decided
        _reader_left()
        return EXIT_FAIL
    except OSError as exc:  # a file the system refused (a name too long, permissions)
        print(_inert(f"failgate: error: {os_error_line(exc)}"), file=sys.stderr)
        return EXIT_INPUT


def entry() -> None:
    """The ``failgate`` console script: ``main``, then the quickest exit that loses nothing.

    An interpreter's shutdown frees every module and object one by one, which took a
    tenth of a second after a small run, with nothing left to do: the outputs are
    written and closed, and stdout and stderr are flushed here. It exits the usual way
    when anything registered work for the exit (an engine's session, a temporary
    folder) or a thread still runs. Only the console script does this: ``main`` returns
    its code to whoever called it (tests, ``python -m``, an embedding program).
    """
    import atexit

    registered = atexit._ncallbacks()
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            _reader_left()
        except (OSError, ValueError):  # a closed stream: the usual exit reports it
            sys.exit(code)
    threading = sys.modules.get("threading")
    if atexit._ncallbacks() == registered and (threading is None
                                               or threading.active_count() == 1):
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
