"""Where a rewrite of the ceilings file may write, and one writer at a time.

The ceilings file is the team's quality bar: a rewrite must land on the file the
repository tracks. So a write refuses

- a symbolic link (a link to a looser file elsewhere would be rewritten, while the
  repository's own entry stays a link nobody reviews);
- a file whose real place is outside the repository (through a linked folder, or an
  ini ``failgate_ceilings`` pointing elsewhere); the repository is the git work tree
  holding the project's root folder, else that folder;
- a read-only file (a rename would replace it anyway: only the folder's permission is
  checked by the system).

Two ratchets at once (two CI jobs, a developer's two terminals) must not both claim a
lowering: ``locked`` holds an exclusive lock on the file's folder (``flock``) while a
writer reads the file, compares it with what its gate read, and replaces it. The second
writer then finds the file changed and writes nothing. Where ``flock`` does not exist
(Windows) the compare-and-replace is not locked.
"""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.errors import FailgateError, display_path

if TYPE_CHECKING:
    from collections.abc import Iterator


def repository(root: Path) -> Path:
    """The git work tree holding ``root`` (a folder with ``.git``), else ``root`` itself."""
    start = Path(os.path.abspath(root))
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def check_target(path: Path, root: Path | None) -> None:
    """Refuse to write ``path`` through a link, outside ``root``'s repository, or over a
    read-only file (see the module docstring). ``root`` None skips the repository check
    (a caller with no project, such as a test of the core)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise FailgateError(f"cannot write: {exc.strerror or exc}", path) from None
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise FailgateError(
            f"is a symbolic link (to {os.readlink(path)}); failgate does not write through "
            "a link: make the ceilings file a regular file in the repository", path)
    if root is not None:
        top = repository(root)
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(Path(os.path.realpath(top))):
            raise FailgateError(
                f"is outside the repository ({display_path(top)}): its real place is "
                f"{real}; failgate writes only the repository's own ceilings file", path)
    if info is not None and (not info.st_mode & stat.S_IWUSR or not os.access(path, os.W_OK)):
        raise FailgateError("is read-only; not written (make it writable to ratchet it)", path)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path``'s folder for a read-compare-replace of ``path``."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock; the compare still catches most races
        yield
        return
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError as exc:
        raise FailgateError(f"cannot open its folder: {exc.strerror or exc}", path) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
