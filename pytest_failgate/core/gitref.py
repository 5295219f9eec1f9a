"""Files as they are in the working tree and as they were at a git ref.

The guard compares what the gate would enforce now with what it enforced at a
ref, so it must find the gate's files at the ref the way the gate finds them
now: the ceilings file the ini configuration names (``failgate_ceilings`` in
``pytest.ini``, ``pyproject.toml``, ``tox.ini`` or ``setup.cfg``, else
``ceilings.yaml`` in the rootdir), symbolic links followed, and the taxonomy file
a ceilings file names. Both sides answer the same questions through ``Tree``.
"""

from __future__ import annotations

import configparser
import posixpath
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .errors import FailgateError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - pytest depends on tomli where tomllib is missing
    import tomli as tomllib

INI_KEY = "failgate_ceilings"
DEFAULT_CEILINGS = "ceilings.yaml"
_SYMLINK_HOPS = 8


def git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              check=False)
    except FileNotFoundError:
        raise FailgateError("git is not installed; the guard reads the ref with git") from None


@dataclass(frozen=True)
class Tree:
    """The repository's files in the working tree (``ref`` None) or at a git ref.

    Paths are POSIX paths relative to the repository's top directory.
    """

    top: Path
    ref: str | None = None
    # directory -> {name: mode} of its files at the ref, listed once
    _listed: dict[str, dict[str, str]] = field(default_factory=dict, compare=False, repr=False)

    @staticmethod
    def open(directory: Path, ref: str) -> tuple[Tree, Tree]:
        """The working tree and the tree at ``ref`` of the repository holding ``directory``."""
        found = git(["rev-parse", "--show-toplevel"], directory)
        if found.returncode != 0:
            raise FailgateError("not inside a git repository; the guard compares with a git ref",
                                directory)
        top = Path(found.stdout.strip())
        if git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], top).returncode:
            raise FailgateError(
                f"unknown git ref '{ref}'; in a shallow CI checkout fetch it first, e.g. "
                f"`git fetch --depth=1 origin {ref.removeprefix('origin/')}`"
            )
        return Tree(top), Tree(top, ref)

    @property
    def label(self) -> str:
        return self.ref or "the working tree"

    def relative(self, path: Path) -> str | None:
        """``path`` relative to the top (symbolic links not followed), or None if outside."""
        absolute = Path(posixpath.normpath(path.absolute().as_posix()))
        for top in (self.top, self.top.resolve()):
            try:
                return absolute.relative_to(top).as_posix()
            except ValueError:
                continue
        return None

    def read(self, relative: str) -> str | None:
        """A file's text, symbolic links followed; None when there is no such file."""
        if self.ref is None:
            path = self.top / relative
            try:
                return path.read_text(encoding="utf-8") if path.is_file() else None
            except (OSError, UnicodeDecodeError):
                return None
        return self._read_at_ref(relative)

    def real(self, relative: str) -> str | None:
        """Where ``relative`` leads once symbolic links are followed (None: nowhere)."""
        if self.ref is None:
            path = (self.top / relative).resolve()
            return self.relative(path) if path.is_file() else None
        for _ in range(_SYMLINK_HOPS):
            kind = self._kind(relative)
            if kind is None:
                return None
            if kind != "120000":
                return relative
            target = self._show(relative)
            if target is None:
                return None
            relative = posixpath.normpath(posixpath.join(posixpath.dirname(relative), target))
            if relative.startswith("../"):
                return None
        return None

    def _read_at_ref(self, relative: str) -> str | None:
        real = self.real(relative)
        return None if real is None else self._show(real)

    def _kind(self, relative: str) -> str | None:
        """The file mode of a file at the ref (``120000`` a symbolic link), None if absent."""
        directory, name = posixpath.split(relative)
        if directory not in self._listed:
            listed = git(["ls-tree", "-z", str(self.ref), "--", f"{directory}/" if directory
                          else "."], self.top)
            files: dict[str, str] = {}
            for line in listed.stdout.split("\0") if listed.returncode == 0 else []:
                if line:
                    meta, path = line.split("\t", 1)
                    mode, kind, _ = meta.split(" ", 2)
                    if kind == "blob":
                        files[posixpath.basename(path)] = mode
            self._listed[directory] = files
        return self._listed[directory].get(name)

    def _show(self, relative: str) -> str | None:
        shown = git(["show", f"{self.ref}:{relative}"], self.top)
        return shown.stdout if shown.returncode == 0 else None


def configured_ceilings(tree: Tree, start: str) -> str:
    """The ceilings file pytest would use from directory ``start`` (relative to the top).

    Like pytest: walk up from ``start`` to the first ini file that configures pytest;
    its ``failgate_ceilings`` is relative to it, else ``ceilings.yaml`` in its
    directory (the rootdir). With no ini file, ``ceilings.yaml`` in ``start``.
    """
    directory = start
    while True:
        for name in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
            relative = posixpath.normpath(posixpath.join(directory, name))
            text = tree.read(relative)
            if text is None:
                continue
            found, value = _ini_value(name, text)
            if found:
                chosen = value or DEFAULT_CEILINGS
                return posixpath.normpath(posixpath.join(directory, chosen))
        if directory in ("", "."):
            break
        directory = posixpath.dirname(directory)
    return posixpath.normpath(posixpath.join(start, DEFAULT_CEILINGS))


def _ini_value(name: str, text: str) -> tuple[bool, str | None]:
    """(does this file configure pytest, its failgate_ceilings value)."""
    if name == "pyproject.toml":
        try:
            table = tomllib.loads(text).get("tool", {}).get("pytest", {}).get("ini_options")
        except tomllib.TOMLDecodeError:
            return False, None
        if not isinstance(table, dict):
            return False, None
        value = table.get(INI_KEY)
        return True, value if isinstance(value, str) and value else None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return name in ("pytest.ini", ".pytest.ini"), None
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    if not parser.has_section(section):
        return name in ("pytest.ini", ".pytest.ini"), None
    value = parser.get(section, INI_KEY, fallback="").strip()
    return True, value or None
