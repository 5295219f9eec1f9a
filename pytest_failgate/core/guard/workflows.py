"""The configuration CI runs pytest with: the ini file, and ``PYTEST_ADDOPTS`` a CI file sets.

pytest reads ``PYTEST_ADDOPTS`` after the ini file's ``addopts``, and an ``-o key=value``
among either replaces the ini key (``core.base.inifile``). A CI file that sets it changes
what the gate reads in CI without touching the ini file. The guard compares each such
configuration, a **context**, at the ref and now: the ini file alone (``""``), and the ini
file with each CI file's ``PYTEST_ADDOPTS`` words after its ``addopts``. failgate's own
options among those words (``--failgate-ceilings=loose.yaml``, ``--failgate-noise``,
``--failgate=...``) are read as the settings they beat.

The CI files read (``CI_FILES``, ``CI_FOLDERS``): GitHub workflows, GitLab CI (with its
``.gitlab/`` includes), CircleCI, Azure Pipelines, Travis CI, Bitbucket Pipelines, and
Jenkins pipelines. In a YAML file, ``PYTEST_ADDOPTS`` is a key of any mapping (``env:``,
``variables:``, ``environment:``, at any level; GitLab's ``{value: ...}`` form; Azure's
``- name: PYTEST_ADDOPTS`` items) or an assignment in any string (a ``run:`` or
``script:`` line, a Travis ``env:`` entry). In a Jenkinsfile (Groovy), it is an
assignment (``environment { PYTEST_ADDOPTS = '...' }``, ``withEnv(['PYTEST_ADDOPTS=...'])``,
``sh 'PYTEST_ADDOPTS=... pytest'``).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import TYPE_CHECKING, Any

from ..base.errors import FailgateError
from ..base.inifile import IniFile, configured_ceilings
from ..base.yamlsource import load_yaml
from .routes import config_at

if TYPE_CHECKING:
    from .gitref import Tree

WORKFLOWS = ".github/workflows"
ENV = "PYTEST_ADDOPTS"
# CI systems' files: single files at known places, and folders of YAML files
CI_FILES = (".gitlab-ci.yml", ".circleci/config.yml", "azure-pipelines.yml",
            ".travis.yml", "bitbucket-pipelines.yml", "Jenkinsfile")
CI_FOLDERS = (WORKFLOWS, ".gitlab", ".azure-pipelines")
# An assignment of PYTEST_ADDOPTS in a shell line or a Jenkinsfile, leftmost first:
# `'PYTEST_ADDOPTS=value'` (a quoted assignment, as withEnv writes it), or
# `PYTEST_ADDOPTS=value` / `PYTEST_ADDOPTS = 'value'` with a quoted value or one word.
# Linear: no nested quantifiers.
_ASSIGNED = re.compile(r"([\"'])PYTEST_ADDOPTS=([^\"'\n]*)\1"
                       r"|PYTEST_ADDOPTS[ \t]*=[ \t]*(\"[^\"\n]*\"|'[^'\n]*'|[^\s;&|'\"]+)")
_MAX_NODES = 100_000
# failgate's options that settle what is gated, by the ini key each one beats
_SETTING = {f"--failgate{'-' + name if name else ''}": f"failgate{'_' + name if name else ''}"
            .replace("-", "_")
            for name in ("", "ceilings", "noise", "baseline", "plugins", "strict",
                         "exclude-unstable", "max-report-bytes", "engine")}
_FLAGS = ("failgate_strict", "failgate_exclude_unstable")
_MANY = ("failgate", "failgate_baseline", "failgate_plugins")  # repeatable: all of them


def contexts(tree: Tree, start: str) -> dict[str, IniFile]:
    """Each configuration CI may run pytest with, by where it is set (``""``: the ini file
    alone; else the workflow file's path)."""
    ini = config_at(tree, start)
    found = {"": with_options(ini)}
    for workflow, words in ci_addopts(tree).items():
        merged = IniFile(ini.rootdir, ini.path, {**ini.values, "addopts": [*ini.addopts(),
                                                                           *words]},
                         ini.mode, ini.overridden)
        found[workflow] = with_options(merged.with_args(merged.addopts()))
    return found


def with_options(ini: IniFile) -> IniFile:
    """The configuration with failgate's own options among its ``addopts`` words read as
    the settings they beat (``--failgate-ceilings=loose.yaml`` is ``failgate_ceilings``,
    ``--failgate-strict`` turns ``failgate_strict`` on), as pytest reads them."""
    words = ini.addopts()
    found: dict[str, list[str]] = {}
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        name, equals, value = word.partition("=")
        key = _SETTING.get(name)
        if key is None:
            continue
        if key in _FLAGS:
            found[key] = ["true"]
        elif equals:
            found.setdefault(key, []).append(value)
        elif index < len(words):
            found.setdefault(key, []).append(words[index])
            index += 1
    if not found:
        return ini
    args = [f"{key}={shlex.join(values) if key in _MANY else values[-1]}"
            for key, values in found.items()]
    return ini.with_args([word for arg in args for word in ("-o", arg)])


def ceilings_place(tree: Tree, ini: IniFile) -> str:
    """The ceilings file a configuration names, relative to the top of ``tree``."""
    path = configured_ceilings(ini)
    return tree.relative(path) or posixpath.normpath(posixpath.relpath(path.as_posix(),
                                                                       tree.top.as_posix()))


def ci_files(tree: Tree) -> list[str]:
    """The CI files of the repository (``CI_FILES``, and the YAML files of ``CI_FOLDERS``)."""
    found = [relative for folder in CI_FOLDERS for relative in tree.under(folder)
             if relative.endswith((".yml", ".yaml"))]
    found += [relative for relative in CI_FILES if tree.read(relative) is not None]
    return sorted(set(found))


def ci_addopts(tree: Tree) -> dict[str, list[str]]:
    """The ``PYTEST_ADDOPTS`` words each CI file sets (in file order), by its path."""
    found: dict[str, list[str]] = {}
    for relative in ci_files(tree):
        text = tree.read(relative)
        if text is None:
            continue
        values = (assigned(text) if relative.endswith("Jenkinsfile")
                  else _values(tree, relative, text))
        words = [word for value in values for word in _split(value)]
        if words:
            found[relative] = words
    return found


def assigned(text: str) -> list[str]:
    """The values ``PYTEST_ADDOPTS`` is assigned in a shell line or a Jenkinsfile."""
    return [match.group(2) if match.group(1) else _unquote(match.group(3))
            for match in _ASSIGNED.finditer(text)]


def _values(tree: Tree, relative: str, text: str) -> list[str]:
    """Every ``PYTEST_ADDOPTS`` value of a YAML CI file: a key of any mapping, an Azure
    ``{name: PYTEST_ADDOPTS, value: ...}`` item, or an assignment in any string."""
    try:
        data = load_yaml(tree.top / relative, text).data
    except FailgateError as exc:
        raise FailgateError(f"{tree.label}: {exc}") from None
    values: list[str] = []
    stack: list[Any] = [data]
    seen = 0
    while seen < min(len(stack), _MAX_NODES):  # breadth first, in file order
        node = stack[seen]
        seen += 1
        if isinstance(node, dict):
            if node.get("name") == ENV and _scalar(node.get("value")):
                values.append(str(node["value"]))
                continue
            for key, value in node.items():
                if key == ENV and isinstance(value, dict) and _scalar(value.get("value")):
                    values.append(str(value["value"]))  # GitLab's {value:, description:}
                elif key == ENV and _scalar(value):
                    values.append(str(value))
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str):
            values += assigned(node)
    return values


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _unquote(value: str) -> str:
    return value[1:-1] if value[:1] in ("'", '"') else value


def _split(value: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError:
        return [value]
