"""The ``pytest11`` entry point: options, ini keys, the marker, and switching the gate on.

This module is imported by every pytest run in an environment where failgate is
installed, so it imports nothing beyond pytest. The gate itself (``session``,
the core, pydantic, YAML) is imported only when ``--failgate`` (or the
``failgate`` ini key) is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ..core.gate import GateConfig, Mode
    from ..output.files import Outputs

_HELP = {
    "failgate": "gate failure-category counts of the evaluation reports under PATH "
    "(a file or directory; repeatable). Turns failgate on.",
    "ceilings": "the ceilings file (default: ini failgate_ceilings, else ceilings.yaml "
    "in the rootdir)",
    "ratchet": "after the run, lower every ceiling whose count fell; never raises one",
    "strict": "fail items whose ceiling is above the count, so gains must be committed",
    "init": "write a new ceilings file from the current counts (never overwrites)",
    "md": "write the gate as a Markdown report (a pull-request comment) to FILE",
    "html": "write the gate as a self-contained HTML report to FILE",
    "history": "a folder of past runs (report files or folders, in name order) to chart "
    "in the Markdown and HTML reports",
    "json": "write the gate's result as JSON to FILE (schema: `failgate schema`)",
    "baseline": "compare with a baseline run's reports (same layout), case by case: a "
    "category fails only when its increase is significant and beyond the noise band",
    "noise": "a noise_band.json (from `failgate noise`) giving each category's noise band",
    "explain": "add rule diagnostics to the summary: what first-match hid, rules that never "
    "matched, how often the fields each rule reads were absent, the fallback's cases",
    "guard": "fail when a ceiling was raised or removed since the git ref REF without a "
    "reason written in this change (e.g. origin/main)",
    "github": "GitHub Actions: ::error annotations on failing ceilings, and the Markdown "
    "report appended to $GITHUB_STEP_SUMMARY",
}


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("failgate", "failure-category ceilings for evaluation reports")
    group.addoption("--failgate", action="append", default=[], metavar="PATH",
                    dest="failgate", help=_HELP["failgate"])
    group.addoption("--failgate-ceilings", metavar="FILE", dest="failgate_ceilings",
                    help=_HELP["ceilings"])
    for flag in ("ratchet", "strict", "init", "explain"):
        group.addoption(f"--failgate-{flag}", action="store_true", default=None,
                        dest=f"failgate_{flag}", help=_HELP[flag])
    for output in ("md", "json", "html"):
        group.addoption(f"--failgate-{output}", metavar="FILE", dest=f"failgate_{output}",
                        help=_HELP[output])
    group.addoption("--failgate-github", action="store_true", default=None,
                    dest="failgate_github", help=_HELP["github"])
    group.addoption("--failgate-guard", metavar="REF", dest="failgate_guard", help=_HELP["guard"])
    group.addoption("--failgate-baseline", action="append", default=[], metavar="PATH",
                    dest="failgate_baseline", help=_HELP["baseline"])
    group.addoption("--failgate-noise", metavar="FILE", dest="failgate_noise",
                    help=_HELP["noise"])
    group.addoption("--failgate-history", metavar="DIR", dest="failgate_history",
                    help=_HELP["history"])
    parser.addini("failgate", _HELP["failgate"], type="paths", default=[])
    parser.addini("failgate_baseline", _HELP["baseline"], type="paths", default=[])
    for key in ("ceilings", "md", "json", "html", "history", "guard", "noise"):
        parser.addini(f"failgate_{key}", _HELP[key], type="string", default="")
    for flag in ("ratchet", "strict", "init", "github", "explain"):
        parser.addini(f"failgate_{flag}", _HELP[flag], type="bool", default=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "failgate: a failure-category ceiling check added by pytest-failgate"
    )
    settings = _settings(config)
    if settings is None:
        return
    from .session import GateSession

    config.pluginmanager.register(GateSession(config, *settings), GateSession.NAME)


def _settings(config: pytest.Config) -> tuple[GateConfig, Outputs] | None:
    invocation = config.invocation_params.dir
    given: list[str] = config.getoption("failgate")
    paths = [invocation / p for p in given] if given else list(config.getini("failgate"))
    if not paths:
        return None
    from ..core.gate import GateConfig
    from ..output.files import Outputs

    ini_dir = config.inipath.parent if config.inipath else config.rootpath

    def path(key: str) -> Path | None:
        """A file option: the command line (from the invocation dir), else the ini key."""
        value: str | None = config.getoption(f"failgate_{key}")
        if value:
            return (invocation / value).resolve()
        ini = str(config.getini(f"failgate_{key}"))
        return (ini_dir / ini).resolve() if ini else None

    def flag(name: str) -> bool:
        value = config.getoption(f"failgate_{name}")
        return bool(config.getini(f"failgate_{name}")) if value is None else bool(value)

    if flag("init") and flag("ratchet"):
        raise pytest.UsageError(
            "--failgate-init writes a new ceilings file and --failgate-ratchet lowers an "
            "existing one; use one of them"
        )
    mode: Mode = "init" if flag("init") else "ratchet" if flag("ratchet") else (
        "strict" if flag("strict") else "gate")
    gate = GateConfig(
        paths=tuple(Path(p).resolve() for p in paths),
        ceilings_path=path("ceilings") or (config.rootpath / "ceilings.yaml").resolve(),
        mode=mode,
        guard_ref=(config.getoption("failgate_guard")
                   or str(config.getini("failgate_guard")) or None),
        explain=flag("explain"),
        baseline=tuple(Path(p).resolve() for p in (
            [invocation / b for b in config.getoption("failgate_baseline")]
            or list(config.getini("failgate_baseline")))),
        noise=path("noise"),
    )
    return gate, Outputs(markdown=path("md"), json=path("json"), html=path("html"),
                         history=path("history"), github=flag("github"))
