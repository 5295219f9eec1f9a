"""Every setting that moves a verdict, compared by the effect the option table gives it.

The option table (``options.OPTIONS``) says, for each setting, how it moves the verdict
(``Option.effect``): looser when raised (the futility stop's beta, its margin, the
sequential delta), looser when on (``exclude-unstable``), looser when off (``strict``),
evidence judged by its content (a baseline, a noise band, the ceilings file), changed (no
order between values: the reports, the engine, the seed), or neutral (where the reports are
written). The guard keeps no list of its own: every setting whose row moves a verdict is
compared here, wherever a run reads it. Each source gives the setting as pytest's ini key
(``failgate_NAME``) once ``workflows.contexts`` has read it: an ini file of any kind (the
one pytest uses, so a new ``pytest.ini`` that takes over from ``pyproject.toml`` is
compared with what applied before), ``addopts`` and ``-o`` overrides, a CI file's
``PYTEST_ADDOPTS``, the options on a command line that runs pytest or ``failgate`` (a
``failgate watch --margin 100000``), and the inputs of failgate's Action.

A new row gets all of this by its ``effect``: no route is written for it. The core does not
import the table (it sits above the core, with the front ends): the front ends hand it to
the guard (``Table``), read when the guard runs.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Protocol

from .enforced import Change

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..base.inifile import IniFile

# the ceilings file is compared by what it enforces (``enforced``), wherever it is named
COMPARED_BY_CONTENT = ("ceilings",)
# the Action's input that holds more options for ``failgate check`` (the others that set an
# option are named by its row, ``Option.action_input``)
ACTION_ARGS = "args"


class Setting(Protocol):
    """What the guard reads of an option of the table (``options.Option``)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def default(self) -> str | None: ...
    @property
    def commands(self) -> tuple[str, ...]: ...
    @property
    def positional(self) -> str | None: ...
    @property
    def effect(self) -> str: ...
    @property
    def flag(self) -> str: ...
    @property
    def dest(self) -> str: ...
    @property
    def action_input(self) -> str | None: ...


class Table:
    """The option table as the guard reads it: which options move a verdict and how."""

    def __init__(self, options: Sequence[Setting]) -> None:
        self.options = tuple(options)
        self.guarded = [option for option in self.options if option.effect != "neutral"]
        self.by_name = {option.name: option for option in self.options}
        self.by_input = {option.action_input: option for option in self.options
                         if option.action_input}

    def setting_flags(self) -> dict[str, str]:
        """pytest's spelling of each guarded option (``--failgate-margin``; a CLI-only
        option such as ``--delta`` gets the same spelling when a failgate command line
        carries it) -> its ini key."""
        return {option.flag: option.dest for option in self.guarded}

    def flags(self) -> set[str]:
        """Every option's pytest spelling, guarded or not: none is a selection of items."""
        return {option.flag for option in self.options}

    def switches(self) -> set[str]:
        """The ini keys and pytest spellings of the on/off options (they take no value)."""
        return {spelling for option in self.options if option.kind == "flag"
                for spelling in (option.dest, option.flag)}

    def repeatable(self) -> set[str]:
        """The ini keys of the options given more than once (every value counts)."""
        return {option.dest for option in self.options if option.kind in ("paths", "names")}

    def cli(self, name: str) -> Setting | None:
        """The option a failgate command line's ``--name`` gives (not a positional one)."""
        option = self.by_name.get(name)
        return option if option is not None and option.commands and not option.positional \
            else None

    def positional(self, command: str) -> Setting | None:
        """The option a failgate command takes as its positional arguments (``check``'s
        report paths are the ``failgate`` setting)."""
        return next((option for option in self.options
                     if option.positional and command in option.commands), None)

    def action_words(self, inputs: dict[str, object]) -> list[str]:
        """The Action's inputs (a step's ``with:``) as pytest's spelling of the options they
        set (``args``, more options of a failgate command line, is read as one by
        ``cifiles``)."""
        words: list[str] = []
        for key, value in inputs.items():
            if not isinstance(key, str) or value is None or isinstance(value, dict | list):
                continue
            option = self.by_input.get(key)
            text = str(value).strip() if not isinstance(value, bool) else str(value).lower()
            if key == ACTION_ARGS or option is None or not text:
                continue
            elif option.kind == "flag":
                if _true(text):
                    words.append(option.flag)
            elif option.kind in ("paths", "names"):
                words += [f"{option.flag}={part}" for part in text.split()]
            else:
                words.append(f"{option.flag}={text}")
        return words


def setting_changes(table: Table, old: IniFile, new: IniFile, reason: str | None, where: str
                    ) -> list[Change]:
    """Each guarded setting whose effective value may let more pass now."""
    changes = []
    for option in table.guarded:
        if option.name in COMPARED_BY_CONTENT:
            continue
        was, now = old.values.get(option.dest), new.values.get(option.dest)
        if _shown(was) == _shown(now) or not looser(option, was, now):
            continue
        changes.append(Change(f"{where} {option.dest}", _shown(was), _shown(now), None, reason))
    return changes


def looser(option: Setting, was: object, now: object) -> bool:
    """Whether ``now`` may let more pass than ``was`` (values as written; None: not set)."""
    if option.effect in ("on", "off"):
        on_now, on_before = _true(now), _true(was)
        return on_now and not on_before if option.effect == "on" else on_before and not on_now
    if option.effect == "raised":
        before, after = _magnitude(option, was), _magnitude(option, now)
        if before is None or after is None:  # off (no default): below every value
            return after is not None
        if isinstance(before, str) or isinstance(after, str):
            return before != after  # not a number: cannot be ranked
        return after > before
    return True  # changed, evidence: any other value


def _magnitude(option: Setting, value: object) -> Fraction | str | None:
    """A raised setting's value as a number (not set: the default; no default: None)."""
    if value is None or value == "" or value == []:
        value = option.default
    if value is None:
        return None
    text = _shown(value).strip()
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return text


def _true(value: object) -> bool:
    if isinstance(value, list):
        value = value[-1] if value else None
    return value is True or (isinstance(value, str)
                             and value.strip().lower() in ("y", "yes", "t", "true", "on", "1"))


def _shown(value: object) -> str:
    if value is None:
        return "not set"
    return " ".join(str(v) for v in value) if isinstance(value, list) else str(value)
