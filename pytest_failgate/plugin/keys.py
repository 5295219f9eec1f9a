"""The typed ``config.stash`` key under which the active gate's session is kept.

A module of its own so that the entry point, the session and the items share the key
without importing one another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .session import GateSession

SESSION: pytest.StashKey[GateSession] = pytest.StashKey()
