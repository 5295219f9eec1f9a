"""The shape of ``ceilings.yaml``, as pydantic models.

The models are strict on purpose: ``64`` is a ceiling, ``"64"``, ``64.0`` and
``true`` are mistakes, and a rate is an exact fraction read from the text the
user wrote (``0.05`` is 1/20), so no verdict depends on float rounding.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from ..base.errors import did_you_mean
from ..base.reasons import reason_words
from ..taxonomy import DEFAULT_TAXONOMY

CEILING_KEYS = ("max", "observed", "allowance", "max_rate", "per", "significance", "reason",
                "owner", "goal")
TOP_KEYS = ("version", "taxonomy", "taxonomies", "significance", "noise", "inconclusive",
            "instrument", "instruments", "slices", "ceilings", "reports", "contracts",
            "floors", "reason")
# ``floors:`` was first called ``metrics:`` (the word a taxonomy uses for a case's metric):
# the old key is still read, with a note to rename it
OLD_FLOORS = "metrics"
INSTRUMENT_KEYS = ("from", "to", "reason")
CONTRACT_KEYS = ("check", "reports", "reason")
METRIC_KEYS = ("min", "min_n", "substantive", "reason", "owner")
SLICE_SEPARATOR = "="  # a key such as ``query_type=comparison`` holds a slice's ceilings


# The share of a report's cases outside the system under test above which the run
# is inconclusive, where the ceilings file does not set it (``inconclusive:``).
DEFAULT_SHARE = Fraction(1, 4)

def governing_locs(report: str | None, slice_: str | None, name: str
                   ) -> list[tuple[str, ...]]:
    """Where the entry that governs ``name`` may be written, most specific first: the
    report's slice block, the default slice block, the report's entry, the default. The
    first written governs: the gate checks against it, the guard compares it."""
    chain: list[tuple[str, ...]] = []
    if slice_ is not None:
        if report is not None:
            chain.append(("reports", report, slice_, name))
        chain.append(("ceilings", slice_, name))
    if report is not None:
        chain.append(("reports", report, name))
    chain.append(("ceilings", name))
    return chain


def rate_allowance(max_rate: Fraction, n_cases: int) -> int:
    """The whole cases a rate allows among ``n_cases``: ``floor(max_rate * n_cases)``."""
    return math.floor(max_rate * n_cases)


def _whole(value: object, what: str) -> int:
    if type(value) is not int:
        raise ValueError(f"{what} must be a whole number of cases, got {_show(value)}")
    if value < 0:
        raise ValueError(f"{what} must be 0 or more, got {value}")
    return value


def _alpha(value: object) -> Fraction:
    if type(value) is not Fraction or not 0 < value < 1:
        raise ValueError(f"significance is a level between 0 and 1 such as 0.05, got "
                         f"{_show(value)}")
    return value


def _show(value: object) -> str:
    if isinstance(value, Fraction):
        return str(float(value))
    if isinstance(value, str):
        return f'"{value}" (text)'
    return repr(value)


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be text, got {_show(value)}")
    return value


# Free text (a reason, an owner, an expression): never a number or a list read as one.
Text = Annotated[str, BeforeValidator(_text)]


class Ceiling(BaseModel):
    """The most cases a category (or ``total``) may have: a count, a rate, or both."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    max: int | None = None
    # on a noisy pipeline, max = observed + allowance: the count the ceiling was set from,
    # and the rise an unchanged system stays within (``stats.allowance``)
    observed: int | None = None
    allowance: int | None = None
    max_rate: Fraction | None = None
    per: Text | None = None  # max_rate among the cases where this expression holds
    # fail a max_rate only when the count is significantly above it (else WARN)
    significance: Fraction | None = None
    reason: Text | None = None
    owner: Text | None = None
    goal: int | str | None = None

    def allows(self, n_cases: int | None) -> int | None:
        """The most cases this ceiling allows among ``n_cases`` (a report, a slice or a
        population): the smaller of ``max`` and ``floor(max_rate * n_cases)``; None when a
        rate has no case total to be a fraction of."""
        limits = [] if self.max is None else [self.max]
        if self.max_rate is not None:
            if n_cases is None:
                return None
            limits.append(rate_allowance(self.max_rate, n_cases))
        return min(limits)

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, value: Any) -> Any:
        if isinstance(value, dict):
            if "max" not in value and "max_rate" not in value:
                unknown = [key for key in value if key not in CEILING_KEYS]
                if unknown:
                    raise ValueError(
                        f"unknown key '{unknown[0]}'" + did_you_mean(unknown[0], CEILING_KEYS)
                    )
                raise ValueError("a ceiling mapping needs 'max' (a count) or 'max_rate'")
            return value
        return {"max": _whole(value, "a ceiling")}

    @field_validator("max", mode="before")
    @classmethod
    def _max(cls, value: Any) -> int:
        return _whole(value, "max")

    @field_validator("observed", "allowance", mode="before")
    @classmethod
    def _parts(cls, value: Any, info: Any) -> int:
        return _whole(value, info.field_name)

    @field_validator("max_rate", mode="before")
    @classmethod
    def _max_rate(cls, value: Any) -> Fraction:
        if type(value) is int:
            value = Fraction(value)
        if not isinstance(value, Fraction):
            raise ValueError(f"max_rate must be a number between 0 and 1, got {_show(value)}")
        if not 0 <= value <= 1:
            raise ValueError(f"max_rate must be between 0 and 1, got {_show(value)}")
        return value

    @field_validator("significance", mode="before")
    @classmethod
    def _significance(cls, value: Any) -> Fraction:
        return _alpha(value)

    @model_validator(mode="after")
    def _parts_add_up(self) -> Ceiling:
        if (self.observed is None) != (self.allowance is None):
            given, missing = (("observed", "allowance") if self.allowance is None
                              else ("allowance", "observed"))
            raise ValueError(f"'{given}' needs '{missing}': a noisy ceiling is max = observed "
                             "+ allowance, all three written")
        if self.observed is not None and self.allowance is not None:
            if self.max is None:
                raise ValueError("observed and allowance need 'max' (their sum, the ceiling "
                                 "enforced)")
            if self.max != self.observed + self.allowance:
                raise ValueError(f"max {self.max} is not observed {self.observed} + allowance "
                                 f"{self.allowance} = {self.observed + self.allowance}; "
                                 "change them together")
        return self

    @model_validator(mode="after")
    def _per_needs_a_rate(self) -> Ceiling:
        if self.per is not None and self.max_rate is None:
            raise ValueError("'per' names the population of a rate: it needs 'max_rate'")
        if self.significance is not None and self.max_rate is None:
            raise ValueError("'significance' tests a rate: it needs 'max_rate'")
        return self


class MetricFloor(BaseModel):
    """The least mean a metric may have, over the cases where it applies (docs/design.md).

    A case whose value is null does not count, in the numerator or the denominator;
    ``min_n`` asks for at least that many cases with a value.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    min: Fraction
    min_n: int | None = None
    substantive: Text | None = None  # cases that answered; others must not carry 1.0
    reason: Text | None = None
    owner: Text | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return value
        return {"min": value}

    @field_validator("min", mode="before")
    @classmethod
    def _min(cls, value: Any) -> Fraction:
        if type(value) is int:
            return Fraction(value)
        if type(value) is not Fraction:
            raise ValueError(f"a floor is a number such as 0.25, got {_show(value)}")
        return value

    @field_validator("min_n", mode="before")
    @classmethod
    def _min_n(cls, value: Any) -> int:
        number = _whole(value, "min_n")
        if number < 1:
            raise ValueError("min_n is at least 1")
        return number



class InstrumentChange(BaseModel):
    """A change of the measuring instrument the ceilings file accepts, with its reason: a
    baseline comparison across it is judged instead of inconclusive."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    from_: Text = Field(alias="from")
    to: Text
    reason: Text

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError("an accepted change is {from: ..., to: ..., reason: \"why\"}")
        return value

    @field_validator("reason")
    @classmethod
    def _says_something(cls, value: str) -> str:
        """A reason of spaces, punctuation or invisible characters says nothing, so it accepts
        nothing: the gate reads it as the guard does (``reason_words``)."""
        if not reason_words(value):
            raise ValueError("a reason says why in words: this one has no letter or digit")
        return value


class Contract(BaseModel):
    """An (in)equality between counts and a report's recorded aggregates, checked per report."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    check: str
    reports: list[str] | None = None  # only these reports (default: every report)
    reason: Text | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, value: Any) -> Any:
        return {"check": value} if isinstance(value, str) else value


class CeilingsModel(BaseModel):
    """A whole ``ceilings.yaml``: defaults for every report, and per-report overrides."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1]
    # a name, a file, or a taxonomy written inline
    taxonomy: str | dict[str, Any] = DEFAULT_TAXONOMY
    # per report name, or per format (a report's name wins): a name or a file
    taxonomies: dict[str, str] = {}
    # the level of the exact tests: baseline comparisons, and max_rate ceilings
    significance: Fraction | None = None
    # where the allowances come from: a noise_band.json (relative to this file), or
    # "repeats" (each report's own repeated cases); init, check and ratchet read it
    noise: Text | None = None
    # the share of a report's cases that may fail outside the system under test (a
    # provider, quota or judge error) before the report is inconclusive (default 1/4)
    inconclusive: Fraction | None = None
    # what measured the runs the ceilings were set from (init writes it), per report:
    # a later run measured otherwise is inconclusive unless `instruments` accepts it
    instrument: dict[str, dict[str, Text]] = {}
    # accepted changes of the measuring instrument (judge_model, grader, ...), by key
    instruments: dict[str, InstrumentChange] = {}
    slices: list[str] = []
    ceilings: dict[str, Ceiling] = {}
    reports: dict[str, dict[str, Ceiling]] = {}
    contracts: dict[str, Contract] = {}
    floors: dict[str, MetricFloor] = {}
    old_floors_key: bool = False  # the file writes them under ``metrics:`` (OLD_FLOORS)
    # Why this change loosens what no entry can explain (taxonomy, significance, slices,
    # a removed entry); the loosening guard accepts it when this change wrote it.
    reason: Text | None = None
    # Slice blocks (``query_type=comparison: {...}``) written among the ceilings,
    # moved here by ``_shape``; ``SLICE_HOMES`` maps them back for error places.
    slice_ceilings: dict[str, dict[str, Ceiling]] = {}
    report_slices: dict[str, dict[str, dict[str, Ceiling]]] = {}

    @property
    def floors_key(self) -> str:
        """The key the file writes its metric floors under (``floors``, or the old name)."""
        return OLD_FLOORS if self.old_floors_key else "floors"

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError("the file must be a mapping with version, taxonomy, ceilings")
        if "version" not in value:
            raise ValueError("'version: 1' is required (the format of this file)")
        for key in ("ceilings", "reports", "contracts", "slices", "floors", OLD_FLOORS,
                    "taxonomies", "instrument", "instruments"):
            if key in value and value[key] is None:
                raise ValueError(f"'{key}' is empty; remove it or add entries")
        for key in ("slice_ceilings", "report_slices", "old_floors_key"):
            if key in value:
                raise ValueError(f"unknown key '{key}'")
        value = dict(value)
        if OLD_FLOORS in value:
            if "floors" in value:
                raise ValueError(f"both 'floors' and '{OLD_FLOORS}' (its old name): write the "
                                 "metric floors under 'floors' only")
            value["floors"], value["old_floors_key"] = value.pop(OLD_FLOORS), True
        if isinstance(value.get("ceilings"), dict):
            value["ceilings"], value["slice_ceilings"] = _split_slices(value["ceilings"])
        if isinstance(value.get("reports"), dict):
            reports, slices = {}, {}
            for name, entries in value["reports"].items():
                if isinstance(entries, dict):
                    reports[name], slices[name] = _split_slices(entries)
                else:
                    reports[name] = entries
            value["reports"], value["report_slices"] = reports, slices
        return value

    @field_validator("significance", mode="before")
    @classmethod
    def _significance(cls, value: Any) -> Fraction:
        return _alpha(value)

    @field_validator("inconclusive", mode="before")
    @classmethod
    def _inconclusive(cls, value: Any) -> Fraction:
        if type(value) is int:
            value = Fraction(value)
        if type(value) is not Fraction or not 0 <= value <= 1:
            raise ValueError("inconclusive is the share of a report's cases that may fail outside "
                             f"the system under test, between 0 and 1 such as 0.25, got "
                             f"{_show(value)}")
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> int:
        if value != 1 or type(value) is not int:
            raise ValueError(f"version {_show(value)} is not supported; this failgate reads 1")
        return 1

    @field_validator("taxonomy", mode="before")
    @classmethod
    def _taxonomy(cls, value: Any) -> str | dict[str, Any]:
        if isinstance(value, dict) or (isinstance(value, str) and value):
            return value
        raise ValueError("taxonomy is a name such as 'rag', a path to a taxonomy file, or a "
                         "taxonomy written inline")

    @field_validator("reports", mode="before")
    @classmethod
    def _reports(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for name, entries in value.items():
                if entries is None:
                    raise ValueError(f"report '{name}' has no ceilings; remove it or add some")
        return value


def _split_slices(section: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    plain = {k: v for k, v in section.items() if SLICE_SEPARATOR not in k}
    return plain, {k: v for k, v in section.items() if SLICE_SEPARATOR in k}


def yaml_loc(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """Where a model location is written in the file (slice blocks sit among ceilings)."""
    if loc[:1] == ("slice_ceilings",):
        return ("ceilings", *loc[1:])
    if loc[:1] == ("report_slices",):
        return ("reports", *loc[1:])
    return loc
