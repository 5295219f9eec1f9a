"""``failgate sample``: the uniform random sample of a run's cases that people label.

The sample is ``core.compare.labels.draw`` (K distinct cases by a seed: the same seed and
run, the same sample), written as a JSON file that says which cases to label, with which
categories, and how to write the labels file the gate reads (``--labels``). The judge's
categories are left out of it on purpose: a labeller who sees them tends to agree.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, Any

from ..core.base.classes import dataclass
from ..core.base.errors import FailgateError, display_path
from ..core.compare.labels import MIN_LABELS, draw

if TYPE_CHECKING:
    from pathlib import Path

    from .config import Config


@dataclass(frozen=True)
class Sample:
    """A drawn sample and the document written for its labellers."""

    seed: int
    size: int
    of: int
    document: dict[str, Any]


def sample(config: Config, size: int, seed: int | None, out: Path) -> str:
    """``failgate sample``: draw, write the file to ``out``, and say what was drawn."""
    drawn = draw_sample(config, size, seed)
    write_sample(drawn, out)
    return (f"sample: {drawn.size} of the run's {drawn.of} cases, drawn uniformly (seed "
            f"{drawn.seed}) -> {display_path(out)}; label them (how: in the file) and gate "
            "with --labels")


def draw_sample(config: Config, size: int, seed: int | None) -> Sample:
    """Draw ``size`` of the run's cases with ``seed`` (a fresh one, recorded, when None)."""
    from .app import Failgate

    if size < MIN_LABELS:
        raise FailgateError(f"--n {size}: the gate needs at least {MIN_LABELS} labels "
                            "(200 is a good start: docs/judge.md)")
    reports = [r for r in Failgate(config).load_all(config.paths) if r.kind == "cases"]
    if not reports:
        raise FailgateError("no report of the run records its cases: there is nothing to "
                            "sample (an aggregate counts, it keeps no case)")
    seed = secrets.randbelow(2**31) if seed is None else seed
    total = sum(len(r.all_case_ids()) for r in reports)
    if size > total:
        raise FailgateError(f"--n {size}: the run has {total} cases")
    drawn = draw(reports, size, seed)
    categories = sorted({name for r in reports for name in r.taxonomy.category_names})
    several = len(reports) > 1
    document = {
        "drawn_by": "failgate sample",
        "seed": seed,
        "n": size,
        "of": total,
        "reports": {r.name: len(r.all_case_ids()) for r in reports},
        "how_to_label": (
            "Look up each case below in its report and decide what it truly is: one of "
            "`categories`, or null when the answer is good. Write a JSON Lines file (say "
            f"gold.jsonl) whose first line is {{\"seed\": {seed}}} and then one line per case, "
            "{\"id\": \"<id>\", \"category\": \"<category>\"} or {\"id\": \"<id>\", "
            "\"category\": null}" + (", with \"report\": \"<report>\" as listed" if several
                                      else "") + ". Label every case: the interval "
            "assumes this uniform random sample. Then gate with --labels gold.jsonl."),
        "categories": categories,
        "cases": [{"report": report, "id": case} if several else {"id": case}
                  for report, case in drawn],
    }
    return Sample(seed, size, total, document)


def write_sample(drawn: Sample, out: Path) -> None:
    """Write the sample's document to ``out`` (UTF-8 JSON)."""
    try:
        out.write_text(json.dumps(drawn.document, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise FailgateError(f"cannot write: {exc.strerror or exc}", out) from None
