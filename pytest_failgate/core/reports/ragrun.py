"""The RAG regression gate's run folders, read as they are.

A run folder holds ``attribution.jsonl`` (one case a line: ``id``, ``slice``,
``answerable``, ``correct``, ``value_present``, ``retrieval_strict_ok``,
``over_answer``, ``primary_failure``, sometimes ``attribution_detail``),
``run.jsonl`` (a header line ``{"type": "header", ..., "config": {...}}`` and then
one line per case with the question, chunks and answer), ``metrics.json`` (the
run's aggregates and ``failure_distribution``), ``meta.json`` (role, source run,
a note) and, beside a baseline, ``noise_band.json``.

``attribution.jsonl`` is the report: its cases are classified by the built-in
``rag-gate`` taxonomy (a category per ``primary_failure``, ``correct`` meaning
passed). The header's ``config`` (with the system's model names beside it) is what a
comparison diffs; ``metrics.json`` is kept as the recorded aggregates, and its
``failure_distribution`` is cross-checked against the cases' modes (the report's
``consistency`` item). The header's ``judge_model`` (and an eval set's version, when it
records one) is the run's measuring instrument, which a comparison checks first. The
other files are the folder's companions: listed as skipped, never read as reports
(``run.jsonl`` would otherwise be taken for a JSONL report of 101 "cases").
Recognition is by content (``claims``): a first line with ``primary_failure``, a
header line, the aggregates' ``failure_distribution``; a file claimed but not of
the folder (no ``attribution.jsonl`` beside it) is left to the other readers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.errors import FailgateError
from .jsonfile import json_lines, load_json, loads, open_file
from .readers import Reader, ReaderOutput

if TYPE_CHECKING:
    from pathlib import Path

ATTRIBUTION = "attribution.jsonl"
RUN_LOG = "run.jsonl"
COMPANIONS = {
    "metrics.json": "the run folder's aggregates, read with attribution.jsonl",
    "meta.json": "the run folder's description, read with attribution.jsonl",
    "noise_band.json": "a noise band: give it as the noise setting",
}
HEAD = 1 << 16
MODEL_KEYS = ("generation_model", "embedding_model")  # the system's, beside its config
INSTRUMENT_KEYS = ("judge_model", "dataset_version", "eval_set")  # what measured it


def _first_line(path: Path) -> Any:
    """The first line decoded, or None when it is not one JSON value."""
    try:
        with open_file(path) as handle:
            line = handle.readline(HEAD)
    except OSError as exc:
        raise FailgateError(f"cannot read: {exc.strerror}", path) from None
    try:
        return loads(line, path)
    except FailgateError:
        return None


def _is_header(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "header"


def run_config(path: Path) -> dict[str, Any] | None:
    """The configuration a ``run.jsonl`` header records, with the model names beside it."""
    header = _first_line(path)
    if not _is_header(header):
        raise FailgateError('the first line must be the header {"type": "header", ...}',
                            path, 1, 1)
    config = header.get("config")
    if not isinstance(config, dict):
        raise FailgateError("the header's 'config' must be an object", path, 1, 1)
    models = {key: header[key] for key in MODEL_KEYS if key in header and key not in config}
    return {**config, **models}


def run_instrument(path: Path) -> dict[str, str] | None:
    """What measured the run, as its header records it (the judge model, the eval set)."""
    header = _first_line(path)
    if not _is_header(header):
        return None
    found = {key: str(header[key]) for key in INSTRUMENT_KEYS if header.get(key) is not None}
    return found or None


def _cases(path: Path) -> list[dict[str, Any]]:
    cases = []
    for number, case in json_lines(path, "a case"):
        if "primary_failure" not in case:
            raise FailgateError("the case has no 'primary_failure'", path, number, 1)
        cases.append(case)
    return cases


def _recorded(folder: Path) -> dict[str, Any]:
    """``metrics.json`` and ``meta.json`` beside the cases, when present."""
    recorded: dict[str, Any] = {}
    metrics_path = folder / "metrics.json"
    if metrics_path.is_file():
        metrics = load_json(metrics_path)
        if not isinstance(metrics, dict):
            raise FailgateError("must be a JSON object", metrics_path)
        recorded.update(metrics)
        distribution = metrics.get("failure_distribution")
        if isinstance(distribution, dict) and all(type(v) is int for v in distribution.values()):
            recorded["num_predictions"] = sum(distribution.values())
    meta_path = folder / "meta.json"
    if meta_path.is_file():
        meta = load_json(meta_path)
        if isinstance(meta, dict):
            recorded["meta"] = meta
    return recorded


def _cross_check(cases: list[dict[str, Any]], recorded: dict[str, Any]) -> list[str] | None:
    """How ``metrics.json``'s ``failure_distribution`` disagrees with the cases' modes.

    A mode the distribution omits counted 0 (the gate writes only the modes it saw);
    ``None`` when there is no distribution to check against.
    """
    distribution = recorded.get("failure_distribution")
    if not isinstance(distribution, dict):
        return None
    found: dict[str, int] = {}
    for case in cases:
        mode = str(case["primary_failure"])
        found[mode] = found.get(mode, 0) + 1
    return [f"{mode}: metrics.json records {distribution.get(mode, 0)}, attribution.jsonl has "
            f"{found.get(mode, 0)}"
            for mode in sorted(found.keys() | distribution.keys())
            if distribution.get(mode, 0) != found.get(mode, 0)]


class RagRunReader(Reader):
    """Run folders of the RAG regression gate (see the module docstring)."""

    name = "rag-gate"
    suffixes: tuple[str, ...] = (".jsonl", ".json")
    taxonomy = "rag-gate"
    # what the folder's files hold near their start: cases, the header, the aggregates,
    # the description, a noise band
    MARKERS = (b'"primary_failure"', b'"header"', b'"failure_distribution"', b'"source_run"',
               b'"metric_band"')
    probe: tuple[bytes, ...] | None = MARKERS  # whenever ``claims`` says yes, one is there

    def claims(self, head: bytes) -> bool:
        return any(marker in head for marker in self.MARKERS)

    def read(self, path: Path) -> ReaderOutput | None:
        folder = path.parent
        beside = (folder / ATTRIBUTION).is_file()
        if path.suffix == ".json":
            if path.name in COMPANIONS and (beside or path.name == "noise_band.json"):
                return ReaderOutput(cases=(), skipped=COMPANIONS[path.name])
            return None
        first = _first_line(path)
        if beside and (path.name == RUN_LOG or _is_header(first)):
            return ReaderOutput(cases=(), skipped="the run log of a run folder: its header's "
                                                  "config is read with attribution.jsonl")
        if not (isinstance(first, dict) and "primary_failure" in first):
            return None
        log = folder / RUN_LOG
        config = run_config(log) if log.is_file() else None
        cases = _cases(path)
        recorded = _recorded(folder)
        header = _first_line(log) if log.is_file() else None
        if isinstance(header, dict) and _is_header(header) and isinstance(
                header.get("timestamp"), str):
            recorded["ran"] = (header["timestamp"], "run.jsonl timestamp")  # when it ran
        declared = header.get("n_cases") if isinstance(header, dict) else None
        return ReaderOutput(cases=cases, recorded=recorded, config=config,
                            contradictions=_cross_check(cases, recorded),
                            instrument=run_instrument(log) if log.is_file() else None,
                            expected=declared if type(declared) is int else None)
