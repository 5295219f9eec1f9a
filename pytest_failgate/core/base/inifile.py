"""pytest's configuration file, found and read as pytest finds and reads it, without pytest.

The ``failgate`` command and the MCP server must honour the ini keys pytest honours
(``failgate_ceilings``, ``failgate_plugins``, ...), and the guard must find the
ceilings file a git ref's configuration named. All three read the configuration
here; the pytest plugin reads pytest's own (``config.getini``), which follows the same
rules:

- walking up from the start directory, the first folder holding one of
  ``pytest.toml``, ``.pytest.toml`` (pytest 9 and later), ``pytest.ini``,
  ``.pytest.ini``, ``pyproject.toml``, ``tox.ini``, ``setup.cfg``, in that order, that
  configures pytest (``pytest.ini`` always does; ``pyproject.toml`` with
  ``[tool.pytest]`` or ``[tool.pytest.ini_options]``; ``tox.ini`` with ``[pytest]``;
  ``setup.cfg`` with ``[tool:pytest]``); its folder is the rootdir;
- else the first ``pyproject.toml`` met on the way (rootdir, no values), else the
  nearest folder with a ``setup.py``, else the start directory;
- ini files are parsed with ``iniconfig`` (pytest's own parser, installed with it);
  list values are split like a shell (``shlex``), true/false read as pytest reads them.

Files are read through a function, so the same rules apply to the working tree and to
the files of a git ref (``gitref.Tree``).
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .classes import dataclass
from .errors import FailgateError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

Kind = Literal["path", "paths", "flag", "text", "names"]

CEILINGS_KEY = "failgate_ceilings"
DEFAULT_CEILINGS = "ceilings.yaml"


def _pytest_major() -> int:
    """pytest's major version, read from the version file of the pytest installed (where
    pytest itself reads it) without importing pytest; importlib.metadata, which answers
    the same, cost a small run more than the rest of its start-up to import."""
    import importlib.util
    import re

    spec = importlib.util.find_spec("_pytest")
    folder = spec.submodule_search_locations if spec is not None else None
    for base in folder or ():
        try:
            with open(f"{base}/_version.py", encoding="utf-8") as file:
                found = re.search(r"""^(?:__version__ = )?version = ['"](\d+)\.""",
                                  file.read(), re.M)
        except OSError:
            continue
        if found:
            return int(found.group(1))
    from importlib.metadata import PackageNotFoundError, version

    try:
        return int(version("pytest").split(".", 1)[0])
    except (PackageNotFoundError, ValueError):  # pragma: no cover - pytest is a dependency
        return 8


def config_names() -> tuple[str, ...]:
    """The files pytest looks for in each folder, in its order of precedence."""
    names = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
    return (("pytest.toml", ".pytest.toml", *names) if _pytest_major() >= 9 else names)


@dataclass(frozen=True)
class IniFile:
    """The configuration pytest would use: its file, rootdir and raw values.

    ``path`` is None when no file configures pytest; ``rootdir`` is then where pytest
    would root the run. ``mode`` is ``ini`` (strings, and lists of strings from TOML's
    ``ini_options``) or ``toml`` (``[tool.pytest]``, ``pytest.toml``: native types).
    """

    rootdir: Path
    path: Path | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    mode: Literal["ini", "toml"] = "ini"
    # keys set by ``-o``/``--override-ini``: text, read as an ini file's text is
    overridden: frozenset[str] = frozenset()

    @property
    def folder(self) -> Path:
        """What ini paths are relative to: the file's folder (the rootdir)."""
        return self.path.parent if self.path is not None else self.rootdir

    def get(self, key: str, kind: Kind) -> Any:
        """A key's value as pytest's ``getini`` gives it; None when the file does not set it.

        ``paths``: absolute paths; ``names``: a list of words; ``flag``: a bool;
        ``path``/``text``: a string (a ``path`` relative to :attr:`folder`).
        """
        if key not in self.values:
            return None
        value = self.values[key]
        where = self.path if self.path is not None else self.rootdir
        ini_text = self.mode == "ini" or key in self.overridden
        if kind in ("paths", "names"):
            if isinstance(value, str) and ini_text:
                try:
                    words = shlex.split(value)
                except ValueError as exc:
                    raise FailgateError(f"{key}: {exc}", where) from None
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                words = list(value)
            else:
                raise FailgateError(f"{key}: expected a list of strings, got "
                                    f"{type(value).__name__}", where)
            return [self.folder / w for w in words] if kind == "paths" else words
        if kind == "flag":
            if isinstance(value, bool):
                return value
            if not ini_text or not isinstance(value, str):
                raise FailgateError(f"{key}: expected true or false, got {value!r}", where)
            return _truth(key, value, where)
        if not isinstance(value, str):
            raise FailgateError(f"{key}: expected a string, got {type(value).__name__}", where)
        return value

    def addopts(self) -> list[str]:
        """The ``addopts`` words, split as pytest splits them (unparsable: none)."""
        raw = self.values.get("addopts")
        if raw is None:
            return []
        if isinstance(raw, list):
            return [str(word) for word in raw]
        try:
            return shlex.split(str(raw))
        except ValueError:
            return []

    def with_args(self, args: list[str]) -> IniFile:
        """The configuration as a run given ``args`` sees it: each ``-o``/``--override-ini
        key=value`` among them replaces the key's value, the last one winning, as pytest's
        ``getini`` does (``addopts`` itself is not overridden here)."""
        found = overrides(args)
        found.pop("addopts", None)
        if not found:
            return self
        return IniFile(self.rootdir, self.path, {**self.values, **found}, self.mode,
                       self.overridden | frozenset(found))


def overrides(args: list[str]) -> dict[str, str]:
    """The ``key=value`` pairs of ``-o``/``--override-ini`` among command-line words."""
    found: dict[str, str] = {}
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        value: str | None = None
        if word in ("-o", "--override-ini"):
            if index < len(args):
                value = args[index]
                index += 1
        elif word.startswith("--override-ini="):
            value = word.removeprefix("--override-ini=")
        elif word.startswith("-o") and not word.startswith("--"):
            value = word[2:]
        if value is not None and "=" in value:
            key, _, text = value.partition("=")
            found[key.strip()] = text
    return found


def _truth(key: str, text: str, where: Path) -> bool:
    lowered = text.strip().lower()
    if lowered in ("y", "yes", "t", "true", "on", "1"):
        return True
    if lowered in ("n", "no", "f", "false", "off", "0"):
        return False
    raise FailgateError(f"{key}: '{text}' is not true or false", where)


def read_file(path: Path) -> str | None:
    """A file's text in the working tree (None: no such file)."""
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise FailgateError(f"cannot read: {exc}", path) from None


def locate(start: Path, read: Callable[[Path], str | None] = read_file) -> IniFile:
    """The configuration pytest would use when run in ``start`` with no test paths."""
    start = Path(start)
    names = config_names()
    pyproject: Path | None = None
    for folder in (start, *start.parents):
        for name in names:
            path = folder / name
            text = read(path)
            if text is None:
                continue
            if name == "pyproject.toml" and pyproject is None:
                pyproject = path
            found = _values(path, text)
            if found is not None:
                ini = IniFile(folder, path, found[0], found[1])
                return ini.with_args(ini.addopts())  # `addopts = -o key=value`, as pytest
    if pyproject is not None:
        return IniFile(pyproject.parent, pyproject)
    for folder in (start, *start.parents):
        if read(folder / "setup.py") is not None:
            return IniFile(folder)
    return IniFile(start)


def configured_ceilings(ini: IniFile) -> Path:
    """The ceilings file a configuration names (``failgate_ceilings``, relative to its
    folder), else ``ceilings.yaml`` in the rootdir: pytest's default, and the command's."""
    value = ini.get(CEILINGS_KEY, "path")
    return ini.folder / value if value else ini.rootdir / DEFAULT_CEILINGS


def _values(path: Path, text: str) -> tuple[dict[str, Any], Literal["ini", "toml"]] | None:
    """The pytest section of one file, or None when the file does not configure pytest."""
    if path.suffix == ".toml":
        document = _toml(path, text)
        if path.name in ("pytest.toml", ".pytest.toml"):
            table = document.get("pytest", {})
            return (dict(table) if isinstance(table, dict) else {}), "toml"
        tool = document.get("tool", {})
        pytest_table = tool.get("pytest", {}) if isinstance(tool, dict) else {}
        if not isinstance(pytest_table, dict):
            return None
        native = {k: v for k, v in pytest_table.items() if k != "ini_options"}
        if native:
            return native, "toml"
        options = pytest_table.get("ini_options")
        if not isinstance(options, dict):
            return None
        return {k: v if isinstance(v, list) else str(v) for k, v in options.items()}, "ini"
    import iniconfig

    try:
        parsed = iniconfig.IniConfig(str(path), data=text)
    except iniconfig.ParseError as exc:
        raise FailgateError(exc.msg, path, exc.lineno + 1) from None
    section = "tool:pytest" if path.name == "setup.cfg" else "pytest"
    if section in parsed:
        return dict(parsed[section].items()), "ini"
    return ({}, "ini") if path.name in ("pytest.ini", ".pytest.ini") else None


def _toml(path: Path, text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - pytest depends on tomli before 3.11
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FailgateError(f"not valid TOML: {exc}", path) from None
