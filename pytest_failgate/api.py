"""failgate's public API for plugins: taxonomies and readers of other report formats.

What a ``conftest.py``, a module named in ``failgate_plugins`` or a ``failgate`` entry
point builds its contributions with. The names here keep their meaning across releases;
everything else in the package (``pytest_failgate.core``, ...) is internal and may move.

```python
from pytest_failgate import api

def pytest_failgate_taxonomies(config):        # then `taxonomy: status` in ceilings.yaml
    return {"status": api.taxonomy(
        "status", failed="status != 'ok'",
        categories=[{"name": "timeout", "when": "status == 'timeout'"}, "other"])}

class Lines(api.Reader):
    name = "lines"                              # the format's name, in messages
    suffixes = (".txt",)                        # the files it may read

    def read(self, path):                       # None: not this format after all
        rows = [line.split(",") for line in path.read_text().splitlines() if line]
        return api.ReaderOutput(cases=[{"id": i, "status": s} for i, s in rows])

def pytest_failgate_readers(config):
    return [Lines()]
```

``config`` is the run's resolved configuration in every front end, as ``PluginConfig``
describes it (``config.ceilings``, ``config.paths``, ``config.rootdir``,
``config.taxonomy``). The hooks, the order plugins load in and the conflict rule are
documented in ``pytest_failgate.commands.plugins``.

failgate's own readers and taxonomies are written with this module and nothing else: each
built-in taxonomy is a taxonomy file built by ``taxonomy_from_yaml`` (``taxonomy`` builds
one from keywords through it), and each reader subclasses ``Reader`` and reads its file
through the helpers below, which serve the report being read from the one handle
failgate opened it with (a reader that opens the file itself reads it twice).

- ``read_bytes(path)``, ``open_file(path)``: the file's bytes, or the file open for
  reading; ``load_json(path)``, ``loads(data, path)``: decoded JSON whose errors name
  the line and column; ``json_lines(path, what)``: (line number, object) per line.
- ``parse_json_file(path, parse)``: ``parse`` applied to the decoded file; a
  ``Misshapen(message, loc)`` it raises becomes an error at the line and column of
  ``loc`` (keys and 0-based indexes from the top).
- ``top_level(head)``: the top-level keys of the JSON object a head starts with (for
  ``claims``); ``describe(value)``: ``'a list'``, ``'null'``, ... for messages;
  ``shown(text)``: a report value as a message may show it; ``did_you_mean(name,
  options)``; ``repeat_of(case_id)``: the unit a repeated case (``france#2``) belongs to.
- ``ZipArchive(path)``: a zip archive's members (zstd or not), with a bound on what they
  decompress to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .commands.hookspecs import PluginConfig, hookimpl
from .core.base.confine import shown
from .core.base.errors import FailgateError, did_you_mean
from .core.reports.readers import Reader, ReaderOutput, ToolRun, repeat_of
from .core.taxonomy.model import Taxonomy
from .options import DEFAULT_DELTA, DEFAULT_MARGIN

if TYPE_CHECKING:
    from fractions import Fraction
    from pathlib import Path

    from .commands.sequential import CaseGate

if TYPE_CHECKING:  # imported when first used (``__getattr__``): JSON, zip, taxonomy builders
    from .core.reports.jsonfile import (
        Loc,
        Misshapen,
        describe,
        json_lines,
        load_json,
        loads,
        open_file,
        parse_json_file,
        read_bytes,
        top_level,
    )
    from .core.reports.zipzstd import ZipArchive
    from .core.taxonomy.files import taxonomy, taxonomy_from_yaml

__all__ = [
    "FailgateError",
    "Loc",
    "Misshapen",
    "PluginConfig",
    "Reader",
    "ReaderOutput",
    "Taxonomy",
    "ToolRun",
    "ZipArchive",
    "describe",
    "did_you_mean",
    "hookimpl",
    "json_lines",
    "load_json",
    "loads",
    "open_file",
    "parse_json_file",
    "read_bytes",
    "repeat_of",
    "sequential_gate",
    "shown",
    "taxonomy",
    "taxonomy_from_yaml",
    "top_level",
]

_JSON_HELPERS = frozenset({"Loc", "Misshapen", "describe", "json_lines", "load_json", "loads",
                           "open_file", "parse_json_file", "read_bytes", "top_level"})
_TAXONOMY_BUILDERS = frozenset({"taxonomy", "taxonomy_from_yaml"})


def __getattr__(name: str) -> Any:
    """The reading helpers and the taxonomy builders, imported when a plugin first uses
    one (the rule compiler and YAML are not loaded by importing the API)."""
    if name in _JSON_HELPERS:
        from .core.reports import jsonfile

        return getattr(jsonfile, name)
    if name in _TAXONOMY_BUILDERS:
        from .core.taxonomy import files

        return getattr(files, name)
    if name == "ZipArchive":
        from .core.reports.zipzstd import ZipArchive

        return ZipArchive
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def sequential_gate(planned: int, *, ceilings: str | Path | None = None,
                    delta: Fraction | float | str = DEFAULT_DELTA, report: str = "run",
                    plan: str | Path | None = None,
                    futility: Fraction | float | str | None = None,
                    margin: int = DEFAULT_MARGIN, baseline: str | Path | None = None) -> CaseGate:
    """A gate fed one case at a time, in the run's planned random order, that settles the
    full run's verdict as soon as the cases decide it (``docs/sequential.md``).

    ``gate.add(case)`` takes a case as a report holds it (a mapping) and returns None while
    the run is open, else the settled verdict: ``.verdict`` (``pass``, ``fail`` or
    ``inconclusive``), ``.n`` of ``.planned`` cases, ``.line()``. The ceilings file, the
    taxonomy and the plugins are resolved as ``failgate check`` resolves them (the ini file
    of the working folder); ``report`` is the run's name in the ceilings file. The verdict
    is the full run's with probability at least ``1 - delta`` provided the cases come in a
    uniformly random order fixed before the run (``plan``: a ``failgate plan`` file; cases
    may then finish in any order). ``futility`` (a beta, default off) also passes the run
    once a regression of ``margin`` cases past every open ceiling is ruled out: such a
    regression passes early with probability at most beta, a smaller one may. A plan drawn
    within strata (``failgate plan --strata``) is gated per stratum; ``baseline`` (one
    report of the baseline run's cases, by id) also fails the run once a category's new
    cases exceed its fixed ones (paired mode).

    ```python
    gate = api.sequential_gate(1000, ceilings="ceilings.yaml")
    for case in run_in_planned_order(dataset):
        settled = gate.add(case)
        if settled is not None:
            print(settled.line())
            break
    ```
    """
    from fractions import Fraction
    from pathlib import Path

    from .commands.app import Failgate
    from .commands.config import load
    from .commands.sequential import CaseGate, read_plan

    app = Failgate(load({} if ceilings is None else {"ceilings": str(ceilings)}))
    order = None
    if plan is not None:
        order = read_plan(Path(plan))
        if len(order.ids) != planned:
            raise FailgateError(f"{planned} planned cases, but the plan orders "
                                f"{len(order.ids)}", Path(plan))
    from .core.gate.sequential import Futility

    def fraction(value: Fraction | float | str) -> Fraction:
        return Fraction(str(value)) if isinstance(value, float) else Fraction(value)

    stop = None if futility is None else Futility(fraction(futility), margin)
    return CaseGate(app, planned, fraction(delta), report, order, futility=stop,
                    baseline=None if baseline is None else Path(baseline))
