"""Noise bands: how far a run's numbers move when nothing but chance changed.

A noise band records the spread of each number over repeated runs of one
configuration (``failgate noise run1/ run2/ ...``); a baseline comparison calls a
change a regression only beyond it (see :mod:`.verdicts`). The file is the RAG
regression gate's ``noise_band.json``, read and written as that gate writes it::

    {"n_runs": 5, "config": {...}, "run_ids": [...],
     "metric_band": {"answerable_accuracy": {"mean", "std", "min", "max", "n"}, ...,
                     "mode:retrieval_miss": {...}, "mode:correct": {...}},
     "case_stability": {"<case id>": <repeats in which it changed>, ...},
     "unstable_cases": ["<case id>", ...], "cost_usd_generation": ..., "wall_seconds": ...}

``mode:<category>`` entries are counts (whole numbers); the others are metrics
(rates), kept as the exact decimals the file writes. Keys this module does not
know are kept, never an error, so a newer writer's file still reads.

A run of several reports pools them in ``metric_band`` (as the regression gate's format has
one report a run); ``failgate noise`` also writes each report's own count bands under
``reports`` (``{"<report>": {"run_ids": [...], "metric_band": {"mode:<category>": ...}}}``),
so each report's count moves and is allowed as that report's noise says, not the pool's.

``failgate noise`` adds two integers to each ``mode:`` entry, which the regression
gate's own reader ignores: ``moved``, the cases that were in the category in some of
the runs and not in others, and ``discordant``, the (case, pair of runs) in which a
case was in the category in exactly one run of the pair. ``discordant / (n (n-1) /
2)`` is the expected number of cases that move in or out between two runs, which
noise-aware ceilings are made from (see :mod:`.allowance`).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..stats.checks import check_int
from . import PASSED_MODE as PASSED_MODE  # defined in compare/__init__, read here too

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

MODE_PREFIX = "mode:"
_REQUIRED = ("min", "max", "n")
_KNOWN_TOP = ("n_runs", "config", "run_ids", "metric_band", "case_stability", "unstable_cases",
              "reports")
REPORTS = "reports"


@dataclass(frozen=True)
class NoiseBand:
    """How one category's count moved across ``n`` repeated runs of one configuration."""

    std: float
    min: int
    max: int
    n: int
    mean: float | None = None
    moved: int | None = None  # cases in the category in some runs and not in others
    discordant: int | None = None  # (case, pair of runs) in the category in one run of two

    def __post_init__(self) -> None:
        _check_std(self.std)
        object.__setattr__(self, "std", float(self.std))
        check_int("min", self.min)
        check_int("max", self.max)
        check_int("n", self.n, minimum=2)
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")
        for name in ("moved", "discordant"):
            if getattr(self, name) is not None:
                check_int(name, getattr(self, name))


@dataclass(frozen=True)
class MetricBand:
    """How a metric (a rate) moved across repeated runs; bounds as exact decimals."""

    std: float
    min: Fraction
    max: Fraction
    n: int
    mean: float | None = None

    @property
    def width(self) -> Fraction:
        return self.max - self.min


@dataclass(frozen=True)
class ReportNoise:
    """One report's own count bands in a band of runs of several reports."""

    bands: dict[str, NoiseBand] = field(default_factory=dict)
    run_ids: tuple[str, ...] = ()  # the report's own run ids (its header's), by run


@dataclass(frozen=True)
class NoiseDocument:
    """A whole ``noise_band.json``: count bands, metric bands, unstable cases, the rest."""

    bands: dict[str, NoiseBand] = field(default_factory=dict)
    metric_bands: dict[str, MetricBand] = field(default_factory=dict)
    case_stability: dict[str, int] = field(default_factory=dict)
    unstable_cases: tuple[str, ...] = ()
    n_runs: int | None = None
    config: dict[str, Any] | None = None
    run_ids: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, kept as they are
    reports: dict[str, ReportNoise] = field(default_factory=dict)  # per report, when several


def _check_std(std: object) -> None:
    if isinstance(std, bool) or not isinstance(std, int | float):
        raise TypeError(f"std must be a number, got {type(std).__name__}")
    if not math.isfinite(std) or std < 0:
        raise ValueError(f"std must be a finite number >= 0, got {std}")


def _spread(values: Sequence[float]) -> tuple[float, float]:
    """(mean, sample std), both to 6 decimals."""
    return round(float(statistics.fmean(values)), 6), round(statistics.stdev(values), 6)


def measure_noise(runs: Sequence[Mapping[str, int]]) -> dict[str, NoiseBand]:
    """Per category, the spread of its count over repeated runs (at least two).

    A category missing from a run counted 0 in it. ``std`` is the sample standard
    deviation (``n - 1``), rounded to 6 decimals. Categories come out sorted.
    """
    if len(runs) < 2:
        raise ValueError(f"a noise band needs at least 2 runs, got {len(runs)}")
    for index, run in enumerate(runs):
        for category, count in run.items():
            if not isinstance(category, str) or not category:
                raise ValueError(f"run {index}: category names must be non-empty strings, "
                                 f"got {category!r}")
            check_int(f"run {index}, count of {category!r}", count)
    bands: dict[str, NoiseBand] = {}
    for category in sorted({category for run in runs for category in run}):
        counts = [run.get(category, 0) for run in runs]
        mean, std = _spread(counts)
        bands[category] = NoiseBand(std=std, min=min(counts), max=max(counts), n=len(counts),
                                    mean=mean)
    return bands


def measure_metrics(runs: Sequence[Mapping[str, float]]) -> dict[str, MetricBand]:
    """Per metric present in every run, its spread over the runs (rates, 6 decimals)."""
    names = sorted(set.intersection(*(set(run) for run in runs))) if runs else []
    bands = {}
    for name in names:
        values = [round(float(run[name]), 6) for run in runs]
        mean, std = _spread(values)
        bands[name] = MetricBand(std=std, min=Fraction(repr(min(values))),
                                 max=Fraction(repr(max(values))), n=len(values), mean=mean)
    return bands


def movement_counts(outcomes: Sequence[Mapping[str, str]], names: Sequence[str]
                    ) -> dict[str, tuple[int, int]]:
    """Per outcome name, ``(moved, discordant)`` over the cases present in every run.

    A case in ``name`` in ``k`` of the ``r`` runs moved when ``0 < k < r``, and was in it
    in exactly one run of ``k (r - k)`` of the pairs of runs.
    """
    runs = len(outcomes)
    common = set.intersection(*(set(run) for run in outcomes)) if outcomes else set()
    found = {name: [0, 0] for name in names}
    for case in common:
        seen: dict[str, int] = {}
        for run in outcomes:
            seen[run[case]] = seen.get(run[case], 0) + 1
        for name, k in seen.items():
            if k < runs and name in found:
                found[name][0] += 1
                found[name][1] += k * (runs - k)
    return {name: (moved, discordant) for name, (moved, discordant) in found.items()}


def case_stability(outcomes: Sequence[Mapping[str, str]]) -> dict[str, int]:
    """Per case of the first run, in how many later runs its outcome differed from it."""
    first, rest = outcomes[0], outcomes[1:]
    return {case: sum(1 for run in rest if run.get(case) != outcome)
            for case, outcome in sorted(first.items())}


def _count_table(bands: Mapping[str, NoiseBand]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for category, band in sorted(bands.items()):
        entry = {"mean": band.mean} if band.mean is not None else {}
        entry.update({"std": band.std, "min": band.min, "max": band.max, "n": band.n})
        for name in ("moved", "discordant"):
            if getattr(band, name) is not None:
                entry[name] = getattr(band, name)
        table[f"{MODE_PREFIX}{category}"] = entry
    return table


def noise_band_document(bands: Mapping[str, NoiseBand] | NoiseDocument) -> dict[str, Any]:
    """The ``noise_band.json`` document, keys in the gate's order, unknown keys kept."""
    noise = bands if isinstance(bands, NoiseDocument) else NoiseDocument(dict(bands))
    table: dict[str, Any] = {}
    for name, metric in sorted(noise.metric_bands.items()):
        table[name] = {"mean": metric.mean, "std": metric.std, "min": float(metric.min),
                       "max": float(metric.max), "n": metric.n}
    table.update(_count_table(noise.bands))
    if not isinstance(bands, NoiseDocument):
        return {"metric_band": table}
    document: dict[str, Any] = {}
    if noise.n_runs is not None:
        document["n_runs"] = noise.n_runs
    if noise.config is not None:
        document["config"] = noise.config
    if noise.run_ids:
        document["run_ids"] = list(noise.run_ids)
    document["metric_band"] = table
    document["case_stability"] = dict(noise.case_stability)
    document["unstable_cases"] = list(noise.unstable_cases)
    if noise.reports:
        document[REPORTS] = {name: {"run_ids": list(report.run_ids),
                                    "metric_band": _count_table(report.bands)}
                             for name, report in sorted(noise.reports.items())}
    return {**document, **noise.extra}


def _whole(where: str, key: str, value: Any) -> int:
    """A count written as 64 or 64.0; anything else is an error."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: {key} must be an int (a count), got {value!r}")
    return value


def _entry(where: str, entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object, got {type(entry).__name__}")
    missing = [name for name in _REQUIRED if name not in entry]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(repr(m) for m in missing)}")
    for name, value in entry.items():
        _not_huge(where, name, value)
    for name in ("std", "mean"):
        if name in entry:
            try:
                _check_std(entry[name]) if name == "std" else _number(where, name, entry[name])
            except (TypeError, ValueError) as error:
                raise ValueError(f"{where}: {error}") from None
    return entry


_HUGE = 1 << 63  # no count of runs or cases, and no measurement, comes near it


def _not_huge(where: str, key: str, value: Any) -> None:
    """An integer of hundreds of digits is an error here, not an ``OverflowError`` later
    (where it becomes a float) or a comparison of numbers no run produces."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _HUGE:
        raise ValueError(f"{where}: {key} is a number of {len(str(abs(value))):,} digits; "
                         "a band's counts and measurements are below 2^63")


def _number(where: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{key} must be a finite number, got {value!r}")
    return float(value)


def _count_band(where: str, entry: dict[str, Any], std: float, mean: float | None,
                n: int) -> NoiseBand:
    moves = {name: _whole(where, name, entry[name])
             for name in ("moved", "discordant") if name in entry}
    return NoiseBand(std=std, min=_whole(where, "min", entry["min"]),
                     max=_whole(where, "max", entry["max"]), n=n, mean=mean, **moves)


def _read_reports(document: Mapping[str, Any]) -> dict[str, ReportNoise]:
    """Each report's own count bands (``reports``), read as the pooled ones are."""
    found = document.get(REPORTS, {})
    if not isinstance(found, dict):
        raise ValueError(f"noise band: '{REPORTS}' must map report names to their bands")
    reports = {}
    for name, report in found.items():
        where = f"noise band: {REPORTS}[{name!r}]"
        if not isinstance(report, dict) or not isinstance(report.get("metric_band"), dict):
            raise ValueError(f"{where} must be an object with a 'metric_band' object")
        run_ids = report.get("run_ids", [])
        if not isinstance(run_ids, list) or not all(isinstance(r, str) for r in run_ids):
            raise ValueError(f"{where}: 'run_ids' must be a list of run ids")
        bands = {}
        for key, entry in report["metric_band"].items():
            place = f"{where}[{key!r}]"
            if not isinstance(key, str) or not key.startswith(MODE_PREFIX) or key == MODE_PREFIX:
                raise ValueError(f"{place}: a report's bands are counts ('mode:<category>')")
            entry = _entry(place, entry)
            try:
                std = float(entry.get("std", 0.0))
                mean = float(entry["mean"]) if "mean" in entry else None
                bands[key[len(MODE_PREFIX):]] = _count_band(
                    place, entry, std, mean, check_int("n", entry["n"], minimum=2))
            except (TypeError, ValueError) as error:
                message = str(error)
                raise ValueError(message if message.startswith(place)
                                 else f"{place}: {message}") from None
        reports[str(name)] = ReportNoise(bands, tuple(run_ids))
    return reports


def read_noise_band(document: Any) -> NoiseDocument:
    """A ``noise_band.json`` document; ``ValueError`` naming the bad key.

    In ``metric_band``, ``mode:<category>`` entries are count bands, other keys
    metric bands; every entry needs ``min``, ``max`` and ``n`` (``std`` and
    ``mean`` are optional, other keys are ignored).
    """
    if not isinstance(document, dict):
        raise ValueError(f"noise band: the document must be a JSON object, "
                         f"got {type(document).__name__}")
    if "metric_band" not in document:
        raise ValueError("noise band: missing key 'metric_band'")
    table = document["metric_band"]
    if not isinstance(table, dict):
        raise ValueError(f"noise band: 'metric_band' must be an object, "
                         f"got {type(table).__name__}")
    bands: dict[str, NoiseBand] = {}
    metric_bands: dict[str, MetricBand] = {}
    for key in sorted(table, key=str):
        where = f"noise band: metric_band[{key!r}]"
        if not isinstance(key, str) or key in ("", MODE_PREFIX):
            raise ValueError(f"{where}: a key names a metric or 'mode:<category>'")
        entry = _entry(where, table[key])
        std = float(entry.get("std", 0.0))
        mean = float(entry["mean"]) if "mean" in entry else None
        try:
            n = check_int("n", entry["n"], minimum=2)
            if key.startswith(MODE_PREFIX):
                bands[key[len(MODE_PREFIX):]] = _count_band(where, entry, std, mean, n)
                continue
            low = Fraction(repr(_number(where, "min", entry["min"])))
            high = Fraction(repr(_number(where, "max", entry["max"])))
        except (TypeError, ValueError) as error:
            message = str(error)
            raise ValueError(message if message.startswith(where) else f"{where}: {message}"
                             ) from None
        if low > high:
            raise ValueError(f"{where}: min ({entry['min']}) must not exceed max "
                             f"({entry['max']})")
        metric_bands[key] = MetricBand(std=std, min=low, max=high, n=n, mean=mean)
    stability = document.get("case_stability", {})
    if not isinstance(stability, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in stability.values()):
        raise ValueError("noise band: 'case_stability' must map case ids to counts of runs")
    for case, runs in stability.items():
        _not_huge("noise band: case_stability", repr(case), runs)
    if isinstance(document.get("n_runs"), int):
        _not_huge("noise band", "n_runs", document["n_runs"])
    unstable = document.get("unstable_cases", [])
    if not isinstance(unstable, list) or not all(isinstance(c, str | int) for c in unstable):
        raise ValueError("noise band: 'unstable_cases' must be a list of case ids")
    config = document.get("config")
    run_ids = document.get("run_ids", [])
    n_runs = document.get("n_runs")
    return NoiseDocument(
        bands=bands, metric_bands=metric_bands,
        case_stability={str(k): v for k, v in stability.items()},
        unstable_cases=tuple(str(c) for c in unstable),
        n_runs=n_runs if isinstance(n_runs, int) and not isinstance(n_runs, bool) else None,
        config=config if isinstance(config, dict) else None,
        run_ids=tuple(str(r) for r in run_ids) if isinstance(run_ids, list) else (),
        extra={k: v for k, v in document.items() if k not in _KNOWN_TOP},
        reports=_read_reports(document),
    )
