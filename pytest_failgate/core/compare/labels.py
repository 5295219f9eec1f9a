"""Gold labels: what people say each case of a random sample truly is, for one run.

The file's syntax is ``labelfile`` (JSON Lines or CSV, shared with the guard); here its
rows are checked against the run they correct. A label belongs to a run: ``failgate
sample`` records what it drew from (the seed, the sample's size ``n``, the run's case-set
digest ``run``, and each drawn case's content digest ``content``), and a label is used
only where all of that still holds:

- a label made for **another run** (its ``run`` digest is not this run's case set): none
  of the file's labels is used;
- a label whose case **changed** since (its ``content`` digest is not the case's now):
  not used;
- a label for a case the seed **did not draw** (outside ``draw(run, n, seed)``): never
  enters the estimate (it is what a cherry-picker appends);

each is named with its count and first ids, and every drawn case left without a usable
label is in ``Labels.unknown``, for the statistics to take at both extremes. A plain
``{"seed": S}`` header (files written before the sample recorded more) gives no size:
the draw is the longest one of that seed its labels cover (``_legacy_size``), and labels
outside it are not used. A file with no seed (a CSV file, or JSON Lines without a
header), or one whose labels are no draw of its seed, is read as before (every label
used) with a note: the gate cannot see how its cases were chosen, so its labels may fail
a count the judge's count passes but never pass one it fails (``Labels.drawn`` False).

The errors (exit 2, naming the file and the line): an id that is not a case of the run,
a case labelled twice, a category not of its report's taxonomy, fewer than
``MIN_LABELS`` labels, a sample larger than the run.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import TYPE_CHECKING

from ..base.classes import dataclass
from ..base.errors import FailgateError, did_you_mean, display_path
from ..base.safeopen import read_regular
from .labelfile import LabelFile, LabelRow, parse_labels

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ..reports.model import Report

MIN_LABELS = 30  # below this no interval says anything useful about a count of thousands
MAX_LABEL_BYTES = 64 * 10**6  # a labels file is small: people wrote it
SHOWN = 5  # ids named in a note
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
    """A labels file, checked against the run it corrects (module docstring)."""

    path: Path
    labels: tuple[Label, ...]  # the usable labels only
    seed: int | None  # the seed its header names (None: no header)
    drawn: bool  # the usable labels are of the seed's draw on this run (checked)
    # the (report, id) of drawn cases with no usable label: no line, a line left blank,
    # a changed case, or every drawn case of a file made for another run
    unknown: tuple[tuple[str, str], ...] = ()
    outside: tuple[Case, ...] = ()  # labels of cases the seed did not draw: not used
    changed: tuple[Case, ...] = ()  # labels of cases whose content changed: not used
    other_run: str | None = None  # the case-set digest of the run the file was made for
    run: str = ""  # this run's case-set digest (``run_digest``)
    inferred: int | None = None  # a plain {"seed": S} header: the draw's size, inferred
    unchecked: int = 0  # usable labels with no content digest: a change cannot be told

    def note(self) -> str | None:
        """What the interval assumes, when the file does not show it holds."""
        if self.drawn:
            return None
        why = ("its cases are not the ones `failgate sample` draws with seed "
               f"{self.seed}" if self.seed is not None else "it names no seed of `failgate "
               "sample` (a first line {\"seed\": S})")
        return (f"labels: {display_path(self.path)}: {why}; the corrected counts' intervals "
                "assume its cases are a uniform random sample of the run's cases, so these "
                "labels may fail a count the judge's count passes, never pass one it fails "
                "(draw a sample with `failgate sample --out gold.jsonl` and label it)")

    def notes(self) -> list[str]:
        """Every label the gate did not use, and why, with counts and first ids."""
        where = f"labels: {display_path(self.path)}"
        found = [note for note in (self.note(),) if note is not None]
        if self.inferred is not None:
            found.append(f"{where}: a plain {{\"seed\": {self.seed}}} header: the sample "
                         f"taken as the seed's draw of {self.inferred} (the longest its labels "
                         "cover); it records no run or content, so a case changed since "
                         "cannot be told (`failgate sample --out gold.jsonl` records both)")
        if self.unchecked and self.inferred is None:
            found.append(f"{where}: {self.unchecked} of its labels carry no content digest "
                         "(\"content\", which `failgate sample` writes): a case changed "
                         "since they were made cannot be told")
        if self.other_run is not None:
            found.append(f"{where}: made for another run (its case set {self.other_run}, "
                         f"this run's {self.run}): none of its labels is used; draw and "
                         "label a sample of this run")
        if self.changed:
            found.append(f"{where}: {_cases(self.changed)} changed since they were labelled "
                         "(their content digest differs): not used")
        if self.outside:
            found.append(f"{where}: {_cases(self.outside)} the seed {self.seed} did not "
                         "draw: never used (a label counts only in the sample it was drawn "
                         "for)")
        if self.unknown:
            found.append(f"{where}: {_cases(self.unknown, 'drawn case')} without a usable "
                         "label: the corrected counts take them at both extremes")
        return found


def _cases(cases: Sequence[Case], what: str = "label") -> str:
    shown = ", ".join(case for _, case in cases[:SHOWN])
    more = ", ..." if len(cases) > SHOWN else ""
    noun = what if len(cases) == 1 else what + "s"
    return f"{len(cases)} {noun} ({shown}{more})" + ("" if what != "label" else " of cases")


def population(reports: Sequence[Report]) -> list[Case]:
    """Every case of the run, in the order a draw reads them: reports by name, each
    report's cases in its order."""
    return [(report.name, case) for report in sorted(reports, key=lambda r: r.name)
            for case in report.all_case_ids()]


def run_digest(reports: Sequence[Report]) -> str:
    """The run's case set, in the order a draw reads it, as a digest: the same cases in the
    same order, the same digest (what a labels file's ``run`` names)."""
    text = json.dumps(population(reports), ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


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
    return check_labels(parse_labels(data, path), reports)


def check_labels(file: LabelFile, reports: Sequence[Report]) -> Labels:
    """The file's rows against the run: each a case of it, then which labels are usable."""
    path = file.path
    known = {report.name: report for report in reports}
    ids = {name: set(report.all_case_ids()) for name, report in known.items()}
    only = next(iter(known)) if len(known) == 1 else None
    seen: dict[Case, int] = {}
    rows: list[tuple[Case, LabelRow]] = []
    for row in file.rows:
        key = _case(row, path, only, known, ids)
        if key in seen:
            raise FailgateError(f"case '{row.id[:80]}' is labelled twice (first on line "
                                f"{seen[key]}); label each case once", path, row.line)
        seen[key] = row.line
        rows.append((key, row))
    labelled = [(key, row) for key, row in rows if row.labelled]
    if len(labelled) < MIN_LABELS:
        raise FailgateError(
            f"{len(labelled)} labels, fewer than the {MIN_LABELS} a corrected count needs; "
            "label a sample drawn by `failgate sample --n 200` (200 labels catch a +50% "
            "regression of a 15% category in most runs: docs/judge.md)", path,
            max([row.line for row in file.rows], default=1))
    header = file.header
    digest = run_digest(reports)
    if header is None:
        return Labels(path, _labels(labelled), None, False, run=digest)
    size = header.n if header.n is not None else len(labelled)
    total = sum(len(found) for found in ids.values())
    if header.run is not None and header.run != digest:
        return Labels(path, (), header.seed, True, tuple(draw(reports, min(size, total),
                                                              header.seed)),
                      other_run=header.run, run=digest)
    if size > total:
        raise FailgateError(f"a sample of {size} cases, and the run has {total}: the labels "
                            "are of another run", path, header.line)
    if header.n is None and header.run is None:  # a plain {"seed": S} header
        inferred = _legacy_size(reports, header.seed, {key for key, _ in labelled})
        if inferred is None:  # its labels are no draw of that seed: read as before
            return Labels(path, _labels(labelled), header.seed, False, run=digest)
        size = inferred
    drawn = draw(reports, size, header.seed)
    chosen = set(drawn)
    outside = [key for key, _ in labelled if key not in chosen]
    changed = [key for key, row in labelled if key in chosen and row.content is not None
               and _content(known[key[0]], key[1]) not in (None, row.content)]
    unusable = {*outside, *changed}
    usable = [(key, row) for key, row in labelled if key not in unusable]
    have = {key for key, _ in usable}
    return Labels(path, _labels(usable), header.seed, True,
                  tuple(case for case in drawn if case not in have), tuple(outside),
                  tuple(changed), run=digest,
                  inferred=size if header.n is None and header.run is None else None,
                  unchecked=sum(1 for _, row in usable if row.content is None))


def _legacy_size(reports: Sequence[Report], seed: int, labelled: set[Case]) -> int | None:
    """The size of the seed's draw a plain ``{"seed": S}`` file labels (it records none):
    the longest draw all of whose cases are labelled (labels appended for other cases
    are then outside it), checked by drawing it again; None when no draw of at least
    ``MIN_LABELS`` is.

    A draw of ``k`` is, for the sizes ``random.sample`` draws alike, the first ``k`` of a
    longer one: the labelled run of the longest draw is the candidate, and the check
    does not rest on that."""
    cases = population(reports)
    longest = random.Random(seed).sample(cases, min(len(labelled), len(cases)))
    size = next((index for index, case in enumerate(longest) if case not in labelled),
                len(longest))
    if size < MIN_LABELS or not set(draw(reports, size, seed)) <= labelled:
        return None
    return size


def _content(report: Report, case: str) -> str | None:
    """The case's content digest now (None: the reading kept none, e.g. a SQL engine)."""
    return report.digests.get(case) if report.digests is not None else None


def _labels(rows: Sequence[tuple[Case, LabelRow]]) -> tuple[Label, ...]:
    return tuple(Label(key[0], key[1], row.category, row.line) for key, row in rows)


def _case(row: LabelRow, path: Path, only: str | None, known: dict[str, Report],
          ids: dict[str, set[str]]) -> Case:
    """The row's case of the run, its category one of its report's (errors name the line)."""
    report = row.report if row.report is not None else only
    if report is None:
        raise FailgateError("the run has more than one report: name the case's report "
                            "(\"report\": ...; `failgate sample` writes it)", path, row.line)
    if report not in known:
        raise FailgateError(f"report {json.dumps(report)[:60]} is not a report of the run"
                            + did_you_mean(report, known), path, row.line)
    if row.id not in ids[report]:
        raise FailgateError(f"case '{row.id[:80]}' is not a case of report '{report}'", path,
                            row.line)
    names = known[report].taxonomy.category_names
    if row.category is not None and row.category not in names:
        raise FailgateError(f"unknown category '{row.category[:80]}' (taxonomy "
                            f"{known[report].taxonomy.name}){did_you_mean(row.category, names)}",
                            path, row.line)
    return (report, row.id)
