"""The ``failgate`` console script: the gate outside pytest, on the same core.

Exit codes: 0 the gate passed, 1 it failed, 2 a usage or input error.
``failgate --help`` builds the parser only: the core and the renderers are imported
inside the command that needs them, so asking for help stays cheap.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .core.engines import DIALECTS
from .core.errors import FailgateError, display_path
from .invocation import config as _config
from .invocation import contributions as _contributions
from .invocation import first_taxonomy as _first_taxonomy
from .invocation import gate as _gate
from .invocation import read_spec as _spec
from .invocation import settings as _settings
from .invocation import taxonomy as _taxonomy
from .options import for_command

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .core.gate import GateConfig, Mode
    from .core.result import GateResult, Row

EXIT_PASS, EXIT_FAIL, EXIT_INPUT = 0, 1, 2
BAR_WIDTH = 30


def _out(line: str = "") -> None:
    print(line)


def _print_summary(result: GateResult, config: GateConfig) -> None:
    from .core.ceilings import writeback
    from .output.text import ratchet_status, summary_lines

    outcomes = writeback.outcomes_from_verdicts(result)
    for row in result.rows:
        if row.message and row.failing:
            _out(f"FAILED {result.ceilings_path}::{row.report}::{row.name}")
            _out(row.message)
            _out()
    for error in result.load_errors:
        _out(f"ERROR {error}")
    for line in summary_lines(result, outcomes):
        _out(line)
    status = ratchet_status(result, f"failgate ratchet {_paths_text(config)}")
    if status is not None:
        _out()
        _out(status)


def _paths_text(config: GateConfig) -> str:
    return " ".join(display_path(p) for p in config.paths)


def _verdict(result: GateResult) -> int:
    if result.load_errors:
        return EXIT_INPUT
    failed = any(row.failing for row in result.rows)
    return EXIT_FAIL if failed else EXIT_PASS


def cmd_check(args: argparse.Namespace) -> int:
    from .core.messages import ratchet_command
    from .output.files import write_outputs

    mode: Mode = "strict" if args.strict else "gate"
    gate, result = _gate(args, mode)
    config, outputs = _settings(args, mode)
    _print_summary(result, config)
    written = write_outputs(outputs, result, ratchet_command(config), gate.taxonomy,
                            result.default_ceilings)
    for line in written.lines:
        if not line.startswith("wrote "):
            _out(line)
    if written.failed:
        print("failgate: error: a report file could not be written (above)", file=sys.stderr)
        return EXIT_INPUT
    return _verdict(result)


def cmd_init(args: argparse.Namespace) -> int:
    from .core.ceilings import writeback
    from .output.text import summary_lines

    _, result = _gate(args, "init")
    for line in summary_lines(result, writeback.outcomes_from_verdicts(result)):
        _out(line)
    lines = writeback.init(Path(args.ceilings).resolve(), result)
    for line in ["", *lines]:
        _out(line)
    return EXIT_INPUT if result.load_errors or "not written" in lines[0] else EXIT_PASS


def cmd_ratchet(args: argparse.Namespace) -> int:
    from .core.ceilings import writeback

    _, result = _gate(args, "ratchet")
    config = _config(args, "ratchet")
    _print_summary(result, config)
    _out()
    for line in writeback.ratchet(config.ceilings_path, result,
                                  writeback.outcomes_from_verdicts(result)):
        _out(line)
    return _verdict(result)


def _bar(count: int, largest: int) -> str:
    if largest == 0 or count == 0:
        return ""
    eighths = round(count * BAR_WIDTH * 8 / largest) or 1
    return "█" * (eighths // 8) + " ▏▎▍▌▋▊▉"[eighths % 8].strip()


def cmd_show(args: argparse.Namespace) -> int:
    from .core.formatting import report_heading
    from .core.gate import load_run
    from .output.text import headroom_text

    rows: dict[str, dict[str, Row]] = {}
    if Path(args.ceilings).exists() and not args.taxonomy:
        gate, result = _gate(args, "gate")
        gated, skipped, taxonomy = gate.reports, gate.skipped, gate.taxonomy
        rows = {r.name: {row.name: row for row in r.rows} for r in result.reports}
    else:
        choice, taxonomy = _taxonomy(args)
        gated, skipped = load_run(tuple(Path(p).resolve() for p in args.paths), choice,
                                  _spec(args))
    for index, loaded in enumerate(gated):
        if index:
            _out()
        if loaded.report is None:
            _out(f"{loaded.file.name}: not loaded: {loaded.error}")
            continue
        report = loaded.report
        listed = report.taxonomy or taxonomy
        width = max(len(name) for name in listed.category_names)
        _out(report_heading(report.name, report.n_cases, report.failed,
                            report.kind == "aggregate", separator="  "))
        largest = max(report.counts.values())
        for name in listed.category_names:
            count = report.counts[name]
            line = f"  {name:<{width}}  {count:>6}  {_bar(count, largest):<{BAR_WIDTH}}"
            row = rows.get(report.name, {}).get(name)
            if row is not None:
                line += f"  ceiling {row.ceiling:<8} headroom {headroom_text(row.headroom)}"
            ids = report.case_ids(name)[: args.top]
            if ids:
                line += "  " + ", ".join(ids) + (" …" if count > len(ids) else "")
            _out(line.rstrip())
    if skipped:
        _out()
        _out(f"skipped: {', '.join(display_path(s.path) for s in skipped)}")
    return EXIT_INPUT if any(g.report is None for g in gated) else EXIT_PASS


def cmd_diff(args: argparse.Namespace) -> int:
    from .core.compare.pairing import compare_runs
    from .core.gate import load_run_or_raise

    choice, taxonomy = _taxonomy(args)
    runs = [load_run_or_raise((Path(path).resolve(),), choice, _spec(args))
            for path in (args.base, args.candidate)]
    taxonomy = _first_taxonomy(runs[0], taxonomy)
    comparison = compare_runs(runs[0], runs[1], taxonomy.category_names)
    for index, report in enumerate(comparison.reports):
        if index:
            _out()
        paired = f"{report.n_both} paired cases" if report.paired else "aggregate: counts only"
        _out(f"{report.name}  ({paired})")
        for change in report.changes:
            if not (change.delta or change.new or change.fixed):
                continue
            moved = f"  +{change.new_count} new, -{change.fixed_count} fixed" \
                if report.paired else ""
            _out(f"  {change.category}: {change.base_count} -> {change.count}{moved}")
            for label, ids, n in (("new", change.new, change.new_count),
                                  ("fixed", change.fixed, change.fixed_count)):
                if ids:
                    more = f" (+{n - 10} more)" if n > 10 else ""
                    _out(f"    {label}: {', '.join(ids[:10])}{more}")
        if not any(c.delta or c.new or c.fixed for c in report.changes):
            _out("  no change")
        for label, ids, n in (("only in base", report.only_base, report.only_base_count),
                              ("only in candidate", report.only_candidate,
                               report.only_candidate_count)):
            if n:
                _out(f"  {label}: {n} cases ({', '.join(ids[:5])}"
                     + (", …)" if n > 5 else ")"))
    for label, names in (("reports only in base", comparison.only_base),
                         ("reports only in candidate", comparison.only_candidate)):
        if names:
            _out(f"{label}: {', '.join(names)}")
    return EXIT_PASS


def cmd_guard(args: argparse.Namespace) -> int:
    from .core.guard import guard

    result = guard(Path(args.ceilings).absolute(), args.base)
    for line in result.lines():
        _out(line)
    return EXIT_PASS if result.passed else EXIT_FAIL


def cmd_analyze(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from .core.analyze import DEFAULT_SLICES, analysis_slicers, analyze_report
    from .core.gate import load_run_or_raise
    from .output.text import analysis_lines

    choice, taxonomy = _taxonomy(args)
    fields = tuple(args.slice) or DEFAULT_SLICES
    spec = replace(_spec(args), slicers=analysis_slicers(fields))
    reports = load_run_or_raise(tuple(Path(p).resolve() for p in args.paths), choice, spec)
    analyses = [analyze_report(r, r.taxonomy or taxonomy, fields) for r in reports]
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
    from .mcpserver import serve

    serve()
    return EXIT_PASS


def cmd_noise(args: argparse.Namespace) -> int:
    from .core.compare.noise import noise_band_document
    from .core.compare.repeats import noise_from_runs
    from .core.gate import load_run_or_raise

    if len(args.runs) < 2:
        raise FailgateError("a noise band needs at least two runs of one configuration")
    choice, taxonomy = _taxonomy(args)
    loaded = [load_run_or_raise((Path(run).resolve(),), choice, _spec(args)) for run in args.runs]
    taxonomy = _first_taxonomy(loaded[0], taxonomy)
    runs = [(Path(run).name, reports) for run, reports in zip(args.runs, loaded, strict=True)]
    noise = noise_from_runs(runs, taxonomy)
    text = json.dumps(noise_band_document(noise), indent=2, ensure_ascii=False) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    _out(f"noise over {len(runs)} runs -> {args.out}")
    width = max(len(name) for name in [*noise.bands, *noise.metric_bands])
    for name, band in noise.bands.items():
        _out(f"  mode:{name:<{width}}  min {band.min:>7}  max {band.max:>7}  std {band.std:>8.3f}")
    for name, metric in noise.metric_bands.items():
        _out(f"  {name:<{width + 5}}  min {float(metric.min):>7.4g}  max {float(metric.max):>7.4g}"
             f"  std {metric.std:>8.3f}")
    if noise.unstable_cases:
        shown = ", ".join(noise.unstable_cases[:10])
        _out(f"  unstable cases: {len(noise.unstable_cases)} ({shown}"
             + (", ...)" if len(noise.unstable_cases) > 10 else ")"))
    return EXIT_PASS


SCHEMA = Path(__file__).parent / "schema" / "gate-result.schema.json"


def cmd_history(args: argparse.Namespace) -> int:
    from .output.history import charted, history_svg, load_history

    _choice, taxonomy = _taxonomy(args)
    ceilings: dict[str, int] = {}
    if Path(args.ceilings).exists() and not args.taxonomy:
        from .core.ceilings.load import load_ceilings

        model = load_ceilings(Path(args.ceilings).resolve(), _contributions(args).taxonomies
                              ).model
        ceilings = {n: c.max for n, c in model.ceilings.items() if c.max is not None}
    points = load_history(Path(args.folder), taxonomy)
    names = charted(points, taxonomy.category_names)
    width = max([len(p.label) for p in points] + [len("ceiling")])
    header = [f"{'run':<{width}}", *(f"{n:>{max(len(n), 5)}}" for n in names)]
    _out("  ".join(header))
    for point in points:
        cells = [f"{point.label:<{width}}",
                 *(f"{point.counts.get(n, 0):>{max(len(n), 5)}}" for n in names)]
        _out("  ".join(cells))
    if any(n in ceilings for n in names):
        _out("  ".join([f"{'ceiling':<{width}}",
                        *(f"{ceilings.get(n, ''):>{max(len(n), 5)}}" for n in names)]))
    if args.svg:
        Path(args.svg).write_text(history_svg(points, taxonomy.category_names, ceilings),
                                  encoding="utf-8")
        _out(f"chart: {args.svg}")
    return EXIT_PASS


def cmd_schema(args: argparse.Namespace) -> int:
    sys.stdout.write(SCHEMA.read_text(encoding="utf-8"))
    return EXIT_PASS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="failgate",
        description="Gate LLM/RAG evaluation reports by failure category, outside pytest. "
                    "Same core and numbers as `pytest --failgate`.",
    )
    parser.add_argument("--version", action="version", version=f"failgate {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str, example: str,
                run: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        """A subcommand with the options the option table lists for it."""
        sub = commands.add_parser(
            name, help=help_text, description=help_text,
            epilog=f"example:\n  {example}", formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.set_defaults(run=run)
        for option in for_command(name):
            if option.positional:
                sub.add_argument(option.positional, nargs="+", metavar=option.metavar,
                                 help=option.help)
            elif option.kind == "flag":
                sub.add_argument(option.cli_flag, action="store_true", help=option.help)
            elif option.kind in ("paths", "names"):
                sub.add_argument(option.cli_flag, action="append", default=[],
                                 metavar=option.metavar, help=option.help)
            else:
                sub.add_argument(option.cli_flag, default=option.default, metavar=option.metavar,
                                 choices=option.choices, help=option.help)
        return sub

    command("check", "check every category count against its ceiling",
            "failgate check reports/ --md gate.md --github", cmd_check)
    command("init", "write a new ceilings file from the current counts",
            "failgate init reports/ --ceilings ceilings.yaml", cmd_init)
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

    command("mcp", "serve check, show, diff, explain and analyze to MCP clients over stdio "
            '(needs pip install "pytest-failgate[mcp]")', "failgate mcp", cmd_mcp)

    noise = command("noise", "measure each category's noise band from repeated runs",
                    "failgate noise run1/ run2/ run3/ --out noise_band.json", cmd_noise)
    noise.add_argument("runs", nargs="+", metavar="RUN",
                       help="the reports of one run of the same configuration (2 or more)")
    noise.add_argument("--out", default="noise_band.json", metavar="FILE",
                       help="where to write the bands (default: noise_band.json)")

    history = command("history", "counts per category over a folder of runs, as a table and an "
                      "SVG chart", "failgate history reports/history/ --svg history.svg",
                      cmd_history)
    history.add_argument("folder", metavar="DIR",
                         help="one run per entry: a report file or a folder of reports")
    history.add_argument("--svg", metavar="FILE", help="write the chart as a standalone SVG")

    command("schema", "print the JSON Schema of --json / --failgate-json output",
            "failgate schema > failgate.schema.json", cmd_schema)

    sql = command("sql", "print the gate as one SQL query (counts per category and slice)",
                  "failgate sql --dialect spark --table eval.cases --sample cases.parquet",
                  cmd_sql)
    sql.add_argument("--dialect", default="duckdb", choices=DIALECTS,
                     help="duckdb or spark (run and tested), or transpiled by sqlglot")
    sql.add_argument("--table", default="cases", help="the table to read (default: cases)")
    sql.add_argument("--sample", metavar="FILE",
                     help="a Parquet or JSON Lines file whose column types the query uses "
                          "(default: the taxonomy's types:)")
    sql.add_argument("--ceilings", default="ceilings.yaml", metavar="FILE",
                     help="its taxonomy, slices, populations and metrics (if it exists)")
    sql.add_argument("--taxonomy", metavar="NAME", help="a taxonomy instead of the ceilings'")
    return parser


def cmd_sql(args: argparse.Namespace) -> int:
    from .core.engines.sqltext import declared_schema, gate_sql, sample_schema
    from .core.reports.read import ReadSpec

    ceilings_path = Path(args.ceilings)
    spec = ReadSpec()
    taxonomy = _taxonomy(args)[1]
    if args.taxonomy is None and ceilings_path.exists():
        from .core.ceilings.load import load_ceilings

        ceilings = load_ceilings(ceilings_path.resolve(), _contributions(args).taxonomies)
        spec = ReadSpec(ceilings.populations, ceilings.slicers, metrics=ceilings.metrics)
    schema = (sample_schema(Path(args.sample).resolve()) if args.sample
              else declared_schema(taxonomy, spec))
    sys.stdout.write(gate_sql(taxonomy, spec, args.dialect, args.table, schema))
    return EXIT_PASS


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args))
    except FailgateError as exc:
        print(f"failgate: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # `failgate show ... | head`: the reader left; so do we, quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAIL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
