"""The sequential gate: the full run's verdict, settled as soon as the cases decide it.

A run's cases are fed in the random order fixed before the run (a plan), one category
at a time (``None`` for a passed case). Each gate item (a category, a group, ``total``,
and the share of cases that failed outside the system under test) keeps a confidence
sequence for its count over the whole planned run (``core.stats.sequential``), at level
``delta / m`` for the ``m`` items that can go either way (Bonferroni), so all of them
cover their full-run counts at every look at once with probability at least
``1 - delta``. Then:

- an item is **over** when its interval lies entirely above its ceiling (its count
  already over it is the certain case), and **cleared** when it lies at or below it (the
  certain case: even if every remaining case fell in it, ``s + N - n <= K``);
- the run is **inconclusive** as soon as an item of cases outside the system under test
  is over (the full run would be inconclusive whatever else happened), **fails** as
  soon as another item is over and every outside item is cleared, and **passes** when
  every item is cleared.

When every interval covers its count, each of these is the full run's verdict, so an
early verdict differs from the full run's with probability at most ``delta``, for any
system and any case difficulty: the one assumption is that the order is uniformly random
and fixed before the run (not the order cases happen to finish in: slow cases are often
the failures). At the last planned case every interval is the observed count, and the
verdict is the full run's exactly, by integer comparison.

What is mirrored is the full run's count and rate ceilings and its ``inconclusive``
rule; a ceilings file that decides more (noise allowances, significance tests, slices,
``per:`` populations, metric floors, contracts) is refused rather than half-applied.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

from ..base.classes import dataclass
from ..base.defaults import DEFAULT_DELTA
from ..base.errors import FailgateError
from ..base.formatting import format_number
from ..base.result import Sequential
from ..ceilings.limit import refuse_unhandled
from ..ceilings.model import DEFAULT_SHARE
from ..stats.sequential import CountSequence, RiseRuledOut, count_sequence
from ..taxonomy.model import GROUP_PREFIX, TOTAL

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..ceilings.load import Ceilings
    from ..stats.sequential import StratifiedCount
    from ..taxonomy import Taxonomy

ItemState = Literal["open", "over", "cleared"]
SettledVerdict = Literal["pass", "fail", "inconclusive"]
OUTSIDE_SHARE = "outside"  # the item of every case that failed outside the system under test
PAIRED_SUFFIX = " vs baseline"  # a compared item's look, in paired mode
# the smallest delta or beta: a level shared by a family is used as a float, and one far
# below this (1e-400) is 0 as a float, which no confidence sequence can be run at
SMALLEST_LEVEL = Fraction(1, 10**12)
# the most planned cases: the gate's tables grow with N (about 32 bytes a case, shared),
# so a count that no harness runs (1e9) is refused rather than grown into memory
MAX_PLANNED = 10_000_000


def check_level(value: Fraction, name: str) -> None:
    """A delta or a beta: strictly between 0 and 1, and not below ``SMALLEST_LEVEL``."""
    if not 0 < value < 1:
        raise FailgateError(f"{name} must lie strictly between 0 and 1, not {value}")
    if value < SMALLEST_LEVEL:
        raise FailgateError(f"{name} must be at least {float(SMALLEST_LEVEL):g}, not "
                            f"{float(value):g} (a level that small is 0 in arithmetic)")


@dataclass(frozen=True)
class SequentialItem:
    """One gated count: the categories it counts, the most cases it allows among the
    planned ones, and whether being over it makes the run inconclusive (not a fail)."""

    name: str
    members: frozenset[str]
    limit: int
    outside: bool = False


@dataclass(frozen=True)
class ItemLook:
    """An item after the latest case: its count so far and the interval for its count
    over the whole run."""

    name: str
    count: int
    low: int
    high: int
    limit: int
    state: ItemState
    outside: bool


@dataclass(frozen=True)
class Settled:
    """The verdict, once settled: after ``n`` of ``planned`` cases, the full run's
    verdict with probability at least ``1 - delta`` (exactly, when ``n == planned``)."""

    verdict: SettledVerdict
    n: int
    planned: int
    delta: Fraction
    items: tuple[ItemLook, ...]
    deciding: tuple[str, ...]  # the items that decided it (over, or all cleared)
    futility: Futility | None = None  # a pass the futility stop settled (else None)

    @property
    def exact(self) -> bool:
        return self.n == self.planned

    def record(self) -> Sequential:
        """n of N planned cases and what the verdict is worth, as every output says it."""
        futility = self.futility
        return Sequential(n=self.n, planned=self.planned, delta=float(self.delta),
                          confidence=f"{format_number((1 - self.delta) * 100)}%",
                          settled=True,
                          beta=None if futility is None else float(futility.beta),
                          margin=None if futility is None else futility.margin)

    def line(self) -> str:
        """``verdict <v>: settled after n of N planned cases: the verdict is the full
        run's [with probability at least 1 - delta]``: the terminal's closing words."""
        return f"verdict {self.verdict}: {self.record().text}"


@dataclass(frozen=True)
class Futility:
    """Stop as a pass once a regression of ``margin`` cases past every open item's
    ceiling is ruled out, at error ``beta`` (default off).

    Each item that can go either way keeps a second confidence sequence, at level
    ``beta / m``; the item is **futile** once that sequence's upper end is below
    ``limit + margin``: a full-run count of ``limit + margin`` or more is excluded.
    A run whose every item is cleared or futile (none over) passes. The trade, stated:
    a run that regressed by ``margin`` cases or more past a ceiling passes early with
    probability at most ``beta``; one that regressed by fewer may pass early whatever
    its full run's verdict (a regression that small is not what the futility stop
    guards against), for savings on runs that did not regress.

    In paired mode each compared item is futile once a rise over the baseline of ``limit +
    margin`` cases is ruled out (``RiseRuledOut``, at its share of ``beta``), so an unchanged
    system re-run beside its baseline passes before its last case: a run that rose by the
    margin or more passes early with probability at most ``beta`` (not offered with strata,
    whose order is not one random order of the run)."""

    beta: Fraction
    margin: int

    def __post_init__(self) -> None:
        check_level(self.beta, "beta")
        if self.margin < 1:
            raise FailgateError(f"the futility margin must be at least 1 case, not {self.margin}")


class SequentialGate:
    """Feeds cases one at a time, in the planned order; ``add`` returns the settled
    verdict, or None while it is open. Usable from any harness (``api.sequential_gate``)."""

    def __init__(
        self, items: Sequence[SequentialItem], planned: int, delta: Fraction = DEFAULT_DELTA,
        futility: Futility | None = None, strata: Sequence[int] | None = None,
        paired: Sequence[SequentialItem] = (),
    ) -> None:
        if planned < 1:
            raise FailgateError(f"a sequential gate needs at least one planned case, not {planned}")
        if planned > MAX_PLANNED:
            raise FailgateError(f"{planned:,} planned cases are more than the {MAX_PLANNED:,} "
                                "a sequential gate holds (its tables grow with the plan)")
        check_level(delta, "delta")
        if futility is not None and futility.margin > planned:
            raise FailgateError(
                f"the futility margin ({futility.margin} cases) is larger than the run "
                f"({planned} planned cases): a regression that large cannot happen, so ruling "
                "it out would pass any run")
        if not items:
            raise FailgateError("a sequential gate needs at least one gated item")
        self.items = tuple(items)
        self.planned = planned
        self.delta = delta
        # an item whose ceiling allows every planned case can never be over: not in the family
        undecided = sum(1 for item in self.items if item.limit < planned)
        # paired mode: two sequences per compared item (its new and its fixed cases)
        alpha = float(delta) / max(undecided + 2 * len(paired), 1)
        sizes = [planned] if strata is None else list(strata)
        if sum(sizes) != planned or min(sizes) < 1:
            raise FailgateError(
                f"the strata's sizes ({sizes}) must be positive and add up to the {planned} "
                "planned cases"
            )
        self.strata = len(sizes)
        self._sequences = [
            count_sequence(sizes, alpha, *_prior(item.limit, planned)) for item in self.items
        ]
        self._states: list[ItemState] = [_state(0, planned, item.limit) for item in self.items]
        # what ``add`` reads of each item at every case, together
        self._gated = [(item.members, item.limit, sequence)
                       for item, sequence in zip(self.items, self._sequences, strict=True)]
        # paired mode against a baseline run: for each compared item, the cases that entered
        # it (new) and left it (fixed) over the whole run; ``limit`` is the rise allowed
        self.paired = tuple(paired)
        self._pairs = [(count_sequence(sizes, alpha), count_sequence(sizes, alpha))
                       for _ in self.paired]
        self.futility = futility
        # the futility sequences (None: off), at beta / m; an item is futile once a count of
        # limit + margin is ruled out (``Futility``); in paired mode (one order over the whole
        # run, not strata), each compared item is futile once a rise of limit + margin over
        # the baseline is ruled out (``RiseRuledOut``), at its share of beta too
        self._futile: list[CountSequence | StratifiedCount] | None = None
        self._rises: list[RiseRuledOut] = []
        if futility is not None:
            compared = len(self.paired) if strata is None else 0
            beta = float(futility.beta) / max(undecided + compared, 1)
            self._futile = [count_sequence(sizes, beta, *_prior(item.limit, planned))
                            for item in self.items]
            self._rises = [RiseRuledOut(planned, item.limit + futility.margin, beta)
                           for item in self.paired[:compared]]
        self._settled: Settled | None = None
        self.n = 0
        self.failed = 0  # cases gated so far that failed (in any category)
        # whether the latest case may have changed a look's state (``looks``): a front end
        # that prints what changed builds the looks only then
        self.changed = False
        self._by_futility: set[str] = set()  # open items whose regression is ruled out

    @property
    def settled(self) -> Settled | None:
        return self._settled

    def add(self, category: str | None, stratum: int = 0,
            baseline: str | None = None) -> Settled | None:
        """One more case of the planned order: its category, None if it passed; with
        strata, the index of its stratum (the plan's order within each is random); in
        paired mode, the same case's category in the baseline run (None: it passed)."""
        if self._settled is not None:
            return self._settled
        if self.n >= self.planned:
            raise FailgateError(f"more cases than the {self.planned} planned")
        self.n += 1
        failed = category is not None
        self.failed += failed
        states = self._states
        changed = bool(self.paired)  # a compared item's state is not kept: it may have
        for index, (members, limit, sequence) in enumerate(self._gated):
            state = states[index]
            marked = failed and category in members
            if state == "cleared":  # a cleared count stays cleared
                sequence.add(marked, narrow=False, stratum=stratum)
                continue
            if stratum:
                sequence.add(marked, stratum=stratum)
            else:
                sequence.add(marked)
            low, high = sequence.low, sequence.high
            looked: ItemState = ("over" if low > limit else
                                 "cleared" if high <= limit else "open")
            if looked != state:
                states[index], changed = looked, True
        self.changed = changed
        for index, (item, (new, fixed)) in enumerate(zip(self.paired, self._pairs, strict=True)):
            now, before = category in item.members, baseline in item.members
            new.add(now and not before, stratum=stratum)
            fixed.add(before and not now, stratum=stratum)
            if self._rises:
                self._rises[index].add(int(now and not before) - int(before and not now))
        if self._futile is not None:
            self._futility_looks(category, stratum)
        self._settled = self._decide()
        return self._settled

    @property
    def plain(self) -> bool:
        """Whether ``advance`` may take the cases: one order (no strata), no baseline, no
        futility stop, so that a look's states decide alone (``_decide``)."""
        return self.strata == 1 and not self.paired and self._futile is None

    def advance(self, categories: Sequence[str | None]) -> int:
        """``add`` the first cases of ``categories`` (a ``plain`` gate), up to and with the
        first that may change a state (or the last): how many were added. The same as
        ``add`` case by case, in bulk: each item's sequence is advanced over the cases
        (``CountSequence.advance``) until it crosses its limit. States decide alone,
        and after the first case every look so far left them undecided, so no case
        before the first crossing can settle the verdict or change what is printed; the
        items that went past it are put back (``mark``) and advanced to it, then the
        case is looked at as ``add`` looks at it."""
        if self.n == 0 or self._settled is not None:  # the first look: ``add`` decides it
            self.add(categories[0])
            return 1
        cases = categories[:self.planned - self.n]  # more than planned: ``add`` refuses
        if not cases:
            self.add(categories[0])
            return 1
        states, ran = self._states, []
        end = len(cases)
        for index, (members, limit, sequence) in enumerate(self._gated):
            if states[index] == "cleared":
                continue
            assert isinstance(sequence, CountSequence)  # one order: ``plain``
            marks = [category is not None and category in members for category in cases]
            mark = sequence.mark()
            added = sequence.advance(marks[:end], limit)
            ran.append((index, marks, mark, added))
            if added < end or self._crossed(index):
                end = added
        for index, marks, mark, added in ran:  # those that went past the first crossing
            if added > end:
                sequence = self._gated[index][2]
                assert isinstance(sequence, CountSequence)
                sequence.restore(mark)
                sequence.advance(marks[:end], None)
        changed = False
        for index, (members, limit, sequence) in enumerate(self._gated):
            if states[index] == "cleared":
                for category in cases[:end]:
                    sequence.add(category is not None and category in members, narrow=False)
                continue
            looked: ItemState = _state(sequence.low, sequence.high, limit)
            if looked != states[index]:
                states[index], changed = looked, True
        self.n += end
        self.failed += sum(category is not None for category in cases[:end])
        self.changed = changed
        self._settled = self._decide()
        return end

    def _crossed(self, index: int) -> bool:
        """Whether item ``index``'s interval now says another state than it had."""
        _, limit, sequence = self._gated[index]
        return _state(sequence.low, sequence.high, limit) != self._states[index]

    def _futility_looks(self, category: str | None, stratum: int) -> None:
        """Update the futility sequences; an open item whose regression of ``margin``
        cases is ruled out is futile (its confidence sequence still gates it)."""
        assert self._futile is not None
        assert self.futility is not None
        margin = self.futility.margin
        for index, (item, sequence) in enumerate(zip(self.items, self._futile, strict=True)):
            open_ = self._states[index] == "open"
            sequence.add(category is not None and category in item.members, narrow=open_,
                         stratum=stratum)
            if open_ and not item.outside and sequence.high < item.limit + margin:
                self._by_futility.add(item.name)  # stays gated: it can still be over
        for look, rise in zip(self._paired_looks(), self._rises, strict=False):
            if look.state == "open" and rise.ruled_out:
                self._by_futility.add(look.name)  # a rise of the margin over the baseline

    def looks(self) -> tuple[ItemLook, ...]:
        """Every item's state after the latest case (and, in paired mode, each compared
        item's rise over the baseline: new minus fixed cases, its interval over the run)."""
        return tuple(
            ItemLook(item.name, seq.s, seq.low, seq.high, item.limit, state, item.outside)
            for item, seq, state in zip(self.items, self._sequences, self._states, strict=True)
        ) + self._paired_looks()

    def _paired_looks(self) -> tuple[ItemLook, ...]:
        """``over``: the full run's new cases exceed its fixed ones by more than its limit
        (both intervals hold with probability at least 1 - delta); the fail side only."""
        looks = []
        for item, (new, fixed) in zip(self.paired, self._pairs, strict=True):
            low, high = new.low - fixed.high, new.high - fixed.low
            state: ItemState = "over" if low > item.limit else (
                "cleared" if high <= item.limit else "open")
            looks.append(ItemLook(item.name + PAIRED_SUFFIX, new.s - fixed.s, low, high,
                                  item.limit, state, False))
        return tuple(looks)

    def _decide(self) -> Settled | None:
        states, items = self._states, self.items
        if not self.paired and not self._by_futility and "over" not in states \
                and "open" in states:
            return None  # the usual case: an item still open, none over, nothing futile
        paired = self._paired_looks()
        regressed = [look.name for look in paired if look.state == "over"]
        if regressed and "over" not in states and all(
            state == "cleared" for item, state in zip(items, states, strict=True) if item.outside
        ):
            return self._settle("fail", regressed)  # paired mode: a rise over the baseline
        futile = self._by_futility
        # a pass waits for every comparison with the baseline too: cleared, or (futility)
        # a rise of the margin ruled out
        compared_open = [look for look in paired if look.state != "cleared"]
        if "over" not in states and ("open" in states or compared_open):
            if all(look.state == "open" and look.name in futile for look in compared_open) and all(
                    state == "cleared" or item.name in futile
                    for item, state in zip(items, states, strict=True)):
                return self._settle("pass", sorted(futile))  # the futility stop
            return None
        over = [item.name for item, state in zip(items, states, strict=True) if state == "over"]
        over_outside = [
            item.name
            for item, state in zip(items, states, strict=True)
            if state == "over" and item.outside
        ]
        if over_outside:
            return self._settle("inconclusive", over_outside)
        if over and all(
            state == "cleared" for item, state in zip(items, states, strict=True) if item.outside
        ):
            return self._settle("fail", over)
        if not over:  # every item cleared
            return self._settle("pass", [item.name for item in items])
        return None

    def _settle(self, verdict: SettledVerdict, deciding: list[str]) -> Settled:
        futile = self.futility if verdict == "pass" and self._by_futility else None
        return Settled(verdict, self.n, self.planned, self.delta, self.looks(), tuple(deciding),
                       futile)


def _state(low: int, high: int, limit: int) -> ItemState:
    if low > limit:
        return "over"
    return "cleared" if high <= limit else "open"


PRIOR_WEIGHT = 20.0  # the prior's strength, in cases: bench/sequential_savings.py chose it


def _prior(limit: int, planned: int) -> tuple[float, float]:
    """The beta prior of an item's confidence sequence: centred on the ceiling's rate,
    worth ``PRIOR_WEIGHT`` cases (each parameter at least 1/2). Any prior fixed before
    the run keeps the guarantee; this one puts its mass where the decisions are (near
    the ceiling), which settles improved and unchanged runs sooner than a uniform prior
    (on the bench: 390 and 887 cases of 1000 rather than 499 and 910) at a small cost on
    broken runs (29 rather than 24)."""
    rate = min(limit, planned) / planned
    return max(PRIOR_WEIGHT * rate, 0.5), max(PRIOR_WEIGHT * (1 - rate), 0.5)


# The limit keys the sequential gate decides about: max and max_rate (what the planned
# cases allow), observed and allowance (parts of max); per and significance are refused
# by name (an early verdict would not be the full run's).
# true_max: a limit of the true count, which only gold labels show (never per case)
SEQUENTIAL = frozenset({"max", "max_rate", "observed", "allowance", "per", "significance",
                        "true_max"})


def gate_items(
    taxonomy: Taxonomy, ceilings: Ceilings, report: str, planned: int
) -> list[SequentialItem]:
    """The items the full run of ``report`` would judge, with their ceilings among
    ``planned`` cases: every category (no entry: ceiling 0), ``total`` and each group that
    has an entry, and the inconclusive rule (outside categories and their share)."""
    _refuse_unmirrored(ceilings)
    refuse_unhandled("the sequential gate (gate/sequential.py)", SEQUENTIAL)
    names = list(taxonomy.category_names)
    names += [
        name
        for name in (TOTAL, *(GROUP_PREFIX + g for g in taxonomy.groups))
        if ceilings.entry(report, name) is not None
    ]
    outside = set(taxonomy.outside)
    items = []
    for name in names:
        entry = ceilings.entry(report, name)
        if entry is not None and entry.ceiling.per is not None:
            raise FailgateError(
                f"{entry.label}: a per: population is not gated sequentially; "
                "run `failgate check` on the full run",
                ceilings.path,
                entry.line,
            )
        limit = 0 if entry is None else entry.ceiling.allows(planned)
        assert limit is not None  # the planned cases are a case total
        members = taxonomy.members(name)
        is_outside = name != TOTAL and all(member in outside for member in members)
        items.append(SequentialItem(name, frozenset(members), limit, is_outside))
    if outside:
        share = ceilings.model.inconclusive
        rate = DEFAULT_SHARE if share is None else share
        items.append(
            SequentialItem(OUTSIDE_SHARE, frozenset(outside), int(rate * planned), outside=True)
        )
    return items


def _refuse_unmirrored(ceilings: Ceilings) -> None:
    """A ceilings file that decides more than counts and rates against ceilings: refused,
    since an early verdict would not be the full run's."""
    model = ceilings.model
    unmirrored = [
        what
        for what, present in (
            ("noise:", model.noise is not None),
            (
                "significance:",
                model.significance is not None
                or any(e.ceiling.significance is not None for e in ceilings.entries.values()),
            ),
            ("slices:", bool(model.slices)),
            (f"{model.floors_key}:", bool(model.floors)),
            ("contracts:", bool(model.contracts)),
        )
        if present
    ]
    if unmirrored:
        raise FailgateError(
            f"sequential gating mirrors count and rate ceilings only, and this file also "
            f"uses {', '.join(unmirrored)}; run `failgate check` on the full run",
            ceilings.path,
        )


def describe(look: ItemLook) -> str:
    """One item's state in a line: ``name  s so far, full run in [low, high], ceiling K:
    state``."""
    interval = f"{look.low}" if look.low == look.high else f"[{look.low}, {look.high}]"
    return (
        f"{look.name}: {look.count} so far, full run {interval}, ceiling {look.limit}: "
        f"{look.state}"
    )


class PlannedOrder:
    """Cases in the order they finish, released in the plan's order: the completed prefix.

    A harness finishes cases out of order (failures are often the slow ones), and updating
    on finishing order would bias the early verdict; the gate is fed only the prefix of the
    plan whose every case has finished. A case the plan does not hold, or one finished
    twice, is an error: the plan is the run.
    """

    def __init__(self, ids: Sequence[str]) -> None:
        self._position = {case_id: index for index, case_id in enumerate(ids)}
        if len(self._position) != len(ids):
            twice = next(
                case_id for index, case_id in enumerate(ids) if self._position[case_id] != index
            )
            raise FailgateError(f"the plan lists case {quoted(twice)} twice")
        self._waiting: dict[int, tuple[str, str | None]] = {}
        self._finished: set[str] = set()
        self.released = 0

    def __len__(self) -> int:
        return len(self._position)

    def next_is(self, case_id: str) -> bool:
        """Whether ``finish(case_id, ...)`` would release that case alone: it is the next
        planned case and none after it has finished."""
        return not self._waiting and self._position.get(case_id) == self.released

    def finish(self, case_id: str, category: str | None) -> list[tuple[str, str | None]]:
        """A case finished with ``category``; returns the cases now released (id and
        category), in plan order (none while an earlier planned case is still running)."""
        position = self._position.get(case_id)
        if position is None:
            raise FailgateError(f"case {quoted(case_id)} is not in the plan")
        if case_id in self._finished:
            raise FailgateError(f"case {quoted(case_id)} finished twice")
        self._finished.add(case_id)
        self._waiting[position] = (case_id, category)
        released = []
        while self.released in self._waiting:
            released.append(self._waiting.pop(self.released))
            self.released += 1
        return released


def quoted(case_id: str) -> str:
    """A case id in a message: as a JSON string (quotes, escapes; never markup), cut short."""
    text = json.dumps(case_id, ensure_ascii=True)
    return text if len(text) <= 80 else text[:76] + '..."'
