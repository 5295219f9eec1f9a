"""One run's configuration, resolved alike by pytest, the ``failgate`` command and MCP.

Each setting of the option table (``options.py``) is, in order: the value the front end
was given (a pytest option, a command-line flag, an MCP tool argument), else the ini
key ``failgate_NAME`` of the configuration pytest would use, else the default. Paths
given are relative to where the front end runs; ini paths to the ini file's folder; the
ceilings file's default is ``ceilings.yaml`` in the rootdir. Plugins add up: the ini
key's modules, then those given.

pytest reads its own configuration (``config.getini``); the ``failgate`` command and the
MCP server read the same file with ``core.base.inifile``, which finds and parses it as pytest
does, so ``failgate_ceilings`` (or any other key) means the same file in every front end.

This module is imported by every pytest run where failgate is installed: it imports
nothing beyond the standard library and the option table at module level.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import options
from ..core.base.advice import Advice
from ..core.base.classes import dataclass
from ..core.base.defaults import decimal
from ..core.base.errors import FailgateError, display_path
from ..options import DEFAULT_DELTA, Option

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from ..core.gate.runner import GateConfig, Mode
    from ..output.files import Outputs


# the core's names for three settings (``GateConfig``'s field for the option's attribute)
CORE_NAMES = {"ceilings": "ceilings_path", "taxonomy": "init_taxonomy", "guard": "guard_ref"}


@dataclass(frozen=True)
class Config:
    """Every setting of a run, resolved; one field per setting of the option table.

    ``given`` names the settings the front end was given explicitly (what its advice
    repeats); ``advice`` words the actions the core's messages suggest.
    """

    ceilings: Path
    rootdir: Path
    inipath: Path | None = None
    paths: tuple[Path, ...] = ()
    strict: bool = False
    explain: bool = False
    md: Path | None = None
    json: Path | None = None
    html: Path | None = None
    history: Path | None = None
    github: bool = False
    guard: str | None = None
    baseline: tuple[Path, ...] = ()
    noise: Path | None = None
    labels: Path | None = None  # gold labels: gate the judge's counts corrected
    confirm: tuple[Path, ...] = ()
    confirm_baseline: tuple[Path, ...] = ()
    baseline_window: str | None = None
    accept_baseline_gap: str | None = None
    analyze: bool = False
    exclude_unstable: bool = False
    max_report_bytes: str | None = None
    engine: str = "python"
    taxonomy: str | None = None
    plugins: tuple[str, ...] = ()
    futility: str | None = None  # sequential: the futility stop's beta (None: off)
    margin: str | None = None  # and the regression it rules out, in cases
    delta: str = decimal(DEFAULT_DELTA)  # watch: the error probability of an early verdict
    strata: str | None = None  # --failgate-sequential: `module`, or a marker's name
    given: frozenset[str] = frozenset()
    advice: Advice = field(default_factory=Advice)
    # False where no plugin code may run (the MCP server unless --allow-plugins)
    run_plugins: bool = True
    # the settings of the table's rows that have no field here (by attribute): a new row
    # works everywhere before its use gives it a typed field (``setting``)
    others: Mapping[str, Any] = field(default_factory=dict)

    def setting(self, attribute: str) -> Any:
        """A setting by its option's ``attribute``, a field's or one of ``others``."""
        if attribute in self.others:
            return self.others[attribute]
        if attribute in {known.name for known in fields(self)}:
            return getattr(self, attribute)
        if any(option.attribute == attribute for option in options.OPTIONS):
            return None  # a configuration made without the resolver: not given
        raise AttributeError(f"no setting {attribute!r}")

    def gate(self, mode: Mode) -> GateConfig:
        """The core's configuration of one gate run in ``mode``: every setting whose field
        the core's ``GateConfig`` has (by the same name, or the core's name ``CORE_NAMES``),
        so that a setting the core reads is passed on by adding its field there."""
        from .. import options
        from ..core.gate.runner import GateConfig

        core = {known.name for known in fields(GateConfig)}
        settings = {**{known.name: getattr(self, known.name) for known in fields(self)},
                    **self.others}
        values = {CORE_NAMES.get(name, name): value for name, value in settings.items()
                  if CORE_NAMES.get(name, name) in core}
        # `--noise repeats`: each report's own repeats, a keyword (a file of that name is
        # given as ./repeats); kept as written by ``_value``, where every path is absolute
        repeats = self.noise is not None and self.noise == Path(_repeats())
        values.update(mode=mode, noise=None if repeats else self.noise, noise_repeats=repeats,
                      guard_options=options.OPTIONS)
        return GateConfig(**values)

    @property
    def outputs(self) -> Outputs:
        """The reports to write at the end of a run."""
        from ..output.files import RENDERED, Outputs

        rendered = tuple((name, self.setting(name)) for name in RENDERED
                         if self.setting(name) is not None)
        return Outputs(markdown=self.md, json=self.json, html=self.html, history=self.history,
                       github=self.github, rendered=rendered)

    def given_words(self, command: str, quote: bool = True) -> list[tuple[Option, list[str]]]:
        """The settings given explicitly that ``command`` takes, each with its values as a
        user types them (paths relative to the working directory, quoted for a shell
        unless ``quote`` is false; a flag has none), in table order: what a suggestion to
        run ``command`` repeats."""
        def word(value: Any) -> str:
            if isinstance(value, str) and value.endswith(".py"):  # a plugin file
                value = Path(value)
            text = self._typed(value) if isinstance(value, Path) else str(value)
            return shlex.quote(text) if quote else text

        found = []
        for option in options.OPTIONS:
            if option.name not in self.given or command not in option.commands:
                continue
            value = self.setting(option.attribute)
            values = [] if option.kind == "flag" else list(value) if option.kind in (
                "paths", "names") else [value]
            found.append((option, [word(v) for v in values]))
        return found


    def _typed(self, path: Path) -> str:
        """``path`` as typed where the front end runs: relative to the working folder when
        inside the project (``../reports`` from its tests/ folder), else as errors show it."""
        absolute = Path(os.path.abspath(path))
        if not (absolute.is_relative_to(self.rootdir)
                or absolute.is_relative_to(self.rootdir.resolve())):
            return display_path(path)
        try:
            return os.path.relpath(path)
        except ValueError:  # another drive on Windows
            return display_path(path)

def _absolute(base: Path, path: str | os.PathLike[str]) -> Path:
    """``path`` from ``base``, symbolic links followed (a loop of links is left as written,
    for the reading to refuse by name, not a ``RuntimeError`` here)."""
    return Path(os.path.realpath(base / path))


def _as_written(base: Path, path: str | os.PathLike[str]) -> Path:
    """``path`` from ``base``, absolute but with its links kept: the ceilings file, which a
    ratchet refuses to write through a link and the guard reads at the ref as the ref has
    it (``core.ceilings.target``, ``core.guard.gitref``)."""
    return Path(os.path.abspath(base / path))


def _present(value: Any) -> bool:
    return value is not None and value is not False and value != "" and value != [] \
        and value != ()


def _plugin(spec: str, base: Path) -> str:
    """A module name as it is; a ``.py`` file as an absolute path."""
    from ..core.base.safeopen import check_path_length

    if not spec.endswith(".py"):
        return spec
    check_path_length(base / spec)
    return str(_absolute(base, spec))


def _where(option: Option, inipath: Path | None, from_ini: bool) -> str:
    """Where a value was written, for its error: the ini key in its file, or the option."""
    if from_ini:
        return f"{display_path(inipath)}: {option.dest}" if inipath else option.dest
    return option.cli_flag


def resolve(given: Mapping[str, Any], *, base: Path, ini: Callable[[Option], Any],
            folder: Path, rootdir: Path, inipath: Path | None = None) -> Config:
    """The configuration from the values a front end was given and the ini file's.

    ``given`` maps an option's ``attribute`` to its value as given (paths relative to
    ``base``; an absent, empty or false value is not given). ``ini`` returns an
    option's ini value as pytest's ``getini`` does (``paths`` absolute, ``path`` and
    ``names`` as written, relative to ``folder``), or an empty value when unset.
    """
    values: dict[str, Any] = {}
    explicit: set[str] = set()
    for option in options.OPTIONS:
        if option.action:
            continue
        name = option.attribute
        raw = given.get(name)
        written = ini(option) if option.ini else None
        try:
            if option.kind == "names":
                found = [_plugin(str(s), folder) for s in written or ()]
                found += [_plugin(str(s), base) for s in raw or ()]
                values[name] = tuple(dict.fromkeys(found))
                if raw:
                    explicit.add(option.name)
                continue
            if _present(raw):
                explicit.add(option.name)
                values[name] = _value(option, raw, base)
            elif _present(written):
                values[name] = _value(option, written, folder)
            elif option.default is not None:
                values[name] = _value(option, option.default, rootdir)
        except FailgateError as exc:  # a bad path: say where it was written
            from_ini = not _present(raw) and (option.kind != "names" or bool(written))
            raise FailgateError(f"{_where(option, inipath, from_ini)}: {exc}") from None
    if "ceilings" not in values:  # pragma: no cover - the table gives it a default
        values["ceilings"] = rootdir / "ceilings.yaml"
    own = {known.name for known in fields(Config)}
    others = {name: value for name, value in values.items() if name not in own}
    return Config(rootdir=rootdir, inipath=inipath, given=frozenset(explicit), others=others,
                  **{name: value for name, value in values.items() if name in own})


def _repeats() -> str:
    """The noise setting's keyword for each report's own repeats (not a file's name)."""
    from ..core.compare.noisemodel import REPEATS

    return REPEATS


def _value(option: Option, value: Any, base: Path) -> Any:
    from ..core.base.safeopen import check_path_length

    if option.kind in ("paths", "path"):
        for written in value if option.kind == "paths" else (value,):
            check_path_length(base / written)
    if option.kind == "paths":
        return tuple(_absolute(base, p) for p in value)
    if option.kind == "path":
        if option.name == "noise" and str(value) == _repeats():
            return Path(_repeats())  # the keyword, not a file: ./repeats is the file
        return _as_written(base, value) if option.name == "ceilings" else _absolute(base, value)
    if option.kind == "flag":
        return bool(value)
    if option.name == "taxonomy":  # a taxonomy file: from where it was written
        from ..core.taxonomy.files import names_a_file

        if names_a_file(str(value)):
            check_path_length(base / str(value))
            return str(_absolute(base, str(value)))
    return str(value)


def load(given: Mapping[str, Any], cwd: Path | None = None) -> Config:
    """The configuration of the ``failgate`` command or an MCP call made in ``cwd``.

    The ini file is the one pytest would use there (``core.base.inifile``).
    """
    from ..core.base.inifile import locate

    cwd = Path.cwd() if cwd is None else cwd
    found = locate(cwd)
    return resolve(given, base=cwd, ini=lambda option: found.get(option.dest, option.kind),
                   folder=found.folder, rootdir=found.rootdir, inipath=found.path)
