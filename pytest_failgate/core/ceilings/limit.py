"""What a ceiling allows: one object every consumer reads, so a new key is added once.

A ceiling entry holds keys of two kinds: the keys of its *limit* (``max``, ``observed``,
``allowance``, ``max_rate``, ``per``, ``significance``: what the entry allows and how a
count over it is judged), which are the fields of ``Limit``, and notes beside it
(``reason``, ``owner``, ``goal``), which ``model.Ceiling`` adds. The check, the guard,
the sequential gate, the ratchet and the messages read a limit only through ``Limit``,
and each states which limit keys it decides about (``refuse_unhandled``): a key added to
``Limit`` that one of them has not been taught is refused there by name, at its first
use, rather than ignored (a ratchet that ignored a new key would lower past it).
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.formatting import format_number

if TYPE_CHECKING:
    from collections.abc import Collection
    from fractions import Fraction

    # a value the guard shows: a count, a rate, or words
    Shown = int | Fraction | str | None


def rate_limit(max_rate: Fraction, n_cases: int) -> int:
    """The whole cases a rate allows among ``n_cases``: ``floor(max_rate * n_cases)``."""
    return math.floor(max_rate * n_cases)


class UnhandledKey(Exception):
    """A limit key a consumer has not been taught: a mistake of failgate's own code (a
    key added to ``Limit`` and not yet to every consumer), named with the consumer."""


def refuse_unhandled(consumer: str, handled: Collection[str]) -> None:
    """Refuse, by name, a limit key ``consumer`` does not decide about. Read at call time
    (``LIMIT_KEYS``), so a test that adds a key sees every consumer refuse it."""
    for key in LIMIT_KEYS:
        if key not in handled:
            raise UnhandledKey(f"{consumer} does not handle the ceilings key '{key}': teach "
                               "it what the key allows, or refuse the key when it is read")


@dataclass(frozen=True, slots=True, kw_only=True)
class Limit:
    """What a ceiling allows, exactly: a count (``max``, on a noisy pipeline ``observed +
    allowance``), a rate (``max_rate``, among the ``per:`` population when given) judged by
    an exact test at ``significance`` when given, or both (the smaller decides)."""

    max: int | None = None
    # on a noisy pipeline, max = observed + allowance: the count the ceiling was set from,
    # and the rise an unchanged system stays within (``stats.allowance``)
    observed: int | None = None
    allowance: int | None = None
    max_rate: Fraction | None = None
    per: str | None = None  # max_rate among the cases where this expression holds
    # fail a max_rate only when the count is significantly above it (else WARN)
    significance: Fraction | None = None
    # with gold labels: the most *true* cases (the judge's count corrected by the labels,
    # ``core.gate.corrected``); ``max`` stays the judge's count's limit, for the runs
    # between labellings. Written by ``init --labels``, lowered by a labelled ratchet.
    true_max: int | None = None

    def under(self, significance: Fraction | None) -> Limit:
        """This limit with the file's ``significance`` where it sets none and has a rate:
        the limit the gate applies (and so the one the guard compares)."""
        refuse_unhandled("Limit.under", _KEYS)
        if self.max_rate is None or self.significance is not None or significance is None:
            return self if type(self) is Limit else Limit(**_values(self))
        return Limit(**{**_values(self), "significance": significance})

    def allows(self, n_cases: int | None) -> int | None:
        """The most cases this limit allows among ``n_cases`` (a report, a slice or a
        population): the smaller of ``max`` and ``floor(max_rate * n_cases)``; None when a
        rate has no case total to be a fraction of. (``per`` chose the ``n_cases``;
        ``observed`` and ``allowance`` are the parts of ``max``; ``significance`` judges a
        count over the rate, it does not move the limit.)"""
        refuse_unhandled("Limit.allows", _KEYS)
        limits = [] if self.max is None else [self.max]
        if self.max_rate is not None:
            if n_cases is None:
                return None
            limits.append(rate_limit(self.max_rate, n_cases))
        return min(limits)

    @property
    def tested(self) -> bool:
        """Whether a count over it is decided by a significance test (a rate with a level)."""
        return self.max_rate is not None and self.significance is not None

    def loosenings(self, new: Limit) -> list[tuple[str, Shown, Shown]]:
        """What ``new`` lets pass that this limit did not, each as (the key's suffix as the
        guard labels it, old, new): a higher or removed count or rate, a larger noise
        allowance, a smaller significance level, another population."""
        refuse_unhandled("Limit.loosenings", _KEYS)  # observed: a part of max, compared there
        found: list[tuple[str, Shown, Shown]] = []
        if _looser(self.max, new.max):
            found.append(("", self.max, new.max))
        if self.true_max is not None or new.true_max is not None:
            # the labelled gate tests the true count against true_max, else against max
            old_true = self.true_max if self.true_max is not None else self.max
            new_true = new.true_max if new.true_max is not None else new.max
            if _looser(old_true, new_true):
                found.append((".true_max", old_true, new_true))
        if _looser(self.max_rate, new.max_rate):
            found.append((".max_rate", self.max_rate, new.max_rate))
        if (new.allowance or 0) > (self.allowance or 0):
            found.append((".allowance", self.allowance or 0, new.allowance))
        if self.max_rate is not None and new.max_rate is not None:
            if new.significance is not None and (self.significance is None
                                                 or new.significance < self.significance):
                found.append((".significance", show_alpha(self.significance),
                              show_alpha(new.significance)))
            if self.per != new.per:
                found.append((".per", self.per or "all cases", new.per or "all cases"))
        return found

    def text(self, allowed: int | None = None) -> str:
        """How the limit reads in a summary table: ``12 (10 + 2)``, ``rate 0.05 per x (3)``
        (``allowed``: what the rate allows here, shown when no count limits it)."""
        refuse_unhandled("Limit.text", _KEYS)  # significance: the item's warning says it
        parts = []
        if self.max is not None and self.observed is not None:
            parts.append(f"{self.max} ({self.observed} + {self.allowance})")
        elif self.max is not None:
            parts.append(str(self.max))
        if self.max_rate is not None:
            per = f" per {self.per}" if self.per else ""
            parts.append(f"rate {format_number(self.max_rate)}{per}"
                         + (f" ({allowed})" if allowed is not None and self.max is None else ""))
        if self.true_max is not None:
            parts.append(f"true {self.true_max}")
        return ", ".join(parts)

    def detail(self, n_cases: int | None) -> str:
        """How the limit reads under a failing item: ``max 3, max_rate 0.05 (allows 2 of
        the 40 cases where `x`)``."""
        refuse_unhandled("Limit.detail", _KEYS)  # observed, allowance: parts of max
        parts = []
        if self.max is not None:
            parts.append(f"max {self.max}")
        if self.max_rate is not None and n_cases is not None:
            allows = rate_limit(self.max_rate, n_cases)
            of = f"the {n_cases} cases where `{self.per}`" if self.per else f"{n_cases} cases"
            parts.append(f"max_rate {format_number(self.max_rate)} (allows {allows} of {of})")
        if self.true_max is not None:
            parts.append(f"true_max {self.true_max} (the true count, with gold labels)")
        return ", ".join(parts)


# The limit keys, stated once: the fields of ``Limit``.
LIMIT_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Limit))
# The keys that bound a count, each with what it is: a ceiling entry written as a mapping
# needs one (the others qualify a bound); the file's reader names them from here.
BOUNDS: dict[str, str] = {"max": "a count", "max_rate": "a rate"}
# What ``Limit``'s own methods decide about: every key it has today. A new field is
# handled here once its methods are taught it (see ``refuse_unhandled``).
_KEYS = frozenset({"max", "observed", "allowance", "max_rate", "per", "significance",
                   "true_max"})
UNLIMITED = Limit()


def _values(limit: Limit) -> dict[str, Any]:
    return {key: getattr(limit, key) for key in LIMIT_KEYS}


def _looser(old: int | Fraction | None, new: int | Fraction | None) -> bool:
    if old is None:
        return False  # no such limit before: nothing to loosen
    return new is None or new > old


def show_alpha(alpha: Fraction | None) -> str:
    """A significance level as the guard shows it."""
    return "none (any count over fails)" if alpha is None else format_number(alpha)
