"""The one wording of "install this extra", for the way the running copy was installed.

``pip install "pytest-failgate[duckdb]"`` works only once the package is on the index.
A copy installed from a checkout, a wheel file or a git URL needs the same source again
with the extra added, or the hint fails (or installs another version). pip records the
source of every direct install in the distribution's ``direct_url.json`` (PEP 610; uv
does too): no record means an index, or nothing better to say.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "pytest-failgate"
_PLAIN = re.compile(r"[^\"$`\\!]*")  # text a pair of double quotes keeps as it is


def install_command(extra: str) -> str:
    """The command that adds ``extra`` to the running copy of failgate."""
    return command_for(extra, _recorded())


def command_for(extra: str, direct_url: str | None) -> str:
    """The command that adds ``extra`` to a copy installed as ``direct_url`` (the text of
    its ``direct_url.json``; ``None``: none recorded) says."""
    source = _source(direct_url) if direct_url is not None else None
    if source is None:
        return f"pip install {_quote(f'{DISTRIBUTION}[{extra}]')}"
    kind, where = source
    if kind == "editable":
        return f"pip install -e {_quote(f'{where}[{extra}]')}"
    if kind == "directory":
        return f"pip install {_quote(f'{where}[{extra}]')}"
    return f"pip install {_quote(f'{DISTRIBUTION}[{extra}] @ {where}')}"


def needs_extra(what: str, extra: str, packages: str = "") -> str:
    """``"<what> needs the <extra> extra[ (packages)]: <command>"``, the message every front
    end shows when an optional dependency is missing."""
    named = f" ({packages})" if packages else ""
    return f"{what} needs the {extra} extra{named}: {install_command(extra)}"


def installed_from() -> tuple[str, str] | None:
    """``(kind, where)`` of the installed copy's source ("editable", "directory", "url"),
    or ``None`` (an index, or nothing recorded)."""
    recorded = _recorded()
    return _source(recorded) if recorded is not None else None


def _recorded() -> str | None:
    """The installed copy's record. A source tree's build left an ``.egg-info`` that the
    working directory can put first on ``sys.path``; only an installer writes INSTALLER."""
    from importlib import metadata

    for distribution in metadata.distributions(name=DISTRIBUTION):
        if distribution.read_text("INSTALLER") is not None:
            return distribution.read_text("direct_url.json")
    return None  # running from a tree that is not installed


def _source(text: str) -> tuple[str, str] | None:
    """``(kind, where)`` from a ``direct_url.json``; ``None`` for anything not understood."""
    try:
        record = json.loads(text)
    except ValueError:
        return None
    url = record.get("url") if isinstance(record, dict) else None
    if not isinstance(url, str) or not url:
        return None
    subdirectory = record.get("subdirectory")
    vcs = record.get("vcs_info")
    if isinstance(vcs, dict):
        revision = vcs.get("commit_id") or vcs.get("requested_revision")
        where = f"{vcs.get('vcs', 'git')}+{url}" + (f"@{revision}" if revision else "")
        if isinstance(subdirectory, str) and subdirectory:
            where += f"#subdirectory={subdirectory}"
        return "url", where
    parts = urlsplit(url)
    if parts.scheme == "file" and isinstance(record.get("dir_info"), dict):
        path = Path(unquote(parts.path))
        if isinstance(subdirectory, str) and subdirectory:
            path = path / subdirectory
        if not path.is_dir():  # the checkout it came from is gone: the index is all there is
            return None
        return ("editable" if record["dir_info"].get("editable") else "directory"), str(path)
    if parts.scheme == "file" and not Path(unquote(parts.path)).is_file():
        return None  # a wheel or sdist since deleted
    return "url", url


def _quote(argument: str) -> str:
    """Double quotes (POSIX shells, PowerShell and cmd alike) unless the text needs more."""
    return f'"{argument}"' if _PLAIN.fullmatch(argument) else shlex.quote(argument)


# ------------------------------------------------------------- the installed failgate only

# the folders an installer puts packages in (a virtual environment's, uv's, Poetry's, the
# system's): a package there was installed, wherever the environment lies
SITE_FOLDERS = ("site-packages", "dist-packages")


def checkout_copy(workspace: Path, package: Path, instead: str) -> str | None:
    """Why the failgate at ``package`` is a folder of the checkout in ``workspace`` rather
    than the installed failgate (``None``: it is installed). The one answer for every path
    that runs the gate on a repository (the CI step, pytest).

    A package outside the workspace, or in an installer's folder (``site-packages`` of a
    ``.venv`` inside the project) that git does not track, was installed. A package folder
    of the checkout (tracked, or importable only because its folder, the working directory,
    is on the path) is refused, unless it is what was installed editable (failgate's own
    repository gating itself). ``instead``: what to run instead, for the message."""
    here, top = package.resolve(), workspace.resolve()
    if not here.is_relative_to(top) or _editable_source(here, top):
        return None
    tracked = _tracked(here, top)
    if here.parent.name in SITE_FOLDERS and not tracked:
        return None  # a virtual environment inside the project: installed
    if here.parent.name in SITE_FOLDERS:
        return (f"this failgate is {here}, committed to the repository it would judge (git "
                "tracks it), not an installed failgate: install failgate in an environment "
                "the repository does not hold (pip install pytest-failgate), or remove that "
                "folder from the repository")
    how = "git tracks it" if tracked else "importable because its folder is on the path"
    return (f"this failgate is the folder {here} of the checkout it would judge ({how}), "
            f"not the installed failgate: {instead}, or rename the folder")


def _editable_source(here: Path, top: Path) -> bool:
    """Whether ``here`` is the source of an editable install recorded by an installer
    outside the repository's own files (a record the checkout holds proves nothing)."""
    from importlib import metadata

    for distribution in metadata.distributions(name=DISTRIBUTION):
        if distribution.read_text("INSTALLER") is None:
            continue
        record = distribution.read_text("direct_url.json")
        source = _source(record) if record is not None else None
        where = Path(str(distribution.locate_file(""))).resolve()
        kept = where.is_relative_to(top) and (where.name not in SITE_FOLDERS
                                              or _tracked(where, top))
        return (source is not None and source[0] == "editable" and not kept
                and here.is_relative_to(Path(source[1]).resolve()))
    return False


def _tracked(path: Path, top: Path) -> bool:
    """Whether git tracks a file under ``path`` in the repository at ``top`` (no git, or
    no repository: nothing is tracked)."""
    import subprocess

    try:
        done = subprocess.run(["git", "ls-files", "-z", "--", str(path)], cwd=top,
                              capture_output=True, check=False, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and bool(done.stdout.strip(b"\0"))
