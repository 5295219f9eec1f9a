"""Colour for the ``failgate`` command's terminal text: a thin layer over the plain lines.

The text renderers (``text.py``) write plain lines, the same in pytest, the CLI and a log;
on a terminal the CLI paints them here: a failing item red, a passing status green,
inconclusive and warnings yellow. Whether to paint follows the conventions of pytest and
most tools: ``--color=yes`` or ``no`` decides; else ``NO_COLOR`` (set and not empty) turns
it off, ``FORCE_COLOR`` on, and otherwise only a terminal gets colour (never a pipe or a
file, never ``TERM=dumb``).
"""

from __future__ import annotations

import os
import re
from typing import TextIO

RED, GREEN, YELLOW, BOLD, RESET = "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[1m", "\x1b[0m"

# a table row's status cell: two spaces before it, two spaces or the line's end after it
_STATUS = re.compile(r"(?<=  )(FAIL \(slack\)|FAIL|INCONCLUSIVE|ok \(warn\)|ok)(?=  |$)")
_STATUS_COLOUR = {"FAIL": RED, "FAIL (slack)": RED, "INCONCLUSIVE": YELLOW,
                  "ok (warn)": YELLOW, "ok": GREEN}
_LINE_COLOUR = (("FAILED ", RED + BOLD), ("ERROR ", RED + BOLD), ("warning: ", YELLOW),
                ("  warning: ", YELLOW), ("  INCONCLUSIVE", YELLOW))


def use_colour(choice: str, stream: TextIO) -> bool:
    """Whether to paint: the flag (``yes``/``no``), else the environment, else a terminal."""
    if choice in ("yes", "no"):
        return choice == "yes"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def paint(line: str) -> str:
    """One line of the plain text, in colour (the same text without the escapes)."""
    for prefix, colour in _LINE_COLOUR:
        if line.startswith(prefix):
            return f"{colour}{line}{RESET}"
    if not line.startswith("  "):
        return line
    return _STATUS.sub(lambda m: f"{_STATUS_COLOUR[m.group(1)]}{m.group(1)}{RESET}", line)

