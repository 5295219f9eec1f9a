"""Every option of failgate, once: the pytest options and ini keys and the CLI's flags.

``OPTIONS`` is the one table. ``plugin/hooks.py`` generates ``--failgate-NAME`` and the ini
key ``failgate_NAME`` from it; ``cli.py`` generates ``--NAME`` on the commands an entry lists;
the MCP server takes the entry's ``attribute`` as a tool argument. Every front end resolves
the values the same way (``commands/config.py``: given, else the ini key, else the default)
into one ``Config``, so the help, the default and the meaning of an option cannot drift
between ``pytest --failgate``, ``failgate check`` and the MCP ``check`` tool.

Adding a setting is one entry here and one field of ``Config`` (named by the entry's
``attribute``). The entry's ``effect`` says how the setting moves the verdict, which is all
the loosening guard needs to compare it wherever it is set (``core.guard.settings``): in
every kind of ini file, ``addopts``, ``PYTEST_ADDOPTS``, a CI file's command lines and the
Action's inputs. An action (``--failgate-init``, ``--failgate-ratchet``: pytest's words for
the ``init`` and ``ratchet`` commands) has no ini key and no ``Config`` field.

This module is imported by every pytest run where failgate is installed: it imports
nothing beyond the standard library at module level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from .core.base.classes import dataclass

if TYPE_CHECKING:
    from .core.base.inifile import Kind

PREFIX = "failgate"
GATE_COMMANDS = ("check", "init", "ratchet", "show")

# How a setting moves the verdict, for the loosening guard (``core.guard.settings``):
# ``raised``: a larger number lets more pass (not set: its default; no default: off, below
# every number); ``on``: a flag that lets more pass when on; ``off``: a flag that lets
# more pass when off (``strict``); ``evidence``: what it names is evidence judged by its
# content (a baseline, a noise band, the ceilings file: the guard compares the value, and
# the ceilings file and the noise band by what they say); ``changed``: no order between
# values (the reports, the engine, the seed), so any change needs a reason; ``neutral``:
# no verdict moves (where reports are written, what the summary adds).
Effect = Literal["raised", "on", "off", "evidence", "changed", "neutral"]

# The defaults every front end shares (the CLI, pytest, the MCP tools, the Python API, the
# Inspect driver): the most probability that a sequential run's early verdict is not the
# full run's, and the futility stop's margin in cases.
DEFAULT_DELTA = "0.05"
DEFAULT_MARGIN = "10"


@dataclass(frozen=True)
class Option:
    """One option: ``--failgate-NAME`` and ini ``failgate_NAME`` in pytest, ``--NAME`` in the CLI.

    ``kind``: ``path`` (one file), ``paths`` (repeatable), ``flag`` (on/off), ``text``,
    ``names`` (repeatable words kept as written: module names; an ini ``args`` list).
    ``default``: a ``path`` option's default is a file name relative to the rootdir; a
    ``text`` option's is its value. ``commands``: the CLI commands that take it (none:
    pytest only). ``pytest``: False for a CLI-only option. ``action``: a pytest flag that
    asks for a command (no ini key: the ini file holds settings only).
    ``positional``: the CLI takes it as the command's positional arguments of this name.
    An argument that only one CLI command has (``show --top``, ``diff BASE``) stays with
    that command in ``cli.py``. ``notes`` end the help in one context only (``help_for``).
    ``effect``: how the setting moves the verdict (``Effect``); a new entry that says
    nothing is compared as ``changed``, the cautious reading.
    """

    name: str
    kind: Kind
    help: str
    metavar: str | None = None
    default: str | None = None
    commands: tuple[str, ...] = ()
    pytest: bool = True
    action: bool = False
    positional: str | None = None
    choices: tuple[str, ...] | None = None
    # what the help adds in one context: "pytest", a CLI command, or "cli" for every command
    notes: tuple[tuple[str, str], ...] = ()
    effect: Effect = "changed"

    def help_for(self, context: str) -> str:
        """The help in ``context`` (``pytest``, or a CLI command): what the option means,
        and what it does there; nothing about the other front end or another command."""
        notes = dict(self.notes)
        note = notes.get(context, notes.get("cli") if context != "pytest" else None)
        return f"{self.help}{note}" if note else self.help

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
        """The ``Config`` field, the CLI's argument and the MCP tool's argument."""
        return self.positional or self.name.replace("-", "_")

    @property
    def names_files(self) -> bool:
        """Whether a value may name a file or folder (``path``, ``paths``, or a text whose
        metavar allows a path such as ``NAME|PATH``): what MCP confines to its roots."""
        return self.kind in ("path", "paths") or "PATH" in (self.metavar or "").split("|")

    @property
    def ini(self) -> bool:
        """Whether the ini file may set it (``failgate_NAME``): settings, not actions."""
        return self.pytest and not self.action


OPTIONS: tuple[Option, ...] = (
    Option("failgate", "paths", "the evaluation reports to gate: a report file or a directory "
           "of reports", "PATH", commands=(*GATE_COMMANDS, "analyze", "guard", "sample"),
           positional="paths",
           notes=(("pytest", " (repeatable; giving it turns failgate on)"),
                  ("cli", " (default: the ini key failgate)")), effect="changed"),
    Option("ceilings", "path", "the ceilings file (default: the ini key failgate_ceilings, "
           "relative to the ini file, else ceilings.yaml in the rootdir)", "FILE",
           default="ceilings.yaml",
           commands=(*GATE_COMMANDS, "analyze", "diff", "noise", "history", "guard", "sql",
                     "watch", "sample", "plan"), effect="evidence"),
    Option("ratchet", "flag", "after the run, lower every ceiling whose count fell; never "
           "raises one (the ratchet command)", action=True, effect="neutral"),
    Option("strict", "flag", "fail items whose ceiling is above the count, so gains must be "
           "committed", commands=("check",), effect="off"),
    Option("init", "flag", "write a new ceilings file from the current counts (never "
           "overwrites; the init command)", action=True, effect="neutral"),
    Option("sequential", "text", "run the tests in a random order drawn from SEED (an integer, "
           "or `new` for a fresh one), each test a case of the ceilings file's taxonomy, and "
           "stop as soon as the verdict is settled: the full run's with probability at least "
           f"{1 - float(DEFAULT_DELTA):g}", "SEED", action=True, effect="changed"),
    Option("futility", "text", "sequential: also stop as a pass once a regression of the "
           "margin's cases past every open ceiling is ruled out; such a regression passes "
           "early with probability at most BETA (default: off)", "BETA", commands=("watch",),
           notes=(("pytest", " (--failgate-sequential)"),), effect="raised"),
    Option("margin", "text", "sequential: the regression, in cases past a ceiling, the "
           f"futility stop rules out (default: {DEFAULT_MARGIN})", "M", default=DEFAULT_MARGIN,
           commands=("watch",), effect="raised"),
    Option("delta", "text", "the most probability that an early verdict is not the full "
           f"run's (default: {DEFAULT_DELTA})", "D", default=DEFAULT_DELTA,
           commands=("watch",), pytest=False, effect="raised"),
    Option("strata", "text", "--failgate-sequential: permute the tests within each stratum "
           "and gate each stratum's count: `module` (each test file a stratum) or a marker's "
           "name (its first argument names the test's stratum)", "module|MARKER",
           effect="changed"),
    Option("explain", "flag", "add rule diagnostics to the summary: what first-match hid, rules "
           "that never matched, how often the fields each rule reads were absent, the "
           "fallback's cases", commands=("check",), effect="neutral"),
    Option("md", "path", "write the gate as a Markdown report (a pull-request comment) to FILE",
           "FILE", commands=("check", "watch"), effect="neutral"),
    Option("json", "path", "write the gate's result as JSON to FILE (schema: `failgate "
           "schema`)", "FILE", commands=("check", "watch"), effect="neutral"),
    Option("html", "path", "write the gate as a self-contained HTML report to FILE", "FILE",
           commands=("check", "watch")),
    Option("history", "path", "a folder of past runs (report files or folders, in name order) "
           "to chart in the Markdown and HTML reports", "DIR", commands=("check",),
           effect="neutral"),
    Option("github", "flag", "GitHub Actions: ::error annotations on failing ceilings, and the "
           "Markdown report appended to $GITHUB_STEP_SUMMARY", commands=("check",),
           effect="neutral"),
    Option("guard", "text", "fail when anything the gate enforces (ceilings, slices, floors, "
           "contracts, the taxonomy, the file) was loosened since the git ref REF "
           "without a reason written in this change (e.g. origin/main)", "REF", effect="changed"),
    Option("baseline", "paths", "compare with a baseline run's reports (same layout), case by "
           "case: a category fails only when its increase is significant and beyond the noise "
           "band", "PATH", commands=("check", "watch"),
           notes=(("watch", "; watch: one JSON Lines report of the baseline run, and the run "
                   "fails once a category's new cases exceed its fixed ones over the whole "
                   "run (paired mode)"),
                  ("pytest", "; with --failgate-sequential: one JSON Lines report of the "
                   "baseline run's cases by test id, and the run fails once a category's new "
                   "cases exceed its fixed ones (paired mode)")), effect="evidence"),
    Option("noise", "path", "the noise of a noisy pipeline: a noise_band.json from repeated "
           "runs (`failgate noise`; the regression gate's format), or the keyword `repeats` "
           "(each report's own repeated cases: epochs, replicates; a file of that name is "
           "./repeats; default: the ceilings file's noise:)",
           "FILE", commands=("check", "init", "ratchet"),
           notes=(("pytest", "; init writes each ceiling as observed + allowance, the ratchet "
                   "lowers only past the allowance, a baseline comparison uses its bands"),
                  ("init", "; each ceiling is written as observed + allowance"),
                  ("ratchet", "; a ceiling is lowered only past its allowance"),
                  ("check", "; a baseline comparison uses its bands")), effect="evidence"),
    Option("labels", "path", "gold labels of a uniform random sample of the run's cases "
           "(JSON Lines of {\"id\": ..., \"category\": ... or null}; draw the sample with "
           "`failgate sample`): each count is gated on its true count, failing when the "
           "labels show it over the ceiling (an exact test), else passing (default: the "
           "ceilings file's labels:)", "FILE",
           commands=("check", "init", "ratchet"),
           notes=(("pytest", "; init writes true_max beside each max: the true count's "
                   "upper bound; the ratchet lowers a true_max to the upper bound below it"),
                  ("init", "; true_max is written beside each max: the true count's upper "
                   "bound, which a labelled run is tested against"),
                  ("ratchet", "; a true_max is lowered only when the labels show the true "
                   "count under it, to its upper bound")), effect="evidence"),
    Option("confirm", "paths", "a second, independent run of the same system (main's previous "
           "run): on a noisy pipeline the ratchet lowers a ceiling only when this run's count "
           "fell past the noise too, and records the mean of the two", "PATH",
           commands=("ratchet",), effect="neutral"),  # the ratchet only lowers (guarded file)
    Option("confirm-baseline", "paths", "the system before the change re-run on the same day "
           "as this run (main's previous commit, in the same CI job): on a noisy pipeline the "
           "ratchet lowers a ceiling when its cases, paired with that run's, fell significantly "
           "and beyond the noise band; the day's shared shift cancels in the pairing", "PATH",
           commands=("ratchet",), effect="neutral"),  # as confirm
    Option("baseline-window", "text", "how close in time a run paired case by case with "
           "this one (the baseline, the ratchet's confirm-baseline) must have been measured: "
           "a whole number of hours (default: 12) or `day` (the same calendar day, UTC); "
           "outside it the report is inconclusive, as the day's shift does not cancel",
           "HOURS|day", commands=("check", "ratchet", "watch"), effect="changed"),
    Option("accept-baseline-gap", "text", "accept a baseline measured outside the "
           "baseline-window, for REASON: the report is judged with the day-to-day drift in "
           "the comparison (a loosening the guard names); never for the ratchet's "
           "confirm-baseline", "REASON", commands=("check", "watch"), effect="changed"),
    Option("analyze", "flag", "add a single-run diagnosis to the summary: failures by the "
           "taxonomy's stage, the bottleneck stage, the weakest slices with exact intervals, "
           "and what to look at first with the taxonomy's hints", commands=("check",),
           effect="neutral"),
    Option("exclude-unstable", "flag", "leave the noise band's unstable cases (those that "
           "changed across repeats of one configuration) out of the paired tests",
           commands=("check",), effect="on"),
    Option("max-report-bytes", "text", "refuse report files larger than SIZE (bytes, or with "
           "KB, MB or GB: 200MB), for reports from untrusted sources (an archive's members "
           "decompress to at most SIZE together; without it, to 1 GB)", "SIZE",
           commands=(*GATE_COMMANDS, "analyze", "diff", "noise", "history", "guard",
                     "sample", "plan"),
           effect="changed"),  # unset is no limit for a file: raising from it is tighter
    Option("engine", "text", "where cases are classified: python (the default), duckdb "
           "(Parquet, JSON Lines, globs; the [duckdb] extra) or spark (the active SparkSession, "
           "else local[*]; Parquet and ORC; the [spark] extra). Parquet always runs in a SQL "
           "engine (DuckDB unless spark is asked for)", "ENGINE", default="python",
           commands=GATE_COMMANDS, choices=("python", "duckdb", "spark"), effect="changed"),
    Option("taxonomy", "text", "the taxonomy to classify with: a name (rag, a plugin's) or a "
           "taxonomy file (in the ini key: relative to the ini file)", "NAME|PATH",
           commands=(*GATE_COMMANDS, "analyze", "diff", "noise", "history", "sql", "sample"),
           notes=(("pytest", "; --failgate-init writes it as the new ceilings file's taxonomy:, "
                   "after which it must name the file's taxonomy (default: each format's own, "
                   "rag for failgate's own shapes)"),
                  ("init", "; written as the new ceilings file's taxonomy: (default: each "
                   "format's own, rag for failgate's own shapes)"),
                  ("check", "; it must name the ceilings file's taxonomy:, which decides"),
                  ("ratchet", "; it must name the ceilings file's taxonomy:, which decides"),
                  ("cli", " instead of the ceilings file's (default: the ceilings file's, "
                   "else each format's own)"))),
    Option("plugins", "names", "more modules, or .py files (in the ini key: relative to the ini "
           "file), whose pytest_failgate_taxonomies / pytest_failgate_readers hooks add "
           "taxonomies and readers; every front end loads the same ones", "MODULE",
           commands=(*GATE_COMMANDS, "analyze", "diff", "noise", "history", "sql", "watch",
                     "guard", "sample", "plan")),
)

BY_NAME: dict[str, Option] = {option.name: option for option in OPTIONS}


def for_command(command: str) -> list[Option]:
    """The options the CLI command ``command`` takes, in table order."""
    return [option for option in OPTIONS if command in option.commands]


def pytest_table() -> tuple[tuple[str, str, str | None, tuple[str, ...] | None, bool, str], ...]:
    """The pytest half of the table as the plugin's hooks hold it
    (``plugin.hooks.PYTEST_OPTIONS``, a copy so that an idle pytest run imports nothing of
    failgate beyond the plugin's entry module and hooks): dest and ini key, kind, metavar,
    choices, whether it has an ini key, the help."""
    return tuple((option.dest, option.kind, option.metavar, option.choices, option.ini,
                  option.help_for("pytest")) for option in OPTIONS if option.pytest)
