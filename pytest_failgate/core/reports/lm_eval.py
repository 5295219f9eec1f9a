"""lm-evaluation-harness: the per-sample logs ``samples_<task>_<timestamp>.jsonl``.

``lm_eval --log_samples`` writes one JSON line per (document, filter): ``doc_id``,
``filter``, ``metrics`` (the names of the metrics scored, the first being the task's
main one) and each metric's value under its own name. Each line becomes one case:

``id``
    ``<doc_id>/<filter>`` (``17/none``): the same document under two filters is two cases.
``metric``, ``score``
    The first name in ``metrics``, and its value (null when absent or not a number;
    ``true``/``false`` read as 1/0).
``higher_is_better``
    From the run's ``results_<timestamp>.json`` beside the file
    (``higher_is_better.<task>.<metric>``); without one, false only for the metrics
    known to fall as they improve (perplexities, bits per byte, TER).
``doc_id``, ``filter``, ``target``
    As written (``target`` only when it is text or a number).

A report is named ``samples_<task>`` (the timestamp dropped), so ceilings follow the
task from run to run. ``results_*.json`` itself holds only aggregates and is skipped.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..base.errors import FailgateError
from .jsonfile import describe, json_lines, load_json, top_level
from .readers import Reader, ReaderOutput, ToolRun

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path

# lm-eval names its files <prefix>_<task>_<ISO-ish timestamp>.<suffix>
_TIMESTAMPED = re.compile(r"(?P<stem>.+?)_(?P<stamp>\d{4}-\d{2}-\d{2}T[0-9.:-]+)")
LOWER_IS_BETTER = frozenset({"perplexity", "word_perplexity", "byte_perplexity",
                             "bits_per_byte", "ter"})


def without_timestamp(stem: str) -> str:
    """``samples_gsm8k_2026-01-21T03-44-18.458309`` -> ``samples_gsm8k``."""
    match = _TIMESTAMPED.fullmatch(stem)
    return match.group("stem") if match else stem


def run_order(stem: str) -> tuple[float, ...] | None:
    """When the run began, from the name's timestamp (``2026-01-21T03-44-18.458309``, the
    local time lm_eval writes): every run of ``--output_path`` lands in one folder, so a
    second run beside the first is gated as the latest, the first listed as skipped."""
    from datetime import datetime

    match = _TIMESTAMPED.fullmatch(stem)
    if match is None:
        return None
    for layout in ("%Y-%m-%dT%H-%M-%S.%f", "%Y-%m-%dT%H-%M-%S"):
        try:
            moment = datetime.strptime(match.group("stamp"), layout)
        except ValueError:
            continue
        return (float(moment.toordinal()), moment.hour * 3600.0 + moment.minute * 60.0
                + moment.second + moment.microsecond / 1e6)
    return None


class LmEvalSamplesReader(Reader):
    """``samples_<task>_<timestamp>.jsonl`` of lm-evaluation-harness (module docstring)."""

    name: str = "lm-eval"
    suffixes: tuple[str, ...] = (".jsonl", ".json")
    taxonomy: str = "lm-eval"
    run: ToolRun | None = ToolRun(
        "lm_eval --model hf --tasks TASK --output_path results --log_samples",
        note="lm_eval writes per-case samples only with --log_samples")
    # a file's head holds one of these whenever ``claims`` says yes (None: no such list)
    probe: tuple[bytes, ...] | None = (b"doc_id", b'"lm_eval_version"', b'"higher_is_better"')

    def claims(self, head: bytes) -> bool:
        """lm-eval's own top-level shape on the first line: ``doc_id`` beside a ``metrics``
        list (or, on a line longer than the head, ``doc_id`` then ``doc`` first, the order
        lm-eval writes); a ``doc_id`` nested in a list, or a ``metrics`` object, is another
        format's."""
        found = top_level(head.split(b"\n", 1)[0])
        if found is not None and b"doc_id" in found[0]:
            keys, whole = found
            if keys.get(b"metrics") == ord("["):
                return True
            if not whole and list(keys)[:2] == [b"doc_id", b"doc"]:
                return True
        # the run's aggregates: recognised so they are skipped with a reason
        return b'"lm_eval_version"' in head or (b'"higher_is_better"' in head
                                                and b'"n-samples"' in head)

    def read(self, path: Path) -> ReaderOutput | None:
        if path.suffix == ".json":
            data = load_json(path)
            if isinstance(data, dict) and "results" in data and "higher_is_better" in data:
                return ReaderOutput(skipped="lm-eval run aggregates; its samples_*.jsonl "
                                    "files are gated")
            return None
        stem = path.name[: -len(path.suffix)]
        task = without_timestamp(stem).removeprefix("samples_")
        directions = _directions(path.parent, task)
        return ReaderOutput(cases=_cases(path, directions), name=without_timestamp(stem),
                            run_order=run_order(stem))


def _directions(folder: Path, task: str) -> Mapping[str, bool]:
    """``higher_is_better`` of the task's metrics, from the newest results file beside it."""
    for candidate in sorted(folder.glob("results_*.json"), reverse=True):
        try:
            data = json.loads(candidate.read_bytes())
        except (OSError, ValueError):
            continue
        found = data.get("higher_is_better", {}).get(task) if isinstance(data, dict) else None
        if isinstance(found, dict):
            return {k: v for k, v in found.items() if isinstance(v, bool)}
    return {}


def _cases(path: Path, directions: Mapping[str, bool]) -> Iterator[dict[str, Any]]:
    for number, row in json_lines(path, "an lm-eval sample"):
        yield _case(row, directions, path, number)


def _case(row: Mapping[str, Any], directions: Mapping[str, bool], path: Path,
          line: int) -> dict[str, Any]:
    doc_id, metrics = row.get("doc_id"), row.get("metrics")
    if type(doc_id) is not int and not isinstance(doc_id, str):
        raise FailgateError(f"doc_id is {describe(doc_id)}; expected a number", path, line)
    if not isinstance(metrics, list) or not metrics or not isinstance(metrics[0], str):
        raise FailgateError(f"metrics is {describe(metrics)}; expected a list of metric "
                            "names", path, line)
    metric = metrics[0]
    value = row.get(metric)
    if isinstance(value, bool):
        value = int(value)
    score = value if isinstance(value, int | float) else None
    filter_name = row.get("filter") if isinstance(row.get("filter"), str) else "none"
    target = row.get("target")
    return {
        "id": f"{doc_id}/{filter_name}", "doc_id": doc_id, "filter": filter_name,
        "metric": metric, "score": score,
        "higher_is_better": directions.get(metric, metric not in LOWER_IS_BETTER),
        "target": target if isinstance(target, str | int | float) else None,
    }
