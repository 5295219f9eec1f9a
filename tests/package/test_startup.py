"""A run imports and compiles what it uses: the fixed cost of gating a small report.

Timing is the bench's job (bench/startup_speed.py); these pin what is loaded.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLES, run_cli

from pytest_failgate import plugin
from pytest_failgate.commands import hookspecs
from pytest_failgate.commands.plugins import (
    ENTRY_POINT_GROUP,
    entry_point_plugins,
    entry_points,
    may_declare,
)
from pytest_failgate.core.base.result import GateResult
from pytest_failgate.core.gate.runner import GateConfig, run_gate
from pytest_failgate.core.taxonomy import BUILTIN_DIR, BuiltinTaxonomies, Taxonomies
from pytest_failgate.options import OPTIONS, pytest_table
from pytest_failgate.plugin.session import for_workers, from_controller

ROOT = EXAMPLES.parent


def test_each_built_in_taxonomy_file_holds_the_taxonomy_it_is_named_after() -> None:
    shelf = BuiltinTaxonomies()
    assert sorted(shelf) == sorted(path.stem for path in BUILTIN_DIR.glob("*.yaml"))
    assert len(shelf) >= 9
    for name in shelf:
        assert shelf[name].name == name
        assert shelf[name] is shelf[name]  # compiled once


def test_a_run_compiles_only_the_taxonomies_it_uses() -> None:
    shelf = BuiltinTaxonomies()
    gate = run_gate(GateConfig(paths=(EXAMPLES / "reports",),
                               ceilings_path=ROOT / "ceilings.yaml"), shelf)
    assert [r.report.n_cases for r in gate.reports if r.report is not None] == [26, 221, 221]
    assert list(shelf._loaded) == ["rag"]
    assert "helm" in shelf  # the others are known by name all the same


def test_plugins_taxonomies_sit_over_the_built_in_ones_without_compiling_them() -> None:
    shelf = BuiltinTaxonomies()
    known = Taxonomies(shelf)
    mine = shelf["rag"]
    known["mine"] = mine
    known["helm"] = mine  # a plugin may replace a built-in
    assert list(known)[-1] == "mine"
    assert list(known)[:len(shelf)] == list(shelf)
    assert len(known) == len(shelf) + 1
    assert known["helm"] is mine
    assert "karenina" in known
    assert list(shelf._loaded) == ["rag"]


@pytest.mark.heavy
def test_a_plain_check_imports_no_guard_analysis_or_engine() -> None:
    """``failgate check`` with a ceilings file and nothing else asked: the loosening guard
    (git), the analysis and the SQL engines stay unloaded."""
    script = (
        "import sys\n"
        "from pytest_failgate.cli import main\n"
        "code = main(['check', 'examples/reports'])\n"
        "print(code)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    lines = done.stdout.split("\n")
    assert "0" in lines  # the gate ran and passed
    assert "pytest_failgate.core.gate.runner" in lines
    unused = ("pytest_failgate.core.guard.loosening",
              "pytest_failgate.core.guard.gitref", "pytest_failgate.core.gate.analyze",
              "pytest_failgate.core.engines.duckdb_engine",
              # readers whose probe the reports do not pass (core/reports/builtin.py)
              "pytest_failgate.core.reports.inspect_ai", "pytest_failgate.core.reports.zipzstd",
              "pytest_failgate.core.reports.promptfoo", "pytest_failgate.core.reports.karenina",
              "hashlib",  # the ceilings file's digest is CPython's own SHA-256
              "pytest_failgate.core.compare.noisemodel",  # no noise file: no noise model
              "pytest_failgate.output.markdown",  # no --md, no --github
              "shutil", "lzma")  # argparse is told the terminal's width (helpformat.py)
    assert [m for m in unused if m in lines] == []
    if importlib.util.find_spec("msgspec") is not None:  # the fast extra decodes alone
        assert "msgspec" in lines
        assert "pydantic_core" not in lines


FAILGATE = str(Path(sys.executable).with_name("failgate"))
# a check in a fresh interpreter, then the pydantic modules it imported (none expected)
PROBE = ("import sys\n"
         "from pytest_failgate.cli import main\n"
         "code = main(sys.argv[1:])\n"
         "print('PYDANTIC', sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'))\n"
         "print('METADATA', 'importlib.metadata' in sys.modules, 'pluggy' in sys.modules)\n"
         "sys.exit(code)\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The regression example (a category above its ceiling) in a folder of its own."""
    shutil.copy(EXAMPLES / "reports" / "eval_summary.json", tmp_path / "baseline.json")
    shutil.copy(EXAMPLES / "regression" / "eval_summary.json", tmp_path / "eval_summary.json")
    subprocess.run([FAILGATE, "init", "baseline.json", "--ceilings", "ceilings.yaml"],
                   cwd=tmp_path, check=True, capture_output=True)
    return tmp_path


@pytest.mark.heavy
def test_check_decides_without_importing_pydantic_and_json_still_writes(project: Path) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, "check", "eval_summary.json"],
                          cwd=project, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED ceilings.yaml::eval_summary::retrieval_miss" in done.stdout
    assert "PYDANTIC []" in done.stdout
    if not may_declare(ENTRY_POINT_GROUP):  # no failgate plugin installed here
        assert "METADATA False False" in done.stdout  # nor a plugin manager to build
    written = subprocess.run([sys.executable, "-c", PROBE, "check", "eval_summary.json",
                              "--json", "gate.json"],
                             cwd=project, capture_output=True, text=True, check=False)
    assert written.returncode == 1
    assert "PYDANTIC []" not in written.stdout  # the JSON is pydantic's, as before
    assert json.loads((project / "gate.json").read_text())["verdict"] == "fail"


@pytest.mark.heavy
def test_pytest_failgate_decides_without_importing_pydantic(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    regression_project(pytester.path)
    pytester.makeconftest("""
        import sys

        def pytest_unconfigure(config):
            print("PYDANTIC", sorted(m for m in sys.modules if m.split(".")[0] == "pydantic"))
    """)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    done = pytester.runpytest_subprocess("-p", "pytest_failgate.plugin",
                                         "--failgate=eval_summary.json", "-p",
                                         "no:cacheprovider")
    assert done.ret == pytest.ExitCode.TESTS_FAILED
    done.stdout.fnmatch_lines(["FAILED *retrieval_miss*", "PYDANTIC []"])


def run_cli_quiet(cwd: Path, *args: str) -> int:
    return subprocess.run([FAILGATE, *args], cwd=cwd, capture_output=True,
                          check=False).returncode


def regression_project(folder: Path) -> None:
    """The regression example in ``folder``, with ceilings ``init`` wrote from the baseline."""
    shutil.copy(EXAMPLES / "regression" / "eval_summary.json", folder)
    shutil.copy(EXAMPLES / "reports" / "eval_summary.json", folder / "baseline.json")
    assert run_cli_quiet(folder, "init", "baseline.json") == 0


@pytest.mark.heavy
def test_the_console_scripts_quick_exit_keeps_its_output_and_exit_code(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["check", "eval_summary.json", "--explain", "--analyze", "--md", "gate.md"]
    done = subprocess.run([FAILGATE, *args], cwd=project, capture_output=True, text=True,
                          check=False, env={**os.environ, "NO_COLOR": "1"})
    script_md = (project / "gate.md").read_text()
    monkeypatch.chdir(project)
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, err = run_cli(capsys, *args)
    assert (done.returncode, done.stdout, done.stderr) == (code, out, err) == (1, out, "")
    assert out.rstrip().splitlines()[-1].startswith("verdict fail")
    assert script_md == (project / "gate.md").read_text() != ""


def test_a_plugins_entry_point_is_found_as_importlib_metadata_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.metadata

    assert not may_declare("failgate-test-no-such-group")
    info = tmp_path / "demo_failgate-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-failgate\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[console_scripts]\ndemo = demo_failgate:main\n\n"
                                           "[failgate]\ndemo = demo_failgate\n")
    (tmp_path / "demo_failgate.py").write_text("def main():\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert may_declare(ENTRY_POINT_GROUP)
    expected = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    assert "demo" in expected.names
    assert sorted(p.name for p in entry_points(ENTRY_POINT_GROUP)) == sorted(expected.names)
    assert [label for label, _ in entry_point_plugins()] == [
        f"entry point {p.name} ({p.value})" for p in sorted(expected, key=lambda p: p.name)]


# pytest's run, then the failgate modules it imported
LOADED = """
    import sys

    def pytest_unconfigure(config):
        print("FAILGATE", sorted(m for m in sys.modules if m.split(".")[0] == "pytest_failgate"))
"""


def failgate_modules(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                     *args: str) -> tuple[pytest.RunResult, list[str]]:
    """pytest run in a fresh interpreter with failgate as its only plugin, and the failgate
    modules loaded by its end."""
    pytester.makeconftest(LOADED)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    done = pytester.runpytest_subprocess("-p", "pytest_failgate.plugin", "-p",
                                         "no:cacheprovider", *args)
    lines = [line for line in done.outlines if line.startswith("FAILGATE ")]
    assert len(lines) == 1, done.outlines
    return done, ast.literal_eval(lines[0].removeprefix("FAILGATE "))


def test_pytest_without_failgate_imports_only_the_plugins_entry_module_and_hooks(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    done, loaded = failgate_modules(pytester, monkeypatch, "--co", "-q")
    assert done.ret == pytest.ExitCode.OK
    done.stdout.fnmatch_lines(["test_one.py::test_one"])
    assert loaded == ["pytest_failgate", "pytest_failgate.plugin",
                      "pytest_failgate.plugin.hooks", "pytest_failgate.plugin.imports"]


@pytest.mark.heavy
def test_a_plain_pytest_gate_imports_no_renderer_guard_analysis_engine_or_other_front_end(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pytest --failgate`` on a small report, nothing else asked: the gate and the text
    summary load; the Markdown and HTML renderers (no --failgate-md, -html, -github), the
    loosening guard, the analysis, the SQL engines, the sequential session, the noise model
    and the other front ends (CLI, MCP, CI) stay unloaded."""
    regression_project(pytester.path)
    done, loaded = failgate_modules(pytester, monkeypatch, "--failgate=eval_summary.json")
    assert done.ret == pytest.ExitCode.TESTS_FAILED
    done.stdout.fnmatch_lines(["verdict fail*", "FAILED *retrieval_miss*"])
    assert {"pytest_failgate.plugin.session", "pytest_failgate.core.gate.runner",
            "pytest_failgate.output.text"} <= set(loaded)
    unused = ("pytest_failgate.output.markdown", "pytest_failgate.output.html",
              "pytest_failgate.output.chart", "pytest_failgate.output.history",
              "pytest_failgate.core.guard.loosening", "pytest_failgate.core.guard.gitref",
              "pytest_failgate.core.gate.analyze", "pytest_failgate.core.engines.duckdb_engine",
              "pytest_failgate.core.compare.noisemodel", "pytest_failgate.plugin.sequential",
              "pytest_failgate.cli", "pytest_failgate.mcpserver", "pytest_failgate.ci")
    assert [name for name in unused if name in loaded] == []


@pytest.mark.parametrize(("ini", "args"), [
    ("", ("--failgate-md", "gate.md")),
    ("failgate_max_report_bytes = 2MB\n", ()),
    ("", ("ceilings.yaml",)),
])
def test_a_failgate_option_or_ini_key_without_reports_resolves_the_configuration(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ini: str,
    args: tuple[str, ...]
) -> None:
    """Given a failgate setting but no reports, failgate stays off as before, having resolved
    (and so checked) the configuration; a ceilings file as an argument is refused."""
    pytester.makeini(f"[pytest]\n{ini}")
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    (pytester.path / "ceilings.yaml").write_text("ceilings: {}\n")
    done, loaded = failgate_modules(pytester, monkeypatch, *args)
    assert "pytest_failgate.commands.config" in loaded
    assert "pytest_failgate.plugin.session" not in loaded
    if args == ("ceilings.yaml",):
        assert done.ret == pytest.ExitCode.USAGE_ERROR
        done.stderr.fnmatch_lines(["*ceilings.yaml is failgate's ceilings file*failgate is off*"])
    else:
        assert done.ret == pytest.ExitCode.OK
        done.stdout.fnmatch_lines(["*1 passed*"])


def test_the_plugins_option_table_is_the_pytest_half_of_the_option_table() -> None:
    expected = pytest_table()
    assert expected == plugin.PYTEST_OPTIONS, (
        "plugin/hooks.py's PYTEST_OPTIONS must be options.pytest_table():\n"
        + "\n".join(map(repr, expected)))


def test_pytest_help_shows_every_option_and_ini_key_of_the_table_and_nothing_else(
    pytester: pytest.Pytester,
) -> None:
    """What the idle plugin registers, as ``pytest --help`` shows it: the group's options
    in table order, each with its metavar and help, and the ini keys with their types."""
    text = " ".join(pytester.runpytest("--help").stdout.str().split())  # lines wrap anywhere
    group = "failure-category ceilings for evaluation reports:"
    assert text.count(group) == 1
    shown = text.split(group + " ", 1)[1]
    options = [f"--{dest.replace('_', '-')}{'=' + metavar if metavar else ''} {help}"
               for dest, _, metavar, _, _, help in plugin.PYTEST_OPTIONS]
    assert shown.startswith(" ".join(options) + " ")
    after = shown[len(" ".join(options)) + 1:]
    assert not after.startswith("--failgate")  # no option beyond the table's
    types = {"flag": "bool", "paths": "paths", "names": "args"}
    keys = [f"{dest} ({types.get(kind, 'string')}): {help}"
            for dest, kind, _, _, ini, help in plugin.PYTEST_OPTIONS if ini]
    assert len(keys) == len([option for option in OPTIONS if option.ini])  # no key lost
    assert " ".join(keys) in after


def test_pytest_is_given_failgates_hooks_with_their_arguments() -> None:
    def spec(source: object) -> dict[str, list[str]]:
        return {name: list(inspect.signature(getattr(source, name)).parameters)
                for name in dir(source) if name.startswith("pytest_failgate_")}

    assert spec(plugin.Hookspecs) == spec(hookspecs) != {}


@pytest.mark.parametrize("columns", ["44", "120", None])
def test_every_commands_help_is_argparses_own_at_the_terminals_width(
        monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    """The CLI's help formatter only spares argparse's import of shutil: each command's help
    is what argparse's own formatter writes, at ``COLUMNS`` or else the terminal's width."""
    import argparse

    from pytest_failgate import cli, helpformat

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)

    def helps() -> list[str]:
        parser = cli._parser()
        commands = next(action for action in parser._actions
                        if isinstance(action, argparse._SubParsersAction))
        return [parser.format_help()] + [sub.format_help() for sub in commands.choices.values()]

    ours = helps()
    monkeypatch.setattr(helpformat, "TerminalHelp", argparse.RawDescriptionHelpFormatter)
    assert ours == helps()
    assert len(ours) > 10


# pytest's run, then the failgate modules its assert rewriter loaded
REWRITTEN = """
    import sys

    def pytest_unconfigure(config):
        loaded = {name: type(getattr(module, "__loader__", None)).__name__
                  for name, module in list(sys.modules.items())
                  if name.split(".")[0] == "pytest_failgate"}
        print("REWRITTEN", sorted(name for name, loader in loaded.items()
                                  if loader == "AssertionRewritingHook"))
        print("LOADED", len(loaded))
"""


@pytest.mark.heavy
def test_a_gate_run_imports_failgates_modules_past_pytests_assert_rewriter(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest rewrites the asserts of a plugin's package (``-p``: the entry module's; an
    installed plugin: the whole distribution's) into a cache of its own that no installer
    writes: without it each module a gate imports would be parsed and compiled from source
    on a fresh install and wherever that cache cannot be written
    (``PYTHONDONTWRITEBYTECODE``). Only the entry module and the finder it steps past the
    rewriter with, imported before that finder is in place, are still pytest's."""
    regression_project(pytester.path)
    pytester.makeconftest(REWRITTEN)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    done = pytester.runpytest_subprocess("-p", "pytest_failgate.plugin", "-p",
                                         "no:cacheprovider", "--failgate=eval_summary.json")
    assert done.ret == pytest.ExitCode.TESTS_FAILED  # the gate ran: a category regressed
    done.stdout.fnmatch_lines([
        "FAILED *retrieval_miss*",
        "REWRITTEN ['pytest_failgate.plugin', 'pytest_failgate.plugin.imports']"])
    loaded = int(next(line for line in done.outlines if line.startswith("LOADED "))[7:])
    assert loaded > 40  # the gate's modules, imported plainly
    idle = pytester.runpytest_subprocess("-p", "pytest_failgate.plugin", "-p",
                                         "no:cacheprovider", "--co")
    idle.stdout.fnmatch_lines([
        "REWRITTEN ['pytest_failgate.plugin', 'pytest_failgate.plugin.imports']", "LOADED 4"])
    # the rewriter itself is left as it was: a test module's assert is still explained
    pytester.makepyfile(test_one="def test_one():\n    x = 2\n    assert x == 3\n")
    plain = pytester.runpytest_subprocess("-p", "pytest_failgate.plugin", "-p",
                                          "no:cacheprovider", "--failgate=eval_summary.json",
                                          "test_one.py", "ceilings.yaml")
    plain.stdout.fnmatch_lines(["*assert 2 == 3*"])


def test_an_xdist_worker_gets_the_controllers_result_as_its_items_need_it() -> None:
    result = run_gate(GateConfig(paths=(EXAMPLES / "regression",),
                                 ceilings_path=ROOT / "ceilings.yaml"), BuiltinTaxonomies()
                      ).result()
    copy = from_controller(for_workers(result))
    assert copy is not result

    def items(gate: GateResult) -> list[tuple[object, ...]]:
        return [(row.key, row.verdict, row.failing, row.message, row.count, row.ceiling,
                 row.source, row.warnings, row.baseline) for row in gate.rows]

    assert items(copy) == items(result) != []
    assert [row.key for row in result.rows if row.failing] != []  # a regression to carry
    assert [(r.name, r.n_cases, r.error) for r in copy.reports] == [
        (r.name, r.n_cases, r.error) for r in result.reports]
    assert (copy.verdict, copy.guard) == (result.verdict, result.guard)
    assert any(row.first_cases for row in result.rows)  # what only the summary shows
    assert not any(row.first_cases or row.examples for row in copy.rows)


# each process of the run appends its role and the pydantic modules it imported
ROLES = """
    import sys

    def pytest_unconfigure(config):
        role = "worker" if hasattr(config, "workerinput") else "controller"
        loaded = sorted(m for m in sys.modules if m.split(".")[0] == "pydantic")
        with open("roles.txt", "a", encoding="utf-8") as log:
            log.write(f"{role} {loaded}\\n")
"""


@pytest.mark.heavy  # a whole pytest-xdist run: CI runs it (CI=true)
def test_under_xdist_neither_the_controller_nor_a_worker_imports_pydantic(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    regression_project(pytester.path)
    pytester.makeconftest(ROLES)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    done = pytester.runpytest_subprocess("-p", "pytest_failgate.plugin", "-p", "xdist.plugin",
                                         "-p", "no:cacheprovider", "-n", "2",
                                         "--failgate=eval_summary.json")
    assert done.ret == pytest.ExitCode.TESTS_FAILED
    done.stdout.fnmatch_lines(["FAILED *retrieval_miss*"])
    roles = sorted((pytester.path / "roles.txt").read_text(encoding="utf-8").splitlines())
    assert roles == ["controller []", "worker []", "worker []"]
