"""failgate's hooks: what a plugin may contribute (see ``plugins`` for where plugins come from).

```python
# conftest.py, a module named in failgate_plugins, or a `failgate` entry point's module
from pytest_failgate import api

def pytest_failgate_taxonomies(config):
    return {"mine": api.taxonomy_from_yaml(TEXT)}  # then `taxonomy: mine` in ceilings.yaml

def pytest_failgate_readers(config):
    return [MyReader()]                             # a subclass of api.Reader
```

``config`` is the run's resolved configuration in every front end, as a plugin may rely
on it: ``PluginConfig`` (``pytest_failgate.api.PluginConfig``), the few attributes that
keep their meaning across releases; the internal ``commands.config.Config`` has more,
which may change. The hook names keep pytest's prefix so that a ``conftest.py`` holding them
is valid under pytest too (pytest is given these specs as well, and calls none of them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import pluggy

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from ..core.reports.readers import ReportReader
    from ..core.taxonomy import Taxonomy

PROJECT = "failgate"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@runtime_checkable
class PluginConfig(Protocol):
    """What a hook's ``config`` offers a plugin, in every front end and across releases."""

    @property
    def ceilings(self) -> Path:
        """The ceilings file (it may not exist yet: ``failgate init`` writes it)."""
        ...

    @property
    def rootdir(self) -> Path:
        """The project's root: the folder of the ini file, else the working folder."""
        ...

    @property
    def paths(self) -> tuple[Path, ...]:
        """The reports' paths given to the run (files, folders, globs)."""
        ...

    @property
    def taxonomy(self) -> str | None:
        """The taxonomy given by name or path on the command line or in the ini file
        (None: the ceilings file's, else each format's own)."""
        ...


@hookspec
def pytest_failgate_taxonomies(config: PluginConfig) -> Mapping[str, Taxonomy]:
    """Taxonomies a ceilings file may name, by name; a built-in of that name is replaced.

    Two plugins giving one name is an error naming both.
    """
    raise NotImplementedError  # pragma: no cover


@hookspec
def pytest_failgate_readers(config: PluginConfig) -> Sequence[ReportReader]:
    """Readers for report formats beyond failgate's own, tried before the built-in ones, in
    the plugins' order."""
    raise NotImplementedError  # pragma: no cover
