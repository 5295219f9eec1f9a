"""The gate's exit status, which no other hook can lower.

pytest's exit status is one attribute, ``session.exitstatus``, that pytest returns from
``main`` after every hook has run (``pytest_sessionfinish``, ``pytest_unconfigure``, the
config's cleanups), and that any plugin or ``conftest.py`` may assign: a ``trylast``
``pytest_sessionfinish`` setting it to 0, a wrapper around the same hook doing so after
failgate's, a ``pytest.exit(returncode=0)``. Whichever ran last would win, and a failed gate
would exit 0 while the terminal said "1 failed".

So the gate does not take part in that race: when the session starts it gives the session a
class of its own (a subclass of the session's, adding only a property) whose
``exitstatus`` is what was last assigned, unless the gate has failed, in which case a
passing status reads as the gate's own (``floor``). Every write still lands; no read can
say 0 once the gate's own record (its verdict, not the reports, which hooks can rewrite)
says it failed. ``pytest_cmdline_main`` (``hooks.py``) checks the status ``main`` returns
against the same record, for a wrapper that changes the returned value instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

_STORED, _FLOOR = "_failgate_exitstatus", "_failgate_floor"
_HELD: dict[type, type] = {}  # a session class -> its held subclass, made once


def passing(status: int) -> bool:
    """Whether an exit status says the run passed (0)."""
    return int(status) == 0


def held_status(stored: int, floor: int) -> int:
    """The exit status a session reports: the one assigned, unless it passes and the gate
    did not (``floor`` is the gate's own status, 0 when it passed); a gate that could not
    run (2) also outranks "tests failed" (1), as every front end exits 2 for it."""
    if passing(floor):
        return stored
    if passing(stored) or (int(floor) == 2 and int(stored) == 1):
        return floor
    return stored


def _get(session: Any) -> int:
    stored: int = vars(session)[_STORED]
    return held_status(stored, vars(session).get(_FLOOR, 0))


def _set(session: Any, value: int) -> None:
    vars(session)[_STORED] = value


def hold(session: pytest.Session) -> None:
    """Make ``session.exitstatus`` read through the gate's floor (``demand``)."""
    kind = type(session)
    if kind in _HELD.values():
        return
    held = _HELD.get(kind)
    if held is None:
        meta: Any = type(kind)  # pytest's node metaclass
        held = meta(kind.__name__, (kind,), {
            "exitstatus": property(_get, _set),
            "__doc__": kind.__doc__, "__module__": kind.__module__,
            "__qualname__": kind.__qualname__})
        _HELD[kind] = held
    stored = vars(session).pop("exitstatus", 0)
    session.__class__ = held
    vars(session)[_STORED] = stored


def demand(session: pytest.Session, status: int) -> None:
    """The gate's own exit status for this session (never lowered once raised)."""
    floor = held_status(status, vars(session).get(_FLOOR, 0))
    vars(session)[_FLOOR] = floor


def floor_of(session: pytest.Session | None) -> int:
    """The gate's own exit status (0 when it passed, or the session was not held)."""
    return 0 if session is None else int(vars(session).get(_FLOOR, 0))


def overridden(session: pytest.Session | None) -> bool:
    """Whether a hook assigned a passing exit status after the gate failed (the status
    then reads as the gate's: say so, and who could have)."""
    if session is None or _STORED not in vars(session):
        return False
    return passing(vars(session)[_STORED]) and not passing(floor_of(session))
