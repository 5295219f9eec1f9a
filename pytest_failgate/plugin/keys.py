"""The typed ``config.stash`` key under which the active gate's session is kept.

A module of its own so that the entry point, the session and the items share the key
without importing one another: the items see the session through ``ActiveGate``, the
part of it they use (``session.GateSession`` is the one implementation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import pytest

if TYPE_CHECKING:
    from ..core.base.result import GateResult


class ActiveGate(Protocol):
    """The session's gate as its items see it."""

    file_collected: bool  # pytest collected the ceilings file itself

    def run(self) -> GateResult:
        """The gate's result, computed once per session (its error raised each time)."""
        ...


SESSION: pytest.StashKey[ActiveGate] = pytest.StashKey()
