"""The Action's inputs against the option table: an input that sets an option is named by
that option's row (``Option.action_input``), reaches the gate step and is read there; every
other option of ``check`` reaches the Action through its ``args`` input.

So adding an input for an option is its row's ``action_input`` and ``action.yml``; a row
that names an input the file lacks, or an input named as an option no row claims, fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pytest_failgate import options
from pytest_failgate.ci.github import input_value, settings
from pytest_failgate.core.guard.settings import ACTION_ARGS, Table

ROOT = Path(__file__).resolve().parents[2]
ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
INPUTS: dict[str, Any] = ACTION["inputs"]
NAMED = {option.action_input: option for option in options.OPTIONS if option.action_input}


def _gate_env() -> dict[str, str]:
    [step] = [step for step in ACTION["runs"]["steps"] if step.get("id") == "gate"]
    env: dict[str, str] = step["env"]
    return env


def _value(option: options.Option) -> str:
    return "true" if option.kind == "flag" else "origin/main" if option.name == "guard" \
        else "x"


def test_each_input_that_sets_an_option_is_its_rows_and_reaches_the_gate_step() -> None:
    env = _gate_env()
    assert set(NAMED) <= set(INPUTS), "a row names an input action.yml lacks"
    names = {option.name for option in options.OPTIONS}
    for key in INPUTS:  # an input spelled as an option is that option's, and its row says so
        assert key in NAMED or key not in names, key
    for key, option in NAMED.items():
        assert option.served_by("ci"), key
        variable = f"INPUT_{key.upper().replace('-', '_')}"
        assert env[variable] == f"${{{{ inputs.{key} }}}}", key
        assert input_value({variable: " v "}, key) == "v"


def test_the_step_reads_each_named_input_and_the_guard_reads_it_as_its_option() -> None:
    plain = {"INPUT_REPORTS": "reports"}
    base = settings(plain)
    table = Table(options.OPTIONS)
    for key, option in NAMED.items():
        given = {**plain, f"INPUT_{key.upper().replace('-', '_')}": _value(option)}
        assert settings(given) != base, f"input {key} is not read by the CI step"
        words = table.action_words({key: _value(option)})
        assert words, key
        assert all(word.startswith(option.flag) for word in words), key


def test_every_other_option_of_check_reaches_the_action_through_args() -> None:
    assert ACTION_ARGS in INPUTS
    assert "INPUT_ARGS" in _gate_env()
    for option in options.for_command("check"):
        if option.positional or option.action_input or not option.served_by("ci"):
            continue
        value = [] if option.kind == "flag" else [(option.choices or ("x",))[0]]
        given = {"INPUT_REPORTS": "reports", "INPUT_ARGS": " ".join([option.cli_flag, *value])}
        assert settings(given)[0].check_args == (option.cli_flag, *value), option.name
