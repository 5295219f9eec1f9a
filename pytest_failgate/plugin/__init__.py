"""The ``pytest11`` entry point: options, ini keys, the marker, and switching the gate on.

This module is imported by every pytest run in an environment where failgate is
installed, so it imports nothing beyond pytest and the option table (``options.py``,
standard library only), from which every option and ini key is generated. The gate
itself (``session``, the core, pydantic, YAML) is imported only when ``--failgate``
(or the ``failgate`` ini key) is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..options import OPTIONS, Option, resolve
from .keys import SESSION

if TYPE_CHECKING:
    from ..core.gate import GateConfig, Mode
    from ..output.files import Outputs


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

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
                            help=option.help)
        elif option.kind in ("paths", "names"):
            group.addoption(option.flag, action="append", default=[], metavar=option.metavar,
                            dest=option.dest, help=option.help)
        else:
            group.addoption(option.flag, metavar=option.metavar, dest=option.dest,
                            choices=option.choices, help=option.help)
        ini_type = {"flag": "bool", "paths": "paths", "names": "args"}.get(option.kind, "string")
        parser.addini(option.dest, option.help, type=ini_type,  # type: ignore[arg-type]
                      default=False if option.kind == "flag"
                      else [] if option.kind in ("paths", "names") else "")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "failgate: a failure-category ceiling check added by pytest-failgate"
    )
    settings = _settings(config)
    if settings is None:
        return
    from .session import GateSession

    session = GateSession(config, *settings)
    config.stash[SESSION] = session
    config.pluginmanager.register(session, GateSession.NAME)


def _settings(config: pytest.Config) -> tuple[GateConfig, Outputs] | None:
    """The gate's configuration from the options, else the ini keys; None when failgate is off.

    Command-line paths are relative to the invocation directory, ini paths to the ini
    file's directory, and a path option's default to the rootdir.
    """
    invocation = config.invocation_params.dir
    ini_dir = config.inipath.parent if config.inipath else config.rootpath

    def value(option: Option) -> Any:
        given = config.getoption(option.dest)
        if option.kind == "paths":
            if given:
                return [(invocation / p).resolve() for p in given]
            return [Path(p).resolve() for p in config.getini(option.dest)]
        if option.kind == "flag":
            return bool(config.getini(option.dest)) if given is None else bool(given)
        if option.kind == "path":
            if given:
                return (invocation / given).resolve()
            ini = str(config.getini(option.dest))
            if ini:
                return (ini_dir / ini).resolve()
            return (config.rootpath / option.default).resolve() if option.default else None
        return given or str(config.getini(option.dest)) or option.default

    values = resolve(value)
    if not values["failgate"]:
        return None
    from ..options import build

    if values["init"] and values["ratchet"]:
        raise pytest.UsageError(
            "--failgate-init writes a new ceilings file and --failgate-ratchet lowers an "
            "existing one; use one of them"
        )
    mode: Mode = "init" if values["init"] else "ratchet" if values["ratchet"] else (
        "strict" if values["strict"] else "gate")
    return build(values, mode)
