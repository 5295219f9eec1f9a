"""The ``failgate`` command's help formatter: argparse's own, told the terminal's width.

Left to find the width itself, argparse imports ``shutil`` (and ``lzma`` and ``bz2`` with
it) and asks the terminal for every argument a parser is given, which was a few
milliseconds of every ``failgate`` run's start-up. The help it writes is argparse's, at
the width ``shutil.get_terminal_size`` finds (``tests/package/test_startup.py`` compares
every command's help with argparse's own formatter's).
"""

from __future__ import annotations

import argparse
import os
import sys


class TerminalHelp(argparse.RawDescriptionHelpFormatter):
    """argparse's help formatter, told the terminal's width: left to find it, argparse
    imports ``shutil`` (and ``lzma`` and ``bz2`` with it) for every argument added."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=terminal_columns() - 2)  # argparse's own margin


def terminal_columns() -> int:
    """The width ``shutil.get_terminal_size`` finds: ``COLUMNS``, else stdout's terminal,
    else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    stdout = sys.__stdout__
    if columns <= 0 and stdout is not None:
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns
        except (ValueError, OSError):
            columns = 0
    return columns or 80
