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
