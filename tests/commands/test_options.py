"""One option table: pytest's options and ini keys and the CLI's flags are generated from it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from pytest_failgate.cli import _parser
from pytest_failgate.options import BY_NAME, OPTIONS, for_command


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("the CLI has no commands")


def test_every_cli_command_takes_its_table_options_with_the_same_help_and_no_default() -> None:
    """A flag not given defaults to nothing: the ini key, else the table's default, decides
    (``commands/config.py``), as under pytest."""
    commands = _subparsers(_parser())
    listed = {command for option in OPTIONS for command in option.commands}
    assert listed <= set(commands)
    for name, sub in commands.items():
        actions = {a.dest: a for a in sub._actions}
        for option in for_command(name):
            action = actions[option.attribute]
            assert action.help == option.help_for(name), (name, option.name)
            if option.kind in ("path", "text"):
                assert action.default is None, (name, option.name)


def test_every_pytest_option_and_ini_key_comes_from_the_table(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\n")
    config = pytester.parseconfig()
    for option in OPTIONS:
        if not option.pytest:
            with pytest.raises(ValueError, match="no option named"):
                config.getoption(option.dest)
            continue
        expected: list[str] | None = [] if option.kind in ("paths", "names") else None
        assert config.getoption(option.dest) == expected, option.name
        if option.ini:
            config.getini(option.dest)  # a ValueError here: the ini key is missing
        else:  # an action (init, ratchet): a command-line flag, never an ini key
            with pytest.raises(ValueError, match="unknown configuration value"):
                config.getini(option.dest)
    text = pytester.runpytest("--help").stdout.str()
    for option in OPTIONS:
        assert (option.flag in text) is option.pytest, option.name


@pytest.mark.slow
def test_an_ini_key_and_its_option_configure_the_gate_the_same_way(
    pytester: pytest.Pytester, project: Path
) -> None:
    (project / "gate").mkdir()
    pytester.makeini("[pytest]\nfailgate = reports\nfailgate_json = gate/ini.json\n")
    pytester.runpytest().assert_outcomes(passed=24)
    pytester.makeini("[pytest]\n")
    pytester.runpytest("--failgate=reports", "--failgate-json=gate/option.json").assert_outcomes(
        passed=24)
    from_ini = json.loads((project / "gate" / "ini.json").read_text(encoding="utf-8"))
    given = json.loads((project / "gate" / "option.json").read_text(encoding="utf-8"))
    # the advice repeats what was given on the command line, and only that
    assert from_ini.pop("ratchet_advice") == "`pytest --failgate-ratchet`"
    assert given.pop("ratchet_advice") == "`pytest --failgate=reports --failgate-ratchet`"
    assert from_ini == given


def test_every_ini_key_is_a_plain_identifier() -> None:
    """``--failgate-max-report-bytes`` is the ini key ``failgate_max_report_bytes``."""
    for option in OPTIONS:
        assert option.dest.isidentifier(), option.name
    assert BY_NAME["max-report-bytes"].dest == "failgate_max_report_bytes"


def test_the_docs_list_every_pytest_option_and_its_ini_key() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "options.md"
    text = page.read_text(encoding="utf-8")
    start = text.index("\n## pytest options and ini keys")
    section = text[start:text.index("\n## ", start + 1)]
    for option in OPTIONS:
        if option.pytest:
            assert f"`{option.flag}" in section, option.flag
            assert (f"`{option.dest}`" in section) is option.ini, option.dest


def test_the_labels_help_names_both_formats_the_labels_reader_reads() -> None:
    """``--labels`` takes JSON Lines or CSV (``core/compare/labelfile``): its help, in every
    front end and the generated copies, says both, with the CSV file's required columns."""
    from pytest_failgate.core.compare.labelfile import CSV_COLUMNS, CSV_SUFFIX
    from pytest_failgate.plugin.hooks import PYTEST_OPTIONS

    labels = next(option for option in OPTIONS if option.name == "labels")
    pytest_help = next(row[-1] for row in PYTEST_OPTIONS if row[0] == labels.dest)
    for help in (labels.help_for("check"), labels.help_for("pytest"), pytest_help):
        assert "JSON Lines" in help, help
        assert CSV_SUFFIX in help, help
        assert all(column in help for column in CSV_COLUMNS[:2]), help
