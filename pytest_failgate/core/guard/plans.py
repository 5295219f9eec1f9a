"""The plan of a sequential run is evidence: its order and its seed, compared with the ref's.

A sequential run (``failgate watch --plan``, pytest's ``--failgate-sequential SEED``) stops
once its verdict is settled, which holds with the stated probability only when the order
is the one its seed draws and the seed was fixed before anyone saw an outcome. A pull
request can loosen that without touching a ceiling: reorder the plan by hand (passing
cases first, the seed kept), re-draw it with a seed chosen after seeing results (a few
seeds in a hundred pass a failing run early), or add a plan whose seed this change picked.
Each is a loosening the guard names, excused only by a reason this change wrote (the
ceilings file's top-level ``reason``). The seed given to pytest is a setting of the option
table, compared in ``settings`` like any other (``--failgate-sequential new`` draws one at
each run: a changed value is named there).

The plans compared: every ``plan.json`` of the repository (``failgate plan``'s default) and
every file a CI file passes as ``--plan`` (relative to the top of the repository), at the
ref and now; and the seeds CI files draw plans with (``failgate plan ... --seed N``, or no
``--seed``: a fresh one at each run).
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import TYPE_CHECKING, Any

from .cifiles import ci_files
from .enforced import Change, content_digest

if TYPE_CHECKING:
    from .gitref import Tree

PLAN_NAME = "plan.json"
_PLAN_OPTION = re.compile(r"--plan(?:=|[ \t]+)([\"']?)([^\s\"';&|]+)\1")
_PLAN_COMMAND = re.compile(r"failgate[ \t]+plan[ \t][^\n;&|]*")
_SEED = re.compile(r"--seed(?:=|[ \t]+)([\"']?)([^\s\"']+)\1")


def plan_files(tree: Tree) -> set[str]:
    """The plans of the repository in ``tree``: ``plan.json`` files and ``--plan`` files."""
    found = set(tree.files(PLAN_NAME))
    for text in ci_files(tree).values():
        for match in _PLAN_OPTION.finditer(text.replace("\\\n", " ")):
            relative = posixpath.normpath(match.group(2).lstrip("/"))
            if not relative.startswith("../"):
                found.add(relative)
    return found


def plan_seeds(tree: Tree) -> dict[str, list[str]]:
    """The seeds each CI file's ``failgate plan`` commands draw with, in file order
    (``fresh``: no ``--seed``, a new one at each run)."""
    found: dict[str, list[str]] = {}
    for relative, text in ci_files(tree).items():
        for command in _PLAN_COMMAND.finditer(text.replace("\\\n", " ")):
            seed = _SEED.search(command.group(0))
            found.setdefault(relative, []).append(seed.group(2) if seed else "fresh")
    return found


def plan_changes(base: Tree, work: Tree, reason: str | None) -> list[Change]:
    """Each plan changed since the ref: a new seed, another order, other cases, a new or
    removed plan, a CI file drawing plans with another seed (see the module docstring)."""
    changes = []
    then, now_seeds = plan_seeds(base), plan_seeds(work)
    for relative, seeds in sorted(now_seeds.items()):
        if then.get(relative) != seeds:
            changes.append(Change(f"{relative} failgate plan --seed",
                                  " ".join(then.get(relative, [])) or "none", " ".join(seeds)
                                  + " (a seed chosen in this change can be chosen after "
                                  "seeing outcomes)", None, reason))
    for relative in sorted(plan_files(base) | plan_files(work)):
        was, now = _plan(base.read(relative)), _plan(work.read(relative))
        if was == now:
            continue
        label = f"plan {relative}"
        if now is None:
            changes.append(Change(label, _shown(was), "removed", None, reason))
        elif was is None:
            changes.append(Change(label, "none", f"{_shown(now)}, written in this change: its "
                                  "seed was not fixed before this change's outcomes", None,
                                  reason))
        elif was[1] != now[1]:
            changes.append(Change(f"{label} seed", was[1], f"{now[1]} (a seed chosen in this "
                                  "change can be chosen after seeing outcomes)", None, reason))
        elif isinstance(was[0], tuple) and isinstance(now[0], tuple) \
                and sorted(was[0]) == sorted(now[0]):
            first = next(i for i, (a, b) in enumerate(zip(was[0], now[0], strict=True))
                         if a != b)
            changes.append(Change(f"{label} order", f"the order seed {was[1]} drew",
                                  f"reordered with seed {now[1]} kept (first at position "
                                  f"{first + 1}: {now[0][first]!r} where it was "
                                  f"{was[0][first]!r})", None, reason))
        else:
            changes.append(Change(f"{label} cases", _shown(was), _shown(now), None, reason))
    return changes


_Plan = tuple[tuple[str, ...] | str, Any]  # (case ids, or the text's digest), seed


def _plan(text: str | None) -> _Plan | None:
    """A plan as compared: its case ids in order and its seed; a file that is no plan,
    by its content's digest (compared as written)."""
    if text is None:
        return None
    try:
        document = json.loads(text)
    except ValueError:
        return content_digest(text), None
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        return content_digest(text), None
    cases = tuple(str(case) for case in document["cases"])
    rest = {key: value for key, value in document.items() if key not in ("cases", "seed")}
    if rest.get("strata") is not None:  # strata go with the order: compared with it
        cases += (content_digest(rest["strata"]),)
    return cases, document.get("seed")


def _shown(plan: _Plan | None) -> str:
    if plan is None:
        return "none"
    cases, seed = plan
    if isinstance(cases, str):
        return f"content {cases}"
    return f"{len(cases)} cases, seed {seed}"
