"""failgate's ``pluggy.PluginManager``, built only where a plugin is there to call
(``plugins.load_plugins``): a run without plugins does not import pluggy."""

from __future__ import annotations

from typing import cast

import pluggy

from ..core.base.errors import FailgateError
from . import hookspecs


class PluginManager(pluggy.PluginManager):
    """failgate's plugin manager: a plain function named like a hook implements it, as
    pytest takes unmarked ``pytest_*`` functions (a ``conftest.py`` needs no decorator)."""

    def __init__(self, hooks: tuple[str, ...]) -> None:
        super().__init__(hookspecs.PROJECT)
        self.add_hookspecs(hookspecs)
        self.hooks = hooks  # the names a plain function implements (``plugins.HOOKS``)

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name in self.hooks and callable(getattr(plugin, name, None)):
            return cast("pluggy.HookimplOpts", {})
        return opts

    def add(self, plugin: object, label: str) -> None:
        """Register ``plugin`` under ``label`` (what errors call it), once."""
        if self.is_registered(plugin) or self.has_plugin(label):
            return
        try:
            self.register(plugin, label)
        except pluggy.PluginValidationError as exc:
            raise FailgateError(f"plugin {label}: {exc}") from None
