"""Hooks through which a ``conftest.py`` or an installed plugin extends failgate.

```python
# conftest.py
from pytest_failgate.core.taxonomy import Rule, Taxonomy

def pytest_failgate_taxonomies(config):
    return {"mine": Taxonomy(...)}          # then `taxonomy: mine` in ceilings.yaml

def pytest_failgate_readers(config):
    return [MyReader()]                     # see pytest_failgate.core.reports.readers
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import pytest

    from ..core.reports.readers import ReportReader
    from ..core.taxonomy import Taxonomy

hookspec = pluggy.HookspecMarker("pytest")


@hookspec
def pytest_failgate_taxonomies(config: pytest.Config) -> Mapping[str, Taxonomy]:
    """Taxonomies a ceilings file may name, by name; they override built-ins of that name."""
    raise NotImplementedError  # pragma: no cover


@hookspec
def pytest_failgate_readers(config: pytest.Config) -> Sequence[ReportReader]:
    """Readers for report formats beyond failgate's own JSON, tried before the built-in ones."""
    raise NotImplementedError  # pragma: no cover
