"""Report formats: the reader interface (``pytest_failgate.api``'s).

A reader recognises a file **by its content** and hands over its cases as decoded
mappings; failgate does the rest exactly as for its own formats (a ``CaseSink``:
kinds checked, ids unique, required fields present, cases classified). Readers are
tried in order: those plugins contribute (the ``pytest_failgate_readers`` hook,
installed ``failgate`` entry points, a project's ``failgate_plugins``), then the
built-in formats (``builtin.builtin_readers``), then failgate's own JSON shapes.

```python
class MyReader(Reader):            # pytest_failgate.api.Reader
    name = "my-format"             # the format: in messages, and a key of `taxonomies:`
    suffixes = (".json",)          # files it may read (a cheap first filter)
    taxonomy = "my-format"         # default None: the taxonomy `failgate init` writes for it

    def claims(self, head: bytes) -> bool:           # default True: the file's first 64 KiB
        return b'"my_marker"' in head                # False: read() is not even called

    def read(self, path: Path) -> ReaderOutput | None:
        if not looks_like_mine(path):
            return None                      # not this format after all: let others try
        return ReaderOutput(cases=iter_cases(path), recorded={"num_predictions": n},
                            name="my_run")   # optional: the report's name in its folder
```

- ``read`` raises ``FailgateError`` (file, line) for a file in its format that is
  malformed; a file with zero cases is left to failgate (an error item, never a pass).
- ``ReaderOutput(skipped="why")`` claims a file of the format that holds no cases (a
  run's aggregates beside its per-case logs): it is listed as skipped, with the reason.
- ``ReaderOutput.name`` replaces the file's stem in the report name (so a timestamped
  ``samples_gsm8k_2026-01-21T03-44-18.jsonl`` is gated as ``samples_gsm8k`` run after
  run); ``""`` names the report by its folder (HELM's run-spec folders).
- ``ReaderOutput.run_order`` (a tuple of numbers, greater is later) lets a folder hold
  several runs under one name: the latest is gated, the others are listed as skipped.
- A built-in format is one module in this package plus one line in ``builtin.py``
  (and its taxonomy, one YAML file in ``core/taxonomy/builtin/``). It is written as a
  plugin's would be: a ``Reader`` subclass that imports only what ``pytest_failgate.api``
  exports (``tests/package/test_builtins_use_the_api.py`` pins it), reading its file
  through those helpers (``read_bytes``, ``json_lines``, ...), which serve the report from
  the one handle failgate opened it with (``source``).
- The taxonomy is not the reader's to choose: ``read.detect`` picks it once the format is
  known (``choice.TaxonomyChoice``), from the reader's ``taxonomy`` among others.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol

from ..base.classes import dataclass
from ..base.errors import FailgateError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path


@dataclass(kw_only=True)
class ReaderOutput:
    """What a reader found in a file.

    ``contradictions`` lists cases whose own fields contradict what the file records
    about them (for example a recorded category its fields rule out); a non-empty
    list fails the report's ``consistency`` item. ``None`` means the format offers
    nothing to cross-check.
    """

    cases: Iterable[Any] = ()  # decoded mappings, one per case (none: ``skipped``)
    recorded: dict[str, Any] = field(default_factory=dict)
    contradictions: list[str] | None = None
    name: str | None = None  # replaces the file's stem in the report name; "" = the folder
    skipped: str | None = None  # the file is this format's but holds no cases: why
    config: dict[str, Any] | None = None  # the run's configuration, for "what changed"
    # set (to why) when the file holds aggregates and no case: a report that counts no
    # category, gated only by the metric floors and contracts that read ``recorded``
    uncounted: str | None = None
    # where this file's run stands among the files of one folder its reader names alike
    # (greater is later): only the latest is gated, the others are listed as skipped (a
    # log folder that keeps every run, one run written to several files). None: a second
    # file of the same name is an error.
    run_order: tuple[float, ...] | None = None
    # the unit a case id repeats (``france#2`` -> ``france``) when the format runs each
    # case several times (epochs, replicates, trials): the run's own noise source
    repeat_unit: Callable[[str], str] | None = None
    # set (to why) when the run did not finish (it crashed or was cancelled): its counts
    # cannot be judged, and the report is inconclusive (``core.gate.inconclusive``)
    interrupted: str | None = None
    # how many cases the run was to have, as its tool wrote it before the cases (a run
    # folder's header ``n_cases``): fewer cases than that is a run that stopped part way,
    # inconclusive like an ``interrupted`` one, naming how many are missing (``read``)
    expected: int | None = None
    # what measured the cases (the judge or grader model, the scorers and metrics, the
    # dataset), as the format records it: a baseline comparison checks it first
    # (``compare.instrument``); the system's own settings go in ``config``
    instrument: dict[str, str] | None = None


@dataclass(frozen=True)
class ToolRun:
    """How a format's own tool writes its files, as a reader states it (``Reader.run``): the
    words of the next steps ``init`` suggests, so they fit the tool.

    ``command`` runs the tool as a project's CI step would (the files where the gate reads
    them). ``same_session`` is whether a pytest session can gate the files it reads: False
    when the tool writes them only after a pytest session of its own ends (``deepeval test
    run``), so the gate is a step of its own after the tool, never the ini key that gates
    every pytest run. ``note`` is what a CI step must know of the tool (an exit status that
    stops the job before the gate step runs).
    """

    command: str
    same_session: bool = True
    note: str = ""


class ReportReader(Protocol):
    """A report format: a name, the file suffixes it may read, its default taxonomy (or
    None), a cheap test on the file's first bytes (``claims``), and ``read``. Every
    reader the core is given has all five (a plugin's through :func:`as_reader`)."""

    name: str
    suffixes: tuple[str, ...]

    @property
    def taxonomy(self) -> str | None:
        """The name of the format's default taxonomy (None: the ceilings', else rag)."""
        ...

    def claims(self, head: bytes) -> bool:
        """Whether the file, by its first 64 KiB, may be in this format."""
        ...

    def read(self, path: Path) -> ReaderOutput | None:
        """The file's cases, or ``None`` when it is not in this format.

        Raise ``FailgateError`` (with the file and place) for a file that is in this
        format but malformed.
        """
        ...


class Reader:
    """The base class of a reader (``pytest_failgate.api.Reader``), with the defaults: set
    ``name`` and ``suffixes`` (default ``.json``), write ``read``; ``taxonomy`` (None: the
    ceilings file's, else rag) and ``claims`` (every file) are optional."""

    name: str = ""
    suffixes: tuple[str, ...] = (".json",)
    taxonomy: str | None = None
    run: ToolRun | None = None  # how the format's tool writes its files (init's advice)
    # byte strings of which a file's head holds at least one whenever ``claims`` says yes
    # (None: no such list): what lets a built-in reader's module stay unimported
    probe: tuple[bytes, ...] | None = None

    def claims(self, head: bytes) -> bool:
        return True

    def read(self, path: Path) -> ReaderOutput | None:
        raise NotImplementedError(f"reader {self.name!r} has no read()")


class _Adapted(Reader):
    """A plugin's reader written without the base class: its optional parts defaulted."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self.name = reader.name
        self.suffixes = tuple(reader.suffixes)
        taxonomy = getattr(reader, "taxonomy", None)
        self.taxonomy = taxonomy if isinstance(taxonomy, str) else None
        run = getattr(reader, "run", None)
        self.run = run if isinstance(run, ToolRun) else None
        self._claims = getattr(reader, "claims", None)

    def claims(self, head: bytes) -> bool:
        return True if self._claims is None else bool(self._claims(head))

    def read(self, path: Path) -> ReaderOutput | None:
        output: ReaderOutput | None = self._reader.read(path)
        return output

    def __repr__(self) -> str:
        return repr(self._reader)


def as_reader(reader: Any, owner: str) -> ReportReader:
    """A plugin's reader as the core takes it; one without a name, suffixes or ``read``
    is an error naming the plugin (``owner``)."""
    if (not isinstance(getattr(reader, "name", None), str) or not reader.name
            or not callable(getattr(reader, "read", None))
            or not isinstance(getattr(reader, "suffixes", None), tuple | list)):
        raise FailgateError(f"plugin {owner}: {reader!r} is not a reader: it needs a name, "
                            "suffixes and read() (subclass pytest_failgate.api.Reader)")
    return reader if isinstance(reader, Reader) else _Adapted(reader)


def repeat_of(case_id: str) -> str:
    """The unit a repeated case belongs to: its id before the last ``#`` (``france#2``, the
    second epoch of sample ``france``, is a repeat of ``france``); an id without one is a
    unit of its own. For readers whose ids end in ``#<repeat>`` (``ReaderOutput.repeat_unit``)."""
    head, sep, _ = case_id.rpartition("#")
    return head if sep else case_id
