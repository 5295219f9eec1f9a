"""Whether the gate ran: its items collected, kept by the selection options, and run.

A gate that is on and did not run must never end green. pytest can drop the gate's
items in several ways, and each is told apart here:

- the person running pytest chose it on the command line (``-k``, ``-m``,
  ``--deselect``, ``--lf``, ``--sw``): their choice, said in the summary, exit as
  pytest would;
- the configuration chose it (``addopts`` in the ini file, ``PYTEST_ADDOPTS``): a
  change to a file can silence the gate, so the run fails and says where;
- the run stopped before any gate item ran (an interrupt, a crashed worker): it fails;
- the run runs no test at all (``--co``, ``--setup-plan``, ``--fixtures``): said in the
  summary when the command line asked for it, a failure when the configuration did.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from ..core.base.classes import dataclass

if TYPE_CHECKING:
    from collections.abc import Sequence

# The key of a worker's (collected, selected) counts in its ``workeroutput``.
SELECTION_KEY = "failgate_selection"

# Options that drop items: long forms, and the short ones (``-k EXPR``, ``-kEXPR``).
_LONG = ("--deselect", "--lf", "--last-failed", "--sw", "--stepwise", "--sw-skip",
         "--stepwise-skip")
_SHORT = ("k", "m")
# Short flags that take no value and may come first in a cluster (``-vk EXPR``).
_BARE_SHORT = frozenset("vqxsl")
# pytest's options that run no test, by destination, with every spelling (pytest allows
# no abbreviations); the first is the one messages name.
DRY_RUNS = {
    "collectonly": ("--co", "--collect-only", "--collectonly"),
    "setupplan": ("--setup-plan", "--setupplan"),
    "setuponly": ("--setup-only", "--setuponly"),
    "showfixtures": ("--fixtures", "--funcargs"),
    "show_fixtures_per_test": ("--fixtures-per-test",),
}


def selection_options(args: Sequence[str]) -> list[str]:
    """The item-selecting options among command-line ``args``, as written (``-k``)."""
    found: list[str] = []
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--"):
            name = arg.split("=", 1)[0]
            if name in _LONG:
                found.append(name)
        elif arg.startswith("-") and len(arg) > 1:
            for letter in arg[1:]:
                if letter in _SHORT:
                    found.append(f"-{letter}")
                    break
                if letter not in _BARE_SHORT:
                    break
    return list(dict.fromkeys(found))


@dataclass
class Selection:
    """How many gate items were collected, kept, and ran in one session."""

    collected: int | None = None  # None: nothing was collected here (a worker's news lost)
    selected: int = 0
    ran: set[str] = field(default_factory=set)  # node ids of gate items that reported

    def as_pair(self) -> tuple[int, int]:
        return self.collected or 0, self.selected

    def verdict(self, args: Sequence[str],
                dry: Sequence[str] = ()) -> tuple[str | None, str | None]:
        """``(problem, note)``: a problem fails the session; a note is only shown.

        ``args`` are the command-line arguments as the user gave them (without the
        configuration's ``addopts``), which tell a person's choice from a file's;
        ``dry`` the spellings of the option in effect that runs no test (``DRY_RUNS``).
        """
        if dry:
            given = args[:args.index("--")] if "--" in args else args
            if any(arg in dry for arg in given):
                return None, f"failgate: {dry[0]} runs no test; the gate did not run"
            return (f"failgate: {dry[0]} in the pytest configuration (addopts or "
                    "PYTEST_ADDOPTS) runs no test, so the gate did not run; a configuration "
                    "cannot switch the gate off: remove the option there"), None
        if not self.collected:
            return ("failgate: the gate is on, but no gate item was collected or reported, "
                    "so it did not run"), None
        dropped = self.collected - self.selected
        chosen = selection_options(args)
        if dropped and not chosen:
            return (f"failgate: {dropped} of {self.collected} gate items were deselected by "
                    "the pytest configuration (addopts or PYTEST_ADDOPTS), not on the command "
                    "line; a configuration cannot switch the gate off: remove the option there "
                    "(or select on the command line)"), None
        note = None
        if dropped:
            what = ("the gate did not run" if not self.selected
                    else f"{self.selected} ran")
            note = (f"failgate: {dropped} of {self.collected} gate items deselected by "
                    f"{', '.join(chosen)} on the command line; {what}")
        if self.selected and not self.ran:
            return ("failgate: no gate item ran: the run stopped before the gate "
                    f"({self.selected} selected)"), note
        return None, note
