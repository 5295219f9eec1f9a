"""failgate's hooks: what a plugin may contribute (see ``plugins`` for where plugins come from).

```python
# conftest.py, a module named in failgate_plugins, or a `failgate` entry point's module
from pytest_failgate import api

def pytest_failgate_taxonomies(config):
    return {"mine": api.taxonomy_from_yaml(TEXT)}  # then `taxonomy: mine` in ceilings.yaml

def pytest_failgate_readers(config):
    return [MyReader()]                             # a subclass of api.Reader
```

``config`` is the run's resolved configuration (``commands.config.Config``) in every
front end. The hook names keep pytest's prefix so that a ``conftest.py`` holding them
is valid under pytest too (pytest is given these specs as well, and calls none of them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..core.reports.readers import ReportReader
    from ..core.taxonomy import Taxonomy
    from .config import Config

PROJECT = "failgate"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def pytest_failgate_taxonomies(config: Config) -> Mapping[str, Taxonomy]:
    """Taxonomies a ceilings file may name, by name; a built-in of that name is replaced.

    Two plugins giving one name is an error naming both.
    """
    raise NotImplementedError  # pragma: no cover


@hookspec
def pytest_failgate_readers(config: Config) -> Sequence[ReportReader]:
    """Readers for report formats beyond failgate's own, tried before the built-in ones, in
    the plugins' order."""
    raise NotImplementedError  # pragma: no cover
