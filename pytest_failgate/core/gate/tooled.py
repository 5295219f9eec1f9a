"""An inconclusive report's next step in the words of its tool.

Apart from ``inconclusive`` (which ``checked`` imports) because it reads the gated reports:
the core decides that a run cannot be judged and why; what the user runs next is what
the report's reader knows of its tool (``Reader.run``), as init's next steps are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .inconclusive import FIX, NEXT, RECORDS_NOTHING, UNFINISHED

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..reports.readers import ReportReader
    from .checked import ReportGate


def in_tools_words(gated: Sequence[ReportGate], readers: Sequence[ReportReader]) -> None:
    """Each inconclusive report's next step (in place) in the words of what its reader
    knows of its tool (``Reader.run``): the command that runs the evaluation again, and for
    a run that stopped part way, to its end. ``failgate check`` names ``npx promptfoo
    eval ...`` as init's next steps do, not an evaluation the user must work out."""
    from dataclasses import replace

    from ..reports.builtin import tool_run

    by_name: dict[str, ReportReader] = {}
    for reader in readers:  # the first of a name reads it (a plugin's before a built-in)
        by_name.setdefault(reader.name, reader)
    for report_gate in gated:
        why, report = report_gate.inconclusive, report_gate.report
        if why is None or report is None or why.next != NEXT or report.format not in by_name:
            continue
        run = tool_run(by_name[report.format])
        if run is None:
            continue
        again = ("run the evaluation again, to its end" if why.cause == UNFINISHED
                 else FIX)
        report_gate.inconclusive = replace(
            why, next=f"{again} (`{run.command}`); {RECORDS_NOTHING}")
