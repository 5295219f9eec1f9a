"""Noise bands: how far a run's counts move when nothing but chance changed.

A noise band records, per category, the spread of its count over repeated runs
of one configuration (``failgate noise run1/ run2/ ...``); a baseline comparison
calls an increase a regression only beyond it (see :mod:`.verdicts`).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .checks import check_int

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence



@dataclass(frozen=True)
class NoiseBand:
    """How one category's count moved across ``n`` repeated runs of one configuration."""

    std: float
    min: int
    max: int
    n: int

    def __post_init__(self) -> None:
        if isinstance(self.std, bool) or not isinstance(self.std, (int, float)):
            raise TypeError(f"std must be a number, got {type(self.std).__name__}")
        if not math.isfinite(self.std) or self.std < 0:
            raise ValueError(f"std must be a finite number >= 0, got {self.std}")
        object.__setattr__(self, "std", float(self.std))
        check_int("min", self.min)
        check_int("max", self.max)
        check_int("n", self.n, minimum=2)
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")


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
    categories = sorted({category for run in runs for category in run})
    bands: dict[str, NoiseBand] = {}
    for category in categories:
        counts = [run.get(category, 0) for run in runs]
        bands[category] = NoiseBand(std=round(statistics.stdev(counts), 6), min=min(counts),
                                    max=max(counts), n=len(counts))
    return bands


_MODE_PREFIX = "mode:"
_BAND_FIELDS = ("std", "min", "max", "n")


def noise_band_document(bands: Mapping[str, NoiseBand]) -> dict[str, Any]:
    """The ``noise_band.json`` shape: ``{"metric_band": {"mode:<category>": {...}}}``."""
    return {"metric_band": {
        f"{_MODE_PREFIX}{category}": {"std": band.std, "min": band.min, "max": band.max,
                                      "n": band.n}
        for category, band in sorted(bands.items())
    }}


def read_noise_band(document: Any) -> dict[str, NoiseBand]:
    """The inverse of :func:`noise_band_document`; ``ValueError`` naming the bad key.

    Other top-level keys are ignored; inside ``metric_band`` every key must be
    ``mode:<category>`` and every entry must have exactly ``std``, ``min``,
    ``max`` and ``n``.
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
    for key in sorted(table, key=str):
        where = f"noise band: metric_band[{key!r}]"
        if not isinstance(key, str) or not key.startswith(_MODE_PREFIX) \
                or len(key) == len(_MODE_PREFIX):
            raise ValueError(f"{where}: keys must look like 'mode:<category>'")
        entry = table[key]
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be an object, got {type(entry).__name__}")
        missing = [name for name in _BAND_FIELDS if name not in entry]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(repr(m) for m in missing)}")
        unknown = sorted(str(name) for name in entry if name not in _BAND_FIELDS)
        if unknown:
            raise ValueError(f"{where}: unknown {', '.join(repr(u) for u in unknown)}")
        try:
            band = NoiseBand(std=entry["std"], min=entry["min"], max=entry["max"],
                             n=entry["n"])
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}: {error}") from None
        bands[key[len(_MODE_PREFIX):]] = band
    return bands
