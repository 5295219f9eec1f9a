"""What CI files tell pytest: the ``PYTEST_ADDOPTS`` they set and failgate's options they pass.

A CI file can change what the gate reads in CI without touching the ini file: by setting
``PYTEST_ADDOPTS`` (read after ``addopts``), or by passing options on the command line that
runs the gate (``pytest --failgate-ceilings=loose.yaml``, ``failgate check --ceilings
loose.yaml``). ``ci_addopts`` gives, for each CI file, those words in file order; the guard
reads them after the ini file's ``addopts`` (``workflows.contexts``).

The files read (``CI_FILES``, ``CI_FOLDERS``): GitHub workflows and composite actions,
GitLab CI (its ``.gitlab/`` files and the local files it ``include:``\\ s), CircleCI, Azure
Pipelines (and the templates it names), Travis CI, Bitbucket Pipelines, Jenkins pipelines,
tox, nox and a top-level Makefile. In a YAML file, ``PYTEST_ADDOPTS`` is a key of any mapping
(``env:``, ``variables:``, ``environment:``; GitLab's ``{value: ...}``; Azure's ``- name:``
items) or an assignment in any string (a ``run:`` or ``script:`` line, a Travis ``env:``
entry, ``echo ... >> $GITHUB_ENV``, Azure's ``##vso[task.setvariable ...]``). In other
files, an assignment: a shell or Groovy one (``environment { PYTEST_ADDOPTS = '...' }``,
``withEnv(['PYTEST_ADDOPTS=...'])``), an ini or Makefile line (``PYTEST_ADDOPTS = ...``
to the end of the line), a Python mapping entry (``{"PYTEST_ADDOPTS": "..."}``). A Groovy
``${name}`` in a value is replaced by the file's own ``def name = '...'``. A YAML file the
strict loader refuses (a merge key ``<<``) is read as text, line by line, not refused.
Values built at run time elsewhere (a CI variable set in the CI system's settings) are not
in the repository: the gate's own run catches what they do (``failgate_guard`` in pytest).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import TYPE_CHECKING, Any

from ..base.errors import FailgateError
from ..base.yamlsource import load_yaml

if TYPE_CHECKING:
    from .gitref import Tree
    from .settings import Table

ENV = "PYTEST_ADDOPTS"
# A CI file that sets this (to any non-empty value, as pytest reads it) loads no installed
# plugin, failgate's among them: the gate is off as with ``-p no:failgate``, and its
# context gets this word after ``addopts`` (``routes.selection`` names it)
AUTOLOAD = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
AUTOLOAD_OFF = f"{AUTOLOAD}=1"
# its assignment in a shell line, an ini ``setenv``, a Makefile, Python or YAML read as text
_AUTOLOAD_SET = re.compile(rf"{AUTOLOAD}[\"']?\]?[ \t]*(?:[:?+]?=|:)[ \t]*([\"']?)"
                           r"([^\s\"';&|,}]*)\1")
CI_FILES = (".gitlab-ci.yml", ".circleci/config.yml", "azure-pipelines.yml",
            ".travis.yml", "bitbucket-pipelines.yml", "Jenkinsfile", "tox.ini",
            "noxfile.py", "Makefile")
CI_FOLDERS = (".github/workflows", ".github/actions", ".gitlab", ".azure-pipelines")
_YAML = (".yml", ".yaml")
_MAX_NODES = 100_000
_MAX_FILES = 64  # included files followed, per CI file
_SHOWN_LINE = 120  # characters of a CI file's line a message shows
_USES = re.compile(r"^[ \t-]*uses:[ \t]*[\"']?([^\s\"']+)")
_INPUT = re.compile(r"^[ \t]*([\w-]+):[ \t]*(\S.*)$")  # an input on one line
# An assignment in a shell line or Groovy, leftmost first: `'PYTEST_ADDOPTS=value'` (as
# withEnv writes it), `PYTEST_ADDOPTS=value` / `PYTEST_ADDOPTS = "value"` (a quoted value
# or one word), or Azure's logging command. Linear: no nested quantifiers.
_ASSIGNED = re.compile(r"([\"'])PYTEST_ADDOPTS=([^\"'\n]*)\1"
                       r"|PYTEST_ADDOPTS[ \t]*=[ \t]*(\"[^\"\n]*\"|'[^'\n]*'|[^\s;&|'\"]+)"
                       r"|task\.setvariable variable=PYTEST_ADDOPTS[^\]\n]*\]([^\n\"']*)")
# `PYTEST_ADDOPTS = value` to the end of a line (ini setenv, Makefile, YAML as text)
_LINE = re.compile(r"^[ \t]*(?:export[ \t]+)?PYTEST_ADDOPTS[ \t]*(?:[:?+]?=|:)[ \t]*(.+)$",
                   re.MULTILINE)
# a Python mapping entry: "PYTEST_ADDOPTS": "value"
_PYTHON = re.compile(r"[\"']PYTEST_ADDOPTS[\"'][ \t]*[:\]][ \t]*=?[ \t]*([\"'])([^\"'\n]*)\1")
_GROOVY_DEF = re.compile(r"(?:def|String)[ \t]+(\w+)[ \t]*=[ \t]*([\"'])([^\"'\n]*)\2")
# a command that runs the gate: pytest (python -m pytest, a path to it), failgate's own
# (a path to it, python -m pytest_failgate) or its CI step (python -m pytest_failgate.ci)
_COMMAND = re.compile(r"(?:^|[\s;&|(`'\"])(?:[^\s;&|(`'\"]*/)?"
                      r"(pytest|py\.test|failgate|pytest_failgate(?:\.__main__)?"
                      r"|pytest_failgate\.ci(?:\.__main__)?)(?=\s)")
# the CI step's own arguments, in the words of the option they set (--check-arg: a word
# of its check)
_CI_STEP = {"--guard-base": "--failgate-guard", "--check-arg": ""}
# the CI step gates its positional reports as ``failgate check`` does
CI_STEP_COMMAND = "check"
# failgate's (and the CI step's) on/off options outside the table: they take no value
_CLI_SWITCHES = ("--force", "--github", "--version", "--allow-plugins", "--help", "-h")
# the repository name of failgate's Action (``uses: owner/pytest-failgate@v1``)
_ACTION = "pytest-failgate"
# pytest options that change the configuration read (PYTEST_ADDOPTS-like)
_CONFIG_OPTIONS = ("-c", "--config-file", "--rootdir", "--confcutdir", "-p")


def ci_files(tree: Tree) -> dict[str, str]:
    """The CI files of the repository (``CI_FILES``, and the YAML files of ``CI_FOLDERS``)
    with their text, each read once (at a ref, each read is a git call)."""
    places = [relative for folder in CI_FOLDERS for relative in tree.under(folder)
              if relative.endswith(_YAML)]
    found = {}
    for relative in sorted({*places, *CI_FILES}):
        text = tree.read(relative)
        if text is not None:
            found[relative] = text
    return found


def ci_addopts(tree: Tree, table: Table) -> dict[str, list[str]]:
    """The words each CI file gives pytest after ``addopts`` (in file order), by its path:
    its ``PYTEST_ADDOPTS``, and failgate's options on its command lines and in the inputs of
    failgate's Action, in pytest's spelling (``table``: the option table)."""
    found: dict[str, list[str]] = {}
    for relative, text in ci_files(tree).items():
        words = [word for value in _file_values(tree, relative, text, table)
                 for word in _split(value)]
        if words:
            found[relative] = words
    return found


def ci_origins(tree: Tree, table: Table) -> dict[str, dict[str, str]]:
    """For each CI file, where each setting it gives the gate is written: ini key (or
    ``addopts`` for pytest's configuration options) -> ``path:line (the line)``, the first
    line that sets it (a command line, a ``PYTEST_ADDOPTS`` assignment, an input of
    failgate's Action written on one line). A setting only a structure gives (a value over
    several lines, an included file) has none: the file is named."""
    found: dict[str, dict[str, str]] = {}
    for relative, text in ci_files(tree).items():
        places: dict[str, str] = {}
        action: int | None = None  # inside failgate's Action step: the indent of its keys
        for number, line in enumerate(text.splitlines(), 1):
            indent = len(line) - len(line.lstrip(" "))
            if action is not None and line.strip() and indent < action:
                action = None
            uses = _USES.match(line)
            if uses is not None and _action_step({"uses": uses.group(1), "with": {}}):
                action = len(line) - len(line.lstrip(" -"))
                continue
            words: list[str] = []
            if action is not None and (given := _INPUT.match(line)) is not None:
                name, value = given.group(1), _unquote(given.group(2).strip())
                words = (gate_words(_split(value), table, cli=True, command=CI_STEP_COMMAND)
                         if name == "args" else table.action_words({name: value}))
            elif ENV in line or AUTOLOAD in line or _COMMAND.search(line + " ") is not None:
                words = [word for value in _text_values(line, table)
                         for word in _split(_unquote(value.strip()))]
            for key in setting_keys(words, table):
                shown = line.strip()
                shown = shown if len(shown) <= _SHOWN_LINE else shown[:_SHOWN_LINE] + "..."
                places.setdefault(key, f"{relative}:{number} ({shown})")
        found[relative] = places
    return found


def setting_keys(words: list[str], table: Table) -> list[str]:
    """The ini keys gate words set (``addopts``: pytest's own configuration options)."""
    flags = table.setting_flags()
    keys: list[str] = []
    for index, word in enumerate(words):
        name = word.partition("=")[0]
        if name in flags:
            keys.append(flags[name])
        elif word in ("-o", "--override-ini") and index + 1 < len(words):
            keys.append(words[index + 1].partition("=")[0])
        elif word.startswith("-o") and len(word) > 2 and not word.startswith("--"):
            keys.append(word[2:].partition("=")[0].strip())
        elif name in _CONFIG_OPTIONS or word.startswith("-pno:") or word == AUTOLOAD_OFF:
            keys.append("addopts")
    return keys


def _file_values(tree: Tree, relative: str, text: str, table: Table) -> list[str]:
    if relative.endswith(_YAML):
        return _yaml_values(tree, relative, text, table)
    if relative.endswith("Jenkinsfile"):
        text = _groovy_substituted(text)
    values = _text_values(text, table)
    if relative.endswith(".py"):
        values += [match.group(2) for match in _PYTHON.finditer(text)]
    return values


def _text_values(text: str, table: Table) -> list[str]:
    """A file read as text: whole-line assignments, then the other assignments (of the
    lines left) and the gate's command lines."""
    lines = [match.group(1).strip() for match in _LINE.finditer(text)]
    return (lines + assigned(_LINE.sub("", text)) + command_options(text, table)
            + autoload_off(text))


def autoload_off(text: str) -> list[str]:
    """``[AUTOLOAD_OFF]`` when ``text`` sets ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` to a value
    pytest reads as on (any but the empty string)."""
    return [AUTOLOAD_OFF] if any(match.group(2) for match in _AUTOLOAD_SET.finditer(text)
                                 ) else []


def assigned(text: str) -> list[str]:
    """The values ``PYTEST_ADDOPTS`` is assigned in a shell line or Groovy."""
    values = []
    for match in _ASSIGNED.finditer(text):
        if match.group(1):
            values.append(match.group(2))
        elif match.group(3) is not None:
            values.append(_unquote(match.group(3)))
        else:
            values.append(match.group(4).strip())
    return values


def command_options(text: str, table: Table) -> list[str]:
    """failgate's options (and the configuration-changing ones of pytest) passed on the
    command lines in ``text`` that run pytest or ``failgate``, as pytest spells them (a
    failgate command's ``--margin 100`` is ``--failgate-margin 100``: every option of the
    table a command takes, so a new row is read here by its name)."""
    found: list[str] = []
    for line in text.replace("\\\n", " ").splitlines():
        for match in _COMMAND.finditer(line):
            words = _split(re.split(r"[;&|]", line[match.end():], maxsplit=1)[0])
            program = match.group(1)
            command = None
            if program.startswith("pytest_failgate.ci"):
                words, command = _ci_step_words(words), CI_STEP_COMMAND
            found += gate_words(words, table, cli=program.startswith(("failgate",
                                                                       "pytest_failgate")),
                                command=command)
    return found


def _ci_step_words(words: list[str]) -> list[str]:
    """The CI step's words as a failgate command's: ``--guard-base REF`` is the guard's
    setting, ``--check-arg ARG`` is ARG given to its check."""
    out: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        name, equals, value = word.partition("=")
        if name not in _CI_STEP:
            out.append(word)
            continue
        if not equals and index < len(words):
            value, index = words[index], index + 1
        out += [f"{_CI_STEP[name]}={value}"] if _CI_STEP[name] else [value]
    return out


def gate_words(words: list[str], table: Table, *, cli: bool, command: str | None = None
               ) -> list[str]:
    """The words of one command line that set failgate's options or pytest's
    configuration, in pytest's spelling (``cli``: a failgate command's, spelt ``--NAME``;
    what follows its ``--`` is the harness's). On a failgate command line the command is
    the first bare word (``command``: given, the CI step's, which has none), and its
    positional arguments are the option the table gives them (``failgate check
    reports/sub.jsonl`` is ``--failgate=reports/sub.jsonl``, as pytest spells it)."""
    found: list[str] = []
    switches = table.switches()
    if cli and command is None:
        first = next((i for i, w in enumerate(words) if not w.startswith("-")
                      and (i == 0 or words[i - 1] != "--color")), None)
        if first is not None:
            command, words = words[first], [*words[:first], *words[first + 1:]]
    positional = table.positional(command) if cli and command is not None else None
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        name, equals, _ = word.partition("=")
        if cli and word == "--":
            break
        option = table.cli(name[2:]) if cli and name.startswith("--") else None
        if option is not None:
            word, name = option.flag + word[len(name):], option.flag
        following = words[index] if index < len(words) else None
        takes = following is not None and not equals and not following.startswith("-")
        if cli and positional is not None and not word.startswith("-"):
            found.append(f"{positional.flag}={word}")  # a report path: the setting
        elif name.startswith("--failgate") or name in _CONFIG_OPTIONS:
            found.append(word)
            if takes and name not in switches:
                found.append(words[index])
                index += 1
        elif name in ("-o", "--override-ini") and (equals or takes):
            value = word.partition("=")[2] if equals else words[index]
            index += 0 if equals else 1
            if value.startswith("failgate"):
                found += ["-o", value]
        elif word.startswith(("-ofailgate", "-pno:")):
            found.append(word)
        elif cli and positional is not None and takes and name not in _CLI_SWITCHES:
            index += 1  # another option's value, not a positional argument
    return found


def _groovy_substituted(text: str) -> str:
    """``${name}`` and ``$name`` replaced by the file's own ``def name = '...'``."""
    names = {match.group(1): match.group(3) for match in _GROOVY_DEF.finditer(text)}
    for name, value in names.items():
        text = text.replace("${" + name + "}", value).replace("${env." + name + "}", value)
    return text


def _yaml_values(tree: Tree, relative: str, text: str, table: Table) -> list[str]:
    """Every ``PYTEST_ADDOPTS`` value and gate option of a YAML CI file and the local files
    it includes (GitLab ``include:``, Azure ``template:``), breadth first, in file order."""
    values: list[str] = []
    pending, done = [(relative, text)], {relative}
    while pending and len(done) <= _MAX_FILES:
        place, body = pending.pop(0)
        try:
            data = load_yaml(tree.top / place, body).data
        except FailgateError:  # a merge key, a tag: read as text, never refused
            values += _text_values(body, table)
            continue
        found, included = _walk(data, table)
        values += found
        for name in included:  # beside the including file (Azure), else from the top
            for target in (posixpath.normpath(posixpath.join(posixpath.dirname(place), name)),
                           posixpath.normpath(name.lstrip("/"))):
                more = tree.read(target) if target not in done else None
                if more is not None:
                    done.add(target)
                    pending.append((target, more))
                    break
    return values


def _walk(data: Any, table: Table) -> tuple[list[str], list[str]]:
    values: list[str] = []
    included: list[str] = []
    stack: list[Any] = [data]
    seen = 0
    while seen < min(len(stack), _MAX_NODES):
        node = stack[seen]
        seen += 1
        if isinstance(node, dict):
            if node.get("name") == ENV and _scalar(node.get("value")):
                values.append(str(node["value"]))
                continue
            if _action_step(node):  # failgate's Action: its inputs are options
                inputs = node["with"]
                words = table.action_words(inputs)
                args = inputs.get("args")
                if _scalar(args):
                    words += gate_words(_split(str(args)), table, cli=True,
                                        command=CI_STEP_COMMAND)  # failgate check's
                values.append(shlex.join(words))
            for key, value in node.items():
                if key == ENV and isinstance(value, dict) and _scalar(value.get("value")):
                    values.append(str(value["value"]))  # GitLab's {value:, description:}
                elif key == ENV and _scalar(value):
                    values.append(str(value))
                elif key == AUTOLOAD and (value is True or (_scalar(value) and str(value))):
                    values.append(AUTOLOAD_OFF)
                elif key in ("include", "local", "template") and isinstance(value, str):
                    included.append(value)
                elif key == "include" and isinstance(value, list):
                    included += [item for item in value if isinstance(item, str)]
                    stack.append(value)
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str):
            values += assigned(node) + command_options(node, table) + autoload_off(node)
    return values, included


def _action_step(node: dict[Any, Any]) -> bool:
    """A workflow step that uses failgate's Action, with inputs."""
    uses = node.get("uses")
    if not isinstance(uses, str) or not isinstance(node.get("with"), dict):
        return False
    return uses.split("@", 1)[0].rstrip("/").rpartition("/")[2] == _ACTION


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _unquote(value: str) -> str:
    return value[1:-1] if value[:1] in ("'", '"') else value


def _split(value: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError:
        return value.split()
