"""Every option of failgate, once: the pytest options and ini keys and the CLI's flags.

``OPTIONS`` is the one table. ``plugin/__init__.py`` generates ``--failgate-NAME`` and the ini
key ``failgate_NAME`` from it; ``cli.py`` generates ``--NAME`` on the commands an entry lists.
Both adapters resolve the values the same way (command line, else ini key, else the default)
and build the core's ``GateConfig`` and the outputs with :func:`build`, so the help, the
default and the meaning of an option cannot drift between ``pytest --failgate`` and
``failgate check``.

Adding an option is one entry here: give it a ``name``, a ``kind`` and a ``help``, list the
CLI ``commands`` that take it, and set ``target`` to the ``GateConfig`` (``"gate"``) or
``Outputs`` (``"outputs"``) field it fills (named ``field``, default ``name``); then add that
field, with a default, to the dataclass. Nothing in the adapters changes.

This module is imported by every pytest run where failgate is installed: it imports
nothing beyond the standard library at module level.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from .core.gate import GateConfig, Mode
    from .output.files import Outputs

Kind = Literal["path", "paths", "flag", "text", "names"]
Target = Literal["gate", "outputs"]

PREFIX = "failgate"
GATE_COMMANDS = ("check", "init", "ratchet", "show")


@dataclass(frozen=True)
class Option:
    """One option: ``--failgate-NAME`` and ini ``failgate_NAME`` in pytest, ``--NAME`` in the CLI.

    ``kind``: ``path`` (one file), ``paths`` (repeatable), ``flag`` (on/off), ``text``,
    ``names`` (repeatable words kept as written: module names; an ini ``args`` list).
    ``default``: a ``path`` option's default is a file name relative to the rootdir (pytest) or
    the working directory (CLI); a ``text`` option's is its value. ``commands``: the CLI
    commands that take it (none: pytest only). ``pytest``: False for a CLI-only option.
    ``positional``: the CLI takes it as the command's positional arguments of this name.
    An argument that only one CLI command has (``show --top``, ``diff BASE``) stays with
    that command in ``cli.py``.
    """

    name: str
    kind: Kind
    help: str
    metavar: str | None = None
    default: str | None = None
    commands: tuple[str, ...] = ()
    target: Target | None = None
    field: str | None = None
    pytest: bool = True
    positional: str | None = None
    choices: tuple[str, ...] | None = None

    @property
    def flag(self) -> str:
        """The pytest command-line flag (``--failgate``, ``--failgate-md``)."""
        return f"--{PREFIX}" if self.name == PREFIX else f"--{PREFIX}-{self.name}"

    @property
    def dest(self) -> str:
        """The pytest ``dest`` and the ini key (``failgate``, ``failgate_max_report_bytes``)."""
        return PREFIX if self.name == PREFIX else f"{PREFIX}_{self.name.replace('-', '_')}"

    @property
    def cli_flag(self) -> str:
        """The CLI flag (``--md``)."""
        return f"--{self.name}"

    @property
    def attribute(self) -> str:
        """The name of the value on the CLI's ``argparse.Namespace``."""
        return self.positional or self.name.replace("-", "_")


OPTIONS: tuple[Option, ...] = (
    Option("failgate", "paths", "the evaluation reports to gate: a report file or a directory "
           "of reports (repeatable; in pytest, giving it turns failgate on)", "PATH",
           commands=(*GATE_COMMANDS, "analyze"), target="gate", field="paths",
           positional="paths"),
    Option("ceilings", "path", "the ceilings file (default: ceilings.yaml; in pytest the ini "
           "key failgate_ceilings, else ceilings.yaml in the rootdir)", "FILE",
           default="ceilings.yaml", commands=(*GATE_COMMANDS, "analyze", "diff", "noise",
                                              "history",
                                              "guard"),
           target="gate", field="ceilings_path"),
    Option("ratchet", "flag", "after the run, lower every ceiling whose count fell; never "
           "raises one"),
    Option("strict", "flag", "fail items whose ceiling is above the count, so gains must be "
           "committed", commands=("check",)),
    Option("init", "flag", "write a new ceilings file from the current counts (never "
           "overwrites)"),
    Option("explain", "flag", "add rule diagnostics to the summary: what first-match hid, rules "
           "that never matched, how often the fields each rule reads were absent, the "
           "fallback's cases", commands=("check",), target="gate"),
    Option("md", "path", "write the gate as a Markdown report (a pull-request comment) to FILE",
           "FILE", commands=("check",), target="outputs", field="markdown"),
    Option("json", "path", "write the gate's result as JSON to FILE (schema: `failgate "
           "schema`)", "FILE", commands=("check",), target="outputs"),
    Option("html", "path", "write the gate as a self-contained HTML report to FILE", "FILE",
           commands=("check",), target="outputs"),
    Option("history", "path", "a folder of past runs (report files or folders, in name order) "
           "to chart in the Markdown and HTML reports", "DIR", commands=("check",),
           target="outputs"),
    Option("github", "flag", "GitHub Actions: ::error annotations on failing ceilings, and the "
           "Markdown report appended to $GITHUB_STEP_SUMMARY", commands=("check",),
           target="outputs"),
    Option("guard", "text", "fail when anything the gate enforces (ceilings, slices, floors, "
           "contracts, the taxonomy, the file) was loosened since the git ref REF "
           "without a reason written in this change (e.g. origin/main)", "REF",
           target="gate", field="guard_ref"),
    Option("baseline", "paths", "compare with a baseline run's reports (same layout), case by "
           "case: a category fails only when its increase is significant and beyond the noise "
           "band", "PATH", commands=("check",), target="gate"),
    Option("noise", "path", "a noise_band.json (the regression gate's format, as `failgate "
           "noise` writes it) giving each category's and metric's noise band", "FILE",
           commands=("check",), target="gate"),
    Option("analyze", "flag", "add a single-run diagnosis to the summary: failures by the "
           "taxonomy's stage, the bottleneck stage, the weakest slices with exact intervals, "
           "and what to look at first with the taxonomy's hints", commands=("check",),
           target="gate"),
    Option("exclude-unstable", "flag", "leave the noise band's unstable cases (those that "
           "changed across repeats of one configuration) out of the paired tests",
           commands=("check",), target="gate", field="exclude_unstable"),
    Option("max-report-bytes", "text", "refuse report files larger than SIZE (bytes, or with "
           "KB, MB or GB: 200MB), for reports from untrusted sources", "SIZE",
           commands=GATE_COMMANDS, target="gate", field="max_report_bytes"),
    Option("engine", "text", "where cases are classified: python (the default), duckdb "
           "(Parquet, JSON Lines, globs; the [duckdb] extra) or spark (the active SparkSession, "
           "else local[*]; Parquet and ORC; the [spark] extra). Parquet always runs in a SQL "
           "engine (DuckDB unless spark is asked for)", "ENGINE", default="python",
           commands=GATE_COMMANDS, target="gate", choices=("python", "duckdb", "spark")),
    Option("taxonomy", "text", "the taxonomy to classify with, a name or a taxonomy file, "
           "instead of the ceilings file's (for init: the one to write for every report; "
           "default: each format's own, rag for failgate's own shapes)", "NAME|PATH",
           commands=("init", "show", "analyze", "diff", "noise", "history"), target="gate",
           field="init_taxonomy", pytest=False),
    Option("plugins", "names", "modules, or .py files relative to the ini file, whose "
           "pytest_failgate_taxonomies / pytest_failgate_readers hooks add taxonomies and "
           "readers: pytest and the failgate command load the same ones", "MODULE",
           commands=(*GATE_COMMANDS, "analyze", "diff", "noise", "history")),
)

BY_NAME: dict[str, Option] = {option.name: option for option in OPTIONS}


def for_command(command: str) -> list[Option]:
    """The options the CLI command ``command`` takes, in table order."""
    return [option for option in OPTIONS if command in option.commands]


def resolve(get: Callable[[Option], Any]) -> dict[str, Any]:
    """Each pytest option's value by name, as ``get`` finds it (command line, ini, default)."""
    return {option.name: get(option) for option in OPTIONS if option.pytest}


def build(values: Mapping[str, Any], mode: Mode) -> tuple[GateConfig, Outputs]:
    """The core's ``GateConfig`` and the outputs from resolved values (paths already absolute).

    Each entry with a ``target`` fills its field; absent or empty values keep the field's
    default. Both adapters call this, so an option means the same thing in both.
    """
    from .core.gate import GateConfig
    from .output.files import Outputs

    fields: dict[Target, dict[str, Any]] = {"gate": {}, "outputs": {}}
    for option in OPTIONS:
        value = values.get(option.name)
        if option.target is None or value is None:
            continue
        if option.kind == "paths":
            value = tuple(Path(p) for p in value)
        elif option.kind == "flag":
            value = bool(value)
        fields[option.target][option.field or option.name] = value
    return GateConfig(mode=mode, **fields["gate"]), Outputs(**fields["outputs"])
