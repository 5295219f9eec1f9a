"""GitHub Actions: error annotations on the ceilings that failed, and the job summary.

An annotation points at the failing ceiling's own line of ``ceilings.yaml`` (or at
``ceilings:`` when the category has none), so the pull request shows the number
that was exceeded, in the file a reviewer would change.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ..core.base.formatting import inert_lines, one_line

if TYPE_CHECKING:
    from ..core.base.result import GateResult


# A line the runner reads as a command: ``::name::`` (or the older ``##[name]``, and Azure
# Pipelines' ``##vso[``) after any leading whitespace, on any line break the runner knows.
_COMMAND = re.compile(r"(^|\r\n|\r|\n)([^\S\r\n]*)(?=::|##\[|##vso\[)")


def inert(text: str) -> str:
    """Text printed to a CI log that no line of can be a workflow command: a line that
    would start with ``::`` (report content: a report's name, a case id, an error it
    recorded) gets a zero-width space first, which the runner does not trim. failgate's
    own commands are written by ``annotation`` and printed as they are."""
    return _COMMAND.sub("\\1\\2\u200b", text)


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(message: str, *, file: str | None = None, line: int | None = None,
               title: str | None = None, level: str = "error") -> str:
    """One workflow command (``::error file=F,line=N,title=T::message``), escaped: the
    report content in it inert (``one_line``), then the command's own encoding."""
    properties = []
    if file is not None:
        properties.append(f"file={_property(one_line(file))}")
        if line is not None:
            properties.append(f"line={line}")
    if title is not None:
        properties.append(f"title={_property(one_line(title))}")
    head = f"::{level} " + ",".join(properties) if properties else f"::{level}"
    return f"{head}::{_data(inert_lines(message))}"


def error_annotations(result: GateResult) -> list[str]:
    """``::error`` workflow commands, one per failing check."""
    return [annotation(row.message, file=result.ceilings_path, line=row.line,
                       title=f"failgate {row.report}::{row.label}")
            for row in result.rows if row.failing]


def append_step_summary(markdown: str) -> str | None:
    """Append to the job summary when running in GitHub Actions; returns the file used."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(markdown + "\n")
    return target
