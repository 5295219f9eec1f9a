"""The configuration CI runs pytest with: the ini file, and ``PYTEST_ADDOPTS`` a CI file sets.

pytest reads ``PYTEST_ADDOPTS`` after the ini file's ``addopts``, and an ``-o key=value``
among either replaces the ini key (``core.base.inifile``). A CI file that sets it changes
what the gate reads in CI without touching the ini file. The guard compares each such
configuration, a **context**, at the ref and now: the ini file alone (``""``), and the ini
file with each CI file's ``PYTEST_ADDOPTS`` words (and failgate's options on its command
lines and Action inputs) after its ``addopts``. failgate's own options among those words
(``--failgate-ceilings=loose.yaml``, ``--failgate-noise``, ``--failgate=...``: every option
of the table that moves a verdict) and ``-o failgate_KEY=...`` are read as the settings
they set.

Which CI files are read, and how, is ``cifiles``'s job.
"""

from __future__ import annotations

import posixpath
import shlex
from typing import TYPE_CHECKING

from ..base.inifile import IniFile, configured_ceilings
from .cifiles import ci_addopts
from .routes import config_at

if TYPE_CHECKING:
    from .gitref import Tree
    from .settings import Table


def contexts(tree: Tree, start: str, table: Table) -> dict[str, IniFile]:
    """Each configuration CI may run pytest with, by where it is set (``""``: the ini file
    alone; else the workflow file's path)."""
    ini = config_at(tree, start)
    found = {"": with_options(ini.with_args(ini.addopts()), table)}
    for workflow, words in ci_addopts(tree, table).items():
        merged = IniFile(ini.rootdir, ini.path, {**ini.values, "addopts": [*ini.addopts(),
                                                                           *words]},
                         ini.mode, ini.overridden)
        found[workflow] = with_options(merged.with_args(merged.addopts()), table)
    return found


def with_options(ini: IniFile, table: Table) -> IniFile:
    """The configuration with failgate's own options among its ``addopts`` words read as
    the settings they beat (``--failgate-ceilings=loose.yaml`` is ``failgate_ceilings``,
    ``--failgate-strict`` turns ``failgate_strict`` on), as pytest reads them."""
    words = ini.addopts()
    settings, switches, many = table.setting_flags(), table.switches(), table.repeatable()
    found: dict[str, list[str]] = {}
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        name, equals, value = word.partition("=")
        key = settings.get(name)
        if key is None:
            continue
        if key in switches:
            found[key] = ["true"]
        elif equals:
            found.setdefault(key, []).append(value)
        elif index < len(words):
            found.setdefault(key, []).append(words[index])
            index += 1
    if not found:
        return ini
    args = [f"{key}={shlex.join(values) if key in many else values[-1]}"
            for key, values in found.items()]
    return ini.with_args([word for arg in args for word in ("-o", arg)])


def ceilings_place(tree: Tree, ini: IniFile) -> str:
    """The ceilings file a configuration names, relative to the top of ``tree``."""
    path = configured_ceilings(ini)
    return tree.relative(path) or posixpath.normpath(posixpath.relpath(path.as_posix(),
                                                                       tree.top.as_posix()))

