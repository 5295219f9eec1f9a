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
    monkeypatch.setattr(mcpserver, "OPTIONS", options.OPTIONS)
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


def test_the_sequential_defaults_are_the_tables() -> None:
    replay = inspect.signature(mcpserver.replay).parameters
    assert replay["delta"].default == float(options.DEFAULT_DELTA)
    assert replay["margin"].default == int(options.DEFAULT_MARGIN)
    assert options.BY_NAME["delta"].default == options.DEFAULT_DELTA
    assert options.BY_NAME["margin"].default == options.DEFAULT_MARGIN
    assert f"{1 - float(options.DEFAULT_DELTA):g}" in options.BY_NAME["sequential"].help


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
