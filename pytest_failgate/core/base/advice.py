"""The actions the core's messages suggest, in the words of the front end in use.

The core knows what to suggest (create a ceilings file from the current counts; lower
the ceilings whose counts fell), not how a user asks for it: that is
``failgate ratchet reports/ --ceilings c2.yaml`` in the command line,
``pytest --failgate=reports/ --failgate-ratchet`` under pytest, and the ``ratchet`` tool
of the MCP server. Each front end words its ``Advice``, with the paths and the
ceilings file it was given, so the suggestion can be pasted as it is.
"""

from __future__ import annotations

from .classes import dataclass


@dataclass(frozen=True)
class Advice:
    """Inline text for each action (a command in backticks), ready for a message."""

    init: str = "an init (a new ceilings file from the current counts)"
    ratchet: str = "a ratchet"
    # a new ceilings file classified by the user's own taxonomy file (``TAXONOMY_FILE``)
    init_taxonomy: str = "an init with the taxonomy setting naming your taxonomy file"
    # the setting that names the ceilings file, as this front end takes it
    ceilings: str = "the ceilings setting"


TAXONOMY_FILE = "path/to/taxonomy.yaml"  # the placeholder the advice names
