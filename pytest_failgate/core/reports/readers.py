"""Readers for report formats beyond failgate's own JSON: the interface, and the tallying.

A reader recognises a file and hands over its cases as decoded mappings; failgate
does the rest exactly as for its own formats (kinds checked, ids unique, cases
classified). Third-party readers come in through the ``pytest_failgate_readers``
hook; the built-in karenina readers use the same interface.

```python
class MyReader:
    name = "my-format"
    suffixes = (".json",)

    def read(self, path: Path) -> ReaderOutput | None:
        if not looks_like_mine(path):
            return None                      # not this format: let others try
        return ReaderOutput(cases=iter_cases(path), recorded={"num_predictions": n})
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import FailgateError
from .sink import CaseProblem, CaseSink

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from ..taxonomy import Taxonomy
    from .model import Report, ReportFile
    from .read import ReadSpec


@dataclass
class ReaderOutput:
    """What a reader found in a file.

    ``contradictions`` lists cases whose own fields contradict what the file records
    about them (for example a recorded category its fields rule out); a non-empty
    list fails the report's ``consistency`` item. ``None`` means the format offers
    nothing to cross-check.
    """

    cases: Iterable[Any]
    recorded: dict[str, Any] = field(default_factory=dict)
    contradictions: list[str] | None = None


class ReportReader(Protocol):
    """A report format: a name, the file suffixes it may read, and ``read``."""

    name: str
    suffixes: tuple[str, ...]

    def read(self, path: Path) -> ReaderOutput | None:
        """The file's cases, or ``None`` when it is not in this format.

        Raise ``FailgateError`` (with the file and place) for a file that is in this
        format but malformed.
        """
        ...


def report_from_cases(file: ReportFile, taxonomy: Taxonomy, spec: ReadSpec,
                      output: ReaderOutput) -> Report:
    """Classify a reader's cases into a report, checking them as failgate's own reader does."""
    sink = CaseSink(file, taxonomy, spec)
    try:
        for case in output.cases:
            sink.add(case)
    except CaseProblem as exc:
        raise FailgateError(str(exc), file.path) from None
    return sink.finish(output.recorded, output.contradictions)
