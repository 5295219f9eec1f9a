"""``matches()`` without backtracking: a regular expression searched in linear time.

Python's ``re`` backtracks, so a rule like ``matches(text, "(a+)+$")`` can run for
minutes on one case. Here the pattern is parsed by Python's own parser (so it
means what ``re`` means), turned into an automaton, and searched by stepping a
set of automaton states once per character, the set cached per state and
character (a lazily built DFA). Time is linear in the text for a given pattern.

What needs backtracking is refused when the rule is loaded, with the reason:
backreferences, lookaround, ``\\b``/``\\B``, atomic groups and possessive
repeats (they change what matches), and inline flags. Patterns larger than
``MAX_STATES`` automaton states (counted repeats multiply) are refused too, so
compiling stays linear in the pattern's length.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from typing import Any

# Python's own pattern parser (private, but the same tree since 3.5; renamed in 3.11).
_sre_parse: Any = importlib.import_module(
    "re._parser" if sys.version_info >= (3, 11) else "sre_parse")

MAX_STATES = 10_000  # automaton states a pattern may need
_CACHE_LIMIT = 50_000  # (state, character) transitions remembered per pattern
_UNICODE = 32  # re.UNICODE, implied for str patterns

CharTest = Callable[[str], bool]


class UnsupportedPattern(ValueError):
    """A pattern outside the linear-time subset (or too large); the message says why."""


_CATEGORIES: dict[str, CharTest] = {
    "CATEGORY_DIGIT": str.isdecimal,
    "CATEGORY_NOT_DIGIT": lambda c: not c.isdecimal(),
    "CATEGORY_SPACE": str.isspace,
    "CATEGORY_NOT_SPACE": lambda c: not c.isspace(),
    "CATEGORY_WORD": lambda c: c.isalnum() or c == "_",
    "CATEGORY_NOT_WORD": lambda c: not (c.isalnum() or c == "_"),
}
_REFUSED = {
    "GROUPREF": "a backreference", "GROUPREF_EXISTS": "a conditional group",
    "ASSERT": "a lookahead or lookbehind", "ASSERT_NOT": "a lookahead or lookbehind",
    "ATOMIC_GROUP": "an atomic group", "POSSESSIVE_REPEAT": "a possessive repeat",
}
_ANCHORS = {"AT_BEGINNING": "start", "AT_BEGINNING_STRING": "start", "AT_END": "end",
            "AT_END_STRING": "end_string"}


def _equal(char: str) -> CharTest:
    return char.__eq__


def _differs(char: str) -> CharTest:
    return char.__ne__


def _within(low: int, high: int) -> CharTest:
    def test(c: str) -> bool:
        return low <= ord(c) <= high

    return test


def _class(items: list[tuple[Any, Any]]) -> CharTest:
    """A character class ``[...]`` as a test of one character."""
    negate = False
    chars: set[str] = set()
    tests: list[CharTest] = []
    for op, arg in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            chars.add(chr(arg))
        elif name == "RANGE":
            tests.append(_within(*arg))
        elif name == "CATEGORY":
            tests.append(_CATEGORIES[str(arg)])
        else:
            raise UnsupportedPattern(f"{name.lower()} in a character class is not supported")
    frozen = frozenset(chars)

    def test(c: str) -> bool:
        return (c in frozen or any(t(c) for t in tests)) != negate

    return test


class _Builder:
    """Thompson construction: ``tests[i]`` consumes a character, ``edges[i]`` are free moves."""

    def __init__(self) -> None:
        self.tests: list[CharTest | None] = []
        self.edges: list[list[int]] = []
        self.anchors: dict[int, str] = {}  # state -> the anchor guarding its free moves
        self.saves: dict[int, tuple[int, int]] = {}  # state -> (group, 0 start / 1 end)

    def state(self, test: CharTest | None = None) -> int:
        if len(self.tests) >= MAX_STATES:
            raise UnsupportedPattern(f"the pattern needs more than {MAX_STATES} states; "
                                     "write fewer or smaller counted repeats")
        self.tests.append(test)
        self.edges.append([])
        return len(self.tests) - 1

    def sequence(self, items: Any, start: int) -> int:
        """Add the pattern items after ``start``; returns the state they end in."""
        for op, arg in items:
            start = self.item(str(op), arg, start)
        return start

    def consume(self, test: CharTest, start: int) -> int:
        state = self.state(test)
        self.edges[start].append(state)
        end = self.state()
        self.edges[state].append(end)
        return end

    def item(self, name: str, arg: Any, start: int) -> int:
        if name == "LITERAL":
            return self.consume(_equal(chr(arg)), start)
        if name == "NOT_LITERAL":
            return self.consume(_differs(chr(arg)), start)
        if name == "ANY":
            return self.consume(_differs("\n"), start)
        if name == "IN":
            return self.consume(_class(arg), start)
        if name == "CATEGORY":
            return self.consume(_CATEGORIES[str(arg)], start)
        if name == "SUBPATTERN":
            group, add_flags, del_flags, items = arg
            if add_flags or del_flags:
                raise UnsupportedPattern("inline flags such as (?i) are not supported")
            if group is None:
                return self.sequence(items, start)
            opened = self.state()  # free moves that record where the group starts and ends
            self.edges[start].append(opened)
            self.saves[opened] = (group, 0)
            closed = self.state()
            self.edges[self.sequence(items, opened)].append(closed)
            self.saves[closed] = (group, 1)
            return closed
        if name == "BRANCH":
            end = self.state()
            for items in arg[1]:
                begin = self.state()
                self.edges[start].append(begin)
                self.edges[self.sequence(items, begin)].append(end)
            return end
        if name in ("MAX_REPEAT", "MIN_REPEAT"):
            return self.repeat(arg, start, greedy=name == "MAX_REPEAT")
        if name == "AT":
            anchor = _ANCHORS.get(str(arg))
            if anchor is None:
                raise UnsupportedPattern("word boundaries (\\b, \\B) are not supported")
            guard = self.state()
            self.edges[start].append(guard)
            self.anchors[guard] = anchor
            end = self.state()
            self.edges[guard].append(end)
            return end
        what = _REFUSED.get(name, name.lower())
        raise UnsupportedPattern(f"{what} is not supported (it needs backtracking)")

    def repeat(self, arg: Any, start: int, greedy: bool = True) -> int:
        """Free moves listed in the order ``re`` tries them (once more first when greedy),
        which only ``match_group`` reads: a search accepts whatever the order."""
        low, high, items = arg
        unbounded = high == _sre_parse.MAXREPEAT
        for _ in range(low):
            start = self.sequence(items, start)
        end = self.state()
        if unbounded:
            begin = self.state()
            self.edges[start] += [begin, end] if greedy else [end, begin]
            finish = self.sequence(items, begin)
            self.edges[finish] += [begin, end] if greedy else [end, begin]
            return end
        for _ in range(high - low):
            begin = self.state()
            self.edges[start] += [begin, end] if greedy else [end, begin]
            start = self.sequence(items, begin)
        self.edges[start].append(end)
        return end


def compile_search(pattern: str) -> Callable[[str], bool]:
    """``lambda text: re.search(pattern, text) is not None``, in linear time.

    Raises ``re.error`` for an invalid pattern, ``UnsupportedPattern`` for one
    outside the subset.
    """
    parsed = _sre_parse.parse(pattern, 0)
    if parsed.state.flags & ~_UNICODE:
        raise UnsupportedPattern("inline flags such as (?i) are not supported")
    builder = _Builder()
    start = builder.state()
    accept = builder.sequence(parsed, start)
    return _Searcher(builder, start, accept).search


def compile_group_match(pattern: str) -> Callable[[str], str | None]:
    """``lambda text: re.fullmatch(pattern, text)``'s group ``name`` (else group 1), or
    ``None`` when the text does not match: in time linear in the text.

    The automaton is stepped as a Pike VM: the threads at each position are kept in
    the order ``re`` would try them, each with where its group started and ended, so the
    first thread to end at the end of the text is the match ``re`` finds (without
    backtracking). Raises ``re.error`` for an invalid pattern, ``UnsupportedPattern`` for
    one outside the subset or without a group. (One difference remains, in a repeated
    group around a part that can match nothing, ``(a*)*``: ``re`` may end the group on
    an extra empty pass.)
    """
    parsed = _sre_parse.parse(pattern, 0)
    if parsed.state.flags & ~_UNICODE:
        raise UnsupportedPattern("inline flags such as (?i) are not supported")
    group = parsed.state.groupdict.get("name", 1)
    if parsed.state.groups < 2:
        raise UnsupportedPattern("the pattern has no group")
    builder = _Builder()
    start = builder.state()
    accept = builder.sequence(parsed, start)
    return _GroupMatcher(builder, start, accept, group).match


Thread = tuple[int, int, int]  # state, where the group started, where it ended (-1: not yet)


@functools.lru_cache(maxsize=64)
def group_matcher(pattern: str) -> Callable[[str], str | None]:
    """``compile_group_match``, once per pattern (a taxonomy's ``report_name``)."""
    return compile_group_match(pattern)


class _GroupMatcher:
    def __init__(self, builder: _Builder, start: int, accept: int, group: int) -> None:
        self.b, self.start, self.accept, self.group = builder, start, accept, group

    def _holds(self, anchor: str, pos: int, text: str) -> bool:
        n = len(text)
        if anchor == "start":
            return pos == 0
        if anchor == "end_string":
            return pos == n
        return pos == n or (pos == n - 1 and text[-1] == "\n")

    def _add(self, threads: list[Thread], seen: set[int], thread: Thread, pos: int,
             text: str) -> None:
        """The thread and every state its free moves reach, in the order re tries them."""
        b = self.b
        stack = [thread]
        while stack:
            state, begin, end = stack.pop()
            if state in seen:
                continue
            seen.add(state)
            save = b.saves.get(state)
            if save is not None and save[0] == self.group:
                begin, end = (pos, -1) if save[1] == 0 else (begin, pos)
            anchor = b.anchors.get(state)
            if anchor is not None and not self._holds(anchor, pos, text):
                continue
            if b.tests[state] is not None or state == self.accept:
                threads.append((state, begin, end))
                continue
            stack.extend((following, begin, end) for following in reversed(b.edges[state]))

    def match(self, text: str) -> str | None:
        b = self.b
        threads: list[Thread] = []
        self._add(threads, set(), (self.start, -1, -1), 0, text)
        for pos, char in enumerate(text):
            following: list[Thread] = []
            seen: set[int] = set()
            for state, begin, end in threads:
                test = b.tests[state]
                if test is not None and test(char):
                    for after in b.edges[state]:
                        self._add(following, seen, (after, begin, end), pos + 1, text)
            threads = following
            if not threads:
                return None
        for state, begin, end in threads:
            if state == self.accept:
                return text[begin:end] if begin >= 0 and end >= 0 else None
        return None


class _Searcher:
    """The automaton's lazily built DFA: a state is a frozenset of consuming states."""

    def __init__(self, builder: _Builder, start: int, accept: int) -> None:
        self.tests = builder.tests
        self.edges = builder.edges
        self.anchors = builder.anchors
        self.accept = accept
        self.start = start
        self.ids: dict[frozenset[int], int] = {}
        self.sets: list[frozenset[int]] = []
        self.accepting: list[bool] = []
        self.moves: dict[tuple[int, str], int] = {}

    def _closure(self, states: list[int], anchors: tuple[str, ...]) -> frozenset[int]:
        """Every state reachable by free moves (through the anchors that hold here)."""
        seen = set(states)
        stack = list(states)
        while stack:
            state = stack.pop()
            anchor = self.anchors.get(state)
            if self.tests[state] is not None or (anchor is not None and anchor not in anchors):
                continue  # a consuming state moves only on a character
            for following in self.edges[state]:
                if following not in seen:
                    seen.add(following)
                    stack.append(following)
        return frozenset(seen)

    def _id(self, states: frozenset[int]) -> int:
        found = self.ids.get(states)
        if found is None:
            found = self.ids[states] = len(self.sets)
            self.sets.append(states)
            self.accepting.append(self.accept in states)
        return found

    def _step(self, current: int, char: str) -> int:
        if len(self.moves) > _CACHE_LIMIT:
            self.moves.clear()
        following = [next_ for state in self.sets[current]
                     if (test := self.tests[state]) is not None and test(char)
                     for next_ in self.edges[state]]
        found = self._id(self._closure([*following, self.start], ()))
        self.moves[current, char] = found
        return found

    def _accepts_at(self, current: int, anchors: tuple[str, ...]) -> bool:
        return self.accept in self._closure(list(self.sets[current]), anchors)

    def search(self, text: str) -> bool:
        n = len(text)
        end = ("end", "end_string") if n == 0 else ("end",) if text == "\n" else ()
        current = self._id(self._closure([self.start], ("start", *end)))
        if self.accepting[current] or (end and self._accepts_at(current, end)):
            return True
        moves, accepting, step = self.moves, self.accepting, self._step
        before_last_newline = n - 1 if text.endswith("\n") else -1
        for index, char in enumerate(text, start=1):
            found = moves.get((current, char))
            current = found if found is not None else step(current, char)
            if accepting[current]:
                return True
            if index == n:
                return self._accepts_at(current, ("end", "end_string"))
            if index == before_last_newline:  # `$` holds here too, and may go on: `$\n`
                current = self._id(self._closure(list(self.sets[current]), ("end",)))
                if accepting[current]:
                    return True
        return False
