"""The option table is the only statement of an option: MCP's path confinement and its tools'
defaults, the watch command's flags and the pytest copy are derived from it or checked
against it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from pytest_failgate import mcpserver, options
from pytest_failgate.core.base.confine import confined
from pytest_failgate.core.base.errors import FailgateError


def test_a_new_path_option_is_confined_by_its_kind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake option of kind ``path`` added to the table only: the MCP server refuses a
    value outside its roots, without a key list to update."""
    fake = options.Option("evidence-file", "path", "a fake file setting", "FILE",
                          commands=("check",))
    monkeypatch.setattr(options, "OPTIONS", (*options.OPTIONS, fake))
    outside = tmp_path.parent / "elsewhere.json"
    with confined([tmp_path]):
        with pytest.raises(FailgateError, match="outside the folders"):
            mcpserver._check_named_paths({"evidence_file": str(outside)})
        mcpserver._check_named_paths({"evidence_file": str(tmp_path / "inside.json")})


def test_every_file_option_is_confined_and_a_name_is_not(tmp_path: Path) -> None:
    outside = str(tmp_path.parent / "elsewhere")
    files = [option for option in options.OPTIONS if option.names_files]
    assert {"ceilings", "noise", "baseline", "taxonomy", "md"} <= {o.name for o in files}
    with confined([tmp_path]):
        for option in files:
            value = [outside] if option.kind == "paths" else outside
            with pytest.raises(FailgateError, match="outside the folders"):
                mcpserver._check_named_paths({option.attribute: value})
        mcpserver._check_named_paths({"taxonomy": "rag", "engine": outside})  # no file


def test_the_sequential_defaults_are_the_shared_constants() -> None:
    """One constant each (``core.base.defaults``): the table's rows and help, the MCP tool,
    the core's gate and the configuration all take it."""
    from fractions import Fraction

    from pytest_failgate.commands.config import Config
    from pytest_failgate.core.base import defaults
    from pytest_failgate.core.compare import window
    from pytest_failgate.core.gate.sequential import SequentialGate

    replay = inspect.signature(mcpserver.replay).parameters
    assert Fraction(str(replay["delta"].default)) == defaults.DEFAULT_DELTA
    assert replay["margin"].default == defaults.DEFAULT_MARGIN
    assert Fraction(str(options.BY_NAME["delta"].default)) == defaults.DEFAULT_DELTA
    assert Fraction(Config(ceilings=Path("c"), rootdir=Path()).delta) == defaults.DEFAULT_DELTA
    assert options.BY_NAME["margin"].default == str(defaults.DEFAULT_MARGIN)
    assert inspect.signature(SequentialGate).parameters["delta"].default is \
        defaults.DEFAULT_DELTA
    assert options.DEFAULT_DELTA is defaults.DEFAULT_DELTA
    assert window.parse_window(None).hours == defaults.DEFAULT_WINDOW_HOURS
    confidence = defaults.decimal(1 - defaults.DEFAULT_DELTA)
    assert f"at least {confidence}" in options.BY_NAME["sequential"].help
    assert f"(default: {defaults.DEFAULT_WINDOW_HOURS})" in \
        options.BY_NAME["baseline-window"].help


@pytest.mark.parametrize(("value", "written"), [
    ("1/20", "0.05"), ("19/20", "0.95"), ("1/3", "1/3"), ("10", "10"), ("-1/8", "-0.125"),
    ("0", "0"), ("1/1000", "0.001")])
def test_a_default_is_written_as_its_exact_decimal(value: str, written: str) -> None:
    from fractions import Fraction

    from pytest_failgate.core.base.defaults import decimal

    assert decimal(Fraction(value)) == written


def test_every_option_says_how_it_moves_the_verdict() -> None:
    effects = {"raised", "on", "off", "evidence", "changed", "neutral"}
    assert {option.effect for option in options.OPTIONS} <= effects
    for option in options.OPTIONS:
        if option.effect in ("on", "off"):
            assert option.kind == "flag", option.name
    # what only writes or shows moves nothing; what decides does
    assert options.BY_NAME["md"].effect == "neutral"
    assert options.BY_NAME["futility"].effect == "raised"
    assert options.BY_NAME["strict"].effect == "off"


# --------------------------------------------------------------- one row, every front end

ONLY = options.Option("only", "text", "gate only the reports named NAME", "NAME",
                      commands=("check",))


@pytest.fixture
def only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> options.Option:
    """A fake ``check`` option added to the table only (no ``Config`` field; pytest's
    generated copy written again from the table, as ``python -m pytest_failgate.options``
    does), and the core's configuration with a field of its name: the row and its use."""
    from dataclasses import dataclass

    from pytest_failgate.core.gate import runner
    from pytest_failgate.plugin import hooks

    monkeypatch.setattr(options, "OPTIONS", (*options.OPTIONS, ONLY))
    monkeypatch.setattr(hooks, "PYTEST_OPTIONS", options.pytest_table())

    @dataclass(frozen=True)
    class WithOnly(runner.GateConfig):
        only: str | None = None

    monkeypatch.setattr(runner, "GateConfig", WithOnly)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return ONLY


def test_a_new_option_reaches_pytest_the_cli_mcp_the_ci_step_the_core_and_the_docs(
        only: options.Option, pytester: pytest.Pytester, tmp_path: Path) -> None:
    from pytest_failgate.ci.run import _config as step_config
    from pytest_failgate.ci.run import settings_from_args
    from pytest_failgate.cli import check_config
    from pytest_failgate.plugin.hooks import resolved_config

    # the CLI
    cli = check_config(["reports", "--only", "cli"])
    assert cli.setting("only") == "cli"
    assert cli.gate("gate").only == "cli"  # type: ignore[attr-defined]
    # the CI step: its own flag, handed to failgate check
    step = settings_from_args(["reports", "--only", "ci", "--out-dir", "out"])
    assert step.check_args == ("--only", "ci")
    assert step_config(step, tmp_path / "gate.json").setting("only") == "ci"
    # MCP: a parameter of the check tool, resolved as the others
    assert "only" in mcpserver.tool_signature(mcpserver.check).parameters
    with confined([Path.cwd()]):  # pytester's folder
        called = mcpserver._config(paths=["reports"],
                                   **mcpserver._settings("check", {"only": "mcp"}))
    assert called.setting("only") == "mcp"
    # pytest: the option and the ini key
    assert pytester.parseconfig("--failgate-only=pytest").getoption("failgate_only") == "pytest"
    pytester.makeini("[pytest]\nfailgate_only = ini\n")
    assert resolved_config(pytester.parseconfig()).setting("only") == "ini"
    # the docs' table
    assert "| `--failgate-only=NAME` | `failgate_only` | `check` | gate only the reports" in \
        options.docs_table()


def test_every_option_of_a_command_is_a_parameter_of_each_front_end_serving_it_or_says_why(
) -> None:
    from pytest_failgate.ci.run import settings_from_args

    for option in options.OPTIONS:
        for front_end, why in option.unserved:
            assert front_end in options.FRONT_ENDS, option.name
            assert why, option.name
        if option.commands and not option.pytest:  # a command's option pytest lacks: why
            assert "pytest" in dict(option.unserved), option.name
    for tool, command in mcpserver.SERVES.items():
        function = mcpserver.TOOL_NAMES[tool]
        taken = set(mcpserver.tool_signature(function).parameters)
        for option in options.for_command(command):
            assert option.attribute in taken or not option.served_by("mcp"), (tool, option.name)
    with pytest.raises(SystemExit):  # --help lists the step's flags
        settings_from_args(["--help"])
    for option in options.for_command("check"):
        if option.positional or not option.served_by("ci"):
            continue
        value = [] if option.kind == "flag" else [(option.choices or ("x",))[0]]
        settings = settings_from_args(["reports", option.cli_flag, *value])
        assert settings.check_args == (option.cli_flag, *value) or (
            settings.ceilings == "x" and option.name == "ceilings"), option.name


def test_an_mcp_tool_refuses_an_argument_it_does_not_take() -> None:
    with pytest.raises(TypeError, match="'md'"):
        mcpserver.check(paths=["reports"], md="gate.md")


def test_the_generated_copies_are_the_tables() -> None:
    """plugin/hooks.py's PYTEST_OPTIONS and docs/options.md's table, as
    ``python -m pytest_failgate.options`` writes them."""
    root = Path(__file__).resolve().parents[2]  # the checkout (the package may be installed)
    hooks = (root / "pytest_failgate" / "plugin" / "hooks.py").read_text(encoding="utf-8")
    docs = (root / "docs" / "options.md").read_text(encoding="utf-8")
    assert options.pytest_source() in hooks, "run python -m pytest_failgate.options"
    assert options.docs_table() in docs, "run python -m pytest_failgate.options"
