"""The shape of ``ceilings.yaml``, as frozen dataclasses read by hand.

The reading is strict on purpose: ``64`` is a ceiling, ``"64"``, ``64.0`` and
``true`` are mistakes, and a rate is an exact fraction read from the text the
user wrote (``0.05`` is 1/20), so no verdict depends on float rounding.

Plain dataclasses and a few small readers, not a validation library: every
``check`` and every pytest run with ``--failgate`` reads this file, and building
validators for it cost more than the rest of the run on a small report. A reader
records each problem with its place (``Problem``) and goes on with the next field,
so the error names the earliest problem in the file and counts the others.
"""

from __future__ import annotations

from dataclasses import field, fields
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from ..base.classes import dataclass
from ..base.errors import did_you_mean
from ..base.reasons import reason_words
from ..taxonomy import DEFAULT_TAXONOMY
from .limit import BOUNDS, Limit

if TYPE_CHECKING:
    from collections.abc import Callable

TOP_KEYS = ("version", "taxonomy", "taxonomies", "significance", "noise", "labels",
            "inconclusive",
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


Loc = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the file's shape, at its place in the model (``yaml_loc``
    maps it to where the file writes it)."""

    loc: Loc
    message: str
    at_key: bool = False  # an unknown key: point at the key rather than its value


class CeilingsShapeError(ValueError):
    """A ceilings document without the file's shape: every problem found in it."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(problems[0].message)
        self.problems = problems


class _Recorded(Exception):
    """A value whose problems are recorded already: its container fails too."""


if TYPE_CHECKING:
    # reads one value at its place; raises ValueError (recorded there) or _Recorded
    ValueReader = Callable[[Any, Loc, list[Problem]], Any]
    Spec = tuple[str, str, ValueReader, bool]  # attribute, key as written, reader, required


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
    """Free text (a reason, an owner, an expression): never a number or a list read as one."""
    if not isinstance(value, str):
        raise ValueError(f"must be text, got {_show(value)}")
    return value


def _string(value: object) -> str:
    """A name (a slice field, a taxonomy, a report)."""
    if not isinstance(value, str):
        raise ValueError("Input should be a valid string")
    return value


def _max_rate(value: object) -> Fraction:
    if type(value) is int:
        value = Fraction(value)
    if not isinstance(value, Fraction):
        raise ValueError(f"max_rate must be a number between 0 and 1, got {_show(value)}")
    if not 0 <= value <= 1:
        raise ValueError(f"max_rate must be between 0 and 1, got {_show(value)}")
    return value


def _goal(value: object) -> int | str:
    if isinstance(value, str):
        return value
    if isinstance(value, int):  # a bool reads as 0 or 1, as it always has
        return int(value)
    if isinstance(value, Fraction) and value.denominator == 1:
        return int(value)
    raise ValueError(f"goal must be a whole number of cases or text, got {_show(value)}")


def _min(value: object) -> Fraction:
    if type(value) is int:
        return Fraction(value)
    if type(value) is not Fraction:
        raise ValueError(f"a floor is a number such as 0.25, got {_show(value)}")
    return value


def _min_n(value: object) -> int:
    number = _whole(value, "min_n")
    if number < 1:
        raise ValueError("min_n is at least 1")
    return number


def _inconclusive(value: object) -> Fraction:
    if type(value) is int:
        value = Fraction(value)
    if type(value) is not Fraction or not 0 <= value <= 1:
        raise ValueError("inconclusive is the share of a report's cases that may fail outside "
                         f"the system under test, between 0 and 1 such as 0.25, got "
                         f"{_show(value)}")
    return value


def _version(value: object) -> Literal[1]:
    if value != 1 or type(value) is not int:
        raise ValueError(f"version {_show(value)} is not supported; this failgate reads 1")
    return 1


def _taxonomy(value: object) -> str | dict[str, Any]:
    if isinstance(value, dict) or (isinstance(value, str) and value):
        return value
    raise ValueError("taxonomy is a name such as 'rag', a path to a taxonomy file, or a "
                     "taxonomy written inline")


def _plain(check: Callable[[Any], Any], optional: bool = False) -> ValueReader:
    """A reader of one value by ``check`` (None stays None where ``optional``)."""
    def read(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        return None if optional and value is None else check(value)
    return read


def _mapping(item: ValueReader) -> ValueReader:
    """A reader of a mapping of names to values each read by ``item``."""
    def read(value: Any, loc: Loc, problems: list[Problem]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ValueError("expected a mapping of names to ceilings")
        return _each(value.items(), item, loc, problems)
    return read


def _listing(item: ValueReader) -> ValueReader:
    def read(value: Any, loc: Loc, problems: list[Problem]) -> list[Any]:
        if not isinstance(value, list):
            raise ValueError("Input should be a valid list")
        return list(_each(enumerate(value), item, loc, problems).values())
    return read


def _each(items: Any, item: ValueReader, loc: Loc, problems: list[Problem]) -> dict[Any, Any]:
    before, out = len(problems), {}
    for key, value in items:
        try:
            out[key] = item(value, (*loc, key), problems)
        except ValueError as exc:
            problems.append(Problem((*loc, key), str(exc)))
        except _Recorded:
            pass
    if len(problems) > before:
        raise _Recorded
    return out


def _record(cls: Any, data: dict[str, Any], loc: Loc, fields: tuple[Spec, ...],
            keys: tuple[str, ...], problems: list[Problem]) -> Any:
    """``cls`` from a mapping: every field read, every unknown key refused, each problem
    recorded at its place; the checks across fields (``__post_init__``) run only when
    every field was read."""
    before, values = len(problems), {}
    for attribute, key, read, required in fields:
        written = key if key in data else attribute if attribute in data else None
        if written is None:
            if required:
                problems.append(Problem((*loc, key), "required"))
            continue
        try:
            values[attribute] = read(data[written], (*loc, written), problems)
        except ValueError as exc:
            problems.append(Problem((*loc, written), str(exc)))
        except _Recorded:
            pass
    known = {name for spec in fields for name in spec[:2]}
    problems += [Problem((*loc, key), f"unknown key '{key}'" + did_you_mean(str(key), keys),
                         at_key=True) for key in data if key not in known]
    if len(problems) > before:
        raise _Recorded
    try:
        return cls(**values)
    except ValueError as exc:
        problems.append(Problem(loc, str(exc)))
        raise _Recorded from None


@dataclass(frozen=True, slots=True, kw_only=True)
class Ceiling(Limit):
    """The most cases a category (or ``total``) may have: a count, a rate, or both (its
    ``Limit``), with the notes written beside it."""

    reason: str | None = None
    owner: str | None = None
    goal: int | str | None = None

    def __post_init__(self) -> None:
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
        if self.per is not None and self.max_rate is None:
            raise ValueError("'per' names the population of a rate: it needs 'max_rate'")
        if self.significance is not None and self.max_rate is None:
            raise ValueError("'significance' tests a rate: it needs 'max_rate'")


# How each key of a ceiling entry is read: one reader per field of ``Ceiling`` (its
# ``Limit`` and its notes); the keys a file may write are those fields, stated there once.
_READERS: dict[str, ValueReader] = {
    "max": _plain(lambda v: _whole(v, "max")),
    "observed": _plain(lambda v: _whole(v, "observed")),
    "allowance": _plain(lambda v: _whole(v, "allowance")),
    "max_rate": _plain(_max_rate),
    "per": _plain(_text, optional=True),
    "significance": _plain(_alpha),
    "true_max": _plain(lambda v: _whole(v, "true_max")),
    "reason": _plain(_text, optional=True),
    "owner": _plain(_text, optional=True),
    "goal": _plain(_goal, optional=True),
}
CEILING_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Ceiling))
_CEILING: tuple[Spec, ...] = tuple((key, key, _READERS[key], False) for key in CEILING_KEYS)


def _ceiling(value: Any, loc: Loc, problems: list[Problem]) -> Ceiling:
    """A ceiling: a bare count, or a mapping with one of the keys that bound a count
    (``limit.BOUNDS``: ``max``, ``max_rate``)."""
    if not isinstance(value, dict):
        return Ceiling(max=_whole(value, "a ceiling"))
    if not any(key in value for key in BOUNDS):
        unknown = [key for key in value if key not in CEILING_KEYS]
        if unknown:
            raise ValueError(f"unknown key '{unknown[0]}'" + did_you_mean(unknown[0], CEILING_KEYS))
        raise ValueError("a ceiling mapping needs " + " or ".join(
            f"'{key}' ({what})" for key, what in BOUNDS.items()))
    ceiling: Ceiling = _record(Ceiling, value, loc, _CEILING, CEILING_KEYS, problems)
    return ceiling


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricFloor:
    """The least mean a metric may have, over the cases where it applies (docs/design.md).

    A case whose value is null does not count, in the numerator or the denominator;
    ``min_n`` asks for at least that many cases with a value.
    """

    min: Fraction
    min_n: int | None = None
    substantive: str | None = None  # cases that answered; others must not carry 1.0
    reason: str | None = None
    owner: str | None = None


_FLOOR: tuple[Spec, ...] = (
    ("min", "min", _plain(_min), True),
    ("min_n", "min_n", _plain(_min_n), False),
    ("substantive", "substantive", _plain(_text, optional=True), False),
    ("reason", "reason", _plain(_text, optional=True), False),
    ("owner", "owner", _plain(_text, optional=True), False),
)


def _floor(value: Any, loc: Loc, problems: list[Problem]) -> MetricFloor:
    data = value if isinstance(value, dict) else {"min": value}
    floor: MetricFloor = _record(MetricFloor, data, loc, _FLOOR, METRIC_KEYS, problems)
    return floor


@dataclass(frozen=True, slots=True, kw_only=True)
class AcceptedChange:
    """A change of the measuring instrument the ceilings file accepts, with its reason: a
    baseline comparison across it is judged instead of inconclusive."""

    from_: str  # written ``from:``
    to: str
    reason: str


def _says_something(value: object) -> str:
    """A reason of spaces, punctuation or invisible characters says nothing, so it accepts
    nothing: the gate reads it as the guard does (``reason_words``)."""
    text = _text(value)
    if not reason_words(text):
        raise ValueError("a reason says why in words: this one has no letter or digit")
    return text


_INSTRUMENT: tuple[Spec, ...] = (
    ("from_", "from", _plain(_text), True),
    ("to", "to", _plain(_text), True),
    ("reason", "reason", _plain(_says_something), True),
)


def _instrument(value: Any, loc: Loc, problems: list[Problem]) -> AcceptedChange:
    if not isinstance(value, dict):
        raise ValueError("an accepted change is {from: ..., to: ..., reason: \"why\"}")
    change: AcceptedChange = _record(AcceptedChange, value, loc, _INSTRUMENT,
                                       INSTRUMENT_KEYS, problems)
    return change


@dataclass(frozen=True, slots=True, kw_only=True)
class Contract:
    """An (in)equality between counts and a report's recorded aggregates, checked per report."""

    check: str
    reports: list[str] | None = None  # only these reports (default: every report)
    reason: str | None = None


_CONTRACT: tuple[Spec, ...] = (
    ("check", "check", _plain(_string), True),
    ("reports", "reports", lambda v, loc, p: None if v is None else _listing(
        _plain(_string))(v, loc, p), False),
    ("reason", "reason", _plain(_text, optional=True), False),
)


def _contract(value: Any, loc: Loc, problems: list[Problem]) -> Contract:
    data = {"check": value} if isinstance(value, str) else value
    if not isinstance(data, dict):
        raise ValueError("Input should be a valid dictionary or instance of Contract")
    contract: Contract = _record(Contract, data, loc, _CONTRACT, CONTRACT_KEYS, problems)
    return contract


@dataclass(frozen=True, slots=True, kw_only=True)
class CeilingsModel:
    """A whole ``ceilings.yaml``: defaults for every report, and per-report overrides."""

    version: Literal[1]
    # a name, a file, or a taxonomy written inline
    taxonomy: str | dict[str, Any] = DEFAULT_TAXONOMY
    # per report name, or per format (a report's name wins): a name or a file
    taxonomies: dict[str, str] = field(default_factory=dict)
    # the level of the exact tests: baseline comparisons, and max_rate ceilings
    significance: Fraction | None = None
    # where the allowances come from: a noise_band.json (relative to this file), or
    # "repeats" (each report's own repeated cases); init, check and ratchet read it
    noise: str | None = None
    # gold labels of a random sample of cases (JSON Lines, relative to this file): the
    # gate corrects the judge's counts with them (``core.gate.corrected``)
    labels: str | None = None
    # the share of a report's cases that may fail outside the system under test (a
    # provider, quota or judge error) before the report is inconclusive (default 1/4)
    inconclusive: Fraction | None = None
    # what measured the runs the ceilings were set from (init writes it), per report:
    # a later run measured otherwise is inconclusive unless `instruments` accepts it
    instrument: dict[str, dict[str, str]] = field(default_factory=dict)
    # accepted changes of the measuring instrument (judge_model, grader, ...), by key
    instruments: dict[str, AcceptedChange] = field(default_factory=dict)
    slices: list[str] = field(default_factory=list)
    ceilings: dict[str, Ceiling] = field(default_factory=dict)
    reports: dict[str, dict[str, Ceiling]] = field(default_factory=dict)
    contracts: dict[str, Contract] = field(default_factory=dict)
    floors: dict[str, MetricFloor] = field(default_factory=dict)
    old_floors_key: bool = False  # the file writes them under ``metrics:`` (OLD_FLOORS)
    # Why this change loosens what no entry can explain (taxonomy, significance, slices,
    # a removed entry); the loosening guard accepts it when this change wrote it.
    reason: str | None = None
    # Slice blocks (``query_type=comparison: {...}``) written among the ceilings,
    # moved here by ``_shape``; ``yaml_loc`` maps them back for error places.
    slice_ceilings: dict[str, dict[str, Ceiling]] = field(default_factory=dict)
    report_slices: dict[str, dict[str, dict[str, Ceiling]]] = field(default_factory=dict)

    @property
    def floors_key(self) -> str:
        """The key the file writes its metric floors under (``floors``, or the old name)."""
        return OLD_FLOORS if self.old_floors_key else "floors"


def _reports(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, dict):
        for name, entries in value.items():
            if entries is None:
                raise ValueError(f"report '{name}' has no ceilings; remove it or add some")
    return _mapping(_mapping(_ceiling))(value, loc, problems)


_TOP: tuple[Spec, ...] = (
    ("version", "version", _plain(_version), True),
    ("taxonomy", "taxonomy", _plain(_taxonomy), False),
    ("taxonomies", "taxonomies", _mapping(_plain(_string)), False),
    ("significance", "significance", _plain(_alpha), False),
    ("noise", "noise", _plain(_text, optional=True), False),
    ("labels", "labels", _plain(_text, optional=True), False),
    ("inconclusive", "inconclusive", _plain(_inconclusive), False),
    ("instrument", "instrument", _mapping(_mapping(_plain(_text))), False),
    ("instruments", "instruments", _mapping(_instrument), False),
    ("slices", "slices", _listing(_plain(_string)), False),
    ("ceilings", "ceilings", _mapping(_ceiling), False),
    ("reports", "reports", _reports, False),
    ("contracts", "contracts", _mapping(_contract), False),
    ("floors", "floors", _mapping(_floor), False),
    ("old_floors_key", "old_floors_key", _plain(bool), False),
    ("reason", "reason", _plain(_text, optional=True), False),
    ("slice_ceilings", "slice_ceilings", _mapping(_mapping(_ceiling)), False),
    ("report_slices", "report_slices", _mapping(_mapping(_mapping(_ceiling))), False),
)


def read_model(data: Any) -> CeilingsModel:
    """A ceilings document (YAML's plain data) as the model; ``CeilingsShapeError`` lists every
    problem with its place."""
    try:
        shaped = _shape(data)
    except ValueError as exc:
        raise CeilingsShapeError([Problem((), str(exc))]) from None
    problems: list[Problem] = []
    try:
        model: CeilingsModel = _record(CeilingsModel, shaped, (), _TOP, TOP_KEYS, problems)
    except _Recorded:
        raise CeilingsShapeError(problems) from None
    return model


def _shape(data: Any) -> dict[str, Any]:
    """The document with its slice blocks and old keys moved where the model has them."""
    if not isinstance(data, dict):
        raise ValueError("the file must be a mapping with version, taxonomy, ceilings")
    if "version" not in data:
        raise ValueError("'version: 1' is required (the format of this file)")
    for key in ("ceilings", "reports", "contracts", "slices", "floors", OLD_FLOORS,
                "taxonomies", "instrument", "instruments"):
        if key in data and data[key] is None:
            raise ValueError(f"'{key}' is empty; remove it or add entries")
    for key in ("slice_ceilings", "report_slices", "old_floors_key"):
        if key in data:
            raise ValueError(f"unknown key '{key}'")
    value: dict[str, Any] = dict(data)
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
