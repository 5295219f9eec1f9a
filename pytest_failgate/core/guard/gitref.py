"""Files as they are in the working tree and as they were at a git ref.

The guard compares what the gate would enforce now with what it enforced at a
ref, so it must find the gate's files at the ref the way the gate finds them
now: the ceilings file the ini configuration names (found and read by ``inifile``,
as the ``failgate`` command reads it), symbolic links followed, and the taxonomy file
a ceilings file names. Both sides answer the same questions through ``Tree``.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..base.inifile import configured_ceilings as configured
from ..base.inifile import locate

if TYPE_CHECKING:
    from collections.abc import Iterator

_SYMLINK_HOPS = 8


# the commands that only read (the tree at a ref, the working tree's listing, a file at a
# ref, what a name resolves to): within one guard run (``once``) each runs once per folder
_READS = frozenset({"ls-files", "ls-tree", "show", "rev-parse"})
_RUN: ContextVar[dict[tuple[str, tuple[str, ...]], subprocess.CompletedProcess[str]] | None] = \
    ContextVar("failgate_guard_git", default=None)


def git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``git ARGS`` in ``cwd``; within ``once``, a command that only reads is run once and
    its answer kept (the guard asked the same 18 questions 40 times)."""
    memo = _RUN.get()
    if memo is None or args[0] not in _READS:
        return _git(args, cwd)
    key = (str(cwd), tuple(args))
    found = memo.get(key)
    if found is None:
        found = memo[key] = _git(args, cwd)
    return found


@contextmanager
def once() -> Iterator[None]:
    """One guard run: the repository read as it is at its start, each reading command of
    git run once (``git``); a later run asks git again."""
    token = _RUN.set({})
    try:
        yield
    finally:
        _RUN.reset(token)


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
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
    _named: dict[str, list[str]] = field(default_factory=dict, compare=False, repr=False)

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

    def read_path(self, path: Path) -> str | None:
        """:meth:`read` for an absolute path; None outside the repository."""
        relative = self.relative(path)
        return None if relative is None else self.read(relative)

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

    def files(self, name: str) -> list[str]:
        """Every file of the repository named ``name`` (in any folder), in path order:
        tracked or untracked-but-not-ignored in the working tree, tracked at the ref."""
        if name not in self._named:
            args = (["ls-files", "-z", "--cached", "--others", "--exclude-standard"]
                    if self.ref is None else ["ls-tree", "-r", "-z", "--name-only", str(self.ref)])
            listed = git(args, self.top)
            paths = listed.stdout.split("\0") if listed.returncode == 0 else []
            self._named[name] = sorted({p for p in paths if posixpath.basename(p) == name})
        return self._named[name]

    def under(self, folder: str) -> list[str]:
        """Every file of the repository under ``folder`` (relative), in path order: tracked
        or untracked-but-not-ignored in the working tree, tracked at the ref."""
        args = (["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", folder]
                if self.ref is None else
                ["ls-tree", "-r", "-z", "--name-only", str(self.ref), "--", folder])
        listed = git(args, self.top)
        paths = listed.stdout.split("\0") if listed.returncode == 0 else []
        # the index lists a tracked file deleted from the working tree: not there now
        return sorted({p for p in paths if p and (self.ref is not None
                                                  or os.path.lexists(self.top / p))})

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

    The configuration is found and read as the ``failgate`` command finds it
    (``inifile``): ``failgate_ceilings`` relative to the ini file, else
    ``ceilings.yaml`` in the rootdir.
    """
    try:
        found = configured(locate(tree.top / start, tree.read_path))
    except FailgateError as exc:
        raise FailgateError(f"{tree.label}: {exc}") from None
    return tree.relative(found) or posixpath.normpath(os.path.relpath(found, tree.top))
