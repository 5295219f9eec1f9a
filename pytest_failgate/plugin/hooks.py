"""The plugin's pytest hooks: options, ini keys, the markers, and switching the gate on.

pytest imports this module (through the entry module, ``plugin/__init__.py``) on every run
in an environment where failgate is installed, so an idle run (no failgate option, no
failgate ini key) imports nothing else of failgate: the options and ini keys are
registered from ``PYTEST_OPTIONS``, a copy of the pytest half of the option table
(``options.OPTIONS``, the one place an option is written; the copy is generated from it by
``options.pytest_table()`` and ``tests/package/test_startup.py`` checks they are equal).
The configuration resolver, the gate (``session``, the core, YAML) are imported only when a
failgate option or ini key is given, and then plainly, not through pytest's assert
rewriter (``imports.import_plainly``).
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..commands.config import Config
    from ..core.gate.runner import Mode

# Each pytest option of ``options.OPTIONS`` as ``options.pytest_table()`` writes it:
# (dest and ini key, kind, metavar, choices, has an ini key, help). Do not edit by hand.
PYTEST_OPTIONS: tuple[tuple[str, str, str | None, tuple[str, ...] | None, bool, str], ...] = (
    ('failgate', 'paths', 'PATH', None, True,
     'the evaluation reports to gate: a report file or a directory of reports (repeatable; '
     'giving it turns failgate on)'),
    ('failgate_ceilings', 'path', 'FILE', None, True,
     'the ceilings file (default: the ini key failgate_ceilings, relative to the ini file, '
     'else ceilings.yaml in the rootdir)'),
    ('failgate_ratchet', 'flag', None, None, False,
     'after the run, lower every ceiling whose count fell; never raises one (the ratchet '
     'command)'),
    ('failgate_strict', 'flag', None, None, True,
     'fail items whose ceiling is above the count, so gains must be committed'),
    ('failgate_init', 'flag', None, None, False,
     'write a new ceilings file from the current counts (never overwrites; the init command)'),
    ('failgate_sequential', 'text', 'SEED', None, False,
     'run the tests in a random order drawn from SEED (an integer, or `new` for a fresh '
     "one), each test a case of the ceilings file's taxonomy, and stop as soon as the "
     "verdict is settled: the full run's with probability at least 0.95"),
    ('failgate_futility', 'text', 'BETA', None, True,
     "sequential: also stop as a pass once a regression of the margin's cases past every "
     'open ceiling is ruled out; such a regression passes early with probability at most '
     'BETA (default: off) (--failgate-sequential)'),
    ('failgate_margin', 'text', 'M', None, True,
     'sequential: the regression, in cases past a ceiling, the futility stop rules out '
     '(default: 10)'),
    ('failgate_strata', 'text', 'module|MARKER', None, True,
     "--failgate-sequential: permute the tests within each stratum and gate each stratum's "
     "count: `module` (each test file a stratum) or a marker's name (its first argument "
     "names the test's stratum)"),
    ('failgate_explain', 'flag', None, None, True,
     'add rule diagnostics to the summary: what first-match hid, rules that never matched, '
     "how often the fields each rule reads were absent, the fallback's cases"),
    ('failgate_md', 'path', 'FILE', None, True,
     'write the gate as a Markdown report (a pull-request comment) to FILE'),
    ('failgate_json', 'path', 'FILE', None, True,
     "write the gate's result as JSON to FILE (schema: `failgate schema`)"),
    ('failgate_html', 'path', 'FILE', None, True,
     'write the gate as a self-contained HTML report to FILE'),
    ('failgate_history', 'path', 'DIR', None, True,
     'a folder of past runs (report files or folders, in name order) to chart in the '
     'Markdown and HTML reports'),
    ('failgate_github', 'flag', None, None, True,
     'GitHub Actions: ::error annotations on failing ceilings, and the Markdown report '
     'appended to $GITHUB_STEP_SUMMARY'),
    ('failgate_guard', 'text', 'REF', None, True,
     'fail when anything the gate enforces (ceilings, slices, floors, contracts, the '
     'taxonomy, the file) was loosened since the git ref REF without a reason written in '
     'this change (e.g. origin/main)'),
    ('failgate_baseline', 'paths', 'PATH', None, True,
     "compare with a baseline run's reports (same layout), case by case: a category fails "
     'only when its increase is significant and beyond the noise band; with '
     "--failgate-sequential: one JSON Lines report of the baseline run's cases by test id, "
     "and the run fails once a category's new cases exceed its fixed ones (paired mode)"),
    ('failgate_noise', 'path', 'FILE', None, True,
     'the noise of a noisy pipeline: a noise_band.json from repeated runs (`failgate noise`;'
     " the regression gate's format), or the keyword `repeats` (each report's own repeated "
     'cases: epochs, replicates; a file of that name is ./repeats; default: the ceilings '
     "file's noise:); init writes each ceiling as observed + allowance, the ratchet lowers "
     'only past the allowance, a baseline comparison uses its bands'),
    ('failgate_labels', 'path', 'FILE', None, True,
     "gold labels of a uniform random sample of the run's cases (JSON Lines of {\"id\": ..., "
     '"category": ... or null}; draw the sample with `failgate sample`): each count is gated '
     'on its true count, failing when the labels show it over the ceiling (an exact '
     "test), else passing (default: the ceilings file's labels:); init writes true_max "
     "beside each max: the true count's upper bound; the ratchet lowers a true_max to the "
     'upper bound below it'),
    ('failgate_confirm', 'paths', 'PATH', None, True,
     "a second, independent run of the same system (main's previous run): on a noisy "
     "pipeline the ratchet lowers a ceiling only when this run's count fell past the noise "
     'too, and records the mean of the two'),
    ('failgate_confirm_baseline', 'paths', 'PATH', None, True,
     "the system before the change re-run on the same day as this run (main's previous "
     'commit, in the same CI job): on a noisy pipeline the ratchet lowers a ceiling when '
     "its cases, paired with that run's, fell significantly and beyond the noise band; "
     "the day's shared shift cancels in the pairing"),
    ('failgate_baseline_window', 'text', 'HOURS|day', None, True,
     "how close in time a run paired case by case with this one (the baseline, the ratchet's "
     'confirm-baseline) must have been measured: a whole number of hours (default: 12) or '
     "`day` (the same calendar day, UTC); outside it the report is inconclusive, as the "
     "day's shift does not cancel"),
    ('failgate_accept_baseline_gap', 'text', 'REASON', None, True,
     'accept a baseline measured outside the baseline-window, for REASON: the report is '
     'judged with the day-to-day drift in the comparison (a loosening the guard names); '
     "never for the ratchet's confirm-baseline"),
    ('failgate_analyze', 'flag', None, None, True,
     "add a single-run diagnosis to the summary: failures by the taxonomy's stage, the "
     'bottleneck stage, the weakest slices with exact intervals, and what to look at first '
     "with the taxonomy's hints"),
    ('failgate_exclude_unstable', 'flag', None, None, True,
     "leave the noise band's unstable cases (those that changed across repeats of one "
     'configuration) out of the paired tests'),
    ('failgate_max_report_bytes', 'text', 'SIZE', None, True,
     'refuse report files larger than SIZE (bytes, or with KB, MB or GB: 200MB), for reports'
     " from untrusted sources (an archive's members decompress to at most SIZE together; "
     'without it, to 1 GB)'),
    ('failgate_engine', 'text', 'ENGINE', ('python', 'duckdb', 'spark'), True,
     'where cases are classified: python (the default), duckdb (Parquet, JSON Lines, globs; '
     'the [duckdb] extra) or spark (the active SparkSession, else local[*]; Parquet and ORC;'
     ' the [spark] extra). Parquet always runs in a SQL engine (DuckDB unless spark is asked'
     ' for)'),
    ('failgate_taxonomy', 'text', 'NAME|PATH', None, True,
     "the taxonomy to classify with: a name (rag, a plugin's) or a taxonomy file (in the ini"
     " key: relative to the ini file); --failgate-init writes it as the new ceilings file's "
     "taxonomy:, after which it must name the file's taxonomy (default: each format's own, "
     "rag for failgate's own shapes)"),
    ('failgate_plugins', 'names', 'MODULE', None, True,
     'more modules, or .py files (in the ini key: relative to the ini file), whose '
     'pytest_failgate_taxonomies / pytest_failgate_readers hooks add taxonomies and readers;'
     ' every front end loads the same ones'),
)
_INI_TYPES = {"flag": "bool", "paths": "paths", "names": "args"}
_INI_DEFAULTS: dict[str, Any] = {"flag": False, "paths": [], "names": []}


class Hookspecs:
    """failgate's hooks as pytest sees them, so that a ``conftest.py`` defining them is valid
    under pytest (the gate calls them through its own plugin manager with the specs of
    ``commands/hookspecs.py``; pytest calls none of them; the test suite checks the two
    agree)."""

    @staticmethod
    @pytest.hookspec
    def pytest_failgate_taxonomies(config: Any) -> Any:
        """See ``commands.hookspecs``."""

    @staticmethod
    @pytest.hookspec
    def pytest_failgate_readers(config: Any) -> Any:
        """See ``commands.hookspecs``."""


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """The specs, handed over in a namespace of their own: pluggy inspects every name of
    what it is given, and a class has some thirty (half this idle hook's cost)."""
    specs = ModuleType(f"{__name__}.Hookspecs")
    vars(specs).update(pytest_failgate_taxonomies=Hookspecs.pytest_failgate_taxonomies,
                       pytest_failgate_readers=Hookspecs.pytest_failgate_readers)
    pluginmanager.add_hookspecs(specs)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Each row of the table: a ``--failgate-NAME`` option, a ``failgate_NAME`` key."""
    group = parser.getgroup("failgate", "failure-category ceilings for evaluation reports")
    for dest, kind, metavar, choices, ini, help in PYTEST_OPTIONS:
        flag = "--" + dest.replace("_", "-")
        if kind == "flag":
            # None, not False: an absent flag defers to the ini key
            group.addoption(flag, action="store_true", default=None, dest=dest, help=help)
        elif kind in ("paths", "names"):
            group.addoption(flag, action="append", default=[], metavar=metavar, dest=dest,
                            help=help)
        else:
            group.addoption(flag, metavar=metavar, dest=dest, choices=choices, help=help)
        if ini:  # settings only: an action is asked for on the command line
            parser.addini(dest, help, type=_INI_TYPES.get(kind, "string"),  # type: ignore[arg-type]
                          default=_INI_DEFAULTS.get(kind, ""))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "failgate: a failure-category ceiling check added by pytest-failgate"
    )
    config.addinivalue_line(
        "markers", "failgate_category(name): the failure category of this test when it fails "
        "(--failgate-sequential)"
    )
    if _idle(config):
        return
    from .imports import import_plainly

    import_plainly(config)  # before the gate's modules: not through the assert rewriter
    _installed_only(config)
    seed = config.getoption("failgate_sequential")
    alone = [flag for flag in ("--failgate-futility", "--failgate-strata")
             if config.getoption(flag.lstrip("-").replace("-", "_")) is not None]
    if seed is None and alone:  # the ini keys may stay set for the runs that are sequential
        raise pytest.UsageError(f"{alone[0]} orders or stops a sequential run: give "
                                "--failgate-sequential=SEED too")
    if seed is not None:
        from .sequential import SequentialSession

        config.pluginmanager.register(
            SequentialSession(config, resolved_config(config), seed), SequentialSession.NAME)
    settings = _settings(config)
    if settings is None:
        _refuse_ceilings_without_reports(config)
        return
    from .keys import SESSION
    from .session import GateSession

    session = GateSession(config, *settings)
    config.stash[SESSION] = session
    config.pluginmanager.register(session, GateSession.NAME)


def _installed_only(config: pytest.Config) -> None:
    """Refuse a gate whose failgate is a package folder of the project it judges (a
    ``pytest_failgate/`` that ``python -m pytest`` put first on the path), as the CI step
    does, with the same answer (``install.checkout_copy``): an installed failgate runs,
    a ``.venv`` inside the project included."""
    from pathlib import Path

    from .. import __file__ as init
    from ..core.base.install import checkout_copy

    instead = ("run `pytest` rather than `python -m pytest` (which puts the working "
               "directory first on the path), with failgate installed")
    for workspace in {config.rootpath, config.invocation_params.dir}:
        why = checkout_copy(workspace, Path(init).parent, instead)
        if why is not None:
            raise pytest.UsageError(why)


def _idle(config: pytest.Config) -> bool:
    """Whether failgate has nothing to do: no failgate option given, no failgate ini key set
    and no YAML file among the arguments (which may be a ceilings file given without its
    reports). Such a run resolves nothing, so it imports nothing more of failgate."""
    for dest, kind, _, _, ini, _ in PYTEST_OPTIONS:
        if getattr(config.option, dest, None) not in (None, []):
            return False
        if ini and config.getini(dest) != _INI_DEFAULTS.get(kind, ""):
            return False
    return not any(arg.split("::", 1)[0].endswith((".yaml", ".yml")) for arg in config.args)


def _refuse_ceilings_without_reports(config: pytest.Config) -> None:
    """``pytest ceilings.yaml`` without the reports: pytest alone would say "not found"
    (a YAML file is no test module); say what gates it instead."""
    from pathlib import Path

    ceilings = resolved_config(config).ceilings
    for arg in config.args:
        given = Path(config.invocation_params.dir, arg.split("::", 1)[0])
        if given.name == ceilings.name and given.suffix in (".yaml", ".yml") \
                and given.is_file():
            raise pytest.UsageError(
                f"{arg} is failgate's ceilings file, and failgate is off: give the reports "
                f"it gates with --failgate=REPORTS (pytest --failgate=reports/ {arg}), or "
                "set the ini key failgate")


def resolved_config(config: pytest.Config) -> Config:
    """The run's configuration, resolved as every front end resolves it
    (``commands/config.py``): the command line (relative to the invocation directory),
    else the ini key as pytest reads it (relative to the ini file's folder), else the
    default (``ceilings.yaml`` in the rootdir)."""
    from ..commands.config import resolve
    from ..options import OPTIONS, Option

    def ini(option: Option) -> Any:
        return config.getini(option.dest)

    given = {option.attribute: config.getoption(option.dest) for option in OPTIONS
             if option.pytest and not option.action}
    return resolve(given, base=config.invocation_params.dir, ini=ini,
                   folder=config.inipath.parent if config.inipath else config.rootpath,
                   rootdir=config.rootpath, inipath=config.inipath)


def _settings(config: pytest.Config) -> tuple[Config, Mode] | None:
    """The run's configuration and the gate's mode; None when failgate is off."""
    from dataclasses import replace

    resolved = resolved_config(config)
    if not resolved.paths:
        return None
    given = {name: config.getoption(f"failgate_{name}") for name in ("init", "ratchet")}
    if given["init"] and given["ratchet"]:
        raise pytest.UsageError(
            "--failgate-init writes a new ceilings file and --failgate-ratchet lowers an "
            "existing one; use one of them"
        )
    from .advice import pytest_advice

    mode: Mode = "init" if given.get("init") else "ratchet" if given.get("ratchet") else (
        "strict" if resolved.strict else "gate")
    return replace(resolved, advice=pytest_advice(resolved)), mode
