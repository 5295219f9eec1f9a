"""``failgate sample``: the uniform random sample of a run's cases that people label.

The sample is ``core.compare.labels.draw`` (K distinct cases by a seed: the same seed and
run, the same sample), and it records what it drew from, so that a label counts only for
the run and the case content it was made on: the seed, the size ``n``, the run's case-set
digest ``run`` and each drawn case's ``content`` digest (its fields as the taxonomy reads
them, ``reports.sink.content_digest``).

``--out gold.jsonl`` writes the labels file itself, to fill in: a header line with all of
that and how to label, then one line per drawn case (``{"id": ..., "content": ...}``) to
which the labeller adds ``"category"``; a line left without one is a drawn case not
labelled yet. ``--out sample.json`` writes the same as one JSON document (its ``cases``).
The judge's categories are left out on purpose: a labeller who sees them tends to agree.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core.base.classes import dataclass
from ..core.base.errors import FailgateError, display_path
from ..core.compare.labels import MIN_LABELS, draw, run_digest

if TYPE_CHECKING:
    from pathlib import Path

    from .config import Config


@dataclass(frozen=True)
class DrawnSample:
    """A drawn sample and the document written for its labellers."""

    seed: int
    size: int
    of: int
    document: dict[str, Any]


def sample(config: Config, size: int, seed: int | None, out: Path) -> str:
    """``failgate sample``: draw, write the file to ``out``, and say what was drawn. With
    ``--labels OLD`` every label of OLD whose case is drawn again with the content it was
    labelled on is carried over, so labelling again is labelling what changed."""
    drawn = draw_sample(config, size, seed)
    carried = 0 if config.labels is None else carry_over(drawn, config.labels)
    write_sample(drawn, out)
    left = drawn.size - carried
    fill = (f"add \"category\" to each case's line of {display_path(out)}" if _lines(out)
            else "label them (how: in the file)")
    if config.labels is not None:
        fill = (f"{carried} labels carried over from {display_path(config.labels)} (cases "
                f"drawn again with unchanged content); "
                + (f"{fill} that has none ({left} left)" if left else "nothing left to label"))
    return (f"sample: {drawn.size} of the run's {drawn.of} cases, drawn uniformly (seed "
            f"{drawn.seed}) -> {display_path(out)}; {fill} and gate with --labels")


def carry_over(drawn: DrawnSample, old: Path) -> int:
    """Fill in each drawn case's category from ``old`` where ``old`` labelled that case on
    the content it has now (its digest): a label is a fact about a case's content, so it
    holds for any draw that meets the same content again; a case that changed, or that
    ``old`` labelled with no digest, is left to label. Returns how many were carried."""
    from ..core.base.safeopen import read_regular
    from ..core.compare.labelfile import parse_labels
    from ..core.compare.labels import MAX_LABEL_BYTES

    rows = parse_labels(read_regular(old, MAX_LABEL_BYTES), old).labelled
    several = len(drawn.document["reports"]) > 1
    only = next(iter(drawn.document["reports"]))
    known = {(row.report or ("" if several else only), row.id): row for row in rows}
    carried = 0
    for case in drawn.document["cases"]:
        row = known.get((case.get("report", only), case["id"]))
        if row is not None and row.content and row.content == case["content"]:
            case["category"] = row.category
            carried += 1
    return carried


def draw_sample(config: Config, size: int, seed: int | None) -> DrawnSample:
    """Draw ``size`` of the run's cases with ``seed`` (a fresh one, recorded, when None)."""
    from .app import Failgate

    if size < MIN_LABELS:
        raise FailgateError(f"--n {size}: the gate needs at least {MIN_LABELS} labels "
                            "(200 is a good start: docs/judge.md)")
    app = Failgate(config)
    reports = [r for r in app.load_all(config.paths, replace(app.read_spec(), digests=True))
               if r.kind == "cases"]
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
    digests = {r.name: r.digests or {} for r in reports}
    header = {"seed": seed, "n": size, "run": run_digest(reports)}
    document = {
        "drawn_by": "failgate sample",
        "seed": seed,
        "n": size,
        "of": total,
        "run": header["run"],
        "reports": {r.name: len(r.all_case_ids()) for r in reports},
        "how_to_label": (
            "Look up each case in its report and decide what it truly is: one of "
            "`categories`, or null when the answer is good. The labels file is JSON Lines: "
            f"a first line {json.dumps(header)} (with `--out gold.jsonl` this file is it), "
            "then each case's line as listed with \"category\" added: {\"id\": \"<id>\", "
            "\"content\": \"...\", \"category\": \"<category>\"} or \"category\": null. Keep "
            "the other keys as written: they say which run and which content the label is "
            "of. Label every case: the interval assumes this uniform random sample, and a "
            "case left unlabelled counts at both extremes. Then gate with --labels."),
        "categories": categories,
        "cases": [{**({"report": report} if several else {}), "id": case,
                   "content": digests[report].get(case, "")} for report, case in drawn],
    }
    return DrawnSample(seed, size, total, document)


def _lines(out: Path) -> bool:
    """Whether ``out`` is the labels file itself (JSON Lines), not the sample document."""
    return out.suffix.lower() == ".jsonl"


def write_sample(drawn: DrawnSample, out: Path) -> None:
    """Write the sample to ``out``: the labels file to fill in (``.jsonl``), else the
    sample's document (UTF-8 JSON)."""
    if _lines(out):
        header = {key: value for key, value in drawn.document.items() if key != "cases"}
        text = "".join(json.dumps(line) + "\n" for line in (header, *drawn.document["cases"]))
    else:
        text = json.dumps(drawn.document, indent=2) + "\n"
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise FailgateError(f"cannot write: {exc.strerror or exc}", out) from None
