"""The ``pytest11`` entry point: options, ini keys, the marker, and switching the gate on.

This module is imported by every pytest run in an environment where failgate is
installed, so it imports nothing beyond pytest, the option table and the configuration
resolver (``options.py``, ``commands/config.py``: standard library only), from which every
option and ini key is generated. The gate itself (``session``, the core, pydantic, YAML)
is imported only when ``--failgate`` (or the ``failgate`` ini key) is given.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from ..commands.config import Config, resolve
from ..options import OPTIONS, Option
from .keys import SESSION

if TYPE_CHECKING:
    from ..core.gate.runner import Mode


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """failgate's hooks, so that a ``conftest.py`` defining them is valid under pytest (the
    gate calls them through its own plugin manager, ``commands/plugins.py``)."""
    from ..commands import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Each entry of the option table: a ``--failgate-NAME`` option, a ``failgate_NAME`` key."""
    group = parser.getgroup("failgate", "failure-category ceilings for evaluation reports")
    for option in OPTIONS:
        if not option.pytest:
            continue
        if option.kind == "flag":
            # None, not False: an absent flag defers to the ini key
            group.addoption(option.flag, action="store_true", default=None, dest=option.dest,
                            help=option.help_for("pytest"))
        elif option.kind in ("paths", "names"):
            group.addoption(option.flag, action="append", default=[], metavar=option.metavar,
                            dest=option.dest, help=option.help_for("pytest"))
        else:
            group.addoption(option.flag, metavar=option.metavar, dest=option.dest,
                            choices=option.choices, help=option.help_for("pytest"))
        if not option.ini:
            continue  # an action: asked for on the command line, never by the ini file
        ini_type = {"flag": "bool", "paths": "paths", "names": "args"}.get(option.kind, "string")
        parser.addini(option.dest, option.help_for("pytest"),
                      type=ini_type,  # type: ignore[arg-type]
                      default=False if option.kind == "flag"
                      else [] if option.kind in ("paths", "names") else "")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "failgate: a failure-category ceiling check added by pytest-failgate"
    )
    config.addinivalue_line(
        "markers", "failgate_category(name): the failure category of this test when it fails "
        "(--failgate-sequential)"
    )
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
    from .session import GateSession

    session = GateSession(config, *settings)
    config.stash[SESSION] = session
    config.pluginmanager.register(session, GateSession.NAME)


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
    def ini(option: Option) -> Any:
        return config.getini(option.dest)

    given = {option.attribute: config.getoption(option.dest) for option in OPTIONS
             if option.pytest and not option.action}
    return resolve(given, base=config.invocation_params.dir, ini=ini,
                   folder=config.inipath.parent if config.inipath else config.rootpath,
                   rootdir=config.rootpath, inipath=config.inipath)


def _settings(config: pytest.Config) -> tuple[Config, Mode] | None:
    """The run's configuration and the gate's mode; None when failgate is off."""
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
