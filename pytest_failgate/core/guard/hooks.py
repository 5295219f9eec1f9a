"""Hooks that can change outcomes or the exit status, added or edited by the change.

A ``conftest.py`` with a ``trylast`` ``pytest_sessionfinish`` that sets
``session.exitstatus = 0`` turns a failed gate into a green check without touching the
ceilings file: pytest prints "1 failed" and exits 0. What code does cannot be ranked looser
or tighter, so the guard names every file of the repository pytest loads as a plugin (each
``conftest.py``, a module named by ``pytest_plugins``, ``-p NAME`` in ``addopts`` or a CI
file's options, a ``pytest11`` entry point of the project, a module of the repository a
``conftest.py`` imports, which may register its hooks) that this change adds or edits
and that defines such a hook (``OUTCOME_HOOKS``, or any hook wrapper), or whose code
reaches past its hooks (``REACH``: ``atexit.register(lambda: os._exit(0))`` at import
leaves the process with 0 after pytest returned 1, and ``__import__`` or ``sys.modules``
finds failgate's modules to replace their code without naming failgate, in a file that
defines no hook at all); the ceilings file's top-level ``reason``, written in this change,
excuses it. A file Python runs at its start (``sitecustomize.py``, a ``.pth`` file: see
``STARTUP``) is named whatever it holds, and a test module pytest collects by default,
added or edited, when its code ends the process or reaches failgate's (``_TEST_REACH``:
its top level runs at collection). The files are read as syntax
(``ast``), never imported: importing a pull request's code would run it. A file that does
not parse is named too (pytest would refuse it, or another Python would read it).
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
from typing import TYPE_CHECKING

from ..base.errors import FailgateError
from ..base.inifile import _toml
from .enforced import Change
from .routes import _plugin_path, digest

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..base.inifile import IniFile
    from .gitref import Tree

# The hooks whose implementation can turn a failure into a pass, drop an item, or replace
# the exit status: the session's end, each test's report and status, the collection, the
# summary, the protocol that runs each item, the configuration's start and end.
OUTCOME_HOOKS = frozenset({
    "pytest_sessionfinish", "pytest_sessionstart", "pytest_runtest_makereport",
    "pytest_runtest_logreport", "pytest_report_teststatus", "pytest_collection_modifyitems",
    "pytest_collection", "pytest_collection_finish", "pytest_collect_file",
    "pytest_pycollect_makeitem", "pytest_ignore_collect", "pytest_deselected",
    "pytest_terminal_summary", "pytest_unconfigure", "pytest_configure",
    "pytest_runtest_protocol", "pytest_runtest_setup", "pytest_runtest_call",
    "pytest_runtest_teardown", "pytest_pyfunc_call", "pytest_cmdline_main",
    "pytest_plugin_registered", "pytest_load_initial_conftests", "pytest_exception_interact",
    "pytest_keyboard_interrupt", "pytest_internalerror",
})
# What code needs to reach past the hooks pytest calls it through: leave the process with a
# status of its choosing (after pytest has returned its own), or find another module's code
# (failgate's) and replace it without writing its name; as a name, an attribute, an
# imported module or a string (``getattr(os, "_exit")``). Said as "uses NAME".
REACH = frozenset({
    "_exit", "exit", "quit", "abort", "SystemExit", "atexit", "kill", "killpg", "signal",
    "execv", "execve", "execl", "execle", "execlp", "execvp", "execvpe", "fork",
    "__import__", "import_module", "importlib", "modules", "exec", "eval", "setattr",
    "delattr", "getattr", "vars", "globals", "__dict__", "__globals__", "__subclasses__",
    "__class__", "__code__", "__builtins__", "builtins", "gc", "ctypes", "pluginmanager",
    "exitstatus", "testsfailed", "shouldfail", "shouldstop",
})
_WRAPPERS = ("hookwrapper", "wrapper")
_SHOWN = 4


def hook_changes(trees: tuple[Tree, Tree], inis: Iterable[IniFile], reason: str | None
                 ) -> list[Change]:
    """Each plugin file of the repository the change adds or edits that defines a hook
    which can change outcomes or the exit status (``trees``: the ref's and the change's;
    ``inis``: the configurations the change's runs read, for their ``-p`` plugins)."""
    base, work = trees
    inis = list(inis)
    changes = []
    startup = startup_files(work)
    plugins = plugin_sources(work, inis)
    for relative in sorted(plugins | startup | test_modules(work, base)):
        text = work.read(relative)
        if text is None:
            continue
        hooks = outcome_hooks(text) if relative.endswith(".py") else []
        if relative not in plugins | startup:  # a test module: no plugin, its code runs
            hooks = [name for name in hooks if name in _TEST_REACH] + (
                [_USES + PACKAGE] if PACKAGE in text else [])
        if not hooks and relative not in startup:
            continue
        before = base.read(relative)
        if before is not None and digest(before) == digest(text):
            continue
        said = _said(hooks) if relative not in startup else _STARTUP_SAID
        changes.append(Change(
            f"hook {relative}", "none" if before is None else f"source {digest(before)}",
            f"source {digest(text)} {said}: can change outcomes or the exit status",
            None, reason))
    return changes


# Files the interpreter itself runs when it starts, before pytest or failgate: a
# ``sitecustomize`` or ``usercustomize`` module, and a ``.pth`` file (whose ``import``
# lines run), wherever their folder is on the path (``PYTHONPATH: .`` in a workflow, an
# editable install's folder). Whatever they hold is named: they need no hook to end the
# process with 0 after pytest returned 1.
STARTUP = ("sitecustomize.py", "usercustomize.py")
_STARTUP_SAID = ("runs at every start of Python whose path holds its folder (PYTHONPATH, "
                 "an editable install)")


# What a test module's code (run when pytest collects it: its top level, its tests, its
# fixtures) needs to end the process with 0 after pytest returned 1, or to find failgate's
# code without naming it; the rest of ``REACH`` (``getattr``, ``setattr``, ``sys.modules``)
# is what tests do every day, and a test module's hooks are not loaded.
_TEST_REACH = frozenset("uses " + name for name in (  # ``_USES``
    "_exit", "atexit", "execv", "execve", "execl", "execle", "execlp", "execvp", "execvpe",
    "kill", "killpg", "__import__", "import_module", "exitstatus"))
PACKAGE = "pytest_failgate"  # failgate's code, named in a test module: said as used
# the module names pytest collects by default (``python_files``)
_TEST_MODULE = re.compile(r"(?:test_[^/]*|[^/]*_test)\.py")


def test_modules(tree: Tree, base: Tree) -> set[str]:
    """The repository's modules pytest collects by default (``test_*.py``, ``*_test.py``)
    that differ from ``base`` (one git call, not one a module), an installed package's
    left out."""
    from .gitref import git

    listed = [git(["diff", "--name-only", "-z", str(base.ref), "--"], tree.top),
              git(["ls-files", "-z", "--others", "--exclude-standard"], tree.top)]
    changed = {path for done in listed if done.returncode == 0
               for path in done.stdout.split("\0") if path}
    return {relative for relative in changed
            if _TEST_MODULE.fullmatch(posixpath.basename(relative))
            and "site-packages" not in relative.split("/")}


def startup_files(tree: Tree) -> set[str]:
    """The repository's files Python runs at its start (``STARTUP`` modules, ``.pth``
    files), an installed package's (a virtual environment git does not ignore) left out."""
    return {relative for relative in tree.under(".")
            if (posixpath.basename(relative) in STARTUP or relative.endswith(".pth"))
            and "site-packages" not in relative.split("/")}


def plugin_sources(tree: Tree, inis: Iterable[IniFile]) -> set[str]:
    """The repository files pytest loads as plugins in ``tree``: every ``conftest.py``,
    the modules they name in ``pytest_plugins``, ``-p`` modules and ``pytest11`` entry
    points that are files of the repository."""
    inis = list(inis)
    # an installed package's conftest.py (a virtual environment git does not ignore) is
    # not the project's: pytest does not collect it
    found = {relative for relative in tree.files("conftest.py")
             if "site-packages" not in relative.split("/")}
    specs: list[str] = []
    for relative in sorted(found):
        text = tree.read(relative) or ""
        specs += _pytest_plugins(text)
        # a module the conftest imports can hold the hooks it registers
        specs += [str(tree.top / name) if name.endswith(".py") else name
                  for name in _imported(text, posixpath.dirname(relative))]
    for ini in inis:
        specs += _p_options(ini.addopts())
    specs += _entry_points(tree)
    for spec in specs:
        if spec.startswith("no:"):
            continue
        for ini in inis[:1]:
            module = _plugin_path(tree, ini, spec)
            if module is not None:
                found.add(module)
    return found


def _said(found: list[str]) -> str:
    """``defines A, B; uses C``: the hooks first, then what the code reaches for."""
    parts = []
    for verb, names in (("defines", [n for n in found if not n.startswith(_USES)]),
                        ("uses", [n[len(_USES):] for n in found if n.startswith(_USES)])):
        if names:
            parts.append(f"{verb} " + ", ".join(names[:_SHOWN])
                         + (", ..." if len(names) > _SHOWN else ""))
    return "; ".join(parts)


_USES = "uses "


def outcome_hooks(text: str) -> list[str]:
    """The outcome hooks and hook wrappers a module's source defines (functions at any
    depth, a class's methods included, and names assigned), in source order, then each
    ``REACH`` name its code uses (``"uses atexit"``); a source that does not parse is
    ``["(does not parse)"]``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ["(does not parse)"]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name in OUTCOME_HOOKS or any(_wraps(d) for d in node.decorator_list):
                found.append((node.lineno, node.name))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [(node.lineno, t.id) for t in targets
                      if isinstance(t, ast.Name) and t.id in OUTCOME_HOOKS]
    reached: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        for name in _names(node):
            if name in REACH:
                reached.append((getattr(node, "lineno", 0), _USES + name))
    return list(dict.fromkeys(name for _, name in [*sorted(found), *sorted(reached)]))


def _names(node: ast.AST) -> list[str]:
    """The names a node spells: a name, an attribute, each part of an imported module and
    its imported names, a string constant."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Import | ast.ImportFrom):
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [
            node.module or "", *(a.name for a in node.names)]
        return [part for module in modules for part in module.split(".")]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    return []


def _wraps(decorator: ast.expr) -> bool:
    """``@hookimpl(hookwrapper=True)`` or ``wrapper=True``, however the marker is named."""
    if not isinstance(decorator, ast.Call):
        return False
    return any(keyword.arg in _WRAPPERS and not (isinstance(keyword.value, ast.Constant)
                                                  and keyword.value.value is False)
               for keyword in decorator.keywords)


def _pytest_plugins(text: str) -> list[str]:
    """The module names a conftest's ``pytest_plugins = ...`` gives (a string or a list)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in tree.body:
        if not isinstance(node, ast.Assign) or not any(
                isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets):
            continue
        values = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [
            node.value]
        names += [v.value for v in values if isinstance(v, ast.Constant)
                  and isinstance(v.value, str)]
    return names


def _imported(text: str, folder: str) -> list[str]:
    """The modules a source imports (``import a.b``, ``from a import b``: ``a.b`` and
    ``a``), a relative import as a path from ``folder`` (``from . import gatefix``)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = posixpath.normpath(posixpath.join(folder, *[".."] * (node.level - 1)))
                module = posixpath.join(base, *(node.module or "").split("."))
                names += [f"{posixpath.join(module, a.name)}.py" for a in node.names]
                names.append(f"{module.rstrip('/')}.py" if node.module else "")
            elif node.module:
                names.append(node.module)
                names += [f"{node.module}.{alias.name}" for alias in node.names]
    return [name for name in names if name]


def _p_options(words: list[str]) -> list[str]:
    found = []
    for index, word in enumerate(words):
        if word == "-p" and index + 1 < len(words):
            found.append(words[index + 1])
        elif word.startswith("-p") and len(word) > 2:
            found.append(word[2:].lstrip("="))
    return found


def _entry_points(tree: Tree) -> list[str]:
    """The modules the project's ``pytest11`` entry points name (``pyproject.toml``'s
    ``[project.entry-points.pytest11]``, ``setup.cfg``'s ``[options.entry_points]``)."""
    found: list[str] = []
    text = tree.read("pyproject.toml")
    if text is not None:
        try:
            data = _toml(tree.top / "pyproject.toml", text)
        except FailgateError:
            data = {}
        project = data.get("project")
        points = project.get("entry-points") if isinstance(project, dict) else None
        group = points.get("pytest11") if isinstance(points, dict) else None
        if isinstance(group, dict):
            found += [str(value) for value in group.values()]
    text = tree.read("setup.cfg")
    if text is not None:
        parser = configparser.ConfigParser()
        try:
            parser.read_string(text)
            lines = parser.get("options.entry_points", "pytest11", fallback="")
        except configparser.Error:
            lines = ""
        found += [line.partition("=")[2] for line in lines.splitlines() if "=" in line]
    return [value.strip().partition(":")[0].strip() for value in found if value.strip()]
