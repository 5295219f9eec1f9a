"""Gold labels: what people say each case of a random sample truly is.

A labels file is JSON Lines, one labelled case a line::

    {"seed": 7}                                   (optional: the seed `failgate sample` drew with)
    {"id": "q-0412", "category": "wrong_answer"}
    {"id": "q-1033", "category": null}            (the case truly passes)

``report`` names the case's report when the run has more than one (``failgate sample``
writes it beside each id). The file is read through ``base.safeopen`` (a FIFO or a device
is refused, the size is bounded) and checked against the run it corrects: every id one of
the run's cases, none twice, every category one of its report's taxonomy, at least
``MIN_LABELS`` labels; anything else is an error naming the file and the line.

The sample: ``draw`` is the one uniform draw without replacement of K of the run's cases
by a seed, which ``failgate sample`` writes and the gate draws again to tell whether the
labels are that sample (else the interval's assumption, a uniform random sample, is the
user's to vouch for, and the gate says so).
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.errors import FailgateError, did_you_mean, display_path
from ..base.safeopen import read_regular

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ..reports.model import Report

MIN_LABELS = 30  # below this no interval says anything useful about a count of thousands
MAX_LABEL_BYTES = 64 * 10**6  # a labels file is small: people wrote it
LABEL_KEYS = ("id", "category", "report", "note")
Case = tuple[str, str]  # (report name, case id)


@dataclass(frozen=True)
class Label:
    """One labelled case: its report and id, the true category (None: passes), its line."""

    report: str
    id: str
    category: str | None
    line: int


@dataclass(frozen=True)
class Labels:
    """A labels file, checked against the run it corrects."""

    path: Path
    labels: tuple[Label, ...]
    seed: int | None  # the seed its header names (None: no header)
    drawn: bool  # the labelled cases are exactly what ``draw`` draws with that seed
    # drawn cases with no usable label (stale or changed): (report, id); the gate decides
    # each count both ways over them (``core.gate.corrected``)
    unknown: tuple[tuple[str, str], ...] = ()

    def note(self) -> str | None:
        """What the interval assumes, when the file does not show it holds."""
        if self.drawn:
            return None
        why = ("its cases are not the ones `failgate sample` draws with seed "
               f"{self.seed}" if self.seed is not None else "it names no seed of `failgate "
               "sample` (a first line {\"seed\": S})")
        return (f"labels: {display_path(self.path)}: {why}; the corrected counts' intervals "
                "assume its cases are a uniform random sample of the run's cases")


def population(reports: Sequence[Report]) -> list[Case]:
    """Every case of the run, in the order a draw reads them: reports by name, each
    report's cases in its order."""
    return [(report.name, case) for report in sorted(reports, key=lambda r: r.name)
            for case in report.all_case_ids()]


def draw(reports: Sequence[Report], size: int, seed: int) -> list[Case]:
    """``size`` distinct cases drawn uniformly without replacement by ``seed``."""
    cases = population(reports)
    if not 0 < size <= len(cases):
        raise FailgateError(f"cannot draw {size} of the run's {len(cases)} cases")
    return random.Random(seed).sample(cases, size)


def read_labels(path: Path, reports: Sequence[Report], limit: int | None = None) -> Labels:
    """The labels file at ``path``, checked against the run's ``reports`` (module docstring).
    """
    data = read_regular(path, MAX_LABEL_BYTES if limit is None else limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FailgateError(f"not UTF-8 text (byte {exc.start})", path) from None
    known = {report.name: report for report in reports}
    ids = {name: set(report.all_case_ids()) for name, report in known.items()}
    only = next(iter(known)) if len(known) == 1 else None
    seen: dict[Case, int] = {}
    labels: list[Label] = []
    seed: int | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        item = _object(line, path, number)
        if set(item) == {"seed"} and not labels and seed is None:
            seed = _seed(item["seed"], path, number)
            continue
        label = _label(item, path, number, only, known, ids)
        key = (label.report, label.id)
        if key in seen:
            raise FailgateError(f"case '{label.id}' is labelled twice (first on line "
                                f"{seen[key]}); label each case once", path, number)
        seen[key] = number
        labels.append(label)
    if len(labels) < MIN_LABELS:
        raise FailgateError(
            f"{len(labels)} labels, fewer than the {MIN_LABELS} a corrected count needs; "
            "label a sample drawn by `failgate sample --n 200` (200 labels catch a +50% "
            "regression of a 15% category in most runs: docs/judge.md)", path,
            max([label.line for label in labels], default=1))
    drawn = seed is not None and set(draw(reports, len(labels), seed)) == set(seen)
    return Labels(path, tuple(labels), seed, drawn)


def _object(line: str, path: Path, number: int) -> dict[str, Any]:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as exc:
        raise FailgateError(f"not JSON: {exc.msg}", path, number, exc.colno) from None
    except RecursionError:
        raise FailgateError("not JSON: nested too deeply", path, number) from None
    except ValueError:  # an integer past Python's 4,300 digits
        raise FailgateError("not JSON: a number too large to read (integers are limited to "
                            "4,300 digits)", path, number) from None
    if not isinstance(item, dict):
        raise FailgateError('a label is a JSON object: {"id": "...", "category": "..."} '
                            'or {"id": "...", "category": null}', path, number)
    return item


def _seed(value: Any, path: Path, number: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FailgateError(f"the seed is an integer, not {json.dumps(value)[:40]}", path,
                            number)
    return value


def _label(item: dict[str, Any], path: Path, number: int, only: str | None,
           known: dict[str, Report], ids: dict[str, set[str]]) -> Label:
    """One line as a label of one of the run's cases (errors name the line)."""
    extra = [key for key in item if key not in LABEL_KEYS]
    if extra:
        raise FailgateError(f"unknown key '{extra[0]}'{did_you_mean(extra[0], LABEL_KEYS)}",
                            path, number)
    if "id" not in item or "category" not in item:
        missing = "id" if "id" not in item else "category"
        raise FailgateError(f"a label needs '{missing}' (category null: the case passes)",
                            path, number)
    case, category = item["id"], item["category"]
    if isinstance(case, int) and not isinstance(case, bool):
        case = str(case)
    if not isinstance(case, str):
        raise FailgateError("the id is a string: the case's id in the report", path, number)
    if category is not None and not isinstance(category, str):
        raise FailgateError("the category is a category's name, or null for a case that "
                            "passes", path, number)
    report = item.get("report", only)
    if report is None:
        raise FailgateError("the run has more than one report: name the case's report "
                            "(\"report\": ...; `failgate sample` writes it)", path, number)
    if not isinstance(report, str) or report not in known:
        shown = json.dumps(report)[:60]
        raise FailgateError(f"report {shown} is not a report of the run"
                            + (did_you_mean(report, known) if isinstance(report, str) else ""),
                            path, number)
    if case not in ids[report]:
        raise FailgateError(f"case '{case[:80]}' is not a case of report '{report}'", path,
                            number)
    names = known[report].taxonomy.category_names
    if category is not None and category not in names:
        raise FailgateError(f"unknown category '{category[:80]}' (taxonomy "
                            f"{known[report].taxonomy.name}){did_you_mean(category, names)}",
                            path, number)
    return Label(report, case, category, number)
