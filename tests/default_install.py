"""An environment holding failgate as a reader's ``pip install pytest-failgate`` does.

The runnable docs must run where a reader runs them: with failgate's runtime dependencies
(and an extra's, where the page installs one) and nothing of the test extra, so a block
that needs a test-only package (``hypothesis``, ``pytest-xdist``, a conftest.py of the test
suite that imports one) fails here as it fails for the reader. Without the network, the
environment is a new virtual environment (``venv --without-pip``) into which exactly the
distributions of that dependency closure are linked from the environment running the
tests, failgate's own included (as installed: a wheel's package, or an editable install's
path hook), with their console scripts (``failgate``, ``pytest``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

DISTRIBUTION = "pytest-failgate"


def closure(extras: tuple[str, ...] = ()) -> list[metadata.Distribution]:
    """failgate's distribution and every one its runtime requirements (with ``extras``)
    need, as installed here; a requirement not installed here is an error."""
    found: dict[str, metadata.Distribution] = {}
    wanted: list[tuple[str, tuple[str, ...]]] = [(DISTRIBUTION, extras)]
    while wanted:
        name, asked = wanted.pop()
        key = canonicalize_name(name)
        if key in found and not asked:
            continue
        dist = metadata.distribution(name)
        found[key] = dist
        for text in dist.requires or []:
            requirement = Requirement(text)
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": extra})
                                     for extra in ("", *asked)):
                wanted.append((requirement.name, tuple(sorted(requirement.extras))))
    return list(found.values())


def _top_level(dist: metadata.Distribution) -> set[Path]:
    """What a distribution put into site-packages (its packages, modules, ``.pth`` files and
    metadata folder), as paths there."""
    tops = set()
    for file in dist.files or []:
        parts = Path(file).parts
        if parts and parts[0] not in ("..", "__pycache__"):
            tops.add(Path(str(dist.locate_file(parts[0]))))
    return tops


def create(folder: Path, extras: tuple[str, ...] = ()) -> Path:
    """A virtual environment in ``folder`` with the closure linked in; its ``bin``."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True,
                   capture_output=True, timeout=120)
    scheme = {"base": str(folder), "platbase": str(folder)}
    site = Path(sysconfig.get_path("purelib", vars=scheme))
    bin_dir = Path(sysconfig.get_path("scripts", vars=scheme))
    python = bin_dir / "python"
    for dist in closure(extras):
        for top in _top_level(dist):
            if top.exists() and not (site / top.name).exists():
                os.symlink(top, site / top.name)
        for point in dist.entry_points.select(group="console_scripts"):
            module, _, attribute = point.value.partition(":")
            script = bin_dir / point.name
            script.write_text(
                f"#!{python}\nimport sys\nfrom {module} import {attribute.split('.')[0]}\n"
                f"sys.exit({attribute}())\n", encoding="utf-8")
            script.chmod(0o755)
    return bin_dir
